// The vector collector with the real ManagementClient over HTTP. Answers the emulator cannot
// give (unordered series, mixed timestamp layouts, a stats 404 for a configured id that the list
// omits, a 500 on one index) come from a fixture server on 127.0.0.1; the emulator-backed
// behaviour is covered end to end in exporter-e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { ApiUpstreamError } from '../../src/api/errors.js';
import { ManagementClient } from '../../src/api/management.js';
import { VectorCollector, type VectorCollectorOptions } from '../../src/collectors/vector.js';
import { familiesOf, pollContext, valueOf } from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';

const A = 'idx-a';
const B = 'idx-b';
const ELSEWHERE = 'idx-elsewhere';

function listed(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: `name-${id}`,
    type: 'payg',
    region: 'us-east-1',
    token: `secret-token-${id}`,
    read_only_token: `secret-ro-${id}`,
    max_vector_count: 1000,
    max_daily_queries: -1,
    max_daily_updates: 500,
    max_monthly_bandwidth: -1,
    max_monthly_reranks: 7000,
    ...extra,
  };
}

function stats(base: number): Record<string, unknown> {
  return {
    pending_index_count: base + 1,
    current_vector_count: base + 2,
    daily_query_count: base + 3,
    daily_update_count: base + 4,
    daily_rerank_count: base + 5,
    monthly_query_count: base + 6,
    monthly_update_count: base + 7,
    monthly_rerank_count: base + 8,
    monthly_bandwidth_usage: base + 9,
    storage_usage: base + 10,
    monthly_cost: 0.25,
    // Newest point first, then older ones, in three timestamp layouts.
    query_latency_mean: [
      { x: '2025-10-23 17:36:00 +0000 UTC', y: base + 0.5 },
      { x: '2025-10-23 17:35:00.000 +0000 UTC', y: 999 },
      { x: '2025-10-23 17:34:00.123456789 +0000 UTC', y: 998 },
    ],
    // Newest point in the middle.
    query_latency_99: [
      { x: '2025-10-23 17:34:00.000 +0000 UTC', y: 1 },
      { x: '2025-10-23 17:36:00.5 +0000 UTC', y: base + 0.99 },
      { x: '2025-10-23 17:35:00 +0000 UTC', y: 2 },
    ],
    update_latency_mean: [{ x: '2025-10-23 17:36:00.000 +0000 UTC', y: base + 0.25 }],
    update_latency_99: [],
    query_throughput: [
      { x: '2025-10-23 17:35:00.000 +0000 UTC', y: 1 },
      { x: '2025-10-23 17:36:00.000 +0000 UTC', y: base + 60 },
    ],
    update_throughput: null, // Go's nil slice
    data_size: [
      { x: 'not a timestamp', y: 123456 },
      { x: '2025-10-23 17:35:00 +0000 UTC', y: base + 76 },
    ],
  };
}

const setup = fixtureClientPerTest(
  (url) =>
    new ManagementClient({ baseUrl: url, email: 'owner@example.test', apiKey: 'key-1', retry: { maxRetries: 0 } }),
);

function collector(options: Partial<VectorCollectorOptions> = {}): VectorCollector {
  return new VectorCollector({
    client: setup.client,
    intervalMs: 60_000,
    indexIds: [],
    discovery: true,
    statsPeriod: '1h',
    ...options,
  });
}

const statsPath = (id: string): string => `/v2/vector/index/${id}/stats`;

describe('vector collector', () => {
  it('exports counters, the newest point of each series by time, limits (-1 as +Inf) and info', async () => {
    setup.fixture.routes.set('/v2/vector/index', {
      body: [listed(A), listed(B, { type: 'free', region: 'eu-west-1', max_monthly_reranks: -1 })],
    });
    setup.fixture.routes.set(statsPath(A), { body: stats(100) });
    setup.fixture.routes.set(statsPath(B), { body: stats(200) });
    const vector = collector();
    await vector.poll(pollContext(setup.log.logger));
    const f = await familiesOf(vector.registry);
    const a = { index_id: A };

    expect(
      valueOf(f, 'upstash_vector_index_info', {
        index_id: A,
        name: 'name-idx-a',
        plan: 'payg',
        cloud_region: 'us-east-1',
      }),
    ).toBe(1);
    expect(
      valueOf(f, 'upstash_vector_index_info', {
        index_id: B,
        name: 'name-idx-b',
        plan: 'free',
        cloud_region: 'eu-west-1',
      }),
    ).toBe(1);
    const counters: Record<string, number> = {
      upstash_vector_index_pending_vectors: 101,
      upstash_vector_index_vectors: 102,
      upstash_vector_index_daily_queries: 103,
      upstash_vector_index_daily_updates: 104,
      upstash_vector_index_daily_reranks: 105,
      upstash_vector_index_monthly_queries: 106,
      upstash_vector_index_monthly_updates: 107,
      upstash_vector_index_monthly_reranks: 108,
      upstash_vector_index_monthly_bandwidth_bytes: 109,
      upstash_vector_index_storage_bytes: 110,
      upstash_vector_index_monthly_cost: 0.25,
    };
    for (const [name, value] of Object.entries(counters)) expect(valueOf(f, name, a), name).toBe(value);

    expect(valueOf(f, 'upstash_vector_index_latency_mean', { ...a, operation: 'query' })).toBe(100.5);
    expect(valueOf(f, 'upstash_vector_index_latency_p99', { ...a, operation: 'query' })).toBe(100.99);
    expect(valueOf(f, 'upstash_vector_index_latency_mean', { ...a, operation: 'update' })).toBe(100.25);
    expect(valueOf(f, 'upstash_vector_index_throughput', { ...a, operation: 'query' })).toBe(160);
    expect(valueOf(f, 'upstash_vector_index_data_size', a)).toBe(176);
    // No points (empty, null or absent series): no series rather than a made-up value.
    expect(valueOf(f, 'upstash_vector_index_latency_p99', { ...a, operation: 'update' })).toBeUndefined();
    expect(valueOf(f, 'upstash_vector_index_throughput', { ...a, operation: 'update' })).toBeUndefined();
    expect(valueOf(f, 'upstash_vector_index_latency_mean', { ...a, operation: 'embeds' })).toBeUndefined();

    expect(valueOf(f, 'upstash_vector_index_max_vectors', a)).toBe(1000);
    expect(valueOf(f, 'upstash_vector_index_max_daily_queries', a)).toBe(Number.POSITIVE_INFINITY);
    expect(valueOf(f, 'upstash_vector_index_max_daily_updates', a)).toBe(500);
    expect(valueOf(f, 'upstash_vector_index_max_monthly_bandwidth_bytes', a)).toBe(Number.POSITIVE_INFINITY);
    expect(valueOf(f, 'upstash_vector_index_max_monthly_reranks', a)).toBe(7000);
    expect(valueOf(f, 'upstash_vector_index_max_monthly_reranks', { index_id: B })).toBe(Number.POSITIVE_INFINITY);

    // Usage and limit carry the same labels, so PromQL divides them without `on()`.
    for (const [usage, limit] of [
      ['upstash_vector_index_vectors', 'upstash_vector_index_max_vectors'],
      ['upstash_vector_index_daily_queries', 'upstash_vector_index_max_daily_queries'],
      ['upstash_vector_index_daily_updates', 'upstash_vector_index_max_daily_updates'],
      ['upstash_vector_index_monthly_bandwidth_bytes', 'upstash_vector_index_max_monthly_bandwidth_bytes'],
      ['upstash_vector_index_monthly_reranks', 'upstash_vector_index_max_monthly_reranks'],
    ] as const) {
      const keys = (name: string) =>
        f
          .get(name)!
          .samples.map((s) => JSON.stringify(s.labels))
          .sort();
      expect(keys(usage), usage).toEqual(keys(limit));
    }

    const text = await vector.registry.metrics();
    expect(text).not.toContain('secret-');
    expect(f.get('upstash_vector_index_latency_mean')!.help).toContain('unit is not documented');
    expect(f.get('upstash_vector_index_data_size')!.help).toContain('newest point by time of data_size');
    // The unreadable timestamp was skipped (not taken as newest) and reported once.
    const warnings = setup.log.lines().filter((l) => l.level === 'warn');
    expect(warnings.filter((w) => w.series === 'vector data_size')).toHaveLength(1);
  });

  it('with discovery off reads only the configured ids; an unlisted id gets stats without info or limits', async () => {
    setup.fixture.routes.set('/v2/vector/index', { body: [listed(A), listed(B)] });
    setup.fixture.routes.set(statsPath(A), { body: stats(100) });
    setup.fixture.routes.set(statsPath(B), { body: stats(200) });
    setup.fixture.routes.set(statsPath(ELSEWHERE), { body: stats(300) });
    const vector = collector({ discovery: false, indexIds: [A, ELSEWHERE] });
    await vector.poll(pollContext(setup.log.logger));
    const f = await familiesOf(vector.registry);
    expect(setup.fixture.requests.filter((r) => r.includes(`/${B}/`))).toEqual([]);
    expect(setup.fixture.requests).toContain(`${statsPath(A)}?period=1h`);
    expect(valueOf(f, 'upstash_vector_index_vectors', { index_id: A })).toBe(102);
    expect(valueOf(f, 'upstash_vector_index_vectors', { index_id: ELSEWHERE })).toBe(302);
    expect(valueOf(f, 'upstash_vector_index_vectors', { index_id: B })).toBeUndefined();
    expect(f.get('upstash_vector_index_info')!.samples.map((s) => s.labels.index_id)).toEqual([A]);
    expect(valueOf(f, 'upstash_vector_index_max_vectors', { index_id: ELSEWHERE })).toBeUndefined();
  });

  it('a configured id that 404s: the poll succeeds without it, warns once, and says when it is back', async () => {
    setup.fixture.routes.set('/v2/vector/index', { body: [listed(A)] });
    setup.fixture.routes.set(statsPath(A), { body: stats(100) });
    const vector = collector({ indexIds: ['idx-typo'], statsPeriod: '7d' });
    for (let i = 0; i < 3; i++) await vector.poll(pollContext(setup.log.logger));
    let f = await familiesOf(vector.registry);
    expect(valueOf(f, 'upstash_vector_index_vectors', { index_id: A })).toBe(102);
    expect(f.get('upstash_vector_index_vectors')!.samples.map((s) => s.labels.index_id)).toEqual([A]);
    expect(vector.missingIndexIds).toEqual(['idx-typo']);
    expect(setup.fixture.requests).toContain('/v2/vector/index/idx-typo/stats?period=7d');
    const warnings = setup.log.lines().filter((l) => l.level === 'warn' && l.indexId !== undefined);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ indexId: 'idx-typo' });
    expect(String(warnings[0]!.msg)).toContain('not found');

    setup.fixture.routes.set(statsPath('idx-typo'), { body: stats(400) });
    await vector.poll(pollContext(setup.log.logger));
    f = await familiesOf(vector.registry);
    expect(valueOf(f, 'upstash_vector_index_vectors', { index_id: 'idx-typo' })).toBe(402);
    expect(vector.missingIndexIds).toEqual([]);
    expect(
      setup.log
        .lines()
        .some((l) => l.level === 'info' && l.indexId === 'idx-typo' && String(l.msg).includes('found again')),
    ).toBe(true);
  });

  it('a listed index deleted before its stats are read is left out quietly', async () => {
    setup.fixture.routes.set('/v2/vector/index', { body: [listed(A), listed(B)] });
    setup.fixture.routes.set(statsPath(A), { body: stats(100) });
    const vector = collector();
    await vector.poll(pollContext(setup.log.logger));
    const f = await familiesOf(vector.registry);
    expect(f.get('upstash_vector_index_info')!.samples.map((s) => s.labels.index_id)).toEqual([A]);
    expect(setup.log.lines().filter((l) => l.indexId !== undefined && l.level !== 'debug')).toEqual([]);
    expect(
      setup.log
        .lines()
        .filter((l) => l.indexId === B)
        .map((l) => l.level),
    ).toEqual(['debug']);
  });

  it('any other error fails the poll and keeps the previous snapshot', async () => {
    setup.fixture.routes.set('/v2/vector/index', { body: [listed(A), listed(B)] });
    setup.fixture.routes.set(statsPath(A), { body: stats(100) });
    setup.fixture.routes.set(statsPath(B), { body: stats(200) });
    const vector = collector();
    await vector.poll(pollContext(setup.log.logger));
    const before = await vector.registry.metrics();

    setup.fixture.routes.set(statsPath(A), { body: stats(500) });
    setup.fixture.routes.set(statsPath(B), { status: 500, body: { error: 'boom' } });
    await expect(vector.poll(pollContext(setup.log.logger))).rejects.toBeInstanceOf(ApiUpstreamError);
    expect(await vector.registry.metrics()).toBe(before);

    setup.fixture.routes.set('/v2/vector/index', { status: 503, body: { error: 'down' } });
    await expect(vector.poll(pollContext(setup.log.logger))).rejects.toMatchObject({ code: 'ERR_API_UPSTREAM' });
    expect(await vector.registry.metrics()).toBe(before);
  });

  it('with discovery off and no ids it asks nothing and exports no series', async () => {
    const vector = collector({ discovery: false });
    await vector.poll(pollContext(setup.log.logger));
    expect(setup.fixture.requests).toEqual([]);
    const f = await familiesOf(vector.registry);
    expect([...f.values()].every((family) => family.samples.length === 0)).toBe(true);
  });
});
