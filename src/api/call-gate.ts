// "Do not call before": a wait the service asked for (a 429's Retry-After or rate-limit reset),
// honoured by every request of one client, so by every collector of that API, not only by the
// request that got the answer. Against an account-wide limit, a 429 to one path is a 429 to all:
// with the wait kept per request, the other collectors kept calling (88 requests in the minute
// after a Retry-After of 3600 s to every path).
import { performance } from 'node:perf_hooks';
import { ApiRateLimitError, type ApiErrorDetails, type ApiName } from './errors.js';
import type { ApiLogger } from './api-logger.js';

export interface CallGateOptions {
  api: ApiName;
  /** The longest wait honoured (http.max_retry_after); undefined: the whole wait. */
  maxRetryAfterMs?: number | undefined;
  /** Longer waits fail a request at once instead of being slept (http.max_rate_limit_wait). */
  maxRateLimitWaitMs: number;
  logger: ApiLogger | undefined;
}

export class CallGate {
  /** Monotonic ms (performance.now) before which no request is sent. */
  #untilMs = 0;
  /** The same moment as unix ms, for /metrics. */
  #untilUnixMs = 0;
  readonly #options: CallGateOptions;

  constructor(options: CallGateOptions) {
    this.#options = options;
  }

  /**
   * Before a request: how long it must wait for the gate (0: it may go). Throws ApiRateLimitError
   * (no request sent) when the wait is longer than a request may sleep.
   */
  waitMs(details: ApiErrorDetails): number {
    const gatedMs = this.remainingMs();
    if (gatedMs > this.#options.maxRateLimitWaitMs) {
      throw new ApiRateLimitError(
        `rate limited; the service asked not to be called before ${this.untilText()}: no request sent`,
        { ...details, status: 429, retryAfterMs: gatedMs, loggedByClient: true },
      );
    }
    return gatedMs;
  }

  /**
   * Before a request: sleeps (through `sleep`) until the gate opens, again when another 429
   * moved it meanwhile; throws as waitMs when the wait is longer than a request may sleep.
   */
  async pass(details: ApiErrorDetails, sleep: (ms: number) => Promise<void>): Promise<void> {
    for (let gatedMs = this.waitMs(details); gatedMs > 0; gatedMs = this.waitMs(details)) await sleep(gatedMs);
  }

  /**
   * A 429 asked for `waitMs`: no request of this client goes before it is over; said once.
   * Returns the ms until requests may go again.
   */
  close(waitMs: number, endpoint: string): number {
    const { maxRetryAfterMs, maxRateLimitWaitMs, logger } = this.#options;
    const honouredMs = maxRetryAfterMs === undefined ? waitMs : Math.min(waitMs, maxRetryAfterMs);
    const now = performance.now();
    if (honouredMs <= 0 || now + honouredMs <= this.#untilMs) return this.remainingMs();
    const wasOpen = this.#untilMs <= now;
    this.#untilMs = now + honouredMs;
    this.#untilUnixMs = Date.now() + honouredMs;
    if (!wasOpen) return this.remainingMs();
    const capped = honouredMs < waitMs;
    const fields = {
      api: this.#options.api,
      endpoint,
      askedSeconds: Math.ceil(waitMs / 1000),
      until: this.untilText(),
      ...(capped ? { cappedBy: 'http.max_retry_after' } : {}),
    };
    const message = `the service asks to wait (429): no request to this API before ${this.untilText()}${capped ? ' (cut short by http.max_retry_after)' : ''}`;
    // A short wait is the burst limit at work, slept by the requests: said at debug.
    if (honouredMs > maxRateLimitWaitMs) logger?.warn(fields, message);
    else logger?.debug(fields, message);
    return this.remainingMs();
  }

  /** Ms until requests may go again (0: now). */
  remainingMs(): number {
    return Math.max(0, this.#untilMs - performance.now());
  }

  /** Unix ms before which no request is sent; 0 when requests may go. */
  untilUnixMs(unixNowMs: number): number {
    return this.#untilUnixMs > unixNowMs ? this.#untilUnixMs : 0;
  }

  untilText(): string {
    return new Date(Math.max(this.#untilUnixMs, Date.now())).toISOString();
  }
}
