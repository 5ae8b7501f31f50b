// The search collector: GET /v2/search (the account's search indexes) into a fresh snapshot per
// poll, so a deleted index's series vanish on the next poll. Per index: metadata, creation time,
// the enrichment flag, the newest throughput point, every limit and, beside them, the usage of
// GET /v2/search/{id}/stats (the vector stats shape: the vector collector's counters under the
// search prefix). An index deleted between the list and its stats (404) is left out quietly. The
// client removes the index tokens (token, read_only_token) before this code sees a record.

import type { Registry } from 'prom-client';
import { ApiNotFoundError } from '../api/errors.js';
import type { ManagementClient, SearchIndex, VectorStats } from '../api/management.js';
import type { Logger } from '../logging/index.js';
import type { PollContext } from './collector.js';
import type { CollectorFactory } from './collector.js';
import {
  flagValue,
  registerGauge,
  registerIndexFieldGauges,
  type GaugeSpec,
  type IndexFieldSpec,
} from './inventory/gauges.js';
import { NewestPointReader } from './inventory/series.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { mapConcurrently, VECTOR_STATS_CONCURRENCY, VECTOR_STATS_VALUES } from './vector.js';
import { polledIntervalMs } from './poll-schedule.js';
import { fieldRows, gaugeRows, type FamilyRow } from './families.js';

const SOURCE = 'GET /v2/search';
const STATS_SOURCE = 'GET /v2/search/{id}/stats?period=1h';

/** Usage of a search index: the vector stats counters, named for search (documents are vectors). */
export const SEARCH_STATS_VALUES: readonly IndexFieldSpec<(typeof VECTOR_STATS_VALUES)[number]['field']>[] =
  VECTOR_STATS_VALUES.map((spec) => ({
    ...spec,
    name: spec.name.replace('upstash_vector_index_', 'upstash_search_index_'),
    meaning: spec.meaning.replaceAll('upstash_vector_index_', 'upstash_search_index_'),
  }));
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
  {
    name: 'upstash_search_index_max_vectors',
    field: 'max_vector_count',
    meaning: 'Most documents (vectors) the index holds',
  },
  { name: 'upstash_search_index_max_monthly_reranks', field: 'max_monthly_reranks', meaning: 'Most reranks per month' },
  { name: 'upstash_search_index_max_daily_updates', field: 'max_daily_updates', meaning: 'Most updates per day' },
  { name: 'upstash_search_index_max_daily_queries', field: 'max_daily_queries', meaning: 'Most queries per day' },
  {
    name: 'upstash_search_index_max_monthly_bandwidth_bytes',
    field: 'max_monthly_bandwidth',
    meaning: 'Most bandwidth per month, bytes',
  },
  {
    name: 'upstash_search_index_max_writes_per_second',
    field: 'max_writes_per_second',
    meaning: 'Most writes per second',
  },
  {
    name: 'upstash_search_index_max_queries_per_second',
    field: 'max_query_per_second',
    meaning: 'Most queries per second',
  },
  {
    name: 'upstash_search_index_max_reads_per_request',
    field: 'max_reads_per_request',
    meaning: 'Most documents read by one request',
  },
  {
    name: 'upstash_search_index_max_writes_per_request',
    field: 'max_writes_per_request',
    meaning: 'Most documents written by one request',
  },
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

/** Every family of the collector, in the order of docs/metrics.md. */
export const SEARCH_FAMILY_ROWS: readonly FamilyRow[] = [
  ...gaugeRows(SEARCH_FAMILIES),
  ...fieldRows(SEARCH_LIMITS, ID, SOURCE),
  ...fieldRows(SEARCH_STATS_VALUES, ID, STATS_SOURCE),
];

export interface SearchCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<ManagementClient, 'listSearchIndexes' | 'searchStats'>;
  intervalMs: number;
}

interface PollResult {
  indexes: readonly SearchIndex[];
  /** Stats per index id; an index whose stats answered 404 (deleted meanwhile) has none. */
  stats: Map<string, VectorStats>;
}

export class SearchCollector extends SnapshotCollector<'search', PollResult> {
  readonly #client: SearchCollectorOptions['client'];
  readonly #points = new NewestPointReader();

  constructor(options: SearchCollectorOptions) {
    super('search', options.intervalMs, options.bounds);
    this.#client = options.client;
  }

  protected async fetch(ctx: PollContext): Promise<PollResult> {
    const indexes = await this.#client.listSearchIndexes({ signal: ctx.signal });
    const answers = await mapConcurrently(indexes, VECTOR_STATS_CONCURRENCY, async (index) => {
      try {
        return await this.#client.searchStats(index.id, '1h', { signal: ctx.signal });
      } catch (error) {
        if (error instanceof ApiNotFoundError) return undefined;
        throw error;
      }
    });
    const stats = new Map<string, VectorStats>();
    indexes.forEach((index, i) => {
      const answer = answers[i];
      if (answer !== undefined) stats.set(index.id, answer);
      else
        ctx.logger.debug({ indexId: index.id }, 'listed search index vanished before its stats were read (deleted?)');
    });
    return { indexes, stats };
  }

  protected fill(registry: Registry, { indexes, stats }: PollResult, logger: Logger): void {
    const f = SEARCH_FAMILIES;
    const info = registerGauge(registry, f.info, this.families);
    const created = registerGauge(registry, f.created, this.families);
    const enrichment = registerGauge(registry, f.enrichment, this.families);
    const throughput = registerGauge(registry, f.throughput, this.families);
    const setLimits = registerIndexFieldGauges(registry, SEARCH_LIMITS, {
      endpoint: SOURCE,
      families: this.families,
      kind: 'limit',
    });
    const setUsage = registerIndexFieldGauges(registry, SEARCH_STATS_VALUES, {
      endpoint: STATS_SOURCE,
      families: this.families,
      kind: 'value',
    });

    for (const index of indexes) {
      const id = { index_id: index.id };
      info.set({ ...id, name: index.name, plan: index.type ?? '', cloud_region: index.region ?? '' }, 1);
      if (index.creation_time !== undefined && index.creation_time > 0) created.set(id, index.creation_time);
      if (index.input_enrichment_enabled !== undefined) enrichment.set(id, flagValue(index.input_enrichment_enabled));
      const newest = this.#points.newest(index.throughput_vector, 'search throughput_vector', logger);
      if (newest !== undefined) throughput.set(id, newest);
      setLimits(index.id, index);
      const usage = stats.get(index.id);
      if (usage !== undefined) setUsage(index.id, usage);
    }
  }
}

export const createSearchCollector: CollectorFactory = (config, deps) =>
  deps.management === null
    ? null
    : new SearchCollector({
        client: deps.management,
        intervalMs: polledIntervalMs('search', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
      });
