// Cursor chains walked side by side (docs/counting.md, "Parallel slices"): up to `parallel`
// chains each take a slice, walk it, and take the next (a chain without one waits while others
// walk, as a walk may split its slice for it), until there is none, one stops (page
// budget, the next poll due, a stall: the others end with their current slice), or one fails
// (the others are aborted; their progress so far is kept; the first error is thrown once all
// have ended, so the checkpoint after it is consistent). JavaScript runs one page's counting at
// a time, so the chains share the window and counters without locks.
import type { SliceState } from './position-schema.js';
import type { WalkOutcome } from './walk-types.js';

export type ChainStop = 'budget' | 'time' | 'stalled' | null;

export interface ChainWork {
  parallel: number;
  /** Called once with the controls of the run: how many chains wait for work, and waking them (new work: a slice split). */
  controls?(controls: { idle(): number; wake(): void }): void;
  signal: AbortSignal;
  /** The next slice to walk, given those being walked (null: none left this cycle). */
  next(busy: ReadonlySet<SliceState>): SliceState | null;
  walk(slice: SliceState, signal: AbortSignal): Promise<WalkOutcome>;
  /** After a slice's walk is done. */
  done(): Promise<void>;
}

/** Runs the chains; resolves why they stopped before the work ran out (null: it ran out). */
export async function runChains(work: ChainWork): Promise<ChainStop> {
  const failed = new AbortController();
  const signal = AbortSignal.any([work.signal, failed.signal]);
  const busy = new Set<SliceState>();
  let stopped: ChainStop = null;
  let failure: { error: unknown } | null = null;
  // Chains without a slice wait while others walk: a walk may split its slice for them.
  let waiting: Array<() => void> = [];
  const wake = (): void => {
    const woken = waiting;
    waiting = [];
    for (const resume of woken) resume();
  };
  work.controls?.({ idle: () => waiting.length, wake });
  const chain = async (): Promise<void> => {
    while (stopped === null && failure === null) {
      const slice = work.next(busy);
      if (slice === null) {
        if (busy.size === 0) return;
        await new Promise<void>((resume) => waiting.push(resume));
        continue;
      }
      busy.add(slice);
      let outcome: WalkOutcome;
      try {
        outcome = await work.walk(slice, signal);
      } catch (error) {
        failure ??= { error };
        failed.abort();
        return;
      } finally {
        busy.delete(slice);
        // The others may have work now (or none left at all: then they end).
        wake();
      }
      if (outcome === 'switched') continue;
      if (outcome !== 'done') {
        stopped ??= outcome;
        return;
      }
      await work.done();
    }
  };
  // Started one after another: each takes a slice the ones before did not.
  const running: Array<Promise<void>> = [];
  for (let i = 0; i < work.parallel; i++) running.push(chain());
  await Promise.all(running);
  if (failure !== null) throw (failure as { error: unknown }).error;
  return stopped;
}

/**
 * A long walk checkpoints at least this often, so a crash loses little work (a few seconds of
 * pages read again, counted once by the restored window) and /metrics, which shows the last
 * checkpoint's values, moves on during a catch-up well within a scrape interval.
 */
const MID_WALK_CHECKPOINT_MS = 5_000;

/**
 * A completed slice is checkpointed once this many times the last write's duration has passed
 * since it began: in a catch-up slices complete several times a second and each write
 * serialises the window and the cold store (a fifth of the walk's CPU when every completed slice
 * was written, and no page is counted meanwhile), so writes take at most about a thirtieth of
 * the walk's time (at a tenth they were still a tenth of a catch-up's CPU and more with their
 * garbage: docs/performance.md).
 */
export const CHECKPOINT_SPACING = 30;

/**
 * The chains' checkpoint writes, one at a time: chains ask for one at the same time, and one
 * asked while another is written waits for it and writes again (the state moved on).
 */
export class CheckpointGate {
  readonly #write: () => Promise<void>;
  #writing: Promise<void> | null = null;
  #last = 0;
  /** How long the last write took, ms. */
  #lastMs = 0;

  constructor(write: () => Promise<void>) {
    this.#write = write;
  }

  /** A checkpoint is due in a long walk (MID_WALK_CHECKPOINT_MS since the last, or since restartClock). */
  get due(): boolean {
    return performance.now() - this.#last >= MID_WALK_CHECKPOINT_MS;
  }

  restartClock(): void {
    this.#last = performance.now();
  }

  /** The checkpoint being written (null: none); nothing is counted meanwhile. */
  get writing(): Promise<void> | null {
    return this.#writing;
  }

  /**
   * A checkpoint at a completed slice: written once CHECKPOINT_SPACING times the last write's
   * duration has passed (at least every MID_WALK_CHECKPOINT_MS); none is queued behind a write
   * under way (it began less than its own duration ago).
   */
  async writeSpaced(): Promise<void> {
    const sinceLast = performance.now() - this.#last;
    if (this.#writing === null && sinceLast >= Math.min(MID_WALK_CHECKPOINT_MS, CHECKPOINT_SPACING * this.#lastMs))
      await this.write();
  }

  async write(): Promise<void> {
    while (this.#writing !== null) await this.#writing;
    const started = performance.now();
    this.#last = started;
    const writing = this.#write();
    this.#writing = writing;
    try {
      await writing;
    } finally {
      this.#writing = null;
      this.#lastMs = performance.now() - started;
    }
  }
}
