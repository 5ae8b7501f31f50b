// Search indexes of the management API: their plans' limits (the vector limits, ../vector/indexes.ts),
// the strict schema of a new index, the record as served, its builder and the emulator's starting
// indexes with the query rate that moves their figures.
import { z } from 'zod';
import { deterministicHostLabel, deterministicSecret, deterministicUuid } from '../ids.js';
import { count, definedOnly } from '../inputs.js';
import type { Point } from '../periods.js';
import type { Owner } from '../records.js';
import { DAY_MS, unixSeconds } from '../time-format.js';
import {
  INDEX_TYPES,
  UNLIMITED,
  indexLimitInputs,
  indexName,
  type IndexLimits,
  type IndexType,
  type InitialIndex,
} from '../vector/indexes.js';

export type SearchIndexLimits = IndexLimits;

export const SEARCH_INDEX_LIMITS: Record<IndexType, SearchIndexLimits> = {
  free: {
    max_vector_count: 10_000,
    max_monthly_reranks: 100,
    max_daily_updates: 10_000,
    max_daily_queries: 10_000,
    max_monthly_bandwidth: 10_737_418_240,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 100,
    max_writes_per_request: 100,
  },
  // The documented example.
  payg: {
    max_vector_count: 2_000_000,
    max_monthly_reranks: UNLIMITED,
    max_daily_updates: UNLIMITED,
    max_daily_queries: UNLIMITED,
    max_monthly_bandwidth: UNLIMITED,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 100,
    max_writes_per_request: 100,
  },
  fixed: {
    max_vector_count: 10_000_000,
    max_monthly_reranks: 100_000,
    max_daily_updates: 2_000_000,
    max_daily_queries: 2_000_000,
    max_monthly_bandwidth: UNLIMITED,
    max_writes_per_second: 2_000,
    max_query_per_second: 2_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
  },
};

export const SEARCH_REGIONS = ['eu-west-1', 'us-central1'] as const;

export const newSearchIndexSchema = z.strictObject({
  name: indexName.optional(),
  type: z.enum(INDEX_TYPES).optional(),
  region: z.enum(SEARCH_REGIONS).optional(),
  input_enrichment_enabled: z.boolean().optional(),
  /** Base query rate per minute behind `throughput_vector` (../vector/traffic.ts). */
  queries_per_minute: count.optional(),
  ...indexLimitInputs,
});
export type NewSearchIndex = z.infer<typeof newSearchIndexSchema>;

export interface SearchIndexRecord extends SearchIndexLimits {
  customer_id: string;
  id: string;
  name: string;
  endpoint: string;
  type: IndexType;
  region: string;
  vercel_email: string;
  token: string;
  read_only_token: string;
  creation_time: number;
  input_enrichment_enabled: boolean;
}

/** A search index as served: the record plus its recent query throughput. */
export interface ServedSearchIndex extends SearchIndexRecord {
  throughput_vector: Point[];
}

/** A search index with the emulator-only figure that drives its throughput. */
export interface SearchIndexEntry {
  record: SearchIndexRecord;
  queriesPerMinute: number;
}

const SEARCH_REGION_SUFFIX: Record<string, string> = { 'eu-west-1': 'eu1', 'us-central1': 'us1' };
const DEFAULT_SEARCH_QUERIES_PER_MINUTE = 5;

export function buildSearchIndex(
  owner: Owner,
  seed: string,
  input: NewSearchIndex & { name: string },
  createdMs: number,
): SearchIndexEntry {
  const type = input.type ?? 'payg';
  const region = input.region ?? 'us-central1';
  const { name, queries_per_minute, input_enrichment_enabled, type: _t, region: _r, ...limits } = input;
  return {
    record: {
      customer_id: owner.email,
      id: deterministicUuid(seed),
      name,
      endpoint: `${deterministicHostLabel(seed)}-${SEARCH_REGION_SUFFIX[region] ?? 'us1'}`,
      type,
      region,
      vercel_email: '',
      token: deterministicSecret(owner.email, `${seed}:token`),
      read_only_token: deterministicSecret(owner.email, `${seed}:read-only`),
      ...SEARCH_INDEX_LIMITS[type],
      ...definedOnly(limits),
      creation_time: unixSeconds(createdMs),
      input_enrichment_enabled: input_enrichment_enabled ?? false,
    },
    queriesPerMinute: queries_per_minute ?? DEFAULT_SEARCH_QUERIES_PER_MINUTE,
  };
}

/** One pay-as-you-go index with `-1` limits and one free index, under 80% of each limit all month. */
export const INITIAL_SEARCH_INDEXES: InitialIndex<NewSearchIndex>[] = [
  {
    input: {
      name: 'docs-search',
      type: 'payg',
      region: 'us-central1',
      input_enrichment_enabled: true,
      queries_per_minute: 40,
    },
    ageMs: 120 * DAY_MS,
  },
  {
    input: { name: 'support-faq', type: 'free', region: 'eu-west-1', queries_per_minute: 2 },
    ageMs: 12 * DAY_MS,
  },
];
