// Factory of the workflows collector for the collector list (src/collectors/index.ts).
import { probeWorkflowUrl, type ExporterConfig } from '../../config/index.js';
import { upstreamIdentity } from '../../state/index.js';
import { qstashRegionOf, type Collector, type CollectorDeps } from '../collector.js';
import { WorkflowsCollector } from './collector.js';

export { WorkflowsCollector, type WorkflowsCollectorOptions } from './collector.js';

export function createWorkflowsCollector(config: ExporterConfig, deps: CollectorDeps): Collector | null {
  const region = qstashRegionOf(config, deps);
  if (deps.delivery === null || region === null) return null;
  const schedule = deps.schedule;
  const { ingestionDelayMs, overlapMs, maxPagesPerCycle, pageSize } = config.logs;
  return new WorkflowsCollector({
    client: deps.delivery,
    // The delivery logs' walk settings: the same service writes both logs.
    settings: { ingestionDelayMs, overlapMs, maxPagesPerCycle, pageSize },
    stateFile: deps.stateFile === undefined ? config.stateFile : deps.stateFile,
    upstream: upstreamIdentity(region.url, region.token),
    stateRegion: deps.region?.name,
    logger: deps.logger.child({ collector: 'workflows', ...(deps.region ? { qstash_region: deps.region.name } : {}) }),
    availability: deps.selfMetrics.endpointAvailable,
    probeWorkflowUrl: probeWorkflowUrl(config, region.name),
    ...(deps.now
      ? { now: deps.now }
      : schedule
        ? { nextPollAt: (now: number) => schedule.nextPollAt('workflows', now) }
        : {}),
  });
}
