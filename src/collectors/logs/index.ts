// Factory of the logs collector for the collector list (src/collectors/index.ts).
import type { ExporterConfig } from '../../config/index.js';
import { upstreamIdentity } from '../../state/index.js';
import { qstashRegionOf, type Collector, type CollectorDeps } from '../collector.js';
import { LogsCollector } from './collector.js';

export { LogsCollector, type LogsCollectorOptions, type LogsSettings } from './collector.js';
export type { CycleReport, GapReport, LogsSource, WalkPosition } from '../walk/walker.js';

export function createLogsCollector(config: ExporterConfig, deps: CollectorDeps): Collector | null {
  const region = qstashRegionOf(config, deps);
  if (deps.delivery === null || region === null) return null;
  // A cycle stops when the next poll starts (schedule.ts). With a clock of its own (tests), the
  // collector is not told.
  const schedule = deps.schedule;
  return new LogsCollector({
    source: deps.delivery,
    settings: config.logs,
    stateFile: deps.stateFile === undefined ? config.stateFile : deps.stateFile,
    upstream: upstreamIdentity(region.url, region.token),
    stateRegion: deps.region?.name,
    dropped: deps.selfMetrics.seriesDropped,
    truncated: deps.selfMetrics.labelValuesTruncated,
    logger: deps.logger.child({ collector: 'logs', ...(deps.region ? { qstash_region: deps.region.name } : {}) }),
    ...(deps.now
      ? { now: deps.now }
      : schedule
        ? { nextPollAt: (now: number) => schedule.nextPollAt('logs', now) }
        : {}),
  });
}
