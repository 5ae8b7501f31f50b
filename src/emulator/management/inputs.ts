// Strict schemas of what tests may ask the emulator to change (admin routes and the in-process
// API share them): unknown fields and wrong types are refused, not ignored.
import { z } from 'zod';
import { ManagementError } from './errors.js';
import { INDEX_TYPES, PLAN_PROFILES } from './plans.js';

export const STATS_PERIODS = ['1h', '3h', '12h', '1d', '3d', '7d', '30d'] as const;
export type StatsPeriod = (typeof STATS_PERIODS)[number];

export const SEARCH_REGIONS = ['eu-west-1', 'us-central1'] as const;
export const VECTOR_REGIONS = ['eu-west-1', 'us-east-1', 'us-central1'] as const;
export const SIMILARITY_FUNCTIONS = ['COSINE', 'EUCLIDEAN', 'DOT_PRODUCT'] as const;
export const VECTOR_INDEX_KINDS = ['DENSE', 'SPARSE', 'HYBRID'] as const;

const count = z.number().int().min(0);
/** A limit: a non-negative integer, or -1 for unlimited. */
const limit = z.number().int().min(-1);
const unixSeconds = z.number().int().min(0);

export const accountPatchSchema = z.strictObject({
  /** Switch to another plan profile: every limit is reset to that profile first. */
  plan: z.enum(PLAN_PROFILES).optional(),
  customer_id: z.string().optional(),
  password: z.string().optional(),
  token: z.string().optional(),
  active: z.boolean().optional(),
  state: z.enum(['active', 'passive']).optional(),
  last_plan_upgrade_time: unixSeconds.optional(),
  max_message_size: limit.optional(),
  max_requests_per_day: limit.optional(),
  max_requests_per_day_hard: limit.optional(),
  max_endpoints_per_topic: limit.optional(),
  max_requests_per_second: limit.optional(),
  max_dlq_size: limit.optional(),
  max_retries: limit.optional(),
  max_topics: limit.optional(),
  max_schedules: limit.optional(),
  max_events_size: limit.optional(),
  max_dlq_retention_time_milis: limit.optional(),
  max_delay: limit.optional(),
  max_parallelism: limit.optional(),
  max_global_parallelism: limit.optional(),
  max_queues: limit.optional(),
  prod_pack_enabled: z.boolean().optional(),
  timeout: limit.optional(),
  type: z.enum(['free', 'paid']).optional(),
  reserved_type: z.string().optional(),
  reserved_price: z.number().min(0).optional(),
  created_by: z.string().optional(),
  creation_time: unixSeconds.optional(),
  read_only_token: z.string().optional(),
  region: z.string().optional(),
  budget: z.number().min(0).optional(),
  max_bandwidth_per_second: limit.optional(),
  prometheus_enabled: z.enum(['true', 'false']).optional(),
});
export type AccountPatch = z.infer<typeof accountPatchSchema>;

const indexName = z.string().min(1).max(100);

/** The `max_*` limits search and vector indexes both take (IndexLimits in plans.ts). */
const indexLimitInputs = {
  max_vector_count: limit.optional(),
  max_monthly_reranks: limit.optional(),
  max_daily_updates: limit.optional(),
  max_daily_queries: limit.optional(),
  max_monthly_bandwidth: limit.optional(),
  max_writes_per_second: limit.optional(),
  max_query_per_second: limit.optional(),
  max_reads_per_request: limit.optional(),
  max_writes_per_request: limit.optional(),
};

export const newSearchIndexSchema = z.strictObject({
  name: indexName.optional(),
  type: z.enum(INDEX_TYPES).optional(),
  region: z.enum(SEARCH_REGIONS).optional(),
  input_enrichment_enabled: z.boolean().optional(),
  /** Base query rate per minute behind `throughput_vector` (see traffic.ts). */
  queries_per_minute: count.optional(),
  ...indexLimitInputs,
});
export type NewSearchIndex = z.infer<typeof newSearchIndexSchema>;

/** The traffic an index sees; every figure is per minute at diurnal factor 1 (traffic.ts). */
export const vectorTrafficSchema = z.strictObject({
  queries_per_minute: count,
  updates_per_minute: count,
  reranks_per_minute: count,
  bytes_per_query: count,
  bytes_per_update: count,
  bytes_per_vector: count,
  /** Vectors present at creation; one more vector per 20 updates after that. */
  initial_vectors: count,
  query_latency_ms: z.number().min(0),
  update_latency_ms: z.number().min(0),
  /** 0 for indexes without an embedding model. */
  embed_latency_ms: z.number().min(0),
  /** 0 for indexes that see no reranks. */
  rerank_latency_ms: z.number().min(0),
});
export type VectorTraffic = z.infer<typeof vectorTrafficSchema>;

export const newVectorIndexSchema = z.strictObject({
  name: indexName.optional(),
  type: z.enum(INDEX_TYPES).optional(),
  region: z.enum(VECTOR_REGIONS).optional(),
  similarity_function: z.enum(SIMILARITY_FUNCTIONS).optional(),
  dimension_count: z.number().int().min(1).max(10_000).optional(),
  index_type: z.enum(VECTOR_INDEX_KINDS).optional(),
  embedding_model: z.string().optional(),
  sparse_embedding_model: z.string().optional(),
  traffic: vectorTrafficSchema.partial().optional(),
  ...indexLimitInputs,
  max_total_metadata_size: limit.optional(),
  reserved_price: z.number().min(0).optional(),
});
export type NewVectorIndex = z.infer<typeof newVectorIndexSchema>;

/** Parses user input strictly; the error names the first offending field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
  throw new ManagementError('ERR_EMULATOR_INPUT', `invalid ${what}: ${path}: ${issue?.message ?? 'invalid'}`);
}

export function parsePeriod(value: unknown): StatsPeriod {
  if (value === undefined) return '1h';
  if (typeof value === 'string' && (STATS_PERIODS as readonly string[]).includes(value)) {
    return value as StatsPeriod;
  }
  throw new ManagementError('ERR_EMULATOR_INPUT', `invalid period: expected one of ${STATS_PERIODS.join(', ')}`);
}
