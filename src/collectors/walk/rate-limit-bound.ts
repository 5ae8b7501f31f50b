// Whether the rate limit bounds the walk, judged from what the upstream said (its announced limit
// and the requests it held back: CycleClock), not from durations. A slow upstream or a busy CPU
// is not this case: then the walk falls behind and the re-read shrinks by itself (slice.ts,
// nextFrom). Its changes are logged.
import type { Logger } from '../../logging/index.js';
import type { CycleClock, RateLimitFacts } from './cycle-clock.js';
import type { LogsSource } from './walk-types.js';

export class RateLimitBound {
  readonly #source: LogsSource;
  readonly #clock: CycleClock;
  readonly #logger: Logger;
  #bound = false;

  constructor(source: LogsSource, clock: CycleClock, logger: Logger) {
    this.#source = source;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** The last judgement. */
  get bound(): boolean {
    return this.#bound;
  }

  /** What the source knows of the logs endpoint's rate limit (cycle-clock.ts). */
  facts(): RateLimitFacts {
    return {
      held: this.#source.logsRateLimitHeld?.() ?? 0,
      allowedPerSecond: this.#source.logsRateLimit?.()?.allowedPerSecond,
    };
  }

  /** The rate limit held the cycle back (CycleClock.heldBack). */
  heldBack(now: number): boolean {
    return this.#clock.heldBack(now, this.facts());
  }

  /** Judges a cycle that covered `coveredMs` of log time (CycleClock.rateLimitBound) and keeps the verdict. */
  judge(now: number, coveredMs: number, overlapMs: number): boolean {
    const bound = this.#clock.rateLimitBound(now, this.facts(), coveredMs, overlapMs);
    this.set(bound, overlapMs);
    return bound;
  }

  set(bound: boolean, overlapMs: number): void {
    if (bound !== this.#bound) {
      this.#bound = bound;
      this.#logger.info(
        { overlapSeconds: bound ? 0 : overlapMs / 1000 },
        bound
          ? 'the rate limit bounds the log walk: the overlap is not re-read while it does (late entries are then counted by the late-entry audit, within the lateness horizon)'
          : 'the log walk has time to spare again: re-reading the overlap',
      );
    }
  }
}
