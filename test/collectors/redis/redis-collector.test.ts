// The redis collector with the real ManagementClient over HTTP. Pages shaped as the OpenAPI's
// `Database` and `DatabaseStats` examples (and the shapes the document leaves open: which point
// is complete, unordered or null series, absent fields, a limit past 2^53) come from a fixture
// server on 127.0.0.1, because the emulator serves one shape only; the emulator-backed
// behaviour (moving figures, a deleted database) is covered at the end of this file.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../../src/api/management.js';
import { redisApi } from '../../../src/collectors/redis/client.js';
import {
  RedisCollector,
  REDIS_STATS_CONCURRENCY,
  type RedisCollectorOptions,
} from '../../../src/collectors/redis/index.js';
import { REDIS_FAMILY_ROWS } from '../../../src/collectors/redis/families.js';
import { latestCompletePoint } from '../../../src/collectors/redis/points.js';
import { createEmulator, type EmulatorHandle } from '../../../src/emulator/index.js';
import { captureLogger, familiesOf, valueOf } from '../../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../../support/fixture-client.js';

const NOW = Date.parse('2025-09-04T15:13:30Z');
const A = 'db-a';
const B = 'db-b';
const SECRETS = ['canary-redis-password', 'canary-rest-token', 'canary-ro-rest-token'];

/** A `Database` record as the OpenAPI's example spells it (secrets included). */
function database(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    database_id: id,
    database_name: `name-${id}`,
    region: 'global',
    port: 6379,
    creation_time: 1_756_000_000,
    state: 'active',
    password: SECRETS[0],
    user_email: 'example@upstash.com',
    endpoint: 'example.upstash.io',
    tls: true,
    eviction: false,
    auto_upgrade: false,
    consistent: false,
    modifying_state: '',
    db_max_clients: 10_000,
    db_max_request_size: 10_485_760,
    db_disk_threshold: 107_374_182_400,
    db_max_entry_size: 104_857_600,
    db_memory_threshold: 3_221_225_472,
    db_max_commands_per_second: 10_000,
    db_request_limit: Number('8024278031528736858'),
    type: 'payg',
    budget: 360,
    primary_region: 'us-east-1',
    primary_members: ['us-east-1'],
    all_members: ['us-east-1'],
    rest_token: SECRETS[1],
    read_only_rest_token: SECRETS[2],
    db_acl_enabled: 'false',
    prometheus_enabled: 'true',
    db_type: 'pebble',
    securityAddons: { ipWhitelisting: false },
    ...extra,
  };
}

/** Points at 15:10..15:13 (x the start of the minute); the 15:13 minute is still filling at NOW. */
const minutes = (values: number[]): { x: string; y: number }[] =>
  values.map((y, i) => ({ x: `2025-09-04 15:1${i}:00.000000000 +0000 UTC`, y }));

function stats(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    connection_count: minutes([10, 11, 12, 999]),
    keyspace: minutes([100, 101, 102, 999]),
    throughput: minutes([20, 21, 22, 999]),
    diskusage: minutes([3000, 3001, 3002, 999]),
    latencymean: minutes([0.1, 0.2, 0.3, 999]),
    latency_99: minutes([1.1, 1.2, 1.3, 999]),
    read_latency_mean: minutes([0.05, 0.06, 0.07, 999]),
    read_latency_99: minutes([0.5, 0.6, 0.7, 999]),
    write_latency_mean: minutes([0.15, 0.16, 0.17, 999]),
    write_latency_99: minutes([1.5, 1.6, 1.7, 999]),
    hits: minutes([90, 91, 92, 999]),
    misses: minutes([8, 9, 10, 999]),
    read: minutes([98, 100, 102, 999]),
    write: minutes([40, 41, 42, 999]),
    dailyrequests: [
      { x: '2025-09-03 00:00:00 +0000 UTC', y: 500 },
      { x: '2025-09-04 00:00:00 +0000 UTC', y: 600 },
    ],
    dailybilling: [
      { x: '2025-09-03 00:00:00 +0000 UTC', y: 1.5 },
      { x: '2025-09-04 00:00:00 +0000 UTC', y: 0.75 },
    ],
    bandwidths: [],
    days: ['Wednesday', 'Thursday'],
    daily_net_commands: 600,
    daily_read_requests: 400,
    daily_write_requests: 200,
    dailybandwidth: 120_000,
    total_monthly_requests: 9000,
    total_monthly_read_requests: 6000,
    total_monthly_write_requests: 3000,
    total_monthly_script_requests: 12,
    total_monthly_bandwidth: 1_800_000,
    total_monthly_storage: 3002,
    current_storage: 3002,
    total_monthly_billing: 12.5,
    queue_optimized: false,
    command_counts: [{ metric_identifier: 'EXISTS', data_points: minutes([1, 2, 3, 4]) }],
    monitor_count: null,
    ...extra,
  };
}

const setup = fixtureClientPerTest(
  (url) =>
    new ManagementClient({ baseUrl: url, email: 'owner@example.test', apiKey: 'key-1', retry: { maxRetries: 0 } }),
);

function collector(options: Partial<RedisCollectorOptions> = {}): RedisCollector {
  return new RedisCollector({
    client: redisApi(setup.client),
    intervalMs: 60_000,
    databaseIds: [],
    discovery: true,
    ...options,
  });
}

const at = (now: number) => ({ signal: new AbortController().signal, now: () => now, logger: setup.log.logger });
const statsPath = (id: string): string => `/v2/redis/stats/${id}`;

describe('redis collector, pages shaped as the OpenAPI examples', () => {
  it('exports info, state, every limit in base units, the newest complete point of each series, the totals and their times', async () => {
    setup.fixture.routes.set('/v2/redis/databases', {
      body: [database(A), database(B, { state: 'suspended', type: 'free', db_request_limit: -1, tls: false })],
    });
    setup.fixture.routes.set(statsPath(A), { body: stats() });
    setup.fixture.routes.set(statsPath(B), { body: stats() });
    const redis = collector();
    await redis.poll(at(NOW));
    const f = await familiesOf(redis.registry);
    const a = { database_id: A };

    expect(
      valueOf(f, 'upstash_redis_database_info', {
        database_id: A,
        name: 'name-db-a',
        cloud_region: 'us-east-1',
        plan: 'payg',
        state: 'active',
        tls: 'true',
        eviction: 'false',
      }),
    ).toBe(1);
    expect(valueOf(f, 'upstash_redis_database_state', { ...a, state: 'active' })).toBe(1);
    expect(valueOf(f, 'upstash_redis_database_state', { ...a, state: 'suspended' })).toBe(0);
    expect(valueOf(f, 'upstash_redis_database_state', { database_id: B, state: 'suspended' })).toBe(1);
    expect(valueOf(f, 'upstash_redis_database_state', { database_id: B, state: 'active' })).toBe(0);
    expect(valueOf(f, 'upstash_redis_database_created_timestamp_seconds', a)).toBe(1_756_000_000);

    const expected: Record<string, number> = {
      upstash_redis_database_max_clients: 10_000,
      upstash_redis_database_max_request_size_bytes: 10_485_760,
      upstash_redis_database_max_entry_size_bytes: 104_857_600,
      upstash_redis_database_disk_threshold_bytes: 107_374_182_400,
      upstash_redis_database_memory_threshold_bytes: 3_221_225_472,
      upstash_redis_database_max_commands_per_second: 10_000,
      // Past 2^53: JSON.parse rounds it, and the limit is still read (not schema drift).
      upstash_redis_database_request_limit: Number('8024278031528736858'),
      upstash_redis_database_budget_usd: 360,
      // 15:12 is the newest complete minute at 15:13:30; the 999s of the filling minute are never taken.
      upstash_redis_database_connections: 12,
      upstash_redis_database_keys: 102,
      upstash_redis_database_throughput: 22,
      upstash_redis_database_disk_usage_bytes: 3002,
      upstash_redis_database_hits: 92,
      upstash_redis_database_misses: 10,
      upstash_redis_database_reads: 102,
      upstash_redis_database_writes: 42,
      upstash_redis_database_daily_commands: 600,
      upstash_redis_database_daily_reads: 400,
      upstash_redis_database_daily_writes: 200,
      upstash_redis_database_daily_bandwidth_bytes: 120_000,
      upstash_redis_database_monthly_requests: 9000,
      upstash_redis_database_monthly_read_requests: 6000,
      upstash_redis_database_monthly_write_requests: 3000,
      upstash_redis_database_monthly_script_requests: 12,
      upstash_redis_database_monthly_bandwidth_bytes: 1_800_000,
      upstash_redis_database_monthly_storage_bytes: 3002,
      upstash_redis_database_storage_bytes: 3002,
      upstash_redis_database_monthly_billing_usd: 12.5,
      upstash_redis_database_daily_billing_usd: 0.75,
      upstash_redis_database_stats_point_timestamp_seconds: Date.parse('2025-09-04T15:12:00Z') / 1000,
      upstash_redis_database_stats_read_timestamp_seconds: NOW / 1000,
    };
    for (const [name, value] of Object.entries(expected)) expect(valueOf(f, name, a), name).toBe(value);
    expect(valueOf(f, 'upstash_redis_database_request_limit', { database_id: B })).toBe(Number.POSITIVE_INFINITY);
    for (const [operation, mean, p99] of [
      ['all', 0.3, 1.3],
      ['read', 0.07, 0.7],
      ['write', 0.17, 1.7],
    ] as const) {
      expect(valueOf(f, 'upstash_redis_database_latency_mean', { ...a, operation })).toBe(mean);
      expect(valueOf(f, 'upstash_redis_database_latency_p99', { ...a, operation })).toBe(p99);
    }

    // Every declared family is served, each with HELP saying where it comes from.
    for (const row of REDIS_FAMILY_ROWS) {
      expect(f.get(row.name)?.samples.length ?? 0, row.name).toBeGreaterThan(0);
      expect(f.get(row.name)!.help).toContain(row.source);
    }
    expect(f.get('upstash_redis_database_latency_mean')!.help).toContain('unit is not documented');
    expect(redis.summary()).toBe('2 databases (1 active, 1 suspended)');
  });

  it('never exports or logs password, rest_token or read_only_rest_token', async () => {
    const log = captureLogger('trace');
    setup.fixture.routes.set('/v2/redis/databases', { body: [database(A)] });
    setup.fixture.routes.set(statsPath(A), { body: stats() });
    const redis = collector();
    await redis.poll({ ...at(NOW), logger: log.logger });
    const listed = await redisApi(setup.client).listDatabases();
    for (const field of ['password', 'rest_token', 'read_only_rest_token']) expect(listed[0]).not.toHaveProperty(field);
    const text = `${await redis.registry.metrics()}${log.text()}${redis.summary()}`;
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });

  it('takes a complete point whichever way the series ends: a filling minute, the last complete one, x as the interval end, unordered', () => {
    const now = Date.parse('2025-09-04T15:13:30Z');
    const at1512 = Date.parse('2025-09-04T15:12:00Z');
    // Ends with the minute still filling (x = its start): the one before.
    expect(latestCompletePoint(minutes([1, 2, 3, 4]), now).point).toEqual({ timeMs: at1512, value: 3 });
    // Ends with the last complete minute: that one.
    expect(latestCompletePoint(minutes([1, 2, 3]), now).point).toEqual({ timeMs: at1512, value: 3 });
    // x as the end of the interval (the OpenAPI's example time, 15:12:52): its interval may still
    // be running, so the point before is taken, never a partial one.
    const ends = ['15:10:52', '15:11:52', '15:12:52'].map((t, i) => ({
      x: `2025-09-04 ${t}.76649148 +0000 UTC`,
      y: i,
    }));
    expect(latestCompletePoint(ends, now).point?.value).toBe(1);
    // Newest first, or shuffled: by time, not by position.
    expect(latestCompletePoint(minutes([1, 2, 3, 4]).reverse(), now).point?.value).toBe(3);
    // A coarser step (5 minutes) is read from the series.
    const coarse = ['14:55', '15:00', '15:05', '15:10'].map((t, i) => ({ x: `2025-09-04 ${t}:00 +0000 UTC`, y: i }));
    expect(latestCompletePoint(coarse, now).point?.value).toBe(2);
    // One point: a minute's step is assumed.
    expect(latestCompletePoint([{ x: '2025-09-04 15:12:00 +0000 UTC', y: 7 }], now).point?.value).toBe(7);
    expect(latestCompletePoint([{ x: '2025-09-04 15:13:00 +0000 UTC', y: 7 }], now).point).toBeUndefined();
    // Unreadable points are counted, not taken.
    expect(latestCompletePoint([{ x: 'yesterday', y: 1 }, ...minutes([5])], now)).toEqual({
      point: { timeMs: Date.parse('2025-09-04T15:10:00Z'), value: 5 },
      unreadable: 1,
    });
  });

  it('a series missing, null or empty and absent totals leave those series out; unknown fields pass', async () => {
    const partial = stats({
      throughput: null,
      hits: [],
      latencymean: undefined,
      total_monthly_billing: null,
      brand_new: { a: 1 },
    });
    delete partial.current_storage;
    setup.fixture.routes.set('/v2/redis/databases', {
      body: [database(A, { budget: null, db_disk_threshold: undefined, state: 'migrating', new_field: [1] })],
    });
    setup.fixture.routes.set(statsPath(A), { body: partial });
    const redis = collector();
    await redis.poll(at(NOW));
    const f = await familiesOf(redis.registry);
    const a = { database_id: A };
    for (const name of [
      'upstash_redis_database_throughput',
      'upstash_redis_database_hits',
      'upstash_redis_database_monthly_billing_usd',
      'upstash_redis_database_storage_bytes',
      'upstash_redis_database_budget_usd',
      'upstash_redis_database_disk_threshold_bytes',
    ]) {
      expect(valueOf(f, name, a), name).toBeUndefined();
    }
    expect(valueOf(f, 'upstash_redis_database_latency_mean', { ...a, operation: 'all' })).toBeUndefined();
    expect(valueOf(f, 'upstash_redis_database_latency_mean', { ...a, operation: 'read' })).toBe(0.07);
    expect(valueOf(f, 'upstash_redis_database_connections', a)).toBe(12);
    // An unknown state gets its own series; the known ones are 0.
    expect(valueOf(f, 'upstash_redis_database_state', { ...a, state: 'migrating' })).toBe(1);
    expect(valueOf(f, 'upstash_redis_database_state', { ...a, state: 'active' })).toBe(0);
  });

  it('a wrong type is schema drift: the poll fails and names the field', async () => {
    setup.fixture.routes.set('/v2/redis/databases', { body: [database(A, { db_max_clients: 'many' })] });
    await expect(collector().poll(at(NOW))).rejects.toMatchObject({ code: 'ERR_API_SCHEMA_DRIFT' });
    setup.fixture.routes.set('/v2/redis/databases', { body: [database(A)] });
    setup.fixture.routes.set(statsPath(A), {
      body: stats({ connection_count: [{ x: '2025-09-04 15:10:00 +0000 UTC', y: 'x' }] }),
    });
    await expect(collector().poll(at(NOW))).rejects.toThrow(/connection_count/);
  });

  it('with discovery off reads only the configured ids; a configured id that 404s is left out and warned once', async () => {
    setup.fixture.routes.set('/v2/redis/databases', { body: [database(A), database(B)] });
    setup.fixture.routes.set(statsPath(A), { body: stats() });
    setup.fixture.routes.set(statsPath(B), { body: stats() });
    const redis = collector({ discovery: false, databaseIds: [A, 'db-typo'] });
    for (let i = 0; i < 3; i++) await redis.poll(at(NOW));
    const f = await familiesOf(redis.registry);
    expect(setup.fixture.requests.filter((r) => r.includes(B))).toEqual([]);
    expect(f.get('upstash_redis_database_info')!.samples.map((s) => s.labels.database_id)).toEqual([A]);
    expect(f.get('upstash_redis_database_connections')!.samples.map((s) => s.labels.database_id)).toEqual([A]);
    expect(redis.missingDatabaseIds).toEqual(['db-typo']);
    expect(setup.log.lines().filter((l) => l.level === 'warn' && l.databaseId === 'db-typo')).toHaveLength(1);
  });
});

describe('redis collector, stats with bounded concurrency', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it(`keeps at most ${REDIS_STATS_CONCURRENCY} stats requests in flight`, async () => {
    // A server of our own: the fixture server answers at once, so it cannot show overlap.
    const ids = Array.from({ length: 12 }, (_, i) => `db-${i}`);
    let inFlight = 0;
    let most = 0;
    const server = createServer((req, res) => {
      if (req.url === '/v2/redis/databases') {
        res.setHeader('content-type', 'application/json').end(JSON.stringify(ids.map((id) => database(id))));
        return;
      }
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.setHeader('content-type', 'application/json').end(JSON.stringify(stats()));
      }, 30);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ManagementClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      email: 'e',
      apiKey: 'k',
      retry: { maxRetries: 0 },
    });
    close = async () => {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    const redis = new RedisCollector({
      client: redisApi(client),
      intervalMs: 60_000,
      databaseIds: [],
      discovery: true,
    });
    await redis.poll(at(NOW));
    const f = await familiesOf(redis.registry);
    expect(f.get('upstash_redis_database_connections')!.samples).toHaveLength(12);
    expect(most).toBe(REDIS_STATS_CONCURRENCY);
  });
});

describe('redis collector against the emulator', () => {
  let emulator: EmulatorHandle | undefined;
  afterEach(async () => {
    await emulator?.close();
  });

  it('shows every database, the suspended one idle, the full one near its threshold, and a deleted one leaves no series', async () => {
    // (The figures' movement over time is checked on the resource itself, test/emulator/management/emulator-management-redis.test.ts.)
    emulator = await createEmulator({ email: 'owner@example.test', apiKey: 'key-1' });
    const emulatorNow = async (): Promise<number> =>
      ((await (await fetch(new URL('/__emulator/management/state', emulator!.url))).json()) as { now: number }).now;
    const client = new ManagementClient({ baseUrl: emulator.url, email: 'owner@example.test', apiKey: 'key-1' });
    try {
      const redis = new RedisCollector({
        client: redisApi(client),
        intervalMs: 60_000,
        databaseIds: [],
        discovery: true,
      });
      const log = captureLogger('debug');
      const context = (now: number) => ({ signal: new AbortController().signal, now: () => now, logger: log.logger });
      const first = await emulatorNow();
      await redis.poll(context(first));
      let f = await familiesOf(redis.registry);
      const info = f.get('upstash_redis_database_info')!.samples;
      const byName = new Map(info.map((s) => [s.labels.name, s.labels]));
      expect([...byName.keys()].sort()).toEqual(['dev-playground', 'legacy-jobs', 'orders-cache', 'sessions']);
      expect(new Set(info.map((s) => s.labels.plan))).toEqual(new Set(['pro', 'free', 'payg']));
      const id = (name: string): string => byName.get(name)!.database_id!;
      expect(valueOf(f, 'upstash_redis_database_state', { database_id: id('legacy-jobs'), state: 'suspended' })).toBe(
        1,
      );
      expect(valueOf(f, 'upstash_redis_database_connections', { database_id: id('legacy-jobs') })).toBe(0);
      const ratio = (name: string): number =>
        valueOf(f, 'upstash_redis_database_storage_bytes', { database_id: id(name) })! /
        valueOf(f, 'upstash_redis_database_disk_threshold_bytes', { database_id: id(name) })!;
      expect(ratio('sessions')).toBeGreaterThan(0.9);
      expect(ratio('orders-cache')).toBeLessThan(0.5);
      const before = valueOf(f, 'upstash_redis_database_stats_point_timestamp_seconds', {
        database_id: id('orders-cache'),
      })!;
      expect(before).toBeGreaterThan(first / 1000 - 180);

      const deleted = await fetch(
        new URL(`/__emulator/management/redis/databases/${id('dev-playground')}`, emulator.url),
        { method: 'DELETE' },
      );
      expect(deleted.status).toBe(200);
      const later = await emulatorNow();
      await redis.poll(context(later));
      f = await familiesOf(redis.registry);
      for (const family of f.values()) {
        if (!family.name.startsWith('upstash_redis_')) continue;
        expect(
          family.samples.filter((s) => s.labels.database_id === id('dev-playground')),
          family.name,
        ).toEqual([]);
      }
      expect(f.get('upstash_redis_database_info')!.samples).toHaveLength(3);
      expect(
        valueOf(f, 'upstash_redis_database_stats_point_timestamp_seconds', { database_id: id('orders-cache') })!,
      ).toBeGreaterThanOrEqual(before);
    } finally {
      await client.close();
    }
  });
});
