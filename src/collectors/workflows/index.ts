// Factory of the workflows collector for the collector list (src/collectors/index.ts).
import type { ExporterConfig } from '../../config/index.js';
import { upstreamIdentity } from '../../state/index.js';
import type { Collector, CollectorDeps } from '../collector.js';
import { WorkflowsCollector } from './collector.js';

export { WorkflowsCollector, type WorkflowsCollectorOptions } from './collector.js';

export function createWorkflowsCollector(config: ExporterConfig, deps: CollectorDeps): Collector | null {
  if (deps.delivery === null || config.qstash.token === null) return null;
  const schedule = deps.schedule;
  const { ingestionDelayMs, overlapMs, maxPagesPerCycle, pageSize } = config.logs;
  return new WorkflowsCollector({
    client: deps.delivery,
    // The delivery logs' walk settings: the same service writes both logs.
    settings: { ingestionDelayMs, overlapMs, maxPagesPerCycle, pageSize },
    stateFile: config.stateFile,
    upstream: upstreamIdentity(config.qstash.url, config.qstash.token),
    logger: deps.logger.child({ collector: 'workflows' }),
    availability: deps.selfMetrics.endpointAvailable,
    ...(deps.now
      ? { now: deps.now }
      : schedule
        ? { nextPollAt: (now: number) => schedule.nextPollAt('workflows', now) }
        : {}),
  });
}
