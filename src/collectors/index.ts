// Builds the enabled collectors from the one list (src/config/collector-catalogue.ts) and the
// loader of each below. Adding a collector touches its own module, its row in the catalogue and
// its loader here, nothing else: the runner, the server and the self metrics work from what
// this returns.

import { COLLECTOR_NAMES, type CollectorName } from '../config/collector-catalogue.js';
import type { ExporterConfig } from '../config/index.js';
import type { Collector, CollectorDeps, CollectorFactory } from './collector.js';

export type { Collector, CollectorDeps, CollectorFactory, CollectorName, PollContext } from './collector.js';

type Loader = () => Promise<CollectorFactory>;

/** Each collector's module, imported only when the collector is enabled. */
const LOADERS = {
  logs: async () => (await import('./logs/index.js')).createLogsCollector,
  schedules: async () => (await import('./schedules.js')).createSchedulesCollector,
  queues: async () => (await import('./queues.js')).createQueuesCollector,
  url_groups: async () => (await import('./url-groups.js')).createUrlGroupsCollector,
  dlq: async () => (await import('./dlq.js')).createDlqCollector,
  flow_control: async () => (await import('./flow-control.js')).createFlowControlCollector,
  account: async () => (await import('./account.js')).createAccountCollector,
  search: async () => (await import('./search.js')).createSearchCollector,
  vector: async () => (await import('./vector.js')).createVectorCollector,
  usage: async () => (await import('./usage.js')).createUsageCollector,
  workflows: async () => (await import('./workflows/index.js')).createWorkflowsCollector,
  redis: async () => (await import('./redis/index.js')).createRedisCollector,
} satisfies Record<CollectorName, Loader>;

/** The enabled collectors, in the canonical order of the catalogue; a disabled one is never loaded. */
export async function buildCollectors(config: ExporterConfig, deps: CollectorDeps): Promise<Collector[]> {
  const collectors: Collector[] = [];
  for (const name of COLLECTOR_NAMES) {
    if (!config.collectors[name].enabled) continue;
    const factory: CollectorFactory = await LOADERS[name]();
    const collector = factory(config, deps);
    if (collector === null) {
      deps.logger.warn({ collector: name }, 'collector is enabled but its API client is missing; skipping it');
      continue;
    }
    collectors.push(collector);
  }
  return collectors;
}
