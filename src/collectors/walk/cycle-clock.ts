// Time within and between the walk's cycles (docs/counting.md, "Rate limits").
//
// Deadline: when the collector knows when its next poll starts (the runner's schedule, a fixed
// phase after each tick), a cycle stops before a request that could not finish by then, like
// the page budget: the next cycle continues the same walk with a new frontier, nothing is lost.
// A cycle that still ends a little after it costs nothing either: the runner starts a poll that
// came due meanwhile as soon as the running one ends (Collector.deferOverlappingTick), and the
// rate limit's slots carry over, so the walk reads on without a gap between cycles.
//
// Rate-limit bound: judged from facts the upstream gives, never from how long anything took (a
// busy CPU or a slow upstream makes every wait and request longer, and must not pass for a rate
// limit). The limit holds the cycle back when the upstream held requests back (429 answers, or a
// window its answers announced spent), or when the cycle sent nearly as many requests as the
// limit the upstream announced (times the exporter's share) allows over its time. It bounds the
// walk when, besides, the next cycle re-reading the overlap would need more requests than that
// limit allows between two cycles. Then the next slice re-reads no overlap, so every request goes
// to new entries; the late-entry audit (late-audit.ts) catches up behind it.

/** The cycle sent at least this share of the requests the announced limit allows over its time: the limit holds it back. */
export const FULL_RATE_SHARE = 0.8;
/** ...and the next cycle, re-reading the overlap, would need more than this share of the requests allowed between cycles. */
export const SATURATED_SHARE = 0.8;
/** Weight of the newest request in the smoothed request time. */
const REQUEST_WEIGHT = 0.2;

/** What the upstream said about its rate limit, read when the judgement is made. */
export interface RateLimitFacts {
  /** Requests the limit held back, all time (429 answers, waits for a window announced spent). */
  held: number;
  /** Requests a second the announced limit (times the share) allows; undefined: none announced. */
  allowedPerSecond: number | undefined;
}

export class CycleClock {
  #startedAt: number | null = null;
  /** Time between the starts of the last two cycles (0: unknown yet). */
  #spacing = 0;
  #deadline: number | null = null;
  /** The source's held-back requests when the cycle started. */
  #heldAtStart = 0;
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

  /** A cycle starts; `held` is the source's held-back requests so far, `deadline` when it must be done (null: none). */
  begin(now: number, held: number, deadline: number | null): void {
    if (this.#startedAt !== null) this.#spacing = now - this.#startedAt;
    this.#startedAt = now;
    this.#heldAtStart = held;
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

  /** Entries of one page: read, and counted (new, newer than the cycle's start: late ones excluded). */
  page(read: number, counted: number): void {
    this.#read += read;
    this.#counted += counted;
  }

  /**
   * Whether the rate limit held this cycle back so far: the upstream held a request back since
   * it started, or it sent at least FULL_RATE_SHARE of what the announced limit allows over its
   * time. A CPU too busy to send, or an upstream slow to answer, makes the cycle send fewer.
   */
  heldBack(now: number, facts: RateLimitFacts): boolean {
    if (this.#startedAt === null) return false;
    if (facts.held > this.#heldAtStart) return true;
    const allowed = facts.allowedPerSecond;
    return (
      allowed !== undefined &&
      allowed > 0 &&
      this.#requests > 0 &&
      this.#requests >= (FULL_RATE_SHARE * allowed * (now - this.#startedAt)) / 1000
    );
  }

  /**
   * Whether the rate limit bounds the walk (see the module comment): `coveredMs` is the log time
   * this cycle has read up to now (its new entries arrived over that time), `overlapMs` the
   * re-read that is being decided. Requests needed with the overlap: this cycle's requests per
   * entry read, times its new entries plus the overlap's (at the same rate of entries).
   */
  rateLimitBound(now: number, facts: RateLimitFacts, coveredMs: number, overlapMs: number): boolean {
    if (this.#startedAt === null || this.#spacing <= 0 || this.#read === 0 || coveredMs <= 0) return false;
    if (!this.heldBack(now, facts)) return false;
    const overlapEntries = (this.#counted / coveredMs) * overlapMs;
    const needed = (this.#requests / this.#read) * (this.#counted + overlapEntries);
    // The limit's rate, as announced; when only 429s tell of it, the rate this cycle got through.
    const running = Math.max(1, now - this.#startedAt);
    const perSecond = facts.allowedPerSecond ?? (1000 * this.#requests) / running;
    return needed > (SATURATED_SHARE * perSecond * this.#spacing) / 1000;
  }
}
