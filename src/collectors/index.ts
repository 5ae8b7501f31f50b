// Builds the enabled collectors from the one list (catalogue.ts). Adding a collector touches
// its own module and its row in the catalogue, nothing else: the runner, the server and the
// self metrics work from what this returns.

import type { ExporterConfig } from '../config/index.js';
import { COLLECTOR_CATALOGUE } from './catalogue.js';
import type { Collector, CollectorDeps, CollectorFactory } from './collector.js';

export type { Collector, CollectorDeps, CollectorFactory, CollectorName, PollContext } from './collector.js';

/** The enabled collectors, in the canonical order of the catalogue; a disabled one is never loaded. */
export async function buildCollectors(config: ExporterConfig, deps: CollectorDeps): Promise<Collector[]> {
  const collectors: Collector[] = [];
  for (const entry of COLLECTOR_CATALOGUE) {
    if (!config.collectors[entry.name].enabled) continue;
    const factory: CollectorFactory = await entry.load();
    const collector = factory(config, deps);
    if (collector === null) {
      deps.logger.warn({ collector: entry.name }, 'collector is enabled but its API client is missing; skipping it');
      continue;
    }
    collectors.push(collector);
  }
  return collectors;
}
