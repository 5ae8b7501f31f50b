// Management API responses: account record and the regional QStash users, QStash usage
// statistics, search indexes, vector indexes (served by the real API though no document lists
// them) and vector/search index stats (search stats share the vector shape).
//
// The real service drops and adds fields over time, so every field is optional but typed (a
// wrong type is drift). Secret fields (`password`, `token`, `read_only_token`) are removed
// from what the clients return: nothing downstream needs them and they must never reach a
// log line or a metric.
import { z } from 'zod';
import { optional, seriesPointSchema } from './common.js';

const SECRET_FIELDS = ['password', 'token', 'read_only_token'] as const;

function withoutSecrets<T extends Record<string, unknown>>(record: T): T {
  for (const field of SECRET_FIELDS) delete record[field];
  return record;
}

const num = () => optional(z.number());
/** A whole number: limits and counts the OpenAPI declares as integers. */
const int = () => optional(z.number().int());
const str = () => optional(z.string());
const bool = () => optional(z.boolean());

export const accountSchema = z
  .looseObject({
    customer_id: str(),
    id: str(),
    active: bool(),
    /** active | passive (other values appear on the current service). */
    state: str(),
    /** Unix seconds. */
    last_plan_upgrade_time: num(),
    /** Bytes. */
    max_message_size: num(),
    max_requests_per_day: num(),
    max_requests_per_day_hard: num(),
    max_endpoints_per_topic: num(),
    max_requests_per_second: num(),
    max_dlq_size: num(),
    max_retries: num(),
    max_topics: num(),
    max_schedules: num(),
    max_events_size: num(),
    /** Milliseconds (sic: "milis"). */
    max_dlq_retention_time_milis: num(),
    /** Seconds. */
    max_delay: num(),
    max_parallelism: num(),
    max_global_parallelism: num(),
    max_queues: num(),
    prod_pack_enabled: bool(),
    /** Seconds. */
    timeout: num(),
    /** free | paid. */
    type: str(),
    reserved_type: str(),
    reserved_price: num(),
    created_by: str(),
    /** Unix seconds. */
    creation_time: num(),
    // Fields of the current record (2026-03+): one QStash user per region.
    /** eu-central-1 | us-east-1; absent on the legacy record. */
    region: str(),
    budget: num(),
    max_bandwidth_per_second: num(),
    /** The text "true" or "false" (not a JSON boolean). */
    prometheus_enabled: str(),
    modifying_state: str(),
    /** Unix seconds; 0 while the user exists. */
    deletion_time: num(),
  })
  .transform(withoutSecrets);

export type Account = z.output<typeof accountSchema>;

/**
 * The raw list of GET /v2/qstash/users, read only to choose a record: its `token` is compared
 * with the configured QStash token and never kept. The chosen record is then parsed with
 * accountSchema, which removes the secrets.
 */
export const qstashUserListSchema = z.array(z.looseObject({ id: str(), region: str(), token: str() }));

/** `{x, y}` point of a daily series; `workflow_message`/`workflow_run` ride on daily_requests. */
const usagePointSchema = z.looseObject({ x: z.string(), y: z.number(), workflow_message: num(), workflow_run: num() });
const usageSeries = () => optional(z.array(usagePointSchema));
const usageSeriesById = () =>
  optional(z.array(z.looseObject({ id: z.string(), data_points: optional(z.array(seriesPointSchema)) })));

/** GET /v2/qstash/stats/{id}?period= (and the older GET /v2/qstash/stats): official usage. */
export const qstashStatsSchema = z.looseObject({
  /** Weekday names of the daily series (the whole current month). */
  days: optional(z.array(z.string())),
  /** One point per day of the current month (future days 0): requests that day. */
  daily_requests: usageSeries(),
  daily_billings: usageSeries(),
  daily_bandwidths: usageSeries(),
  /** Over the period (60 points; 240 for 30d): requests per step. */
  daily_used: usageSeries(),
  daily_used_workflow: usageSeries(),
  daily_bandwidth_used: usageSeries(),
  daily_qstash_messages: usageSeriesById(),
  daily_workflow_messages: usageSeriesById(),
  dlq_message_count: int(),
  total_monthly_billing: num(),
});

export type QStashStats = z.output<typeof qstashStatsSchema>;
export type UsagePoint = z.output<typeof usagePointSchema>;

const seriesSchema = () => optional(z.array(seriesPointSchema));

export const searchIndexSchema = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    customer_id: str(),
    endpoint: str(),
    /** free | payg | fixed. */
    type: str(),
    region: str(),
    /** The interface calls it partner_email; the service sends vercel_email. */
    vercel_email: str(),
    partner_email: str(),
    // -1 means unlimited in the max_* fields below.
    max_vector_count: num(),
    max_monthly_reranks: num(),
    max_daily_updates: num(),
    max_daily_queries: num(),
    max_monthly_bandwidth: num(),
    max_writes_per_second: num(),
    max_query_per_second: num(),
    max_reads_per_request: num(),
    max_writes_per_request: num(),
    /** Unix seconds. */
    creation_time: num(),
    input_enrichment_enabled: bool(),
    throughput_vector: seriesSchema(),
  })
  .transform(withoutSecrets);

export const searchIndexListSchema = z.array(searchIndexSchema);
export type SearchIndex = z.output<typeof searchIndexSchema>;

export const vectorIndexSchema = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    customer_id: str(),
    similarity_function: str(),
    dimension_count: num(),
    embedding_model: str(),
    sparse_embedding_model: str(),
    endpoint: str(),
    /** free | payg | fixed. */
    type: str(),
    region: str(),
    /** DENSE | SPARSE | HYBRID. */
    index_type: str(),
    // -1 means unlimited in the max_* fields below (as for search indexes).
    max_vector_count: int(),
    max_monthly_reranks: int(),
    max_daily_updates: int(),
    max_daily_queries: int(),
    /** Bytes. */
    max_monthly_bandwidth: int(),
    max_writes_per_second: int(),
    max_query_per_second: int(),
    max_reads_per_request: int(),
    max_writes_per_request: int(),
    /** Bytes. */
    max_total_metadata_size: int(),
    reserved_price: num(),
    /** Unix seconds. */
    creation_time: num(),
    throughput_vector: seriesSchema(),
  })
  .transform(withoutSecrets);

export const vectorIndexListSchema = z.array(vectorIndexSchema);
export type VectorIndex = z.output<typeof vectorIndexSchema>;

/** The 16 time series of the vector stats answer, each an array of `{x, y}` points. */
export const VECTOR_STATS_SERIES = [
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

export type VectorStatsSeriesName = (typeof VECTOR_STATS_SERIES)[number];

export const vectorStatsSchema = z.looseObject({
  pending_index_count: num(),
  current_vector_count: num(),
  daily_query_count: num(),
  daily_update_count: num(),
  monthly_query_count: num(),
  monthly_update_count: num(),
  /** Bytes. */
  monthly_bandwidth_usage: num(),
  /** Bytes. */
  storage_usage: num(),
  monthly_cost: num(),
  daily_rerank_count: num(),
  monthly_rerank_count: num(),
  /** Weekday names. */
  days: optional(z.array(z.string())),
  ...(Object.fromEntries(VECTOR_STATS_SERIES.map((name) => [name, seriesSchema()])) as Record<
    VectorStatsSeriesName,
    ReturnType<typeof seriesSchema>
  >),
});

export type VectorStats = z.output<typeof vectorStatsSchema>;
