// The vector collector: per vector index, the usage counters and the newest point of each time
// series of GET /v2/vector/index/{id}/stats, next to the index's limits and metadata from the
// index list (GET /v2/vector/index). A fresh snapshot per poll: a deleted index's series vanish
// on the next poll.
//
// Which indexes: the configured ids, plus every listed index unless discovery is off. The list is
// read on every poll either way (it carries the names, plans and limits); an index the list does
// not show (a configured id of another team, say) gets its stats but no info and no limits.
//
// Partial failure, by decision: a CONFIGURED id whose stats answer 404 does not fail the poll.
// Its series are absent, the other indexes export, a warning is logged once (until the id is
// found again), and every such answer is counted by the API hook in
// upstash_exporter_api_requests_total{api="management",endpoint="/v2/vector/index/:id/stats",code="404"}.
// A typo in one id must not blank every other index, and collector_success stays a signal of
// the upstream being unreachable. A DISCOVERED index that 404s was deleted between the list and
// its stats: it is left out quietly. Any other error (auth, 5xx, timeout, rate limit, schema
// drift) fails the poll and the previous snapshot stays served with collector_success 0.

import type { Gauge, Registry } from 'prom-client';
import { ApiNotFoundError } from '../api/errors.js';
import type {
  ManagementClient,
  VectorIndex,
  VectorStats,
  VectorStatsPeriod,
  VectorStatsSeriesName,
} from '../api/management.js';
import type { Logger } from '../logging/index.js';
import type { PollContext } from './collector.js';
import type { CollectorFactory } from './collector.js';
import { registerGauge, registerIndexFieldGauges, type GaugeSpec, type IndexFieldSpec } from './inventory/gauges.js';
import { NewestPointReader } from './inventory/series.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { polledIntervalMs } from './poll-schedule.js';
import { fieldRows, gaugeRows, type FamilyRow } from './families.js';

const LIST_SOURCE = 'GET /v2/vector/index';
const ID = ['index_id'] as const;
/** Stats requests in flight at once: enough for a handful of indexes, gentle on rate limits. */
export const VECTOR_STATS_CONCURRENCY = 4;

export const LATENCY_OPERATIONS = ['query', 'update', 'embeds', 'rerank'] as const;
export const THROUGHPUT_OPERATIONS = ['query', 'update'] as const;
type LatencyOperation = (typeof LATENCY_OPERATIONS)[number];
type ThroughputOperation = (typeof THROUGHPUT_OPERATIONS)[number];

// Compile-time check that every series named here exists in the API layer's list.
const latencyMeanSeries = (op: LatencyOperation): VectorStatsSeriesName => `${op}_latency_mean`;
const latencyP99Series = (op: LatencyOperation): VectorStatsSeriesName => `${op}_latency_99`;
const throughputSeries = (op: ThroughputOperation): VectorStatsSeriesName => `${op}_throughput`;

type StatsScalarField =
  | 'current_vector_count'
  | 'pending_index_count'
  | 'daily_query_count'
  | 'daily_update_count'
  | 'daily_rerank_count'
  | 'monthly_query_count'
  | 'monthly_update_count'
  | 'monthly_rerank_count'
  | 'monthly_bandwidth_usage'
  | 'storage_usage'
  | 'monthly_cost';

/** Counters of the stats answer, one gauge each. */
export const VECTOR_STATS_VALUES: readonly IndexFieldSpec<StatsScalarField>[] = [
  {
    name: 'upstash_vector_index_vectors',
    field: 'current_vector_count',
    meaning: 'Vectors in the index; compare with upstash_vector_index_max_vectors',
  },
  {
    name: 'upstash_vector_index_pending_vectors',
    field: 'pending_index_count',
    meaning: 'Vectors written but not indexed yet',
  },
  {
    name: 'upstash_vector_index_daily_queries',
    field: 'daily_query_count',
    meaning: 'Queries today (resets daily); compare with upstash_vector_index_max_daily_queries',
  },
  {
    name: 'upstash_vector_index_daily_updates',
    field: 'daily_update_count',
    meaning: 'Updates today (resets daily); compare with upstash_vector_index_max_daily_updates',
  },
  { name: 'upstash_vector_index_daily_reranks', field: 'daily_rerank_count', meaning: 'Reranks today (resets daily)' },
  {
    name: 'upstash_vector_index_monthly_queries',
    field: 'monthly_query_count',
    meaning: 'Queries this month (resets monthly)',
  },
  {
    name: 'upstash_vector_index_monthly_updates',
    field: 'monthly_update_count',
    meaning: 'Updates this month (resets monthly)',
  },
  {
    name: 'upstash_vector_index_monthly_reranks',
    field: 'monthly_rerank_count',
    meaning: 'Reranks this month (resets monthly); compare with upstash_vector_index_max_monthly_reranks',
  },
  {
    name: 'upstash_vector_index_monthly_bandwidth_bytes',
    field: 'monthly_bandwidth_usage',
    meaning: 'Bandwidth used this month, bytes; compare with upstash_vector_index_max_monthly_bandwidth_bytes',
  },
  { name: 'upstash_vector_index_storage_bytes', field: 'storage_usage', meaning: 'Storage used by the index, bytes' },
  {
    name: 'upstash_vector_index_monthly_cost',
    field: 'monthly_cost',
    meaning: 'Cost of the index this month; the currency is not given by the API',
  },
];

type LimitField =
  'max_vector_count' | 'max_daily_queries' | 'max_daily_updates' | 'max_monthly_bandwidth' | 'max_monthly_reranks';

/** Limits of the index list, labelled by index_id only so that usage / limit matches. */
export const VECTOR_LIMITS: readonly IndexFieldSpec<LimitField>[] = [
  { name: 'upstash_vector_index_max_vectors', field: 'max_vector_count', meaning: 'Most vectors the index holds' },
  { name: 'upstash_vector_index_max_daily_queries', field: 'max_daily_queries', meaning: 'Most queries per day' },
  { name: 'upstash_vector_index_max_daily_updates', field: 'max_daily_updates', meaning: 'Most updates per day' },
  {
    name: 'upstash_vector_index_max_monthly_bandwidth_bytes',
    field: 'max_monthly_bandwidth',
    meaning: 'Most bandwidth per month, bytes',
  },
  { name: 'upstash_vector_index_max_monthly_reranks', field: 'max_monthly_reranks', meaning: 'Most reranks per month' },
];

/** The stats endpoint as the docs name it; HELP names the configured period instead. */
const STATS_SOURCE_ANY_PERIOD = 'GET /v2/vector/index/{id}/stats?period=<vector.stats_period>';
const newestOf = (series: string): string => `newest point by time of ${series} of ${STATS_SOURCE_ANY_PERIOD}`;

export const VECTOR_FAMILIES = {
  info: {
    name: 'upstash_vector_index_info',
    meaning: 'One series per vector index the list shows, value 1; plan is the index type (free, payg, fixed)',
    source: `id, name, type, region of ${LIST_SOURCE}`,
    labelNames: ['index_id', 'name', 'plan', 'cloud_region'],
  },
  latencyMean: {
    name: 'upstash_vector_index_latency_mean',
    meaning: 'Mean latency by operation; the unit is not documented by the API, exported as served',
    source: newestOf('<operation>_latency_mean'),
    labelNames: ['index_id', 'operation'],
  },
  latencyP99: {
    name: 'upstash_vector_index_latency_p99',
    meaning: '99th percentile latency by operation; the unit is not documented by the API, exported as served',
    source: newestOf('<operation>_latency_99'),
    labelNames: ['index_id', 'operation'],
  },
  throughput: {
    name: 'upstash_vector_index_throughput',
    meaning: 'Request throughput by operation; the unit is not documented by the API, exported as served',
    source: newestOf('<operation>_throughput'),
    labelNames: ['index_id', 'operation'],
  },
  dataSize: {
    name: 'upstash_vector_index_data_size',
    meaning: 'Data size of the index; the unit is not documented by the API, exported as served',
    source: newestOf('data_size'),
    labelNames: ID,
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const VECTOR_FAMILY_ROWS: readonly FamilyRow[] = [
  ...gaugeRows({ info: VECTOR_FAMILIES.info }),
  ...fieldRows(VECTOR_STATS_VALUES, ID, STATS_SOURCE_ANY_PERIOD),
  ...gaugeRows({
    latencyMean: VECTOR_FAMILIES.latencyMean,
    latencyP99: VECTOR_FAMILIES.latencyP99,
    throughput: VECTOR_FAMILIES.throughput,
    dataSize: VECTOR_FAMILIES.dataSize,
  }),
  ...fieldRows(VECTOR_LIMITS, ID, LIST_SOURCE),
];

export interface VectorCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<ManagementClient, 'listVectorIndexes' | 'vectorStats'>;
  intervalMs: number;
  /** Ids to read whatever the list says. */
  indexIds: readonly string[];
  /** Also read every index the list shows. */
  discovery: boolean;
  statsPeriod: VectorStatsPeriod;
}

interface PollResult {
  listed: Map<string, VectorIndex>;
  /** Ids read, in export order, with their stats. */
  stats: Map<string, VectorStats>;
}

export class VectorCollector extends SnapshotCollector<'vector', PollResult> {
  readonly #client: VectorCollectorOptions['client'];
  readonly #configured: readonly string[];
  readonly #discovery: boolean;
  readonly #period: VectorStatsPeriod;
  readonly #statsSource: string;
  readonly #points = new NewestPointReader();
  /** Configured ids whose stats answered 404 on the last poll (warned once each). */
  readonly #missing = new Set<string>();

  constructor(options: VectorCollectorOptions) {
    super('vector', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#configured = [...new Set(options.indexIds)];
    this.#discovery = options.discovery;
    this.#period = options.statsPeriod;
    this.#statsSource = `GET /v2/vector/index/{id}/stats?period=${options.statsPeriod}`;
  }

  /** Configured ids that answered 404 on the last poll. */
  get missingIndexIds(): string[] {
    return [...this.#missing];
  }

  protected async fetch(ctx: PollContext): Promise<PollResult> {
    const listed = new Map<string, VectorIndex>();
    if (this.#discovery || this.#configured.length > 0) {
      for (const index of await this.#client.listVectorIndexes({ signal: ctx.signal })) listed.set(index.id, index);
    }
    const configured = new Set(this.#configured);
    const ids = [...new Set([...this.#configured, ...(this.#discovery ? listed.keys() : [])])];

    const answers = await mapConcurrently(ids, VECTOR_STATS_CONCURRENCY, async (id) => {
      try {
        return await this.#client.vectorStats(id, this.#period, { signal: ctx.signal });
      } catch (error) {
        if (error instanceof ApiNotFoundError) return undefined;
        throw error;
      }
    });

    const stats = new Map<string, VectorStats>();
    ids.forEach((id, i) => {
      const answer = answers[i];
      if (answer !== undefined) {
        stats.set(id, answer);
        if (this.#missing.delete(id)) ctx.logger.info({ indexId: id }, 'configured vector index found again');
      } else if (configured.has(id)) {
        if (!this.#missing.has(id)) {
          this.#missing.add(id);
          ctx.logger.warn(
            { indexId: id },
            'configured vector index not found (stats answered 404): its series are absent until it exists; the other indexes are exported',
          );
        }
      } else {
        ctx.logger.debug({ indexId: id }, 'listed vector index vanished before its stats were read (deleted?)');
      }
    });
    return { listed, stats };
  }

  protected fill(registry: Registry, { listed, stats }: PollResult, logger: Logger): void {
    const families = this.families;
    const f = VECTOR_FAMILIES;
    // The stats families name the configured period in HELP.
    const withPeriod = <L extends string>(spec: GaugeSpec<L>): GaugeSpec<L> => ({
      ...spec,
      source: spec.source.replace(STATS_SOURCE_ANY_PERIOD, this.#statsSource),
    });
    const info = registerGauge(registry, f.info, families);
    const setValues = registerIndexFieldGauges(registry, VECTOR_STATS_VALUES, {
      endpoint: this.#statsSource,
      families,
      kind: 'value',
    });
    const latencyMean = registerGauge(registry, withPeriod(f.latencyMean), families);
    const latencyP99 = registerGauge(registry, withPeriod(f.latencyP99), families);
    const throughput = registerGauge(registry, withPeriod(f.throughput), families);
    const dataSize = registerGauge(registry, withPeriod(f.dataSize), families);
    const setLimits = registerIndexFieldGauges(registry, VECTOR_LIMITS, {
      endpoint: LIST_SOURCE,
      families,
      kind: 'limit',
    });

    const setNewest = <L extends string>(
      gauge: Gauge<L>,
      labels: Record<L, string>,
      statsOfIndex: VectorStats,
      series: VectorStatsSeriesName,
    ): void => {
      const value = this.#points.newest(statsOfIndex[series], `vector ${series}`, logger);
      if (value !== undefined) gauge.set(labels, value);
    };

    for (const [id, indexStats] of stats) {
      const labels = { index_id: id };
      const index = listed.get(id);
      if (index !== undefined) {
        info.set({ ...labels, name: index.name, plan: index.type ?? '', cloud_region: index.region ?? '' }, 1);
        setLimits(id, index);
      }
      setValues(id, indexStats);
      for (const operation of LATENCY_OPERATIONS) {
        setNewest(latencyMean, { ...labels, operation }, indexStats, latencyMeanSeries(operation));
        setNewest(latencyP99, { ...labels, operation }, indexStats, latencyP99Series(operation));
      }
      for (const operation of THROUGHPUT_OPERATIONS) {
        setNewest(throughput, { ...labels, operation }, indexStats, throughputSeries(operation));
      }
      setNewest(dataSize, labels, indexStats, 'data_size');
    }
  }
}

/**
 * `work` over `items` with at most `limit` in flight; results in the order of `items`. After the
 * first failure no new item starts; the in-flight ones finish, then the first error is thrown.
 */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await work(items[i]!);
      } catch (error) {
        if (!failed) firstError = error;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw firstError;
  return results;
}

export const createVectorCollector: CollectorFactory = (config, deps) => {
  if (deps.management === null) return null;
  if (!config.vector.discovery && config.vector.indexIds.length === 0) {
    deps.logger.warn(
      { collector: 'vector' },
      'vector discovery is off and no vector index ids are configured: the vector collector exports nothing',
    );
  }
  return new VectorCollector({
    client: deps.management,
    intervalMs: polledIntervalMs('vector', config, deps.schedule),
    bounds: deps.selfMetrics.seriesCounters,
    indexIds: config.vector.indexIds,
    discovery: config.vector.discovery,
    statsPeriod: config.vector.statsPeriod,
  });
};
