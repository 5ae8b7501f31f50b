// Pacing on the burst rate limit. The service announces its per-second budget on every answer
// of a limited endpoint (`Burst-RateLimit-Limit`, `-Remaining`, `-Reset`; see
// docs/service-fidelity.md). When an answer says the window's budget is spent, the
// next request to that endpoint waits for the window to reset instead of spending a request to
// learn it from a 429, so the budget goes to pages. The budget is kept per endpoint template:
// each answer describes the bucket it was counted against, and the emulator (like, as far as is
// known, the service) limits each endpoint group on its own. When the endpoints share one
// bucket, the only cost is an occasional 429, handled as before.
//
// Share: the exporter keeps part of the announced limit for the application it watches and the
// other collectors (`http.rate_limit_share`): its own requests to an endpoint are spaced at
// least 1 / (share × limit) s apart (one slot each, in the order asked, so parallel cursor
// chains share it), which holds its rate to share × limit whatever the windows do. At share 1
// the spacing also keeps parallel requests from overdrawing a window the answers in flight have
// not yet reported.

/** What the last answer of an endpoint said about its window. */
interface BudgetWindow {
  /** Requests left in the window, as announced, minus those sent since. */
  remaining: number;
  /** When the window resets, unix ms on this machine's clock. */
  resetAt: number;
}

/** Length of the burst window the limit is announced for. */
const WINDOW_MS = 1_000;

type Headers = Record<string, string | string[] | undefined>;

export class RateBudget {
  readonly #windows = new Map<string, BudgetWindow>();
  /** Last `Burst-RateLimit-Limit` per endpoint. */
  readonly #limits = new Map<string, number>();
  /** When the next spaced request to an endpoint may go, unix ms. */
  readonly #nextSlot = new Map<string, number>();
  readonly #share: number;

  /** `share`: the part of the announced limit this client may use, 0 < share <= 1. */
  constructor(share = 1) {
    if (!(share > 0 && share <= 1)) throw new RangeError('rate limit share must be in (0, 1]');
    this.#share = share;
  }

  /** The part of the announced limit this client may use. */
  get share(): number {
    return this.#share;
  }

  /** The last announced limit of `endpoint`, requests per second (undefined: none seen). */
  limit(endpoint: string): number | undefined {
    return this.#limits.get(endpoint);
  }

  /** Requests per second this client allows itself on `endpoint` (undefined: no limit known). */
  allowedPerSecond(endpoint: string): number | undefined {
    const limit = this.#limits.get(endpoint);
    return limit === undefined ? undefined : limit * this.#share;
  }

  /** Spacing between this client's requests to `endpoint` (0: not spaced, no limit known). */
  #spacingMs(endpoint: string): number {
    const allowed = this.allowedPerSecond(endpoint);
    return allowed === undefined || allowed <= 0 ? 0 : WINDOW_MS / allowed;
  }

  /**
   * Takes the next slot of `endpoint` for a request asked at `now`: the ms to wait before it
   * goes (0: now). Each call takes its own slot, so concurrent requests queue one spacing apart.
   */
  takeSlot(endpoint: string, now: number): number {
    const spacing = this.#spacingMs(endpoint);
    if (spacing === 0) return 0;
    const at = Math.max(now, this.#nextSlot.get(endpoint) ?? now);
    this.#nextSlot.set(endpoint, at + spacing);
    return at - now;
  }

  /** How long the next slot of `endpoint` is away from `now` (0: free). */
  #slotWait(endpoint: string, now: number): number {
    if (this.#spacingMs(endpoint) === 0) return 0;
    return Math.max(0, (this.#nextSlot.get(endpoint) ?? now) - now);
  }

  /** How long a request to `endpoint` sent at `now` would wait for the window (0: none). */
  pending(endpoint: string, now: number): number {
    const slot = this.#slotWait(endpoint, now);
    const window = this.#windows.get(endpoint);
    if (window === undefined || now >= window.resetAt || window.remaining > 0) return slot;
    return Math.max(slot, window.resetAt - now);
  }

  /**
   * Before sending to `endpoint`: 0 to send now (and one request is taken from the known
   * budget), else the ms to wait for the window's reset. Unknown or past windows send now: the
   * service decides.
   */
  reserve(endpoint: string, now: number): number {
    const window = this.#windows.get(endpoint);
    if (window === undefined || now >= window.resetAt) return 0;
    if (window.remaining > 0) {
      window.remaining -= 1;
      return 0;
    }
    return window.resetAt - now;
  }

  /**
   * Learns from an answer (any status), given what it announced: `Burst-RateLimit-Remaining`,
   * the reset time (resetTime) and `Burst-RateLimit-Limit`. A 429 spends the window whatever `-Remaining` says; an
   * answer without both a remaining count and a reset time leaves what is known untouched.
   */
  observe(
    endpoint: string,
    status: number,
    announced: number | undefined,
    resetAt: number | undefined,
    limit?: number,
  ): void {
    if (limit !== undefined && limit > 0) this.#limits.set(endpoint, limit);
    const remaining = status === 429 ? 0 : announced;
    if (remaining === undefined || resetAt === undefined) return;
    this.#windows.set(endpoint, { remaining: Math.max(0, remaining), resetAt });
  }
}

/**
 * `Burst-RateLimit-Reset` as unix ms: a unix timestamp in seconds, above 1e12 taken as ms, below
 * 1e9 as a number of seconds to wait (the same reading as a 429's, rateLimitWaitMs in http.ts).
 */
export function resetTime(headers: Headers, now: number, header = 'burst-ratelimit-reset'): number | undefined {
  const reset = numericHeader(headers[header]);
  if (reset === undefined) return undefined;
  if (reset > 1e12) return reset;
  if (reset > 1e9) return reset * 1000;
  return now + reset * 1000;
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function numericHeader(value: string | string[] | undefined): number | undefined {
  const text = firstHeader(value);
  if (text === undefined || text.trim() === '') return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

/**
 * Whether a 429 is the DAILY limit: it carries `RateLimit-Limit` (the per-second burst limit
 * says `Burst-RateLimit-*`); the official SDK tells the two apart the same way.
 */
export function isDailyLimit(headers: Headers): boolean {
  return firstHeader(headers['ratelimit-limit']) !== undefined;
}

/**
 * The rate budget's clock: unix ms at process start plus monotonic time since, so a jump of the
 * wall clock neither stalls the pacing for the jump's length nor lets it overdraw the windows.
 */
export function budgetNow(): number {
  return performance.timeOrigin + performance.now();
}
