// How much the next slice near the frontier re-reads before the watermark (docs/counting.md,
// "Ingestion delay and overlap"). The configured overlap is the floor. Entries found at or
// before the watermark (late: visible after the ingestion delay) make it grow, doubling from at
// least MIN_GROWN_OVERLAP_MS up to MAX_GROWN_OVERLAP_MS, so a lag that outgrows the delay is
// caught more widely; CLEAN_SLICES_TO_SHRINK slices in a row without one halve it back. Held in
// memory: a restart starts again from the configured overlap.
import type { Logger } from '../../logging/index.js';

export const MIN_GROWN_OVERLAP_MS = 1_000;
export const MAX_GROWN_OVERLAP_MS = 60_000;
export const CLEAN_SLICES_TO_SHRINK = 8;

export class AdaptiveOverlap {
  readonly #configuredMs: number;
  readonly #maxGrownMs: number;
  readonly #ingestionDelayMs: number;
  readonly #logger: Logger;
  #currentMs: number;
  #cleanSlices = 0;

  constructor(options: { configuredMs: number; ingestionDelayMs: number; logger: Logger; maxGrownMs?: number }) {
    this.#configuredMs = options.configuredMs;
    this.#maxGrownMs = options.maxGrownMs ?? MAX_GROWN_OVERLAP_MS;
    this.#ingestionDelayMs = options.ingestionDelayMs;
    this.#logger = options.logger;
    this.#currentMs = options.configuredMs;
  }

  /** The overlap the next slice near the frontier re-reads when the walk has time to spare. */
  get currentMs(): number {
    return this.#currentMs;
  }

  /** Longer than configured: late entries were seen lately, so the overlap is read in full. */
  get grown(): boolean {
    return this.#currentMs > this.#configuredMs;
  }

  /** After a slice up to the frontier in which `late` late entries were counted. */
  afterSlice(late: number): void {
    const before = this.#currentMs;
    if (late > 0) {
      this.#cleanSlices = 0;
      const ceiling = Math.max(this.#configuredMs, this.#maxGrownMs);
      this.#currentMs = Math.min(ceiling, Math.max(Math.min(MIN_GROWN_OVERLAP_MS, ceiling), 2 * before));
    } else if (before > this.#configuredMs && ++this.#cleanSlices >= CLEAN_SLICES_TO_SHRINK) {
      this.#cleanSlices = 0;
      this.#currentMs = Math.max(this.#configuredMs, before / 2);
    }
    if (this.#currentMs === before) return;
    this.#logger.info(
      {
        lateEntries: late,
        overlapSeconds: this.#currentMs / 1000,
        ingestionDelaySeconds: this.#ingestionDelayMs / 1000,
      },
      this.#currentMs > before
        ? 'log entries became visible after the ingestion delay: re-reading a longer overlap (a longer logs.ingestion_delay avoids it)'
        : 'no late log entries for a while: re-reading a shorter overlap again',
    );
  }
}
