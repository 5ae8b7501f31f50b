// Snapshots for inventory collectors: each poll builds a brand-new Registry and swaps the
// reference in only when the build succeeded. A scrape reads whichever registry is current, so
// it never sees a half-built poll, and series of deleted resources vanish with the old registry
// (the YACE pattern; prom-client has no TTL for stale label sets).

import { Registry } from 'prom-client';

/** A registry in the text exposition format 0.0.4, the one every part of the exporter serves. */
export function createRegistry(): Registry {
  return new Registry();
}

export class SnapshotRegistry {
  #current: Registry;
  #swaps = 0;

  /** Starts with an empty registry: a collector that never succeeded serves no series. */
  constructor(initial: Registry = createRegistry()) {
    this.#current = initial;
  }

  /** The registry of the last successful build; what /metrics renders. */
  get current(): Registry {
    return this.#current;
  }

  /** Successful builds so far. */
  get swaps(): number {
    return this.#swaps;
  }

  /**
   * Builds the next snapshot into a fresh registry and swaps it in. If `fill` throws (or its
   * promise rejects) the previous snapshot stays current and the error propagates, so the
   * collector's poll fails with the old data still served.
   *
   * Fetch first, then fill: `fill` should only turn data already in hand into metrics.
   */
  async build(fill: (registry: Registry) => void | Promise<void>): Promise<Registry> {
    const next = createRegistry();
    await fill(next);
    this.#current = next;
    this.#swaps += 1;
    return next;
  }
}
