// Factory of the logs collector for the collector list (src/collectors/index.ts).
import type { ExporterConfig } from '../../config/index.js';
import { upstreamIdentity } from '../../state/index.js';
import type { Collector } from '../collector.js';
import type { CollectorDeps } from '../collector.js';
import { cronForInterval } from '../runner.js';
import { LogsCollector } from './collector.js';

export { LogsCollector, type LogsCollectorOptions, type LogsSettings } from './collector.js';
export type { CycleReport, GapReport, LogsSource, WalkPosition } from './walker.js';

export function createLogsCollector(config: ExporterConfig, deps: CollectorDeps): Collector | null {
  if (deps.delivery === null || config.qstash.token === null) return null;
  // The runner polls on a cron step (cronForInterval), which fires at multiples of the interval
  // on the clock (time zones are whole minutes off UTC; a step of minutes that does not divide
  // a zone's offset would stop cycles early or late, never wrongly). With a clock of its own
  // (tests), the collector is not told.
  const intervalMs = cronForInterval(config.collectors.logs.intervalMs).intervalMs;
  const nextPollAt = (now: number): number => (Math.floor(now / intervalMs) + 1) * intervalMs;
  return new LogsCollector({
    source: deps.delivery,
    settings: config.logs,
    stateFile: config.stateFile,
    upstream: upstreamIdentity(config.qstash.url, config.qstash.token),
    dropped: deps.selfMetrics.seriesDropped,
    truncated: deps.selfMetrics.labelValuesTruncated,
    logger: deps.logger.child({ collector: 'logs' }),
    ...(deps.now ? { now: deps.now } : { nextPollAt }),
  });
}
