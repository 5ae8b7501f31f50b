// Time within and between the walk's cycles (docs/counting.md, "Rate limits").
//
// Deadline: when the collector knows when its next poll starts (the runner's schedule, a fixed
// phase after each tick), a cycle stops before a request that could not finish by then, like
// the page budget: the next cycle continues the same walk with a new frontier, nothing is lost.
// A cycle that still ends a little after it costs nothing either: the runner starts a poll that
// came due meanwhile as soon as the running one ends (Collector.deferOverlappingTick), and the
// rate limit's slots carry over, so the walk reads on without a gap between cycles.
//
// Rate-limit bound: the cycle spent much of its time waiting for rate-limit windows and, with
// the overlap re-read, the next cycle would need most of the time between cycles. Then the next
// slice re-reads no overlap, so every request goes to new entries.

/** The rate limit bounds the walk when at least this share of a cycle was spent waiting for it... */
export const RATE_LIMITED_SHARE = 0.25;
/** ...and the next cycle, re-reading the overlap, would take more than this share of the time between cycles. */
export const SATURATED_SHARE = 0.8;
/** Weight of the newest request in the smoothed request time. */
const REQUEST_WEIGHT = 0.2;

export class CycleClock {
  #startedAt: number | null = null;
  /** Time between the starts of the last two cycles (0: unknown yet). */
  #spacing = 0;
  #deadline: number | null = null;
  /** The source's rate-limit waits when the cycle started. */
  #waitedAtStart = 0;
  /** Smoothed time of one request once sent (rate-limit waits excluded), ms. */
  #requestMs: number | null = null;
  /** Requests, entries read (counted or not) and entries counted in this cycle. */
  #requests = 0;
  #read = 0;
  #counted = 0;

  /** Smoothed time of one request once sent (rate-limit waits excluded), ms; null before the first. */
  get requestMs(): number | null {
    return this.#requestMs;
  }

  /** Time between the starts of the last two cycles, ms (0: unknown yet). */
  get spacingMs(): number {
    return this.#spacing;
  }

  /** A cycle starts; `deadline` is when it must be done (null: none). */
  begin(now: number, waitedMs: number, deadline: number | null): void {
    if (this.#startedAt !== null) this.#spacing = now - this.#startedAt;
    this.#startedAt = now;
    this.#waitedAtStart = waitedMs;
    this.#deadline = deadline;
    this.#requests = 0;
    this.#read = 0;
    this.#counted = 0;
  }

  /**
   * Whether a request that first waits `pendingWaitMs` for its window can finish before the
   * deadline. The first request of a cycle always goes, so a walk whose requests are slower
   * than the interval still progresses (and overruns, as it would without a deadline).
   */
  allows(now: number, pendingWaitMs: number): boolean {
    if (this.#deadline === null || this.#requests === 0) return true;
    return now + pendingWaitMs + (this.#requestMs ?? 0) <= this.#deadline;
  }

  /** One request done: `durationMs` in all, `waitedMs` of it for the rate-limit window. */
  requestDone(durationMs: number, waitedMs: number): void {
    this.#requests += 1;
    const sent = Math.max(0, durationMs - waitedMs);
    this.#requestMs = this.#requestMs === null ? sent : REQUEST_WEIGHT * sent + (1 - REQUEST_WEIGHT) * this.#requestMs;
  }

  /** Entries of one page: read, and counted (new). */
  page(read: number, counted: number): void {
    this.#read += read;
    this.#counted += counted;
  }

  /** At least RATE_LIMITED_SHARE of the cycle so far went to waiting for rate-limit windows (`waitedMs`: the source's waits, all time). */
  mostlyWaited(now: number, waitedMs: number): boolean {
    if (this.#startedAt === null) return false;
    return waitedMs - this.#waitedAtStart >= RATE_LIMITED_SHARE * (now - this.#startedAt);
  }

  /**
   * Whether the rate limit bounds the walk (see the module comment): `waitedMs` is the source's
   * rate-limit waits all time, `coveredMs` the log time this cycle has read up to now (its new
   * entries arrived over that time), `overlapMs` the re-read that is being decided.
   */
  rateLimitBound(now: number, waitedMs: number, coveredMs: number, overlapMs: number): boolean {
    if (this.#startedAt === null || this.#spacing <= 0 || this.#read === 0 || coveredMs <= 0) return false;
    if (!this.mostlyWaited(now, waitedMs)) return false;
    const running = now - this.#startedAt;
    const perEntry = running / this.#read;
    const overlapEntries = (this.#counted / coveredMs) * overlapMs;
    return perEntry * (this.#counted + overlapEntries) > SATURATED_SHARE * this.#spacing;
  }
}
