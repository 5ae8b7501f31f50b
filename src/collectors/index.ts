// The one list of collectors. Adding a collector touches its own file and the FACTORIES table
// below, nothing else: the runner, the server and the self metrics work from what this returns.

import type { DeliveryClient } from '../api/delivery.js';
import type { ManagementClient } from '../api/management.js';
import type { ExporterConfig } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import type { SelfMetrics } from '../metrics/self.js';
import { COLLECTOR_NAMES, type Collector, type CollectorName } from './collector.js';
import { createLogsCollector } from './logs/index.js';
import { createAccountCollector } from './account.js';
import { createSchedulesCollector } from './schedules.js';
import { createSearchCollector } from './search.js';
import { createVectorCollector } from './vector.js';

export type { Collector, CollectorName, PollContext } from './collector.js';

export interface CollectorDeps {
  /** QStash client; null without a token. */
  delivery: DeliveryClient | null;
  /** Management API client; null without email and API key. */
  management: ManagementClient | null;
  selfMetrics: SelfMetrics;
  logger: Logger;
  /** Wall clock, unix ms (tests inject one). */
  now?: () => number;
}

/**
 * Builds one collector from the configuration, or returns null when a dependency it needs is
 * missing (the configuration normally disables such a collector already).
 */
export type CollectorFactory = (config: ExporterConfig, deps: CollectorDeps) => Collector | null;

/** Collector name -> factory. Each collector's author adds its line here. */
const FACTORIES: Partial<Record<CollectorName, CollectorFactory>> = {
  logs: createLogsCollector,
  schedules: createSchedulesCollector,
  account: createAccountCollector,
  search: createSearchCollector,
  vector: createVectorCollector,
};

/** The enabled collectors, in the canonical order of COLLECTOR_NAMES. */
export function buildCollectors(config: ExporterConfig, deps: CollectorDeps): Collector[] {
  const collectors: Collector[] = [];
  for (const name of COLLECTOR_NAMES) {
    if (!config.collectors[name].enabled) continue;
    const factory = FACTORIES[name];
    if (factory === undefined) {
      deps.logger.warn({ collector: name }, 'collector is enabled but not part of this build; skipping it');
      continue;
    }
    const collector = factory(config, deps);
    if (collector === null) {
      deps.logger.warn({ collector: name }, 'collector is enabled but its API client is missing; skipping it');
      continue;
    }
    collectors.push(collector);
  }
  return collectors;
}
