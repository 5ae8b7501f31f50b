// Builds the enabled collectors from the one list (src/config/collector-catalogue.ts) and the
// loader of each below. Adding a collector touches its own module, its row in the catalogue and
// its loader here, nothing else: the runner, the server and the self metrics work from what
// this returns.

import { COLLECTOR_NAMES, COLLECTOR_SCOPES, type CollectorName } from '../config/collector-catalogue.js';
import type { ExporterConfig } from '../config/index.js';
import { setRegistryLabels } from '../metrics/default-labels.js';
import { claimStateFile, upstreamIdentity } from '../state/index.js';
import type { Collector, CollectorDeps, CollectorFactory, CollectorRegion } from './collector.js';

export type {
  Collector,
  CollectorDeps,
  CollectorFactory,
  CollectorName,
  CollectorRegion,
  PollContext,
} from './collector.js';

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

/**
 * The enabled collectors, in the canonical order of the catalogue; a disabled one is never
 * loaded. A region-scoped collector is built once per watched region, with that region's
 * clients, and every series of its registry carries `qstash_region` (without any QStash region,
 * account and usage are built once, unlabelled, for the account's legacy record).
 */
export async function buildCollectors(config: ExporterConfig, deps: CollectorDeps): Promise<Collector[]> {
  const regions: readonly CollectorRegion[] =
    deps.regions ??
    config.qstash.regions.map((region) => ({ ...region, delivery: deps.delivery, management: deps.management }));
  claimRegionParts(config, regions, deps);
  const collectors: Collector[] = [];
  for (const name of COLLECTOR_NAMES) {
    if (!config.collectors[name].enabled) continue;
    const factory: CollectorFactory = await LOADERS[name]();
    const scoped = COLLECTOR_SCOPES[name] === 'region' && regions.length > 0;
    for (const region of scoped ? regions : [null]) {
      const instanceDeps: CollectorDeps =
        region === null
          ? deps
          : {
              ...deps,
              delivery: region.delivery,
              management: region.management,
              region,
            };
      const collector = factory(config, instanceDeps);
      if (collector === null) {
        deps.logger.warn(
          { collector: name, ...(region === null ? {} : { qstash_region: region.name }) },
          'collector is enabled but its API client is missing; skipping it',
        );
        continue;
      }
      collectors.push(region === null ? collector : inRegion(collector, region.name));
    }
  }
  return collectors;
}

/**
 * Every region's checkpoint is its part of the one state file: tells each region where its part
 * is before their collectors read it, and says once which regions no longer configured keep
 * theirs (untouched, resumed when the region is watched again).
 */
function claimRegionParts(config: ExporterConfig, regions: readonly CollectorRegion[], deps: CollectorDeps): void {
  const stateFile = deps.stateFile === undefined ? config.stateFile : deps.stateFile;
  if (stateFile === null || regions.length === 0) return;
  const { kept } = claimStateFile(
    stateFile,
    regions.map((region) => ({ name: region.name, upstream: upstreamIdentity(region.url, region.token) })),
  );
  for (const region of kept)
    deps.logger.info(
      { qstash_region: region, path: stateFile },
      `the state file keeps the checkpoint of qstash_region="${region}", which is not configured: it is left as it is, and the region resumes from it when it is watched again`,
    );
}

/** A region-scoped instance: its region named, and `qstash_region` on every series of whatever registry it serves. */
function inRegion(collector: Collector, region: string): Collector {
  const labels = { qstash_region: region };
  return {
    name: collector.name,
    region,
    get registry() {
      const registry = collector.registry;
      setRegistryLabels(registry, labels);
      return registry;
    },
    poll: (ctx) => collector.poll({ ...ctx, qstashRegion: region }),
    ...(collector.close === undefined ? {} : { close: () => collector.close!() }),
    ...(collector.summary === undefined ? {} : { summary: () => collector.summary!() }),
    ...(collector.deferOverlappingTick === undefined ? {} : { deferOverlappingTick: collector.deferOverlappingTick }),
  };
}
