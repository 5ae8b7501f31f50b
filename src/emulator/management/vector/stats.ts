// The statistics of one vector index at a given instant, in the real API's shape,
// all derived from the index's traffic profile and the clock (./traffic.ts). Search indexes are
// served the same statistics (../search/stats.ts).
//
// Series over the period (12 of them): 60 points (240 for 30d) at fixed steps, the last one at
// the current minute. Daily series (4 of them): one point per UTC day for the last 7 days, oldest
// first, each the day's total so far, with `days` naming their weekdays, as the documented
// example pairs them. Timestamps: 9-digit fraction on daily points, 3 digits on throughput and
// latency points, none on vector_count and data_size.
import { periodTimes, type Point, type StatsPeriod } from '../periods.js';
import {
  DAY_MS,
  MINUTE_MS,
  formatServiceTime,
  startOfUtcDay,
  startOfUtcMonth,
  weekdayName,
  type FractionStyle,
} from '../time-format.js';
import { VECTOR_PAYG_PRICE_PER_REQUEST, type VectorIndexRecord, type VectorTraffic } from './indexes.js';
import { latencyMean, latencyP99, requestCount, requestRate } from './traffic.js';

export const DAILY_POINTS = 7;

/** One more vector per this many updates (most updates overwrite existing ids). */
export const UPDATES_PER_NEW_VECTOR = 20;

export interface VectorStatsScalars {
  pending_index_count: number;
  current_vector_count: number;
  daily_query_count: number;
  daily_update_count: number;
  monthly_query_count: number;
  monthly_update_count: number;
  monthly_bandwidth_usage: number;
  storage_usage: number;
  monthly_cost: number;
  daily_rerank_count: number;
  monthly_rerank_count: number;
}

export const SERIES_NAMES = [
  'daily_update_requests',
  'daily_query_requests',
  'daily_bandwidths',
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
  'daily_rerank_requests',
  'rerank_latency_mean',
  'rerank_latency_99',
] as const;
export type SeriesName = (typeof SERIES_NAMES)[number];

export type VectorStats = VectorStatsScalars & { days: string[] } & Record<SeriesName, Point[]>;

/** Reads the clock-dependent figures of one index. */
class IndexModel {
  private readonly createdMs: number;

  constructor(
    private readonly record: VectorIndexRecord,
    private readonly traffic: VectorTraffic,
  ) {
    this.createdMs = record.creation_time * 1000;
  }

  queries(fromMs: number, toMs: number): number {
    return requestCount(this.traffic.queries_per_minute, this.createdMs, fromMs, toMs);
  }

  updates(fromMs: number, toMs: number): number {
    return requestCount(this.traffic.updates_per_minute, this.createdMs, fromMs, toMs);
  }

  reranks(fromMs: number, toMs: number): number {
    return requestCount(this.traffic.reranks_per_minute, this.createdMs, fromMs, toMs);
  }

  bandwidth(fromMs: number, toMs: number): number {
    return (
      this.queries(fromMs, toMs) * this.traffic.bytes_per_query +
      this.updates(fromMs, toMs) * this.traffic.bytes_per_update
    );
  }

  vectorCount(ms: number): number {
    if (ms < this.createdMs) return 0;
    const grown = Math.floor(this.updates(this.createdMs, ms) / UPDATES_PER_NEW_VECTOR);
    const count = this.traffic.initial_vectors + grown;
    const max = this.record.max_vector_count;
    return max >= 0 ? Math.min(count, max) : count;
  }

  dataSize(ms: number): number {
    return this.vectorCount(ms) * this.traffic.bytes_per_vector;
  }

  /** Updates accepted in the current minute and not yet indexed. */
  pending(ms: number): number {
    const secondsIntoMinute = Math.floor((ms % MINUTE_MS) / 1000);
    return Math.floor((requestRate(this.traffic.updates_per_minute, this.createdMs, ms) * secondsIntoMinute) / 60);
  }

  latency(baseMs: number, ms: number, percentile: 'mean' | '99'): number {
    if (baseMs === 0 || ms < this.createdMs) return 0;
    return percentile === 'mean' ? latencyMean(baseMs, ms) : latencyP99(baseMs, ms);
  }

  rate(perMinute: number, ms: number): number {
    return requestRate(perMinute, this.createdMs, ms);
  }
}

function series(times: number[], fraction: FractionStyle, value: (ms: number) => number): Point[] {
  return times.map((ms) => ({ x: formatServiceTime(ms, fraction), y: value(ms) }));
}

function monthlyCost(record: VectorIndexRecord, requests: number): number {
  switch (record.type) {
    case 'free':
      return 0;
    case 'fixed':
      return record.reserved_price;
    case 'payg':
      return Math.round(requests * VECTOR_PAYG_PRICE_PER_REQUEST * 100) / 100;
  }
}

export function vectorStatsScalars(
  record: VectorIndexRecord,
  traffic: VectorTraffic,
  nowMs: number,
): VectorStatsScalars {
  const model = new IndexModel(record, traffic);
  const dayStart = startOfUtcDay(nowMs);
  const monthStart = startOfUtcMonth(nowMs);
  const monthlyQueries = model.queries(monthStart, nowMs);
  const monthlyUpdates = model.updates(monthStart, nowMs);
  const monthlyReranks = model.reranks(monthStart, nowMs);
  return {
    pending_index_count: model.pending(nowMs),
    current_vector_count: model.vectorCount(nowMs),
    daily_query_count: model.queries(dayStart, nowMs),
    daily_update_count: model.updates(dayStart, nowMs),
    monthly_query_count: monthlyQueries,
    monthly_update_count: monthlyUpdates,
    monthly_bandwidth_usage: model.bandwidth(monthStart, nowMs),
    storage_usage: model.dataSize(nowMs),
    monthly_cost: monthlyCost(record, monthlyQueries + monthlyUpdates + monthlyReranks),
    daily_rerank_count: model.reranks(dayStart, nowMs),
    monthly_rerank_count: monthlyReranks,
  };
}

export function vectorStats(
  record: VectorIndexRecord,
  traffic: VectorTraffic,
  nowMs: number,
  period: StatsPeriod,
): VectorStats {
  const model = new IndexModel(record, traffic);
  // Daily points: now minus k days; each counts its UTC day up to the point (today: up to now).
  const dayTimes = Array.from({ length: DAILY_POINTS }, (_, i) => nowMs - (DAILY_POINTS - 1 - i) * DAY_MS);
  const dayTotal = (count: (from: number, to: number) => number) => (ms: number) => {
    const start = startOfUtcDay(ms);
    return count(start, Math.min(start + DAY_MS, nowMs));
  };
  const times = periodTimes(nowMs, period);
  const { query_latency_ms, update_latency_ms, embed_latency_ms, rerank_latency_ms } = traffic;
  return {
    ...vectorStatsScalars(record, traffic, nowMs),
    days: dayTimes.map(weekdayName),
    daily_update_requests: series(
      dayTimes,
      'nanos',
      dayTotal((a, b) => model.updates(a, b)),
    ),
    daily_query_requests: series(
      dayTimes,
      'nanos',
      dayTotal((a, b) => model.queries(a, b)),
    ),
    daily_bandwidths: series(
      dayTimes,
      'nanos',
      dayTotal((a, b) => model.bandwidth(a, b)),
    ),
    query_throughput: series(times, 'millis', (ms) => model.rate(traffic.queries_per_minute, ms)),
    update_throughput: series(times, 'millis', (ms) => model.rate(traffic.updates_per_minute, ms)),
    query_latency_mean: series(times, 'millis', (ms) => model.latency(query_latency_ms, ms, 'mean')),
    query_latency_99: series(times, 'millis', (ms) => model.latency(query_latency_ms, ms, '99')),
    update_latency_mean: series(times, 'millis', (ms) => model.latency(update_latency_ms, ms, 'mean')),
    update_latency_99: series(times, 'millis', (ms) => model.latency(update_latency_ms, ms, '99')),
    embeds_latency_mean: series(times, 'millis', (ms) => model.latency(embed_latency_ms, ms, 'mean')),
    embeds_latency_99: series(times, 'millis', (ms) => model.latency(embed_latency_ms, ms, '99')),
    vector_count: series(times, 'none', (ms) => model.vectorCount(ms)),
    data_size: series(times, 'none', (ms) => model.dataSize(ms)),
    daily_rerank_requests: series(
      dayTimes,
      'nanos',
      dayTotal((a, b) => model.reranks(a, b)),
    ),
    rerank_latency_mean: series(times, 'millis', (ms) => model.latency(rerank_latency_ms, ms, 'mean')),
    rerank_latency_99: series(times, 'millis', (ms) => model.latency(rerank_latency_ms, ms, '99')),
  };
}

/** `throughput_vector` of an index listing: queries per minute over the last hour. */
export function throughputVector(perMinute: number, createdMs: number, nowMs: number): Point[] {
  return series(periodTimes(nowMs, '1h'), 'millis', (ms) => requestRate(perMinute, createdMs, ms));
}
