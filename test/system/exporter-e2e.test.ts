// End to end over real HTTP: the emulator in process, the real startExporter pointed at it with
// 1 s poll intervals, and the exporter's real /metrics parsed from the exposition text. Every
// family of the schedules, account, search and vector sections must carry the value the
// emulator's own JSON holds; deletions, outages, readiness and secrets are checked the same way.
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schedule } from '../../src/api/delivery.js';
import {
  CANARY,
  eventually,
  labelKey,
  startFixtureServer,
  startStack,
  valueOf,
  waitForPollAfter,
  type Family,
  type FixtureServer,
  type Stack,
  collectorValue,
} from '../support/exporter-e2e-helpers.js';
import { documentedFamilies } from '../support/exporter-e2e-docs.js';

const FOUR_COLLECTORS: readonly string[] = ['schedules', 'account', 'search', 'vector'];

// The SDK switches to its own dev server or other regions when these are set.
for (const name of ['QSTASH_DEV', 'QSTASH_URL', 'QSTASH_TOKEN', 'QSTASH_REGION']) delete process.env[name];

type Json = Record<string, unknown>;
type Point = { x: string; y: number };

interface ManagementState {
  account: Json;
  users: Json[];
  searchIndexes: Json[];
  vectorIndexes: Json[];
  vectorStats: Record<string, Json>;
  redis: { databases: Json[] };
}

/** family -> labelKey -> value */
type Expected = Map<string, Map<string, { labels: Record<string, string>; value: number }>>;

const SCHEDULE_HEADER_CANARY = 'Bearer schedule-header-canary-5a1';
const SCHEDULE_BODY_CANARY = 'schedule-body-canary-e07';
const ACCOUNT_PASSWORD_CANARY = 'account-password-canary-93f';

function put(expected: Expected, family: string, labels: Record<string, string>, value: number | undefined): void {
  let series = expected.get(family);
  if (!series) {
    series = new Map();
    expected.set(family, series);
  }
  if (value !== undefined) series.set(labelKey(labels), { labels, value });
}

const num = (record: Json, field: string): number | undefined =>
  typeof record[field] === 'number' ? record[field] : undefined;
const limit = (value: number | undefined, divisor = 1): number | undefined =>
  value === undefined ? undefined : value === -1 ? Number.POSITIVE_INFINITY : value / divisor;
const flag = (value: unknown): number | undefined => (typeof value === 'boolean' ? (value ? 1 : 0) : undefined);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
/** The emulator writes points oldest first, so its newest point is the last element. */
const last = (points: unknown): number | undefined =>
  Array.isArray(points) && points.length > 0 ? (points.at(-1) as Point).y : undefined;

function expectedSchedules(expected: Expected, schedules: Schedule[]): void {
  const paused = schedules.filter((s) => s.isPaused).length;
  put(expected, 'upstash_qstash_schedules', { paused: 'true' }, paused);
  put(expected, 'upstash_qstash_schedules', { paused: 'false' }, schedules.length - paused);
  for (const s of schedules) {
    const id = { schedule_id: s.scheduleId };
    const destination = /^https?:\/\//.test(s.destination) ? new URL(s.destination).host : s.destination;
    put(expected, 'upstash_qstash_schedule_info', { ...id, cron: s.cron, destination, method: s.method }, 1);
    put(expected, 'upstash_qstash_schedule_paused', id, s.isPaused ? 1 : 0);
    put(
      expected,
      'upstash_qstash_schedule_next_run_timestamp_seconds',
      id,
      s.nextScheduleTime === undefined ? undefined : s.nextScheduleTime / 1000,
    );
    put(
      expected,
      'upstash_qstash_schedule_last_run_timestamp_seconds',
      id,
      s.lastScheduleTime === undefined ? undefined : s.lastScheduleTime / 1000,
    );
    put(expected, 'upstash_qstash_schedule_created_timestamp_seconds', id, s.createdAt / 1000);
    for (const state of ['IN_PROGRESS', 'SUCCESS', 'FAIL']) {
      const count = Object.values(s.lastScheduleStates ?? {}).filter((v) => v === state).length;
      put(expected, 'upstash_qstash_schedule_last_run_messages', { ...id, state }, count);
    }
  }
}

const ACCOUNT_FIELDS: Array<[string, string, number?]> = [
  ['upstash_qstash_plan_max_message_size_bytes', 'max_message_size'],
  ['upstash_qstash_plan_max_requests_per_day', 'max_requests_per_day'],
  ['upstash_qstash_plan_max_requests_per_day_hard', 'max_requests_per_day_hard'],
  ['upstash_qstash_plan_max_endpoints_per_url_group', 'max_endpoints_per_topic'],
  ['upstash_qstash_plan_max_requests_per_second', 'max_requests_per_second'],
  ['upstash_qstash_plan_max_dlq_messages', 'max_dlq_size'],
  ['upstash_qstash_plan_max_retries', 'max_retries'],
  ['upstash_qstash_plan_max_url_groups', 'max_topics'],
  ['upstash_qstash_plan_max_schedules', 'max_schedules'],
  ['upstash_qstash_plan_max_log_events', 'max_events_size'],
  ['upstash_qstash_plan_max_dlq_retention_seconds', 'max_dlq_retention_time_milis', 1000],
  ['upstash_qstash_plan_max_delay_seconds', 'max_delay'],
  ['upstash_qstash_plan_max_parallelism', 'max_parallelism'],
  ['upstash_qstash_plan_max_global_parallelism', 'max_global_parallelism'],
  ['upstash_qstash_plan_max_queues', 'max_queues'],
  ['upstash_qstash_plan_timeout_seconds', 'timeout'],
];

function expectedAccount(expected: Expected, a: Json): void {
  // The exporter has the delivery token, so the user is chosen by it.
  const info = {
    state: str(a.state),
    plan: str(a.type),
    reserved_plan: str(a.reserved_type),
    region: str(a.region),
    selected_by: 'token',
  };
  put(expected, 'upstash_qstash_account_info', info, 1);
  put(expected, 'upstash_qstash_account_active', {}, flag(a.active));
  put(expected, 'upstash_qstash_account_prod_pack_enabled', {}, flag(a.prod_pack_enabled));
  put(expected, 'upstash_qstash_account_created_timestamp_seconds', {}, num(a, 'creation_time'));
  put(expected, 'upstash_qstash_account_last_plan_upgrade_timestamp_seconds', {}, num(a, 'last_plan_upgrade_time'));
  put(expected, 'upstash_qstash_account_reserved_price', {}, num(a, 'reserved_price'));
  for (const [family, field, divisor] of ACCOUNT_FIELDS) put(expected, family, {}, limit(num(a, field), divisor));
}

const SEARCH_LIMITS: Array<[string, string]> = [
  ['upstash_search_index_max_vectors', 'max_vector_count'],
  ['upstash_search_index_max_monthly_reranks', 'max_monthly_reranks'],
  ['upstash_search_index_max_daily_updates', 'max_daily_updates'],
  ['upstash_search_index_max_daily_queries', 'max_daily_queries'],
  ['upstash_search_index_max_monthly_bandwidth_bytes', 'max_monthly_bandwidth'],
  ['upstash_search_index_max_writes_per_second', 'max_writes_per_second'],
  ['upstash_search_index_max_queries_per_second', 'max_query_per_second'],
  ['upstash_search_index_max_reads_per_request', 'max_reads_per_request'],
  ['upstash_search_index_max_writes_per_request', 'max_writes_per_request'],
];

function expectedSearch(expected: Expected, indexes: Json[]): void {
  for (const i of indexes) {
    const id = { index_id: str(i.id) };
    put(
      expected,
      'upstash_search_index_info',
      { ...id, name: str(i.name), plan: str(i.type), cloud_region: str(i.region) },
      1,
    );
    put(expected, 'upstash_search_index_created_timestamp_seconds', id, num(i, 'creation_time'));
    put(expected, 'upstash_search_index_input_enrichment_enabled', id, flag(i.input_enrichment_enabled));
    put(expected, 'upstash_search_index_throughput', id, last(i.throughput_vector));
    for (const [family, field] of SEARCH_LIMITS) put(expected, family, id, limit(num(i, field)));
  }
}

const VECTOR_SCALARS: Array<[string, string]> = [
  ['upstash_vector_index_vectors', 'current_vector_count'],
  ['upstash_vector_index_pending_vectors', 'pending_index_count'],
  ['upstash_vector_index_daily_queries', 'daily_query_count'],
  ['upstash_vector_index_daily_updates', 'daily_update_count'],
  ['upstash_vector_index_daily_reranks', 'daily_rerank_count'],
  ['upstash_vector_index_monthly_queries', 'monthly_query_count'],
  ['upstash_vector_index_monthly_updates', 'monthly_update_count'],
  ['upstash_vector_index_monthly_reranks', 'monthly_rerank_count'],
  ['upstash_vector_index_monthly_bandwidth_bytes', 'monthly_bandwidth_usage'],
  ['upstash_vector_index_storage_bytes', 'storage_usage'],
  ['upstash_vector_index_monthly_cost', 'monthly_cost'],
];

const VECTOR_LIMITS: Array<[string, string]> = [
  ['upstash_vector_index_max_vectors', 'max_vector_count'],
  ['upstash_vector_index_max_daily_queries', 'max_daily_queries'],
  ['upstash_vector_index_max_daily_updates', 'max_daily_updates'],
  ['upstash_vector_index_max_monthly_bandwidth_bytes', 'max_monthly_bandwidth'],
  ['upstash_vector_index_max_monthly_reranks', 'max_monthly_reranks'],
];

function expectedVector(
  expected: Expected,
  indexes: Json[],
  scalars: Record<string, Json>,
  series: Record<string, Json>,
): void {
  for (const i of indexes) {
    const indexId = str(i.id);
    const id = { index_id: indexId };
    put(
      expected,
      'upstash_vector_index_info',
      { ...id, name: str(i.name), plan: str(i.type), cloud_region: str(i.region) },
      1,
    );
    for (const [family, field] of VECTOR_SCALARS) put(expected, family, id, num(scalars[indexId]!, field));
    for (const [family, field] of VECTOR_LIMITS) put(expected, family, id, limit(num(i, field)));
    const stats = series[indexId]!;
    for (const operation of ['query', 'update', 'embeds', 'rerank']) {
      put(
        expected,
        'upstash_vector_index_latency_mean',
        { ...id, operation },
        last(stats[`${operation}_latency_mean`]),
      );
      put(expected, 'upstash_vector_index_latency_p99', { ...id, operation }, last(stats[`${operation}_latency_99`]));
    }
    for (const operation of ['query', 'update']) {
      put(expected, 'upstash_vector_index_throughput', { ...id, operation }, last(stats[`${operation}_throughput`]));
    }
    put(expected, 'upstash_vector_index_data_size', id, last(stats.data_size));
  }
}

/** Everything the four collectors should export right now, from the emulator's own JSON. */
async function expectedNow(stack: Stack): Promise<Expected> {
  const expected: Expected = new Map();
  const [schedules, state] = await Promise.all([
    stack.emulatorJson<Schedule[]>('/v2/schedules'),
    stack.emulatorJson<ManagementState>('/__emulator/management/state'),
  ]);
  const series: Record<string, Json> = {};
  for (const index of state.vectorIndexes) {
    series[str(index.id)] = await stack.emulatorJson<Json>(`/v2/vector/index/${str(index.id)}/stats?period=1h`);
  }
  expectedSchedules(expected, schedules);
  expectedAccount(expected, state.account);
  expectedSearch(expected, state.searchIndexes);
  expectedVector(expected, state.vectorIndexes, state.vectorStats, series);
  return expected;
}

/** Differences between the scrape and the expectation, family by family, series by series. */
function compare(scraped: Map<string, Family>, expected: Expected): string[] {
  const problems: string[] = [];
  for (const [name, series] of expected) {
    const family = scraped.get(name);
    if (!family) {
      problems.push(`${name}: family missing`);
      continue;
    }
    if (family.type !== 'gauge') problems.push(`${name}: type ${family.type}`);
    // Every QStash series carries its region (one region here), checked and then set aside.
    const got = new Map(
      family.samples.map((s) => {
        const { qstash_region: region, ...labels } = s.labels;
        if (name.startsWith('upstash_qstash_') && region !== 'eu-central-1')
          problems.push(`${name}${labelKey(s.labels)}: qstash_region ${region}, want eu-central-1`);
        return [labelKey(labels), s.value];
      }),
    );
    for (const [key, { value }] of series) {
      if (!got.has(key)) problems.push(`${name}${key}: missing, want ${value}`);
      else if (!Object.is(got.get(key), value)) problems.push(`${name}${key}: got ${got.get(key)}, want ${value}`);
    }
    for (const key of got.keys()) if (!series.has(key)) problems.push(`${name}${key}: unexpected series`);
  }
  return problems;
}

function seriesWith(families: Map<string, Family>, label: string, value: string): string[] {
  return [...families.values()].flatMap((f) => f.samples.filter((s) => s.labels[label] === value).map(() => f.name));
}

let stack: Stack;
let destination: FixtureServer;
let sdk: Client;

beforeAll(async () => {
  destination = await startFixtureServer();
  destination.routes.set('/ok', { body: 'ok' });
  destination.routes.set('/fail', { status: 500, body: { error: 'down' } });
  // Time scale 60: a minute cron fires every second while the schedules get their first runs.
  stack = await startStack({ emulator: { knobs: { timeScale: 60 } } });
  sdk = new Client({ baseUrl: stack.emulator.url, token: CANARY.token, retry: false });
  await stack.emulatorJson('/__emulator/management/account', {
    method: 'PATCH',
    body: { read_only_token: ACCOUNT_PASSWORD_CANARY },
  });

  await sdk.urlGroups.addEndpoints({
    name: 'nightly',
    endpoints: [{ url: `${destination.url}/ok?n=1` }, { url: `${destination.url}/ok?n=2` }],
  });
  const every = '* * * * *';
  const created = await Promise.all([
    sdk.schedules.create({
      destination: `${destination.url}/ok`,
      cron: every,
      headers: { Authorization: SCHEDULE_HEADER_CANARY },
      body: SCHEDULE_BODY_CANARY,
    }),
    sdk.schedules.create({ destination: `${destination.url}/fail`, cron: every, retries: 0 }),
    sdk.schedules.create({ destination: 'nightly', cron: every }),
    sdk.schedules.create({ destination: `${destination.url}/ok`, cron: '0 0 1 1 *', method: 'GET' }),
  ]);
  const [, failing, , yearly] = created.map((c) => c.scheduleId);
  await eventually(async () => {
    const schedules = await stack.emulatorJson<Schedule[]>('/v2/schedules');
    return schedules
      .filter((s) => s.cron === every && s.lastScheduleTime === undefined)
      .map((s) => `${s.scheduleId} has not run yet`);
  });
  // Virtual time almost stops: no schedule fires again during these tests, so the data holds still.
  stack.emulator.setKnobs({ timeScale: 0.001 });
  await sdk.schedules.pause({ schedule: failing! });
  await sdk.schedules.pause({ schedule: yearly! });
  await eventually(async () => {
    const schedules = await stack.emulatorJson<Schedule[]>('/v2/schedules');
    return schedules.flatMap((s) =>
      Object.values(s.lastScheduleStates ?? {}).includes('IN_PROGRESS') ? [`${s.scheduleId} in progress`] : [],
    );
  });
});

afterAll(async () => {
  await stack?.close();
  await destination?.close();
});

describe('exporter end to end against the emulator', () => {
  it('serves every family of the four sections with the values of the emulator JSON', async () => {
    await eventually(async () => compare(await stack.scrape(), await expectedNow(stack)), 15_000);

    const scraped = await stack.scrape();
    // The four collectors this file builds the expected values of; queues, URL Groups, DLQ and flow
    // control are checked against the emulator in test/collectors-{queues,dlq,flow-control}.test.ts.
    const documented = documentedFamilies().filter((d) => FOUR_COLLECTORS.includes(d.collector));
    const withoutSamples = documented
      .filter((d) => (scraped.get(d.name)?.samples.length ?? 0) === 0)
      .map((d) => d.name);
    expect(withoutSamples).toEqual([]);

    // The runs the setup produced are visible: SUCCESS from the URL and the URL Group, FAIL from the failing destination.
    const runs = scraped.get('upstash_qstash_schedule_last_run_messages')!.samples;
    expect(runs.filter((s) => s.labels.state === 'FAIL' && s.value > 0)).toHaveLength(1);
    expect(
      runs
        .filter((s) => s.labels.state === 'SUCCESS')
        .map((s) => s.value)
        .sort(),
    ).toEqual([0, 0, 1, 2]);
    expect(valueOf(scraped, 'upstash_qstash_schedules', { paused: 'true', qstash_region: 'eu-central-1' })).toBe(2);
    const destinations = scraped
      .get('upstash_qstash_schedule_info')!
      .samples.map((s) => s.labels.destination)
      .sort();
    expect(destinations).toEqual([...Array<string>(3).fill(new URL(destination.url).host), 'nightly']);
    // -1 limits of the payg indexes are +Inf; the free index has a finite rerank limit.
    expect(scraped.get('upstash_vector_index_max_daily_queries')!.samples.map((s) => s.value)).toContain(
      Number.POSITIVE_INFINITY,
    );
    const rerankLimits = scraped.get('upstash_vector_index_max_monthly_reranks')!.samples.map((s) => s.value);
    expect(rerankLimits).toContain(Number.POSITIVE_INFINITY);
    expect(rerankLimits.some((value) => Number.isFinite(value) && value > 0)).toBe(true);
    expect(scraped.get('upstash_search_index_max_monthly_bandwidth_bytes')!.samples.map((s) => s.value)).toContain(
      Number.POSITIVE_INFINITY,
    );
    for (const name of documented.map((d) => d.name)) {
      expect(scraped.get(name)!.help, name).toMatch(
        /Source: .+\. Cached: polled every 1s by the (schedules|account|search|vector|usage) collector/,
      );
    }
  });

  it('shows a schedule created with the SDK, and drops its series after the SDK deletes it', async () => {
    const { scheduleId } = await sdk.schedules.create({ destination: `${destination.url}/ok`, cron: '0 12 * * *' });
    const schedulesOnly = (problems: string[]): string[] =>
      problems.filter((p) => p.startsWith('upstash_qstash_schedule'));
    await eventually(async () => schedulesOnly(compare(await stack.scrape(), await expectedNow(stack))));
    const scraped = await stack.scrape();
    expect(
      valueOf(scraped, 'upstash_qstash_schedule_info', {
        schedule_id: scheduleId,
        cron: '0 12 * * *',
        destination: new URL(destination.url).host,
        method: 'POST',
        qstash_region: 'eu-central-1',
      }),
    ).toBe(1);
    // info, paused, next run, created, and the three run states; no last run before the first one.
    expect(seriesWith(scraped, 'schedule_id', scheduleId)).toHaveLength(7);

    await sdk.schedules.delete(scheduleId);
    const deletedAt = Date.now();
    await waitForPollAfter(stack, 'schedules', deletedAt);
    const after = await stack.scrape();
    expect(seriesWith(after, 'schedule_id', scheduleId)).toEqual([]);
    expect(schedulesOnly(compare(after, await expectedNow(stack)))).toEqual([]);
  });

  it("drops a deleted vector index's and search index's series on the next poll", async () => {
    const vector = await stack.emulatorJson<Json>('/__emulator/management/vector-indexes', {
      method: 'POST',
      body: { name: 'temp-vectors', type: 'free' },
    });
    const search = await stack.emulatorJson<Json>('/__emulator/management/search-indexes', {
      method: 'POST',
      body: { name: 'temp-search' },
    });
    const [vectorId, searchId] = [str(vector.id), str(search.id)];
    await eventually(async () => {
      const scraped = await stack.scrape();
      return [
        ...(valueOf(scraped, 'upstash_vector_index_info', {
          index_id: vectorId,
          name: 'temp-vectors',
          plan: 'free',
          cloud_region: 'us-east-1',
        }) === 1
          ? []
          : ['vector index not exported yet']),
        ...(valueOf(scraped, 'upstash_search_index_info', {
          index_id: searchId,
          name: 'temp-search',
          plan: 'payg',
          cloud_region: 'us-central1',
        }) === 1
          ? []
          : ['search index not exported yet']),
      ];
    });
    expect(seriesWith(await stack.scrape(), 'index_id', vectorId).length).toBeGreaterThan(15);

    await stack.emulatorJson(`/__emulator/management/vector-indexes/${vectorId}`, { method: 'DELETE' });
    await stack.emulatorJson(`/__emulator/management/search-indexes/${searchId}`, { method: 'DELETE' });
    const deletedAt = Date.now();
    await waitForPollAfter(stack, 'vector', deletedAt);
    await waitForPollAfter(stack, 'search', deletedAt);
    const after = await stack.scrape();
    expect(seriesWith(after, 'index_id', vectorId)).toEqual([]);
    expect(seriesWith(after, 'index_id', searchId)).toEqual([]);
  });

  it('a management outage fails only account, search and vector; schedules stay fresh; recovery flips them back', async () => {
    const errorsBefore = collectorValue(await stack.scrape(), 'upstash_exporter_collector_errors_total', 'vector') ?? 0;
    stack.emulator.setKnobs({ errorRatio: 1, faultScope: ['management'] });
    const outageFrom = Date.now();
    const success = (families: Map<string, Family>, collector: string) =>
      collectorValue(families, 'upstash_exporter_collector_success', collector);
    await eventually(async () => {
      const scraped = await stack.scrape();
      return ['account', 'search', 'vector']
        .filter((c) => success(scraped, c) !== 0)
        .map((c) => `${c} still succeeding`);
    });
    // Schedules keep polling successfully during the outage.
    await waitForPollAfter(stack, 'schedules', outageFrom);
    const during = await stack.scrape();
    expect(success(during, 'schedules')).toBe(1);
    expect(collectorValue(during, 'upstash_exporter_collector_errors_total', 'vector')).toBeGreaterThan(errorsBefore);
    expect(collectorValue(during, 'upstash_exporter_collector_errors_total', 'schedules')).toBe(0);
    // The last good management snapshot is still served, flagged by collector_success 0.
    expect(during.get('upstash_vector_index_info')!.samples.length).toBe(2);
    expect(valueOf(during, 'upstash_qstash_plan_max_queues', { qstash_region: 'eu-central-1' })).toBeGreaterThan(0);
    const landing = await stack.get('/');
    expect(landing.text).toContain('ERR_API_UPSTREAM');
    expect((await stack.get('/-/ready')).status).toBe(200); // ready once every collector succeeded once

    stack.emulator.setKnobs({ errorRatio: 0, faultScope: ['logs', 'schedules', 'management'] });
    await eventually(async () => {
      const scraped = await stack.scrape();
      return ['schedules', 'account', 'search', 'vector']
        .filter((c) => success(scraped, c) !== 1)
        .map((c) => `${c} not recovered`);
    });
  });

  it('never shows a secret in /metrics, on the landing page or in the logs', async () => {
    const state = await stack.emulatorJson<ManagementState>('/__emulator/management/state');
    // Both regional users' tokens and read-only tokens (the list is what the exporter reads) are canaries too.
    const records = [
      state.account,
      ...state.users,
      ...state.searchIndexes,
      ...state.vectorIndexes,
      ...state.redis.databases,
    ];
    const recordSecrets = records.flatMap((r) =>
      ['password', 'token', 'read_only_token', 'rest_token', 'read_only_rest_token']
        .map((k) => r[k])
        .filter((v): v is string => typeof v === 'string' && v.length > 0),
    );
    expect(recordSecrets).toContain(ACCOUNT_PASSWORD_CANARY);
    expect(recordSecrets.length).toBeGreaterThanOrEqual(2 + 2 * 2 + 2 * 4 + 3 * 4);
    // The Redis list (with its three secrets per database) has been read and exported.
    await eventually(async () =>
      (await stack.get('/metrics')).text.includes('upstash_redis_database_info{') ? [] : ['no Redis database yet'],
    );
    const secrets = [
      CANARY.token,
      CANARY.apiKey,
      Buffer.from(`${CANARY.email}:${CANARY.apiKey}`).toString('base64'),
      SCHEDULE_HEADER_CANARY,
      SCHEDULE_BODY_CANARY,
      ...recordSecrets,
    ];
    const metrics = (await stack.get('/metrics')).text;
    const landing = (await stack.get('/')).text;
    // The page checked holds the overview, so its figures are under the same check.
    expect(landing).toContain('data-figure="daily.region"');
    expect(landing).toContain('data-figure="dlq.size"');
    // The Redis card: four databases, the suspended one not active.
    expect(landing).toMatch(
      /data-figure="redis\.databases"[^>]*data-value="4"|data-value="4"[^>]*data-figure="redis\.databases"/,
    );
    expect(landing).toMatch(
      /data-figure="redis\.not_active"[^>]*data-value="1"|data-value="1"[^>]*data-figure="redis\.not_active"/,
    );
    const logs = stack.log.text();
    expect(logs.length).toBeGreaterThan(1000); // trace level: every upstream request is logged
    for (const [where, text] of [
      ['/metrics', metrics],
      ['/', landing],
      ['logs', logs],
    ] as const) {
      for (const secret of secrets) expect(text.includes(secret), `${where} contains a secret`).toBe(false);
    }
    expect(metrics).not.toContain(CANARY.email);
  });

  it('the landing page says which regional QStash user the account collector reads', async () => {
    // The emulator's delivery token belongs to its eu-central-1 user.
    const landing = (await stack.get('/')).text;
    expect(landing).toContain('<th>seen</th>');
    expect(landing).toContain('region eu-central-1, QStash user chosen by token');
  });
});

describe('readiness', () => {
  let outage: Stack;
  afterAll(async () => {
    await outage?.close();
  });

  it('/-/ready answers 503 until every enabled collector has succeeded once, then 200', async () => {
    outage = await startStack({ emulator: { knobs: { errorRatio: 1, faultScope: ['management'] } } });
    const startedAt = Date.now();
    await waitForPollAfter(outage, 'schedules', startedAt);
    await eventually(async () => {
      const scraped = await outage.scrape();
      return collectorValue(scraped, 'upstash_exporter_collector_errors_total', 'account')! >= 2
        ? []
        : ['account has not failed twice yet'];
    });
    for (const path of ['/-/ready', '/readyz']) expect((await outage.get(path)).status, path).toBe(503);
    expect((await outage.get('/-/healthy')).status).toBe(200);
    expect(collectorValue(await outage.scrape(), 'upstash_exporter_collector_success', 'schedules')).toBe(1);

    outage.emulator.setKnobs({ errorRatio: 0 });
    await eventually(async () => ((await outage.get('/-/ready')).status === 200 ? [] : ['not ready yet']));
    const scraped = await outage.scrape();
    for (const collector of ['schedules', 'account', 'search', 'vector']) {
      expect(collectorValue(scraped, 'upstash_exporter_collector_success', collector), collector).toBe(1);
    }
  });
});
