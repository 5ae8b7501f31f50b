// The Redis collector's metric families as data: what it registers, what docs/metrics.md's Redis
// table is written from, and what the tests check the served families against.
import { UNLIMITED_NOTE, type GaugeSpec, type IndexFieldSpec } from '../inventory/gauges.js';
import { fieldRows, gaugeRows, type FamilyRow } from '../families.js';
import type { RedisStatsSeriesName, RedisStatsTotalName } from './schemas.js';

export const LIST_SOURCE = 'GET /v2/redis/databases';
export const STATS_SOURCE = 'GET /v2/redis/stats/{id}';
const ID = ['database_id'] as const;
const completePointOf = (series: string): string =>
  `newest complete point (its interval over) of ${series} of ${STATS_SOURCE}`;

/** The states of a database the OpenAPI lists; each has a series of upstash_redis_database_state. */
export const REDIS_STATES = ['active', 'suspended', 'passive'] as const;

/** The operations of the latency families and the series each reads. */
export const LATENCY_SERIES = {
  all: { mean: 'latencymean', p99: 'latency_99' },
  read: { mean: 'read_latency_mean', p99: 'read_latency_99' },
  write: { mean: 'write_latency_mean', p99: 'write_latency_99' },
} as const satisfies Record<string, { mean: RedisStatsSeriesName; p99: RedisStatsSeriesName }>;

export const REDIS_FAMILIES = {
  info: {
    name: 'upstash_redis_database_info',
    meaning:
      'One series per Redis database, value 1; plan is the type (free, payg, pro, paid), cloud_region the primary region, tls and eviction "true"/"false"',
    source: `database_id, database_name, primary_region (else region), type, state, tls, eviction of ${LIST_SOURCE}`,
    labelNames: ['database_id', 'name', 'cloud_region', 'plan', 'state', 'tls', 'eviction'],
  },
  state: {
    name: 'upstash_redis_database_state',
    meaning:
      'The state of the database: 1 on its current state, 0 on the others (active, suspended, passive; an unknown state gets its own series)',
    source: `state of ${LIST_SOURCE}`,
    labelNames: ['database_id', 'state'],
  },
  created: {
    name: 'upstash_redis_database_created_timestamp_seconds',
    meaning: 'When the database was created, unix seconds',
    source: `creation_time of ${LIST_SOURCE}`,
    labelNames: ID,
  },
  latencyMean: {
    name: 'upstash_redis_database_latency_mean',
    meaning:
      'Mean command latency by operation (all, read, write); the unit is not documented by the API, exported as served',
    source: completePointOf('latencymean, read_latency_mean, write_latency_mean'),
    labelNames: ['database_id', 'operation'],
  },
  latencyP99: {
    name: 'upstash_redis_database_latency_p99',
    meaning:
      '99th percentile command latency by operation (all, read, write); the unit is not documented by the API, exported as served',
    source: completePointOf('latency_99, read_latency_99, write_latency_99'),
    labelNames: ['database_id', 'operation'],
  },
  dailyBilling: {
    name: 'upstash_redis_database_daily_billing_usd',
    meaning: 'Amount billed today (UTC day) so far, USD',
    source: `today's point of dailybilling of ${STATS_SOURCE}`,
    labelNames: ID,
  },
  pointTime: {
    name: 'upstash_redis_database_stats_point_timestamp_seconds',
    meaning:
      'Time of the newest complete point taken from the stats series, unix seconds; time() minus it is the age of the usage figures',
    source: `x of the points taken from ${STATS_SOURCE}`,
    labelNames: ID,
  },
  readTime: {
    name: 'upstash_redis_database_stats_read_timestamp_seconds',
    meaning: 'When the exporter last read the stats of the database, unix seconds',
    source: `the exporter's clock at the answer of ${STATS_SOURCE}`,
    labelNames: ID,
  },
} as const satisfies Record<string, GaugeSpec<string>>;

type LimitField =
  | 'db_max_clients'
  | 'db_max_request_size'
  | 'db_max_entry_size'
  | 'db_disk_threshold'
  | 'db_memory_threshold'
  | 'db_max_commands_per_second'
  | 'db_request_limit'
  | 'budget';

/** The plan's limits of each database, labelled by database_id only (usage / limit matches). */
export const REDIS_LIMITS: readonly IndexFieldSpec<LimitField>[] = [
  { name: 'upstash_redis_database_max_clients', field: 'db_max_clients', meaning: 'Most concurrent connections' },
  {
    name: 'upstash_redis_database_max_request_size_bytes',
    field: 'db_max_request_size',
    meaning: 'Largest request, bytes',
  },
  { name: 'upstash_redis_database_max_entry_size_bytes', field: 'db_max_entry_size', meaning: 'Largest entry, bytes' },
  {
    name: 'upstash_redis_database_disk_threshold_bytes',
    field: 'db_disk_threshold',
    meaning: "Most data stored (the plan's storage limit), bytes; compare with upstash_redis_database_storage_bytes",
  },
  {
    name: 'upstash_redis_database_memory_threshold_bytes',
    field: 'db_memory_threshold',
    meaning: 'Memory the database may use, bytes',
  },
  {
    name: 'upstash_redis_database_max_commands_per_second',
    field: 'db_max_commands_per_second',
    meaning: 'Most commands per second; compare with upstash_redis_database_throughput',
  },
  {
    name: 'upstash_redis_database_request_limit',
    field: 'db_request_limit',
    meaning: 'Request limit of the plan (the API does not say its period; values past 2^53 are rounded)',
  },
  {
    name: 'upstash_redis_database_budget_usd',
    field: 'budget',
    meaning:
      'Monthly spending budget of the database, USD; 0 for none; compare with upstash_redis_database_monthly_billing_usd',
  },
];

/** The newest complete point of one series per gauge, labelled by database_id. */
export const REDIS_POINT_VALUES: readonly IndexFieldSpec<RedisStatsSeriesName>[] = [
  {
    name: 'upstash_redis_database_connections',
    field: 'connection_count',
    meaning: 'Open client connections; compare with upstash_redis_database_max_clients',
  },
  { name: 'upstash_redis_database_keys', field: 'keyspace', meaning: 'Keys in the database' },
  {
    name: 'upstash_redis_database_throughput',
    field: 'throughput',
    meaning:
      'Commands per second (the API does not name the unit; read as per second, see docs/service-fidelity.md); compare with upstash_redis_database_max_commands_per_second',
  },
  { name: 'upstash_redis_database_disk_usage_bytes', field: 'diskusage', meaning: 'Disk used, bytes' },
  { name: 'upstash_redis_database_hits', field: 'hits', meaning: "Key hits in the point's interval" },
  { name: 'upstash_redis_database_misses', field: 'misses', meaning: "Key misses in the point's interval" },
  { name: 'upstash_redis_database_reads', field: 'read', meaning: "Read commands in the point's interval" },
  { name: 'upstash_redis_database_writes', field: 'write', meaning: "Write commands in the point's interval" },
];

/** The totals of the stats answer, one gauge each. */
export const REDIS_TOTALS: readonly IndexFieldSpec<RedisStatsTotalName>[] = [
  {
    name: 'upstash_redis_database_daily_commands',
    field: 'daily_net_commands',
    meaning: 'Commands today (resets daily)',
  },
  { name: 'upstash_redis_database_daily_reads', field: 'daily_read_requests', meaning: 'Read requests today' },
  { name: 'upstash_redis_database_daily_writes', field: 'daily_write_requests', meaning: 'Write requests today' },
  {
    name: 'upstash_redis_database_daily_bandwidth_bytes',
    field: 'dailybandwidth',
    meaning: 'Bandwidth used today, bytes',
  },
  {
    name: 'upstash_redis_database_monthly_requests',
    field: 'total_monthly_requests',
    meaning: 'Requests this month (resets monthly); compare with upstash_redis_database_request_limit',
  },
  {
    name: 'upstash_redis_database_monthly_read_requests',
    field: 'total_monthly_read_requests',
    meaning: 'Read requests this month',
  },
  {
    name: 'upstash_redis_database_monthly_write_requests',
    field: 'total_monthly_write_requests',
    meaning: 'Write requests this month',
  },
  {
    name: 'upstash_redis_database_monthly_script_requests',
    field: 'total_monthly_script_requests',
    meaning: 'Script (EVAL) requests this month',
  },
  {
    name: 'upstash_redis_database_monthly_bandwidth_bytes',
    field: 'total_monthly_bandwidth',
    meaning: 'Bandwidth used this month, bytes',
  },
  {
    name: 'upstash_redis_database_monthly_storage_bytes',
    field: 'total_monthly_storage',
    meaning: 'Storage billed this month, bytes',
  },
  {
    name: 'upstash_redis_database_storage_bytes',
    field: 'current_storage',
    meaning: 'Data stored now, bytes; compare with upstash_redis_database_disk_threshold_bytes',
  },
  {
    name: 'upstash_redis_database_monthly_billing_usd',
    field: 'total_monthly_billing',
    meaning: 'Amount billed this month so far, USD; compare with upstash_redis_database_budget_usd',
  },
];

/** Every family of the collector, in the order of docs/metrics.md. */
export const REDIS_FAMILY_ROWS: readonly FamilyRow[] = [
  ...gaugeRows([REDIS_FAMILIES.info, REDIS_FAMILIES.state, REDIS_FAMILIES.created]),
  ...fieldRows(REDIS_LIMITS, ID, `${LIST_SOURCE}; ${UNLIMITED_NOTE}`),
  ...REDIS_POINT_VALUES.map((spec) => ({
    ...fieldRows([spec], ID, STATS_SOURCE)[0]!,
    source: completePointOf(spec.field),
  })),
  ...gaugeRows([REDIS_FAMILIES.latencyMean, REDIS_FAMILIES.latencyP99]),
  ...fieldRows(REDIS_TOTALS, ID, STATS_SOURCE),
  ...gaugeRows([REDIS_FAMILIES.dailyBilling, REDIS_FAMILIES.pointTime, REDIS_FAMILIES.readTime]),
];
