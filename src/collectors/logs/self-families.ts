// The logs collector's own families besides the event counters: pages, lag, watermark, late and
// missed entries, gaps, walk errors, checkpoints. They read a published copy of the collector's
// numbers, refreshed at each checkpoint (so /metrics never shows a value a crash could take back).
// Each is created from its row in families.ts.
import type { Registry } from 'prom-client';
import { API_ERROR_CODES } from '../../api/errors.js';
import { utcDay } from './daily.js';
import { computedCounter, computedGauge } from '../walk/families.js';
import { metricOptions } from '../../metrics/families.js';
import { LOGS_FAMILIES, LOGS_WALK_FAMILIES } from './families.js';

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

  computedGauge(registry, metricOptions(LOGS_FAMILIES.inFlight), () => p.inFlight);
  computedCounter(registry, metricOptions(LOGS_FAMILIES.evictions), () => one(p.evictions));
  computedGauge(registry, metricOptions(LOGS_FAMILIES.lastEvent), () => p.lastEventTime / 1000);
  computedGauge(registry, metricOptions(LOGS_FAMILIES.daily), () =>
    utcDay(now()) === p.daily.day ? p.daily.count : 0,
  );
  computedGauge(registry, metricOptions(LOGS_WALK_FAMILIES.lag), () => Math.max(0, now() - p.watermark) / 1000);
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.watermarkResets), () => one(p.watermarkResets));
  computedGauge(registry, metricOptions(LOGS_WALK_FAMILIES.watermark), () => p.watermark / 1000);
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.pages), () => one(p.pages));
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.duplicates), () => one(p.duplicates));
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.gaps), () => one(p.gaps));
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.late), () => one(p.late));
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.missedLate), () => one(p.missedLate));
  computedGauge(registry, metricOptions(LOGS_WALK_FAMILIES.stateWalk), () => (p.stateWalk ? 1 : 0));
  computedGauge(registry, metricOptions(LOGS_WALK_FAMILIES.pageSize), () => p.pageSize);
  computedGauge(registry, metricOptions(LOGS_WALK_FAMILIES.maxFollowable), () =>
    p.allowedRequestsPerSecond === null ? 0 : p.allowedRequestsPerSecond * p.pageSize,
  );
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.walkErrors), () =>
    [...p.errors].map(([code, value]) => ({ labels: { code }, value })),
  );
  computedCounter(registry, metricOptions(LOGS_WALK_FAMILIES.checkpoints), () => [
    { labels: { result: 'success' }, value: p.checkpointsOk },
    { labels: { result: 'error' }, value: p.checkpointsFailed },
  ]);
}
