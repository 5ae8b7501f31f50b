// The search collector: GET /v2/search (the account's search indexes) into a fresh snapshot per
// poll, so a deleted index's series vanish on the next poll. Per index: metadata, creation time,
// the enrichment flag, the newest throughput point and every limit. The client removes the
// index tokens (token, read_only_token) before this code sees a record.

import type { Registry } from 'prom-client';
import type { ManagementClient, SearchIndex } from '../api/management.js';
import type { Logger } from '../logging/index.js';
import type { PollContext } from './collector.js';
import type { CollectorFactory } from './collector.js';
import { flagValue, registerGauge, registerIndexFieldGauges, type GaugeSpec, type IndexFieldSpec } from './inventory/gauges.js';
import { NewestPointReader } from './inventory/series.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';

const SOURCE = 'GET /v2/search';
const ID = ['index_id'] as const;

type LimitField =
  | 'max_vector_count'
  | 'max_monthly_reranks'
  | 'max_daily_updates'
  | 'max_daily_queries'
  | 'max_monthly_bandwidth'
  | 'max_writes_per_second'
  | 'max_query_per_second'
  | 'max_reads_per_request'
  | 'max_writes_per_request';

/** One gauge per limit of a search index, labelled by index_id only (to divide usage by it). */
export const SEARCH_LIMITS: readonly IndexFieldSpec<LimitField>[] = [
  { name: 'upstash_search_index_max_vectors', field: 'max_vector_count', meaning: 'Most documents (vectors) the index holds' },
  { name: 'upstash_search_index_max_monthly_reranks', field: 'max_monthly_reranks', meaning: 'Most reranks per month' },
  { name: 'upstash_search_index_max_daily_updates', field: 'max_daily_updates', meaning: 'Most updates per day' },
  { name: 'upstash_search_index_max_daily_queries', field: 'max_daily_queries', meaning: 'Most queries per day' },
  { name: 'upstash_search_index_max_monthly_bandwidth_bytes', field: 'max_monthly_bandwidth', meaning: 'Most bandwidth per month, bytes' },
  { name: 'upstash_search_index_max_writes_per_second', field: 'max_writes_per_second', meaning: 'Most writes per second' },
  { name: 'upstash_search_index_max_queries_per_second', field: 'max_query_per_second', meaning: 'Most queries per second' },
  { name: 'upstash_search_index_max_reads_per_request', field: 'max_reads_per_request', meaning: 'Most documents read by one request' },
  { name: 'upstash_search_index_max_writes_per_request', field: 'max_writes_per_request', meaning: 'Most documents written by one request' },
];

export const SEARCH_FAMILIES = {
  info: {
    name: 'upstash_search_index_info',
    meaning: 'One series per search index, value 1; plan is the index type (free, payg, fixed)',
    source: `id, name, type, region of ${SOURCE}`,
    labelNames: ['index_id', 'name', 'plan', 'cloud_region'],
  },
  created: {
    name: 'upstash_search_index_created_timestamp_seconds',
    meaning: 'When the index was created, unix seconds',
    source: `creation_time of ${SOURCE}`,
    labelNames: ID,
  },
  enrichment: {
    name: 'upstash_search_index_input_enrichment_enabled',
    meaning: 'Whether input enrichment is enabled (1) or not (0)',
    source: `input_enrichment_enabled of ${SOURCE}`,
    labelNames: ID,
  },
  throughput: {
    name: 'upstash_search_index_throughput',
    meaning: 'Query throughput of the index at its newest point; the unit is not documented by the API',
    source: `newest point by time of throughput_vector of ${SOURCE}`,
    labelNames: ID,
  },
} as const satisfies Record<string, GaugeSpec<string>>;

export interface SearchCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<ManagementClient, 'listSearchIndexes'>;
  intervalMs: number;
}

export class SearchCollector extends SnapshotCollector<'search', readonly SearchIndex[]> {
  readonly #client: Pick<ManagementClient, 'listSearchIndexes'>;
  readonly #points = new NewestPointReader();

  constructor(options: SearchCollectorOptions) {
    super('search', options.intervalMs, options.bounds);
    this.#client = options.client;
  }

  protected fetch(ctx: PollContext): Promise<SearchIndex[]> {
    return this.#client.listSearchIndexes({ signal: ctx.signal });
  }

  protected fill(registry: Registry, indexes: readonly SearchIndex[], logger: Logger): void {
    const f = SEARCH_FAMILIES;
    const info = registerGauge(registry, f.info, this.families);
    const created = registerGauge(registry, f.created, this.families);
    const enrichment = registerGauge(registry, f.enrichment, this.families);
    const throughput = registerGauge(registry, f.throughput, this.families);
    const setLimits = registerIndexFieldGauges(registry, SEARCH_LIMITS, { endpoint: SOURCE, families: this.families, kind: 'limit' });

    for (const index of indexes) {
      const id = { index_id: index.id };
      info.set({ ...id, name: index.name, plan: index.type ?? '', cloud_region: index.region ?? '' }, 1);
      if (index.creation_time !== undefined && index.creation_time > 0) created.set(id, index.creation_time);
      if (index.input_enrichment_enabled !== undefined) enrichment.set(id, flagValue(index.input_enrichment_enabled));
      const newest = this.#points.newest(index.throughput_vector, 'search throughput_vector', logger);
      if (newest !== undefined) throughput.set(id, newest);
      setLimits(index.id, index);
    }
  }
}

export const createSearchCollector: CollectorFactory = (config, deps) =>
  deps.management === null
    ? null
    : new SearchCollector({ client: deps.management, intervalMs: config.collectors.search.intervalMs, bounds: deps.selfMetrics.seriesCounters });
