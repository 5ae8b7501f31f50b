// The developer API's Redis answers (upstash/docs devops/developer-api/openapi.yml, schemas
// `Database` and `DatabaseStats`), parsed leniently: every field optional but typed (a wrong type
// is schema drift), unknown fields tolerated, `null` read as absent. The secrets of a database
// record (`password`, `rest_token`, `read_only_rest_token`) are removed here, before any other
// code sees the record: they must never reach a log line, a metric or an error.
import { z } from 'zod';
import { optional, seriesPointSchema } from '../../api/schemas/common.js';

export const REDIS_SECRET_FIELDS = ['password', 'rest_token', 'read_only_rest_token'] as const;

function withoutSecrets<T extends Record<string, unknown>>(record: T): T {
  for (const field of REDIS_SECRET_FIELDS) delete record[field];
  return record;
}

// Plain numbers, not integers: db_request_limit's example (8024278031528736858) is beyond 2^53,
// so JSON.parse rounds it and an integer check would call a documented value drift.
const num = () => optional(z.number());
const str = () => optional(z.string());
const bool = () => optional(z.boolean());
/** A flag the API sends as a boolean or as the text "true"/"false" (db_acl_enabled, prometheus_enabled). */
const flag = () => optional(z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')]));
const series = () => optional(z.array(seriesPointSchema));

export const redisDatabaseSchema = z
  .looseObject({
    database_id: z.string().min(1),
    database_name: str(),
    /** `global` for the current databases. */
    region: str(),
    primary_region: str(),
    /** active | suspended | passive. */
    state: str(),
    /** free | payg | pro | paid. */
    type: str(),
    tls: bool(),
    eviction: bool(),
    auto_upgrade: bool(),
    consistent: bool(),
    /** Unix seconds. */
    creation_time: num(),
    db_type: str(),
    db_resource_size: str(),
    db_max_clients: num(),
    /** Bytes. */
    db_max_request_size: num(),
    /** Bytes. */
    db_max_entry_size: num(),
    /** Bytes. */
    db_disk_threshold: num(),
    /** Bytes. */
    db_memory_threshold: num(),
    db_max_commands_per_second: num(),
    db_request_limit: num(),
    /** Monthly budget, USD. */
    budget: num(),
    db_acl_enabled: flag(),
    prometheus_enabled: flag(),
  })
  .transform(withoutSecrets);

export const redisDatabaseListSchema = z.array(redisDatabaseSchema);
export type RedisDatabase = z.output<typeof redisDatabaseSchema>;

/** The time series of DatabaseStats, each an array of `{x, y}` points. */
export const REDIS_STATS_SERIES = [
  'connection_count',
  'keyspace',
  'throughput',
  'diskusage',
  'latencymean',
  'latency_99',
  'read_latency_mean',
  'read_latency_99',
  'write_latency_mean',
  'write_latency_99',
  'hits',
  'misses',
  'read',
  'write',
  'dailyrequests',
  'dailybilling',
  'bandwidths',
] as const;
export type RedisStatsSeriesName = (typeof REDIS_STATS_SERIES)[number];

/** The scalar totals of DatabaseStats. */
export const REDIS_STATS_TOTALS = [
  'daily_net_commands',
  'daily_read_requests',
  'daily_write_requests',
  'dailybandwidth',
  'total_monthly_requests',
  'total_monthly_read_requests',
  'total_monthly_write_requests',
  'total_monthly_script_requests',
  'total_monthly_bandwidth',
  'total_monthly_storage',
  'current_storage',
  'total_monthly_billing',
] as const;
export type RedisStatsTotalName = (typeof REDIS_STATS_TOTALS)[number];

export const redisStatsSchema = z.looseObject({
  ...(Object.fromEntries(REDIS_STATS_SERIES.map((name) => [name, series()])) as Record<
    RedisStatsSeriesName,
    ReturnType<typeof series>
  >),
  ...(Object.fromEntries(REDIS_STATS_TOTALS.map((name) => [name, num()])) as Record<
    RedisStatsTotalName,
    ReturnType<typeof num>
  >),
  /** Weekday names of the daily series. */
  days: optional(z.array(z.string())),
});
export type RedisStats = z.output<typeof redisStatsSchema>;
