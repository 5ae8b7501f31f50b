// The emulator's management interface: vector indexes and their statistics over time.
import { afterEach, describe, expect, it } from 'vitest';
import { STATS_PERIODS, type ServedVectorIndex } from '../../../src/emulator/management/index.js';
import {
  DAY,
  expectTypes,
  INDEX_LIMIT_FIELDS,
  LIMITS_UNLIMITED_IN_DOCS,
  type ManagementHarness,
  MINUTE,
  parseTime,
  START,
  startManagement,
  statsOf,
  stopManagementServers,
  UUID,
} from '../../support/emulator-management.js';

afterEach(stopManagementServers);

const VECTOR_FIELDS = {
  customer_id: 'string',
  id: 'string',
  name: 'string',
  similarity_function: 'string',
  dimension_count: 'integer',
  embedding_model: 'string',
  sparse_embedding_model: 'string',
  endpoint: 'string',
  token: 'string',
  read_only_token: 'string',
  type: 'string',
  region: 'string',
  ...INDEX_LIMIT_FIELDS,
  max_total_metadata_size: 'integer',
  reserved_price: 'number',
  creation_time: 'integer',
  index_type: 'string',
} as const;

const STATS_SCALARS = {
  pending_index_count: 'integer',
  current_vector_count: 'integer',
  daily_query_count: 'integer',
  daily_update_count: 'integer',
  monthly_query_count: 'integer',
  monthly_update_count: 'integer',
  monthly_bandwidth_usage: 'integer',
  storage_usage: 'integer',
  monthly_cost: 'number',
  daily_rerank_count: 'integer',
  monthly_rerank_count: 'integer',
} as const;

const DAILY_SERIES = ['daily_update_requests', 'daily_query_requests', 'daily_bandwidths', 'daily_rerank_requests'];
const PERIOD_SERIES = [
  'query_throughput',
  'update_throughput',
  'query_latency_mean',
  'query_latency_99',
  'update_latency_mean',
  'update_latency_99',
  'embeds_latency_mean',
  'embeds_latency_99',
  'vector_count',
  'data_size',
  'rerank_latency_mean',
  'rerank_latency_99',
];

async function vectorByName(h: ManagementHarness, name: string): Promise<ServedVectorIndex> {
  const { body } = await h.get<ServedVectorIndex[]>('/v2/vector/index');
  const index = body.find((candidate) => candidate.name === name);
  if (!index) throw new Error(`no vector index ${name}`);
  return index;
}

describe('vector indexes', () => {
  it('lists two indexes with every field and serves each by id', async () => {
    const h = await startManagement();
    const { status, body } = await h.get<ServedVectorIndex[]>('/v2/vector/index');
    expect(status).toBe(200);
    expect(body.map((index) => index.name).sort()).toEqual(['kb-hybrid', 'product-embeddings']);
    for (const index of body) {
      expectTypes(index, VECTOR_FIELDS);
      expect(index.id).toMatch(UUID);
      expect(['DENSE', 'SPARSE', 'HYBRID']).toContain(index.index_type);
      expect(index.throughput_vector).toHaveLength(60);
      expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${index.id}`)).body).toEqual(index);
    }
    const payg = body.find((index) => index.type === 'payg')!;
    const free = body.find((index) => index.type === 'free')!;
    for (const field of LIMITS_UNLIMITED_IN_DOCS) {
      expect((payg as unknown as Record<string, number>)[field], field).toBe(-1);
      expect((free as unknown as Record<string, number>)[field], field).toBeGreaterThan(0);
    }
    // The free index reranks all month and stays under its limit (quota alerts stay quiet).
    const freeStats = await statsOf(h, free.id);
    expect(freeStats.monthly_rerank_count).toBeGreaterThan(0);
    expect(freeStats.monthly_rerank_count).toBeLessThan(free.max_monthly_reranks);
    const unknown = await h.get<{ error: string }>('/v2/vector/index/nope');
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.error).toBe('string');
  });

  it('serves the statistics of every period: 16 series, 60 or 240 points, the documented time text', async () => {
    const h = await startManagement();
    const { id } = await vectorByName(h, 'kb-hybrid');
    const fractions = new Set<number>();
    const nowMinute = Math.floor(START / MINUTE) * MINUTE;
    const expectedStepMinutes = { '1h': 1, '3h': 3, '12h': 12, '1d': 24, '3d': 72, '7d': 168, '30d': 180 };
    for (const period of STATS_PERIODS) {
      const stats = await statsOf(h, id, period);
      expectTypes(stats, STATS_SCALARS);
      expect(Object.keys(stats)).toHaveLength(Object.keys(STATS_SCALARS).length + 1 + 16);
      for (const name of PERIOD_SERIES) {
        const points = (stats as unknown as Record<string, { x: string; y: number }[]>)[name]!;
        expect(points, `${period} ${name}`).toHaveLength(period === '30d' ? 240 : 60);
        const times = points.map((point) => parseTime(point.x));
        for (const time of times) fractions.add(time.fraction?.length ?? 0);
        expect(times.at(-1)!.ms, `${name} ends at the current minute`).toBe(nowMinute);
        expect(times[1]!.ms - times[0]!.ms).toBe(expectedStepMinutes[period] * MINUTE);
        for (const point of points) expect(typeof point.y).toBe('number');
      }
      expect(stats.days).toEqual(['Thursday', 'Friday', 'Saturday', 'Sunday', 'Monday', 'Tuesday', 'Wednesday']);
      for (const name of DAILY_SERIES) {
        const points = (stats as unknown as Record<string, { x: string; y: number }[]>)[name]!;
        expect(points, name).toHaveLength(7);
        const times = points.map((point) => parseTime(point.x));
        for (const time of times) fractions.add(time.fraction?.length ?? 0);
        expect(times.at(-1)!.ms).toBe(START);
        expect(times[1]!.ms - times[0]!.ms).toBe(DAY);
      }
    }
    // The service mixes 9-digit, 3-digit and absent fractions; so does the emulator.
    expect([...fractions].sort()).toEqual([0, 3, 9]);
  });

  it('defaults to 1h, answers 400 naming period for anything else, 404 for an unknown id', async () => {
    const h = await startManagement();
    const { id } = await vectorByName(h, 'product-embeddings');
    expect((await statsOf(h, id)).query_throughput).toEqual((await statsOf(h, id, '1h')).query_throughput);
    for (const bad of ['2h', '1H', '', '30', 'period']) {
      const { status, body } = await h.get<{ error: string }>(`/v2/vector/index/${id}/stats?period=${bad}`);
      expect(status, bad).toBe(400);
      expect(body.error).toContain('period');
    }
    const repeated = await h.get<{ error: string }>(`/v2/vector/index/${id}/stats?period=1h&period=3h`);
    expect(repeated.status).toBe(400);
    expect((await h.get(`/v2/vector/index/nope/stats`)).status).toBe(404);
    expect((await h.get(`/v2/vector/index/nope/stats?period=1d`)).status).toBe(404);
  });

  it('derives counts from the clock: daily counts grow through the day and reset at 00:00 UTC', async () => {
    const h = await startManagement();
    const { id } = await vectorByName(h, 'product-embeddings');
    // 120 queries and 30 updates a minute, times the hour's factor (1,1,1,1,1,1,2,2,3,...).
    // 00:00-10:00 weighs 16 hours of factor 1, then 30 minutes at factor 3: 1,050 minutes.
    let stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(120 * 1_050);
    expect(stats.daily_update_count).toBe(30 * 1_050);
    // A whole day weighs 50 hours: 3,000 minutes. 1-17 March are whole days.
    expect(stats.monthly_query_count).toBe(120 * (17 * 3_000 + 1_050));
    expect(stats.monthly_bandwidth_usage).toBe(stats.monthly_query_count * 6_400 + stats.monthly_update_count * 6_600);
    expect(stats.storage_usage).toBe(stats.current_vector_count * 6_500);
    // 15 s into a minute at factor 3: 30 x 3 x 15 / 60 updates waiting.
    expect(stats.pending_index_count).toBe(22);
    expect(stats.query_throughput.at(-1)!.y).toBe(360);
    expect(stats.daily_query_requests.at(-1)!.y).toBe(stats.daily_query_count);
    expect(stats.daily_query_requests.at(-2)!.y).toBe(120 * 3_000);
    expect(stats.monthly_cost).toBe(
      Math.round((stats.monthly_query_count + stats.monthly_update_count) * 0.000004 * 100) / 100,
    );
    const before = stats;

    h.clock.now = START + MINUTE;
    stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(before.daily_query_count + 360);
    expect(stats.monthly_query_count).toBe(before.monthly_query_count + 360);
    expect(stats.current_vector_count).toBeGreaterThanOrEqual(before.current_vector_count);
    expect(stats.query_latency_mean.at(-1)!.y).not.toBe(before.query_latency_mean.at(-1)!.y);

    h.clock.now = START + 3 * 3_600_000;
    expect((await statsOf(h, id)).current_vector_count).toBeGreaterThan(before.current_vector_count);

    h.clock.now = Date.UTC(2026, 2, 19, 0, 0, 30);
    stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(0);
    expect(stats.monthly_query_count).toBe(120 * 18 * 3_000);
    h.clock.now = Date.UTC(2026, 2, 19, 0, 7, 0);
    expect((await statsOf(h, id)).daily_query_count).toBe(120 * 7);
  });

  it('resets monthly counts at the start of the month', async () => {
    const h = await startManagement();
    const { id } = await vectorByName(h, 'kb-hybrid');
    h.clock.now = Date.UTC(2026, 3, 1, 0, 0, 45);
    let stats = await statsOf(h, id);
    expect(stats.monthly_query_count).toBe(0);
    expect(stats.monthly_update_count).toBe(0);
    expect(stats.monthly_rerank_count).toBe(0);
    expect(stats.monthly_bandwidth_usage).toBe(0);
    h.clock.now = Date.UTC(2026, 3, 1, 0, 5, 0);
    stats = await statsOf(h, id);
    expect(stats.monthly_query_count).toBe(2 * 5);
    expect(stats.monthly_rerank_count).toBe(5);
    expect(stats.daily_query_count).toBe(2 * 5);
    expect(stats.monthly_cost).toBe(0); // a free index
  });
});
