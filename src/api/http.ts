// The request core shared by both API clients: one undici pool per upstream origin (direct or
// through a proxy: dispatcher.ts), auth,
// connect/headers/body timeouts, bounded retries with full-jitter backoff, rate-limit waits
// announced by the service (after a 429, and, when asked, before a request when the last
// answer said the window's budget is spent: rate-budget.ts), a size-capped JSON body read (or,
// when the request asks, a streamed one that drops named string values), and a report hook
// after every attempt (the exporter's api_requests_total / duration / rate_limit_remaining).
//
// Modules: http-types.ts (request and option types, defaults), response-body.ts (the capped
// body read), json-skim.ts (the streamed read), failures.ts (classifying a failed attempt:
// burst vs daily 429), rate-budget.ts (the window budget), abortable-sleeps.ts (the waits).
import type { Dispatcher } from 'undici';
import { createDispatcher } from './dispatcher.js';
import { ApiAbortedError, ApiRateLimitError, ApiUpstreamError } from './errors.js';
import type { ApiErrorDetails, ApiName } from './errors.js';
import { createScrubber } from '../logging/scrub.js';
import { budgetNow, isDailyLimit, numericHeader, RateBudget, resetTime } from './rate-budget.js';
import { excerpt as excerptOf, notJsonText, statusFailure, transportFailure, type AttemptFailure } from './failures.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_RETRY, DEFAULT_TIMEOUTS } from './http-types.js';
import type { ApiRequest, HttpClientOptions, RequestReport, RetryOptions, TimeoutOptions } from './http-types.js';
import { readSkimmed, skimWhole } from './json-skim.js';
import { readBody } from './response-body.js';
import { UpstreamClock } from './upstream-clock.js';
import { AbortableSleeps } from './abortable-sleeps.js';
import { CallGate } from './call-gate.js';

export * from './http-types.js';
export { rateLimitWaitMs } from './failures.js';

/** Error bodies are only read for a short excerpt. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class HttpClient {
  readonly api: ApiName;
  /** A keep-alive pool to the origin, direct or through a proxy (dispatcher.ts). */
  private readonly pool: Dispatcher;
  private readonly basePath: string;
  /** Headers every request carries (auth, accept, user agent), built once. */
  private readonly fixedHeaders: Record<string, string>;
  /** Cuts the credentials out of error-body excerpts. */
  private readonly scrub: (text: string) => string;
  private readonly timeouts: TimeoutOptions;
  private readonly retry: RetryOptions;
  private readonly options: HttpClientOptions;
  private readonly maxResponseBytes: number;
  private readonly random: () => number;
  private readonly budget: RateBudget;
  /** The upstream's clock, from the Date header of every answer (upstream-clock.ts). */
  readonly upstreamClock = new UpstreamClock();
  #rateLimitWaitedMs = 0;
  /** Per endpoint: requests the upstream's burst limit held back (rateLimitHeld), all time. */
  readonly #held = new Map<string, number>();
  /** Each request signal joined with the client's (#combinedSignal). */
  readonly #combinedSignals = new WeakMap<AbortSignal, AbortSignal>();
  /** The rate-limit and retry waits, ended by an abort. */
  readonly #sleeps = new AbortableSleeps();
  /** The wait the service asked for, kept by every request of this client (call-gate.ts). */
  readonly callGate: CallGate;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.api = options.api;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...definedOnly(options.timeouts) };
    this.retry = { ...DEFAULT_RETRY, ...definedOnly(options.retry) };
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.random = options.random ?? Math.random;
    this.budget = new RateBudget(options.rateLimitShare ?? 1);
    this.callGate = options.callGate ?? new CallGate({ ...this.retry, api: options.api, logger: options.logger });

    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`${options.api} base URL must be http or https`);
    }
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.pool = createDispatcher(base, {
      api: options.api,
      connections: options.connections ?? 4,
      timeouts: this.timeouts,
      connection: options.connection,
      logger: options.logger,
    });

    const { credentials } = options;
    let authorization: string;
    if (credentials.scheme === 'bearer') {
      authorization = `Bearer ${credentials.token}`;
      this.scrub = createScrubber([credentials.token]);
    } else {
      const encoded = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
      authorization = `Basic ${encoded}`;
      this.scrub = createScrubber([credentials.password, encoded]);
    }
    this.fixedHeaders = {
      authorization,
      accept: 'application/json',
      'user-agent': options.userAgent ?? 'upstash-exporter',
    };
  }

  /**
   * The client's signal joined with a request's, one per request signal: a walk passes the same
   * signal to every page of a poll, and AbortSignal.any per request was a measurable part of a
   * request's cost (its listeners, weak references and garbage).
   */
  #combinedSignal(requestSignal: AbortSignal | undefined): AbortSignal | undefined {
    const own = this.options.signal;
    if (own === undefined || requestSignal === undefined) return own ?? requestSignal;
    let combined = this.#combinedSignals.get(requestSignal);
    if (combined === undefined) {
      combined = AbortSignal.any([own, requestSignal]);
      this.#combinedSignals.set(requestSignal, combined);
    }
    return combined;
  }

  /** Time spent waiting for rate-limit windows (paced requests and 429 retries), all time. */
  get rateLimitWaitedMs(): number {
    return this.#rateLimitWaitedMs;
  }

  /** How long a request to `endpoint` would now wait for its rate-limit window when pacing (0: none). */
  pendingRateLimitWaitMs(endpoint: string): number {
    if (!this.retry.paceRateLimit) return 0;
    const waitMs = Math.max(this.budget.pending(endpoint, budgetNow()), this.callGate.remainingMs());
    return waitMs > this.retry.maxRateLimitWaitMs ? 0 : waitMs;
  }

  /**
   * Requests to `endpoint` the upstream's burst limit held back, all time: answers 429 (the
   * burst limit, not the daily one) and requests held until the reset of a window its answers
   * announced spent (`Burst-RateLimit-Remaining` 0). Facts, not durations: a busy CPU or a slow
   * upstream makes waits longer, never more of these.
   */
  rateLimitHeld(endpoint: string): number {
    return this.#held.get(endpoint) ?? 0;
  }

  #hold(endpoint: string): void {
    this.#held.set(endpoint, (this.#held.get(endpoint) ?? 0) + 1);
  }

  /** The last announced burst limit of `endpoint` and the requests per second this client allows itself there. */
  rateLimitOf(endpoint: string): { limit: number; allowedPerSecond: number } | undefined {
    const limit = this.budget.limit(endpoint);
    return limit === undefined ? undefined : { limit, allowedPerSecond: limit * this.budget.share };
  }

  /** Send a request with retries; resolves the parsed JSON (or undefined for 'none'). */
  async request(request: ApiRequest): Promise<unknown> {
    const signal = this.#combinedSignal(request.signal);
    const idempotent =
      request.idempotent ?? (request.method === 'GET' || request.method === 'PUT' || request.method === 'DELETE');
    const details = (extra: Partial<ApiErrorDetails> = {}): ApiErrorDetails => ({
      api: this.api,
      endpoint: request.endpoint,
      method: request.method,
      ...extra,
    });

    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new ApiAbortedError('request aborted', details({ attempts: attempt }));
      const sleepGated = (ms: number) => this.wait(ms, signal, true, 'request aborted while rate limited', details());
      await this.callGate.pass(details({ attempts: attempt }), sleepGated);
      await this.pace(request, signal, details({ attempts: attempt }));
      const outcome = await this.attempt(request, signal, idempotent, attempt + 1);
      if (outcome.ok) return outcome.value;

      const failure = outcome.failure;
      if (failure.error.status === 429 && failure.error.code !== 'ERR_API_DAILY_LIMIT') this.#hold(request.endpoint);
      const announced = failure.announcedWaitMs;
      if (announced !== undefined && this.callGate.close(announced, request.endpoint) > this.retry.maxRateLimitWaitMs) {
        throw new ApiRateLimitError(
          `rate limited; the service asks to wait ${Math.ceil(announced)} ms, more than the allowed ${this.retry.maxRateLimitWaitMs} ms: no request to this API before ${this.callGate.untilText()}`,
          details({ status: 429, retryAfterMs: announced, attempts: attempt + 1, loggedByClient: true }),
        );
      }
      if (!failure.retryable || attempt >= this.retry.maxRetries) throw failure.error;

      const delayMs = announced !== undefined && announced > 0 ? this.callGate.remainingMs() : this.backoffMs(attempt);
      this.options.logger?.debug(
        {
          api: this.api,
          endpoint: request.endpoint,
          attempt: attempt + 1,
          delayMs: Math.round(delayMs),
          reason: failure.error.code,
          status: failure.error.status,
        },
        'retrying upstream request',
      );
      const rateLimited = failure.error.status === 429;
      const abortDetails = details({ attempts: attempt + 1 });
      await this.wait(delayMs, signal, rateLimited, 'request aborted while waiting to retry', abortDetails);
    }
  }

  /**
   * Waits, when the last answer of this endpoint said the window's budget is spent, until the
   * window resets (not when that is further away than maxRateLimitWaitMs: then the request goes
   * and the service decides). Aborted by the signal.
   */
  private async pace(request: ApiRequest, signal: AbortSignal | undefined, details: ApiErrorDetails): Promise<void> {
    if (!this.retry.paceRateLimit) return;
    // The share of the limit kept for others: this request's own slot first.
    const slotMs = this.budget.takeSlot(request.endpoint, budgetNow());
    if (slotMs > 0 && slotMs <= this.retry.maxRateLimitWaitMs) {
      await this.wait(slotMs, signal, true, 'request aborted while waiting for the rate-limit window', details);
    }
    for (let held = false; ; held = true) {
      const waitMs = this.budget.reserve(request.endpoint, budgetNow());
      if (waitMs <= 0 || waitMs > this.retry.maxRateLimitWaitMs) return;
      if (!held) this.#hold(request.endpoint);
      this.options.logger?.debug(
        { api: this.api, endpoint: request.endpoint, delayMs: waitMs },
        'rate-limit budget spent: waiting for the window to reset',
      );
      await this.wait(waitMs, signal, true, 'request aborted while waiting for the rate-limit window', details);
    }
  }

  /** Sleeps `ms`, counted in rateLimitWaitedMs when `rateLimited`; an abort ends it with ApiAbortedError. */
  private async wait(
    ms: number,
    signal: AbortSignal | undefined,
    rateLimited: boolean,
    abortMessage: string,
    details: ApiErrorDetails,
  ): Promise<void> {
    const started = performance.now();
    const slept = await this.#sleeps.sleep(ms, signal);
    if (rateLimited) this.#rateLimitWaitedMs += performance.now() - started;
    if (!slept) throw new ApiAbortedError(abortMessage, details);
  }

  /** Close the connection pool; pending requests finish first. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Full jitter: uniform in [0, min(max, base * 2^attempt)). */
  private backoffMs(attempt: number): number {
    const ceiling = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt);
    return this.random() * ceiling;
  }

  private async attempt(
    request: ApiRequest,
    signal: AbortSignal | undefined,
    idempotent: boolean,
    attemptNumber: number,
  ): Promise<{ ok: true; value: unknown } | { ok: false; failure: AttemptFailure }> {
    const started = performance.now();
    const details = (extra: Partial<ApiErrorDetails> = {}): ApiErrorDetails => ({
      api: this.api,
      endpoint: request.endpoint,
      method: request.method,
      attempts: attemptNumber,
      ...extra,
    });
    /** Burst-RateLimit-Limit of the answer, once it is in. */
    const announced: { limit?: number } = {};
    const report = (code: string, rateLimitRemaining?: number): void => {
      this.report({
        api: this.api,
        endpoint: request.endpoint,
        method: request.method,
        code,
        durationSeconds: (performance.now() - started) / 1000,
        ...(rateLimitRemaining === undefined ? {} : { rateLimitRemaining }),
        ...(announced.limit === undefined ? {} : { rateLimitLimit: announced.limit }),
      });
    };

    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        method: request.method,
        path: this.fullPath(request),
        headers: { ...request.headers, ...this.fixedHeaders },
        body: request.body ?? null,
        signal: signal ?? null,
      });
    } catch (cause) {
      if (signal?.aborted) {
        return { ok: false, failure: { error: new ApiAbortedError('request aborted', details()), retryable: false } };
      }
      const failure = transportFailure(this.timeouts, cause, details, idempotent, false);
      report(failure.error.code === 'ERR_API_TIMEOUT' ? 'timeout' : 'error');
      return { ok: false, failure };
    }

    this.upstreamClock.observe(response.headers.date, started, performance.now());
    const status = response.statusCode;
    const remaining = numericHeader(response.headers['burst-ratelimit-remaining']);
    const limit = numericHeader(response.headers['burst-ratelimit-limit']);
    if (limit !== undefined) announced.limit = limit;
    this.budget.observe(request.endpoint, status, remaining, this.#budgetResetTime(response.headers), limit);

    if (status >= 200 && status < 300) {
      // A skimmed body comes as text, or as bytes held whole (json-skim.ts); any other as bytes.
      let raw: Buffer | string;
      try {
        if (request.skim !== undefined && request.response === 'json') {
          const read = await readSkimmed(response.body, request.skim, this.timeouts.bodyTimeoutMs);
          if (read.bytes !== undefined) {
            // Read at once: the bytes are a pooled join buffer's until released (json-skim.ts).
            let value: unknown = null;
            let skimmed = '';
            try {
              value = request.readWhole?.(read.bytes) ?? null;
              if (value === null) skimmed = skimWhole(read.bytes, request.skim);
            } finally {
              read.release();
            }
            if (value !== null) {
              report(String(status), remaining);
              return { ok: true, value };
            }
            raw = skimmed;
          } else {
            raw = read.text;
          }
        } else {
          raw = await readBody(response.body, this.maxResponseBytes, this.timeouts.bodyTimeoutMs);
        }
      } catch (cause) {
        if (signal?.aborted) {
          return { ok: false, failure: { error: new ApiAbortedError('request aborted', details()), retryable: false } };
        }
        const failure = transportFailure(this.timeouts, cause, details, idempotent, true);
        // A skimmed page (a log page) read too slowly is not asked the same again: the caller
        // asks for a smaller page instead (the log walk halves its count).
        if (request.skim !== undefined && failure.error.code === 'ERR_API_TIMEOUT') failure.retryable = false;
        report(failure.error.code === 'ERR_API_TIMEOUT' ? 'timeout' : 'error', remaining);
        return { ok: false, failure };
      }
      report(String(status), remaining);
      if (request.response === 'none') return { ok: true, value: undefined };
      try {
        return { ok: true, value: JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) as unknown };
      } catch {
        // A malformed page is an upstream fault (truncated or garbled): worth another try.
        return {
          ok: false,
          failure: {
            error: new ApiUpstreamError(notJsonText(status, response.headers, raw, this.scrub), details({ status })),
            retryable: idempotent,
          },
        };
      }
    }

    // Non-2xx: read a little of the body for the message, then classify.
    let excerpt = '';
    try {
      const raw = await readBody(response.body, MAX_ERROR_BODY_BYTES, this.timeouts.bodyTimeoutMs, true);
      excerpt = excerptOf(raw, this.scrub);
    } catch {
      // The status alone is enough to classify the answer.
    }
    // A daily-limit 429 is told apart in the request counter: it is not the burst limit.
    report(status === 429 && isDailyLimit(response.headers) ? 'daily_limit' : String(status), remaining);
    return {
      ok: false,
      failure: statusFailure(status, response.headers, excerpt, details, idempotent, this.upstreamClock.now()),
    };
  }
  /**
   * The window's reset announced by an answer, on the budget's clock: an absolute reset is a
   * time on the upstream's clock, so it is taken relative to the upstream's now.
   */
  #budgetResetTime(headers: Record<string, string | string[] | undefined>): number | undefined {
    const upstreamNow = this.upstreamClock.now();
    const reset = resetTime(headers, upstreamNow);
    return reset === undefined ? undefined : budgetNow() + (reset - upstreamNow);
  }

  private fullPath(request: ApiRequest): string {
    let path = this.basePath + request.path;
    const query = request.query?.toString();
    if (query) path += (path.includes('?') ? '&' : '?') + query;
    return path;
  }

  private report(report: RequestReport): void {
    try {
      this.options.onRequest?.(report);
    } catch (error) {
      // A failing metrics hook must not fail the request.
      this.options.logger?.warn({ err: error, endpoint: report.endpoint }, 'onRequest hook threw');
    }
  }
}

function definedOnly<T extends object>(values: Partial<T> | undefined): Partial<T> {
  if (!values) return {};
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
