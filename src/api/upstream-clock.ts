// The upstream's clock, learnt from the `Date` header of its answers. The header has a
// resolution of one second (the time it was written, truncated) and was written some time
// between sending the request and receiving the answer, so each answer bounds the upstream's
// time against this process's MONOTONIC clock: upstream − monotonic lies in
// [Date − received, Date + 1 s − sent]. The bounds of recent answers are intersected (they
// narrow as answers come at different phases of the second); an answer whose bounds miss those
// of older ones (the upstream's clock stepped, or drift over a long run) drops the older ones.
//
// Anchored on the monotonic clock, the estimate ignores jumps of this machine's wall clock: a
// clock set forward or back by an hour changes `offsetMs()` at once (wall − upstream), never
// `now()` beyond the local clock's own agreement with the upstream.

/** Answers kept for the intersection, and how old they may be. */
const MAX_SAMPLES = 32;
const MAX_SAMPLE_AGE_MS = 10 * 60_000;
/** Resolution of the Date header. */
const DATE_RESOLUTION_MS = 1_000;

interface Sample {
  /** Bounds of upstream − monotonic, ms. */
  low: number;
  high: number;
  /** Monotonic time of the answer. */
  at: number;
}

export interface UpstreamClockOptions {
  /** This machine's wall clock, unix ms (default Date.now). */
  wallNow?: () => number;
  /** A monotonic clock, ms (default performance.now). */
  monotonicNow?: () => number;
}

export class UpstreamClock {
  readonly #wallNow: () => number;
  readonly #monotonicNow: () => number;
  #samples: Sample[] = [];
  /** Intersection of the kept samples' bounds. */
  #low = Number.NEGATIVE_INFINITY;
  #high = Number.POSITIVE_INFINITY;
  /** The last Date header seen, and its time. */
  #lastDateText = '';
  #lastDate = Number.NaN;

  constructor(options: UpstreamClockOptions = {}) {
    this.#wallNow = options.wallNow ?? Date.now;
    this.#monotonicNow = options.monotonicNow ?? (() => performance.now());
  }

  /** The monotonic clock this estimate is anchored on (for timing a request). */
  monotonicNow(): number {
    return this.#monotonicNow();
  }

  /**
   * One answer: its `Date` header (absent or unparsable: ignored), and the monotonic times the
   * request was sent and the answer's headers received.
   */
  observe(dateHeader: string | string[] | undefined, sentAt: number, receivedAt: number): void {
    const text = Array.isArray(dateHeader) ? dateHeader[0] : dateHeader;
    if (text === undefined) return;
    // Answers of one second carry the same header: parsed once.
    if (text !== this.#lastDateText) {
      this.#lastDateText = text;
      this.#lastDate = Date.parse(text);
    }
    const date = this.#lastDate;
    if (!Number.isFinite(date) || receivedAt < sentAt) return;
    const sample: Sample = { low: date - receivedAt, high: date + DATE_RESOLUTION_MS - sentAt, at: receivedAt };
    let low = sample.low;
    let high = sample.high;
    const kept: Sample[] = [sample];
    // Newest first: an older sample that contradicts a newer one is dropped with all before it.
    for (let i = this.#samples.length - 1; i >= 0 && kept.length < MAX_SAMPLES; i--) {
      const older = this.#samples[i]!;
      if (receivedAt - older.at > MAX_SAMPLE_AGE_MS || older.high < low || older.low > high) break;
      low = Math.max(low, older.low);
      high = Math.min(high, older.high);
      kept.push(older);
    }
    this.#samples = kept.reverse();
    this.#low = low;
    this.#high = high;
  }

  /** Whether an answer with a Date header has been seen. */
  get known(): boolean {
    return this.#samples.length > 0;
  }

  /** The earliest and latest the upstream's now can be, unix ms; null before any answer. */
  bounds(): { earliest: number; latest: number } | null {
    if (!this.known) return null;
    const monotonic = this.#monotonicNow();
    return { earliest: monotonic + this.#low, latest: monotonic + this.#high };
  }

  /** This machine's wall clock minus the upstream's (middle of the bounds), ms; null before any answer. */
  offsetMs(): number | null {
    if (!this.known) return null;
    const wall = this.#wallNow();
    const monotonic = this.#monotonicNow();
    return wall - (monotonic + (this.#low + this.#high) / 2);
  }

  /**
   * The time to take as the upstream's now: the wall clock while it lies within the bounds (the
   * clocks agree within the header's resolution: what the ingestion delay absorbs), else the
   * earliest the upstream's now can be, so a walk never reads into the upstream's future.
   * The wall clock before any answer.
   */
  now(): number {
    const wall = this.#wallNow();
    const bounds = this.bounds();
    if (bounds === null || (wall >= bounds.earliest && wall <= bounds.latest)) return wall;
    return Math.floor(bounds.earliest);
  }
}
