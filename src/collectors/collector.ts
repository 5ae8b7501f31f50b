// The contract every collector implements (docs/architecture.md, "Collector framework").
// Polling happens in the background into snapshots; a scrape only reads them.

import type { Logger } from '../logging/index.js';
import type { Registry } from 'prom-client';
import type { CollectorName } from '../config/settings.js';

export type { CollectorName } from '../config/settings.js';
export { COLLECTOR_NAMES } from '../config/settings.js';

export interface PollContext {
  /** Aborted when the exporter shuts down and the poll outlives the stop deadline. */
  signal: AbortSignal;
  /** Wall clock in unix milliseconds (injectable for tests). */
  now(): number;
  /** Child logger bound to `{ collector: name }`. */
  logger: Logger;
}

export interface Collector {
  readonly name: CollectorName;
  /** The metrics as of the last successful poll. Read by /metrics; never touches the network. */
  readonly registry: Registry;
  /** One poll: fetch, build the next snapshot, swap it in. Rejects on failure and keeps the
   *  previous snapshot (served with collector_success 0). */
  poll(ctx: PollContext): Promise<void>;
  /** Shutdown hook after the last poll (the logs collector writes its checkpoint here). */
  close?(): Promise<void>;
}
