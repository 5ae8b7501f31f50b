// The logs collector's metric families as data (src/metrics/families.ts): what it registers
// (each family is created from its row here), what docs/metrics.md's "Delivery logs" table and
// the logs walk's rows of "The exporter itself" are written from, and what the tests check
// the served families against.
import type { Family } from '../../metrics/families.js';
import { ERROR_REASONS } from './labels.js';

/** Labels of the event and error counters besides state/reason: where the message went. */
export const TARGET_LABELS = ['queue', 'url_group', 'endpoint', 'destination'] as const;
/** Labels of the event counter a user opts in to (logs.labels). */
export const OPT_IN_LABELS = ['schedule_id', 'label', 'url'] as const;
export type OptInLabel = (typeof OPT_IN_LABELS)[number];

const LOGS = 'entries of GET /v2/events (or /v2/logs)';
const FINISHED = `${LOGS}, per message from CREATED to its final state (the tracker)`;
const OUTCOMES = ['delivered', 'failed', 'cancelled'];

export const LOGS_FAMILIES = {
  events: {
    name: 'upstash_qstash_message_events_total',
    type: 'counter',
    labelNames: ['state', ...TARGET_LABELS],
    optInLabels: OPT_IN_LABELS,
    meaning:
      'Delivery log events counted exactly once, by state (every state pre-set to 0); destination is host[:port]',
    source: LOGS,
  },
  errors: {
    name: 'upstash_qstash_delivery_errors_total',
    type: 'counter',
    labelNames: ['reason', ...TARGET_LABELS],
    labelValues: { reason: ERROR_REASONS },
    meaning: 'ERROR log events by class of failure: 4xx, 5xx, timeout, connection, other',
    source: `ERROR ${LOGS}, classed by their error text`,
  },
  duration: {
    name: 'upstash_qstash_message_duration_seconds',
    type: 'histogram',
    labelNames: ['outcome', 'queue', 'destination'],
    labelValues: { outcome: OUTCOMES },
    meaning: 'Time from CREATED to the final state of messages whose whole life was seen in the logs',
    source: FINISHED,
  },
  attempts: {
    name: 'upstash_qstash_message_attempts',
    type: 'histogram',
    labelNames: ['outcome', 'queue', 'destination'],
    labelValues: { outcome: OUTCOMES },
    meaning: 'Delivery attempts (ACTIVE entries) of finished messages whose whole life was seen in the logs',
    source: FINISHED,
  },
  inFlight: {
    name: 'upstash_qstash_messages_in_flight',
    type: 'gauge',
    labelNames: [],
    meaning: 'Messages seen in the logs and not yet in a final state (bounded tracker)',
    source: FINISHED,
  },
  queueWait: {
    name: 'upstash_qstash_message_queue_wait_seconds',
    type: 'histogram',
    labelNames: ['queue'],
    meaning:
      'Time from CREATED to the first ACTIVE beyond the delay the message asked for (queueing, parallelism, flow control), of finished messages whose CREATED was seen',
    details: "The delay asked for is the message's `notBefore`; observed when the message finished.",
    source: FINISHED,
  },
  lateness: {
    name: 'upstash_qstash_delivery_lateness_seconds',
    type: 'histogram',
    labelNames: ['queue'],
    meaning:
      'Lateness of retries: each retry attempt (ACTIVE) against the nextDeliveryTime its RETRY entry announced, of finished messages',
    details: '0 when on time; observed when the message finished.',
    source: FINISHED,
  },
  oldestInFlight: {
    name: 'upstash_qstash_oldest_in_flight_message_age_seconds',
    type: 'gauge',
    labelNames: ['queue'],
    meaning:
      'Age of the oldest message seen in flight (CREATED counted, no final state yet) per queue: a message waiting long, lag in seconds',
    details:
      '`queue=""`: not sent through a queue; absent when none; at most `logs.series_limit` queues, the oldest, the rest in `__overflow__`.',
    source: FINISHED,
  },
  evictions: {
    name: 'upstash_qstash_message_tracker_evictions_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Messages dropped from the tracker (full) before they finished',
    source: FINISHED,
  },
  lastEvent: {
    name: 'upstash_qstash_last_event_timestamp_seconds',
    type: 'gauge',
    labelNames: [],
    meaning: 'Time of the newest log event counted (0: none yet)',
    source: `time of ${LOGS}`,
  },
  daily: {
    name: 'upstash_qstash_daily_messages',
    type: 'gauge',
    labelNames: [],
    meaning: 'Messages accepted (CREATED) since 00:00 UTC, to set against upstash_qstash_plan_max_requests_per_day',
    source: `CREATED ${LOGS} of the UTC day`,
  },
} as const satisfies Record<string, Family>;

const WALK = 'the walk of the delivery logs';
const COUNTING = 'see [counting.md](counting.md)';

/** The logs walk's own families (upstash_exporter_log_*, the checkpoints), on the collector's registry. */
export const LOGS_WALK_FAMILIES = {
  lag: {
    name: 'upstash_exporter_log_lag_seconds',
    type: 'gauge',
    labelNames: [],
    meaning: "The upstream's now (its Date header; this machine's clock while it agrees) minus the logs watermark",
    details: 'Its value is as of when `/metrics` was last rendered, at most 5 s ago.',
    source: WALK,
  },
  watermark: {
    name: 'upstash_exporter_log_watermark_timestamp_seconds',
    type: 'gauge',
    labelNames: [],
    meaning: 'Newest time up to which the delivery logs are fully counted',
    source: WALK,
  },
  pages: {
    name: 'upstash_exporter_log_pages_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Log pages read',
    source: WALK,
  },
  duplicates: {
    name: 'upstash_exporter_log_duplicates_skipped_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Log entries seen again (overlap, inclusive bounds, page edges, repeated cursors) and not counted',
    source: WALK,
  },
  gaps: {
    name: 'upstash_exporter_log_gaps_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Best estimate of log events the service dropped before they were read (retention overrun)',
    source: WALK,
  },
  late: {
    name: 'upstash_exporter_log_late_events_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Log entries found at or before the watermark (visible later than the ingestion delay) and counted',
    details: `By the overlap re-read or the late-entry audit (kept in the checkpoint); growing means \`logs.ingestion_delay\` is too short (${COUNTING}).`,
    source: WALK,
  },
  missedLate: {
    name: 'upstash_exporter_log_missed_late_events_total',
    type: 'counter',
    labelNames: [],
    meaning:
      'Log entries the late-entry audit found that became visible too late to be counted (later than the lateness horizon)',
    details: `The horizon is \`logs.lateness_horizon\` (5 minutes by default; kept in the checkpoint); any increase means counts miss exactly that many events: raise \`logs.lateness_horizon\` or \`logs.ingestion_delay\` (${COUNTING}, "Late entries").`,
    source: 'the late-entry audit of the logs walk',
  },
  stateWalk: {
    name: 'upstash_exporter_log_state_walk',
    type: 'gauge',
    labelNames: [],
    meaning: '1 while log entries lack a state field and the exporter walks one filter per state',
    source: WALK,
  },
  pageSize: {
    name: 'upstash_exporter_log_page_size',
    type: 'gauge',
    labelNames: [],
    meaning:
      'Entries the log walk asks for per page: logs.page_size, or the smaller cap the service was seen to honour',
    details: 'The smaller cap: a page shorter than asked that still has a cursor.',
    source: WALK,
  },
  maxFollowable: {
    name: 'upstash_exporter_log_max_followable_events_per_second',
    type: 'gauge',
    labelNames: [],
    meaning:
      'Highest log event rate the walk can follow: the requests per second it may use on the logs endpoint (http.rate_limit_share of Burst-RateLimit-Limit) times the page size; 0 while no limit was announced',
    source: WALK,
  },
  watermarkResets: {
    name: 'upstash_exporter_log_watermark_resets_total',
    type: 'counter',
    labelNames: [],
    meaning:
      "Times the logs watermark was found ahead of the upstream's now (a clock set back, a state file from a machine whose clock ran ahead) and the walk moved back, since the process started",
    details: 'It moves back to where its de-duplication window starts.',
    source: WALK,
  },
  walkErrors: {
    name: 'upstash_exporter_log_walk_errors_total',
    type: 'counter',
    labelNames: ['code'],
    meaning: 'Log walk cycles that failed, by error code (the watermark stays where it was)',
    details:
      'Codes: the ApiError codes (`ERR_API_PAGE_TOO_LARGE`, `ERR_API_NOT_FOUND`, `ERR_API_DAILY_LIMIT`, ...), each pre-set to 0.',
    source: WALK,
  },
  checkpoints: {
    name: 'upstash_exporter_state_checkpoints_total',
    type: 'counter',
    labelNames: ['result'],
    labelValues: { result: ['success', 'error'] },
    meaning: 'Checkpoints of the logs state written, by result',
    details: 'A failed write keeps the last good file (UpstashExporterCheckpointFailing).',
    source: 'the state file writes of the logs collector',
  },
} as const satisfies Record<string, Family>;
