// The poll every inventory collector (schedules, account, search, vector) shares: fetch, then
// turn the answer into a fresh registry and swap it in (src/metrics/snapshot.ts). A failed fetch
// or fill rejects the poll and leaves the previous snapshot served.

import type { Registry } from 'prom-client';
import type { Logger } from '../../logging/index.js';
import { SnapshotRegistry } from '../../metrics/snapshot.js';
import type { Collector, CollectorName, PollContext } from '../collector.js';
import { cadenceNote } from './gauges.js';

export abstract class SnapshotCollector<Name extends CollectorName, Data> implements Collector {
  readonly name: Name;
  /** The sentence that ends every HELP text of the collector (cadenceNote). */
  protected readonly cadence: string;
  readonly #snapshot = new SnapshotRegistry();

  protected constructor(name: Name, intervalMs: number) {
    this.name = name;
    this.cadence = cadenceNote(name, intervalMs);
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
