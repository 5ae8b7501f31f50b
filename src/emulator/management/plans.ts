// Limits of the account record per plan profile, from the management API's examples and the
// pricing pages. Units as the real record has them:
// `timeout` and `max_delay` in seconds, `max_dlq_retention_time_milis` in milliseconds,
// `max_message_size` in bytes. 2147483647 is how the record says "effectively unlimited"
// (e.g. `max_dlq_size` of the fixed example); the account record has no documented `-1`.

export const PLAN_PROFILES = ['free', 'payg', 'fixed'] as const;
export type PlanProfile = (typeof PLAN_PROFILES)[number];

/** The plan-dependent part of the account record. */
export interface AccountLimits {
  max_message_size: number;
  max_requests_per_day: number;
  max_requests_per_day_hard: number;
  max_endpoints_per_topic: number;
  max_requests_per_second: number;
  max_dlq_size: number;
  max_retries: number;
  max_topics: number;
  max_schedules: number;
  max_events_size: number;
  max_dlq_retention_time_milis: number;
  max_delay: number;
  max_parallelism: number;
  max_global_parallelism: number;
  max_queues: number;
  timeout: number;
  type: 'free' | 'paid';
  /** '' without a card on a non-payg plan, 'paid' for pay-as-you-go, the tier on fixed plans. */
  reserved_type: string;
  reserved_price: number;
}

export const INT32_UNLIMITED = 2_147_483_647;

const DAY_SECONDS = 86_400;
const DAY_MILLIS = 86_400_000;

export const ACCOUNT_LIMITS: Record<PlanProfile, AccountLimits> = {
  // Free: 1,000 messages a day, 1 MB, one URL group, 10 schedules, 15 min timeout, 3 d DLQ.
  free: {
    max_message_size: 1_048_576,
    max_requests_per_day: 1_000,
    max_requests_per_day_hard: 1_000,
    max_endpoints_per_topic: 100,
    max_requests_per_second: 100,
    max_dlq_size: 1_000,
    max_retries: 3,
    max_topics: 1,
    max_schedules: 10,
    max_events_size: 10_000,
    max_dlq_retention_time_milis: 3 * DAY_MILLIS,
    max_delay: 7 * DAY_SECONDS,
    max_parallelism: 2,
    max_global_parallelism: 10,
    max_queues: 10,
    timeout: 900,
    type: 'free',
    reserved_type: '',
    reserved_price: 0,
  },
  // Pay as you go: unlimited messages a day, 10 MB, 1 year delay, 2 h timeout, 7 d DLQ.
  payg: {
    max_message_size: 10_485_760,
    max_requests_per_day: INT32_UNLIMITED,
    max_requests_per_day_hard: INT32_UNLIMITED,
    max_endpoints_per_topic: 1_000,
    max_requests_per_second: 500,
    max_dlq_size: 10_000,
    max_retries: 5,
    max_topics: 100,
    max_schedules: 1_000,
    max_events_size: 10_000,
    max_dlq_retention_time_milis: 7 * DAY_MILLIS,
    max_delay: 365 * DAY_SECONDS,
    max_parallelism: 10,
    max_global_parallelism: 100,
    max_queues: 100,
    timeout: 7_200,
    type: 'paid',
    reserved_type: 'paid',
    reserved_price: 0,
  },
  // Fixed 1M: the documented example record, $180 a month.
  fixed: {
    max_message_size: 52_428_800,
    max_requests_per_day: 1_000_000,
    max_requests_per_day_hard: 10_000_000,
    max_endpoints_per_topic: 1_000,
    max_requests_per_second: 500,
    max_dlq_size: INT32_UNLIMITED,
    max_retries: 20,
    max_topics: 1_000,
    max_schedules: 1_000_000,
    max_events_size: 100_000,
    max_dlq_retention_time_milis: 30 * DAY_MILLIS,
    max_delay: INT32_UNLIMITED,
    max_parallelism: 10,
    max_global_parallelism: 200,
    max_queues: 1_000,
    timeout: 21_600,
    type: 'paid',
    reserved_type: 'qstash_enterprise_1m',
    reserved_price: 180,
  },
};

/** Prefix of the enterprise tiers in `reserved_type`; the spec's copy spells it `svc_`. */
export const RESERVED_TYPE_SERVICE_PREFIX = 'qstash_';

/**
 * `reserved_type` as served under /v2/<serviceName>/user: the tier names carry the service name
 * (`qstash_enterprise_1m` on the real path, `svc_enterprise_1m` on the spec's `/v2/svc/user`).
 */
export function reservedTypeForService(reservedType: string, serviceName: string): string {
  if (!reservedType.startsWith(RESERVED_TYPE_SERVICE_PREFIX)) return reservedType;
  return `${serviceName}_${reservedType.slice(RESERVED_TYPE_SERVICE_PREFIX.length)}`;
}
