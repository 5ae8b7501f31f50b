// The poll every inventory collector shares (schedules, queues, url_groups, dlq, flow_control,
// account, usage, search, vector): fetch, then turn the answer into a fresh registry and swap it
// in (src/metrics/snapshot.ts). A failed fetch or fill rejects the poll and leaves the previous
// snapshot served.

import type { Registry } from 'prom-client';
import type { Logger } from '../../logging/index.js';
import type { SeriesCounters } from '../../metrics/cardinality.js';
import { SnapshotRegistry } from '../../metrics/snapshot.js';
import type { Collector, CollectorName, PollContext } from '../collector.js';
import { cadenceNote, INVENTORY_SERIES_LIMIT, type FamilyContext } from './gauges.js';

/** Series cap and self-counters of an inventory collector's families. */
export interface InventoryBounds extends SeriesCounters {
  /** Most series per family and poll (INVENTORY_SERIES_LIMIT unless a test lowers it). */
  seriesLimit?: number;
}

export abstract class SnapshotCollector<Name extends CollectorName, Data> implements Collector {
  readonly name: Name;
  /** What every family of the collector is registered with: HELP cadence, series cap, counters. */
  protected readonly families: FamilyContext;
  readonly #snapshot = new SnapshotRegistry();

  /** `polledEveryMs`: the interval the runner polls at, from the poll schedule (polledIntervalMs). */
  protected constructor(name: Name, polledEveryMs: number, bounds: InventoryBounds = {}) {
    this.name = name;
    this.families = {
      cadence: cadenceNote(name, polledEveryMs),
      seriesLimit: bounds.seriesLimit ?? INVENTORY_SERIES_LIMIT,
      ...(bounds.dropped ? { dropped: bounds.dropped } : {}),
      ...(bounds.truncated ? { truncated: bounds.truncated } : {}),
    };
  }

  get registry(): Registry {
    return this.#snapshot.current;
  }

  async poll(ctx: PollContext): Promise<void> {
    const data = await this.fetch(ctx);
    await this.#snapshot.build((registry) => this.fill(registry, data, ctx.logger));
  }

  /** Everything the poll needs from upstream; nothing is registered yet. */
  protected abstract fetch(ctx: PollContext): Promise<Data>;

  /** Turns the data in hand into metrics of `registry` (no I/O). */
  protected abstract fill(registry: Registry, data: Data, logger: Logger): void;
}
