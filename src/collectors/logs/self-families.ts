// The logs collector's own families besides the event counters: pages, lag, watermark, late and
// missed entries, gaps, walk errors, checkpoints. They read a published copy of the collector's
// numbers, refreshed at each checkpoint (so /metrics never shows a value a crash could take back).
import type { Registry } from 'prom-client';
import { API_ERROR_CODES } from '../../api/errors.js';
import { utcDay } from './daily.js';
import { computedCounter, computedGauge } from '../walk/families.js';

export interface PublishedNumbers {
  pages: number;
  duplicates: number;
  gaps: number;
  late: number;
  missedLate: number;
  evictions: number;
  checkpointsOk: number;
  checkpointsFailed: number;
  watermark: number;
  lastEventTime: number;
  inFlight: number;
  stateWalk: boolean;
  pageSize: number;
  /** Requests per second the walk may make on the logs endpoint (its share of the announced limit); null: unknown. */
  allowedRequestsPerSecond: number | null;
  /** Failed cycles by error code. */
  errors: Map<string, number>;
  daily: { day: number; count: number };
  /** Times the watermark was found ahead of the upstream's now and moved back, since the process started. */
  watermarkResets: number;
}

/** Every number at its start value; every ApiError code at 0 so rate() sees the first failure. */
export function initialNumbers(): PublishedNumbers {
  return {
    pages: 0,
    duplicates: 0,
    gaps: 0,
    late: 0,
    missedLate: 0,
    evictions: 0,
    checkpointsOk: 0,
    checkpointsFailed: 0,
    watermark: 0,
    lastEventTime: 0,
    inFlight: 0,
    stateWalk: false,
    pageSize: 0,
    allowedRequestsPerSecond: null,
    /** Failed cycles by error code; every ApiError code starts at 0 so rate() sees the first failure. */
    errors: new Map<string, number>([...API_ERROR_CODES, 'ERR_UNKNOWN'].map((code) => [code, 0])),
    daily: { day: 0, count: 0 },
    watermarkResets: 0,
  };
}

/** Registers the families on the collector's registry; `now` is the upstream's now (what the walk reads up to). */
export function registerLogsSelfFamilies(registry: Registry, p: PublishedNumbers, now: () => number): void {
  const one = (value: number): Array<{ labels: Record<never, string>; value: number }> => [{ labels: {}, value }];

  computedGauge(
    registry,
    {
      name: 'upstash_qstash_messages_in_flight',
      help: 'Messages seen in the logs and not yet in a final state (bounded tracker)',
    },
    () => p.inFlight,
  );
  computedCounter(
    registry,
    {
      name: 'upstash_qstash_message_tracker_evictions_total',
      help: 'Messages dropped from the tracker (full) before they finished',
    },
    () => one(p.evictions),
  );
  computedGauge(
    registry,
    { name: 'upstash_qstash_last_event_timestamp_seconds', help: 'Time of the newest log event counted (0: none yet)' },
    () => p.lastEventTime / 1000,
  );
  computedGauge(
    registry,
    {
      name: 'upstash_qstash_daily_messages',
      help: 'Messages accepted (CREATED) since 00:00 UTC, to set against upstash_qstash_plan_max_requests_per_day',
    },
    () => (utcDay(now()) === p.daily.day ? p.daily.count : 0),
  );
  computedGauge(
    registry,
    {
      name: 'upstash_exporter_log_lag_seconds',
      help: "The upstream's now (its Date header; this machine's clock while it agrees) minus the logs watermark",
    },
    () => Math.max(0, now() - p.watermark) / 1000,
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_watermark_resets_total',
      help: "Times the logs watermark was found ahead of the upstream's now (a clock set back, a state file from a machine whose clock ran ahead) and the walk moved back, since the process started",
    },
    () => one(p.watermarkResets),
  );
  computedGauge(
    registry,
    {
      name: 'upstash_exporter_log_watermark_timestamp_seconds',
      help: 'Newest time up to which the delivery logs are fully counted',
    },
    () => p.watermark / 1000,
  );
  computedCounter(registry, { name: 'upstash_exporter_log_pages_total', help: 'Log pages read' }, () => one(p.pages));
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_duplicates_skipped_total',
      help: 'Log entries seen again (overlap, inclusive bounds, page edges, repeated cursors) and not counted',
    },
    () => one(p.duplicates),
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_gaps_total',
      help: 'Best estimate of log events the service dropped before they were read (retention overrun)',
    },
    () => one(p.gaps),
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_late_events_total',
      help: 'Log entries found at or before the watermark (visible later than the ingestion delay) and counted',
    },
    () => one(p.late),
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_missed_late_events_total',
      help: 'Log entries the late-entry audit found that became visible too late to be counted (later than the lateness horizon)',
    },
    () => one(p.missedLate),
  );
  computedGauge(
    registry,
    {
      name: 'upstash_exporter_log_state_walk',
      help: '1 while log entries lack a state field and the exporter walks one filter per state',
    },
    () => (p.stateWalk ? 1 : 0),
  );
  computedGauge(
    registry,
    {
      name: 'upstash_exporter_log_page_size',
      help: 'Entries the log walk asks for per page: logs.page_size, or the smaller cap the service was seen to honour',
    },
    () => p.pageSize,
  );
  computedGauge(
    registry,
    {
      name: 'upstash_exporter_log_max_followable_events_per_second',
      help: 'Highest log event rate the walk can follow: the requests per second it may use on the logs endpoint (http.rate_limit_share of Burst-RateLimit-Limit) times the page size; 0 while no limit was announced',
    },
    () => (p.allowedRequestsPerSecond === null ? 0 : p.allowedRequestsPerSecond * p.pageSize),
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_log_walk_errors_total',
      help: 'Log walk cycles that failed, by error code (the watermark stays where it was)',
      labelNames: ['code'] as const,
    },
    () => [...p.errors].map(([code, value]) => ({ labels: { code }, value })),
  );
  computedCounter(
    registry,
    {
      name: 'upstash_exporter_state_checkpoints_total',
      help: 'Checkpoints of the logs state written, by result',
      labelNames: ['result'] as const,
    },
    () => [
      { labels: { result: 'success' }, value: p.checkpointsOk },
      { labels: { result: 'error' }, value: p.checkpointsFailed },
    ],
  );
}
