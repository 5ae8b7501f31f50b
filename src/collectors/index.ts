// Builds the enabled collectors from the one list (src/config/collector-catalogue.ts) and the
// loader of each below. Adding a collector touches its own module, its row in the catalogue and
// its loader here, nothing else: the runner, the server and the self metrics work from what
// this returns.

import { COLLECTOR_NAMES, COLLECTOR_SCOPES, type CollectorName } from '../config/collector-catalogue.js';
import type { ExporterConfig } from '../config/index.js';
import { setRegistryLabels } from '../metrics/default-labels.js';
import { upstreamIdentity, writtenFor } from '../state/index.js';
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
  const fileOwner = stateFileOwner(config.stateFile, regions);
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
              stateFile: regionStateFile(config.stateFile, region.name, fileOwner),
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
 * The region whose checkpoint the configured state file holds: the one it was written for (a
 * single-region exporter's file is taken over by its region, whichever it is), else the first.
 */
export function stateFileOwner(
  stateFile: string | null,
  regions: readonly { name: string; url: string; token: string }[],
): string | null {
  if (stateFile === null) return null;
  const written = writtenFor(stateFile);
  return (regions.find((region) => upstreamIdentity(region.url, region.token) === written) ?? regions[0])?.name ?? null;
}

/**
 * A region's state file: the configured one for the region that owns it (stateFileOwner),
 * `<name>.<region>.json` beside it for every other region.
 */
export function regionStateFile(stateFile: string | null, region: string, owner: string | null): string | null {
  if (stateFile === null || owner === region) return stateFile;
  const dot = stateFile.lastIndexOf('.');
  const slash = stateFile.lastIndexOf('/');
  return dot > slash + 1 ? `${stateFile.slice(0, dot)}.${region}${stateFile.slice(dot)}` : `${stateFile}.${region}`;
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
    poll: (ctx) => collector.poll(ctx),
    ...(collector.close === undefined ? {} : { close: () => collector.close!() }),
    ...(collector.summary === undefined ? {} : { summary: () => collector.summary!() }),
    ...(collector.deferOverlappingTick === undefined ? {} : { deferOverlappingTick: collector.deferOverlappingTick }),
  };
}
