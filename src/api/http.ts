// The request core shared by both API clients: one undici Pool per upstream origin, auth,
// connect/headers/body timeouts, bounded retries with full-jitter backoff, rate-limit waits
// announced by the service (after a 429, and, when asked, before a request when the last
// answer said the window's budget is spent: rate-budget.ts), a size-capped JSON body read, and
// a report hook after every attempt (the exporter's api_requests_total / duration /
// rate_limit_remaining metrics).
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import {
  ApiAbortedError,
  ApiAuthError,
  ApiNetworkError,
  ApiNotFoundError,
  ApiRateLimitError,
  ApiRequestError,
  ApiTimeoutError,
  ApiUpstreamError,
} from './errors.js';
import type { ApiError, ApiErrorDetails, ApiName } from './errors.js';
import { createScrubber } from '../logging/scrub.js';
import { firstHeader, numericHeader, RateBudget, resetTime } from './rate-budget.js';

export interface RequestReport {
  api: ApiName;
  /** Route template, e.g. '/v2/logs', '/v2/schedules/:id/pause': never an id or a secret. */
  endpoint: string;
  method: string;
  /** HTTP status as text, or 'error' / 'timeout' when no complete answer arrived. */
  code: string;
  durationSeconds: number;
  /** From Burst-RateLimit-Remaining when the answer carried it. */
  rateLimitRemaining?: number;
}

export interface TimeoutOptions {
  connectTimeoutMs: number;
  /** Time allowed for the response headers once the request is sent (undici checks it on a
   *  coarse timer: expect up to about a second more). */
  headersTimeoutMs: number;
  /** Time allowed for reading the whole response body (also the idle limit between chunks). */
  bodyTimeoutMs: number;
}

export interface RetryOptions {
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * A 429 announcing a longer wait fails at once with ApiRateLimitError carrying the wait. A
   * spent budget announcing a longer wait is not waited for: the request goes and the service
   * decides.
   */
  maxRateLimitWaitMs: number;
  /**
   * Before each request, wait for the window's reset when the endpoint's last answer announced
   * its budget spent (rate-budget.ts), instead of learning it from a 429. Off unless asked for:
   * the exporter's clients (createApiClients) ask for it.
   */
  paceRateLimit: boolean;
}

export const DEFAULT_TIMEOUTS: TimeoutOptions = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
};

export const DEFAULT_RETRY: RetryOptions = {
  maxRetries: 3,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRateLimitWaitMs: 30_000,
  paceRateLimit: false,
};

/** Largest response body read; above it the answer is refused as an upstream fault. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Error bodies are only read for a short excerpt. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_EXCERPT_CHARS = 200;

/** What the clients log: a subset that a pino logger satisfies. */
export interface ApiLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export type Credentials =
  | { scheme: 'bearer'; token: string }
  | { scheme: 'basic'; username: string; password: string };

/** Options both clients accept besides their credentials. */
export interface CommonClientOptions {
  baseUrl: string;
  timeouts?: Partial<TimeoutOptions>;
  retry?: Partial<RetryOptions>;
  onRequest?: (report: RequestReport) => void;
  logger?: ApiLogger;
  /** Aborts every request and every wait of this client (shutdown). */
  signal?: AbortSignal;
  maxResponseBytes?: number;
  userAgent?: string;
  /** Connections kept to the upstream origin. */
  connections?: number;
  /** Source of randomness for the backoff jitter, [0, 1). */
  random?: () => number;
}

export interface HttpClientOptions extends CommonClientOptions {
  api: ApiName;
  credentials: Credentials;
}

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  /** Route template for reports and errors. */
  endpoint: string;
  /** Concrete path below the base URL (may carry its own query string). */
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: string;
  /** 'json' parses the body; 'none' drains it and resolves undefined. */
  response: 'json' | 'none';
  /**
   * Whether sending the request twice is harmless. Non-idempotent requests are retried only
   * when the server cannot have acted on them: 429, or a connection that never opened.
   * Default: true for GET, PUT, DELETE.
   */
  idempotent?: boolean;
  signal?: AbortSignal;
}

/** Why one attempt failed, and whether another attempt may help. */
interface AttemptFailure {
  error: ApiError;
  retryable: boolean;
  /** Wait announced by the service (429), in ms. */
  announcedWaitMs?: number;
}

const NETWORK_CODES_BEFORE_SEND = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export class HttpClient {
  readonly api: ApiName;
  private readonly pool: Pool;
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
  private readonly budget = new RateBudget();
  #rateLimitWaitedMs = 0;

  constructor(options: HttpClientOptions) {
    this.options = options;
    this.api = options.api;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...definedOnly(options.timeouts) };
    this.retry = { ...DEFAULT_RETRY, ...definedOnly(options.retry) };
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.random = options.random ?? Math.random;

    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`${options.api} base URL must be http or https`);
    }
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.pool = new Pool(base.origin, {
      connections: options.connections ?? 4,
      connect: { timeout: this.timeouts.connectTimeoutMs },
      headersTimeout: this.timeouts.headersTimeoutMs,
      bodyTimeout: this.timeouts.bodyTimeoutMs,
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

  /** Time spent waiting for rate-limit windows (paced requests and 429 retries), all time. */
  get rateLimitWaitedMs(): number {
    return this.#rateLimitWaitedMs;
  }

  /** How long a request to `endpoint` would now wait for its rate-limit window when pacing (0: none). */
  pendingRateLimitWaitMs(endpoint: string): number {
    if (!this.retry.paceRateLimit) return 0;
    const waitMs = this.budget.pending(endpoint, Date.now());
    return waitMs > this.retry.maxRateLimitWaitMs ? 0 : waitMs;
  }

  /** Send a request with retries; resolves the parsed JSON (or undefined for 'none'). */
  async request(request: ApiRequest): Promise<unknown> {
    const signal = combineSignals(this.options.signal, request.signal);
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
      await this.pace(request, signal, details({ attempts: attempt }));
      const outcome = await this.attempt(request, signal, idempotent, attempt + 1);
      if (outcome.ok) return outcome.value;

      const failure = outcome.failure;
      const announced = failure.announcedWaitMs;
      if (announced !== undefined && announced > this.retry.maxRateLimitWaitMs) {
        throw new ApiRateLimitError(
          `rate limited; the service asks to wait ${Math.ceil(announced)} ms, more than the allowed ${this.retry.maxRateLimitWaitMs} ms`,
          details({ status: 429, retryAfterMs: announced, attempts: attempt + 1 }),
        );
      }
      if (!failure.retryable || attempt >= this.retry.maxRetries) throw failure.error;

      const delayMs = announced !== undefined && announced > 0 ? announced : this.backoffMs(attempt);
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
    for (;;) {
      const waitMs = this.budget.reserve(request.endpoint, Date.now());
      if (waitMs <= 0 || waitMs > this.retry.maxRateLimitWaitMs) return;
      this.options.logger?.debug({ api: this.api, endpoint: request.endpoint, delayMs: waitMs }, 'rate-limit budget spent: waiting for the window to reset');
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
    const started = Date.now();
    try {
      await sleep(ms, undefined, signal ? { signal } : undefined);
    } catch {
      throw new ApiAbortedError(abortMessage, details);
    } finally {
      if (rateLimited) this.#rateLimitWaitedMs += Date.now() - started;
    }
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
    const report = (code: string, rateLimitRemaining?: number): void => {
      this.report({
        api: this.api,
        endpoint: request.endpoint,
        method: request.method,
        code,
        durationSeconds: (performance.now() - started) / 1000,
        ...(rateLimitRemaining === undefined ? {} : { rateLimitRemaining }),
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
      const failure = this.transportFailure(cause, details, idempotent, false);
      report(failure.error.code === 'ERR_API_TIMEOUT' ? 'timeout' : 'error');
      return { ok: false, failure };
    }

    const status = response.statusCode;
    const remaining = numericHeader(response.headers['burst-ratelimit-remaining']);
    this.budget.observe(request.endpoint, status, remaining, resetTime(response.headers, Date.now()));

    if (status >= 200 && status < 300) {
      let raw: Buffer;
      try {
        raw = await readBody(response.body, this.maxResponseBytes, this.timeouts.bodyTimeoutMs);
      } catch (cause) {
        if (signal?.aborted) {
          return { ok: false, failure: { error: new ApiAbortedError('request aborted', details()), retryable: false } };
        }
        const failure = this.transportFailure(cause, details, idempotent, true);
        report(failure.error.code === 'ERR_API_TIMEOUT' ? 'timeout' : 'error', remaining);
        return { ok: false, failure };
      }
      report(String(status), remaining);
      if (request.response === 'none') return { ok: true, value: undefined };
      try {
        return { ok: true, value: JSON.parse(raw.toString('utf8')) as unknown };
      } catch {
        // A malformed page is an upstream fault (truncated or garbled): worth another try.
        return {
          ok: false,
          failure: {
            error: new ApiUpstreamError(
              `malformed JSON in a ${status} response (${raw.length} bytes)`,
              details({ status }),
            ),
            retryable: idempotent,
          },
        };
      }
    }

    // Non-2xx: read a little of the body for the message, then classify.
    let excerpt = '';
    try {
      const raw = await readBody(response.body, MAX_ERROR_BODY_BYTES, this.timeouts.bodyTimeoutMs, true);
      excerpt = this.excerpt(raw);
    } catch {
      // The status alone is enough to classify the answer.
    }
    report(String(status), remaining);
    return { ok: false, failure: this.statusFailure(status, response.headers, excerpt, details, idempotent) };
  }

  private statusFailure(
    status: number,
    headers: Dispatcher.ResponseData['headers'],
    excerpt: string,
    details: (extra?: Partial<ApiErrorDetails>) => ApiErrorDetails,
    idempotent: boolean,
  ): AttemptFailure {
    const said = excerpt === '' ? '' : `: ${excerpt}`;
    if (status === 401 || status === 403) {
      const problem = status === 401 ? 'authentication failed (401)' : 'permission denied (403)';
      return { error: new ApiAuthError(`${problem}${said}`, details({ status })), retryable: false };
    }
    if (status === 404) {
      return { error: new ApiNotFoundError(`not found (404)${said}`, details({ status })), retryable: false };
    }
    if (status === 429) {
      const waitMs = rateLimitWaitMs(headers, Date.now());
      const error = new ApiRateLimitError(
        `rate limited (429)${waitMs === undefined ? '' : `; retry after ${Math.ceil(waitMs)} ms`}${said}`,
        details({ status, ...(waitMs === undefined ? {} : { retryAfterMs: waitMs }) }),
      );
      return { error, retryable: true, ...(waitMs === undefined ? {} : { announcedWaitMs: waitMs }) };
    }
    const retryable = (status >= 500 || status === 408) && idempotent;
    return {
      error: new ApiUpstreamError(`unexpected status ${status}${said}`, details({ status })),
      retryable,
    };
  }

  private transportFailure(
    cause: unknown,
    details: (extra?: Partial<ApiErrorDetails>) => ApiErrorDetails,
    idempotent: boolean,
    duringBody: boolean,
  ): AttemptFailure {
    const code = errorCode(cause);
    if (cause instanceof BodyLimitError) {
      return { error: new ApiUpstreamError(cause.message, details()), retryable: false };
    }
    if (code === 'UND_ERR_INVALID_ARG') {
      // Undici refused to send (e.g. a header value with a line break): the caller's fault.
      return { error: new ApiRequestError('invalid request: refused by the HTTP client', details()), retryable: false };
    }
    const beforeSend = NETWORK_CODES_BEFORE_SEND.has(code);
    const retryable = idempotent || beforeSend;
    if (
      code === 'UND_ERR_CONNECT_TIMEOUT' ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      cause instanceof BodyDeadlineError
    ) {
      const phase =
        code === 'UND_ERR_CONNECT_TIMEOUT'
          ? `connect timeout (${this.timeouts.connectTimeoutMs} ms)`
          : code === 'UND_ERR_HEADERS_TIMEOUT'
            ? `no response headers within ${this.timeouts.headersTimeoutMs} ms`
            : `response body not read within ${this.timeouts.bodyTimeoutMs} ms`;
      return { error: new ApiTimeoutError(phase, details({ cause })), retryable };
    }
    if (duringBody) {
      return {
        error: new ApiUpstreamError(`truncated response body (${code || 'connection closed'})`, details({ cause })),
        retryable,
      };
    }
    return {
      error: new ApiNetworkError(`network error (${code || 'unknown'})`, details({ cause })),
      retryable,
    };
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

  /** A short, printable, secret-free excerpt of an error body: `{"error": ...}` or text. */
  private excerpt(raw: Buffer): string {
    let text = raw.toString('utf8');
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) {
        const record = parsed as Record<string, unknown>;
        const said = record.error ?? record.message;
        if (typeof said === 'string') text = said;
      }
    } catch {
      // not JSON: use the text itself
    }
    text = this.scrub(text);
    // eslint-disable-next-line no-control-regex
    text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
    return text.length > MAX_EXCERPT_CHARS ? `${text.slice(0, MAX_EXCERPT_CHARS)}…` : text;
  }
}

/**
 * The wait a 429 announces, in ms from `now`: `Retry-After` (seconds or HTTP-date) or
 * `Burst-RateLimit-Reset` (a unix timestamp in seconds; values above 1e12 are taken as ms,
 * values below 1e9 as a number of seconds to wait). The longer of the two wins.
 */
export function rateLimitWaitMs(
  headers: Record<string, string | string[] | undefined>,
  now: number,
): number | undefined {
  const waits: number[] = [];
  const retryAfter = firstHeader(headers['retry-after']);
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (retryAfter.trim() !== '' && Number.isFinite(seconds)) waits.push(seconds * 1000);
    else {
      const date = Date.parse(retryAfter);
      if (Number.isFinite(date)) waits.push(date - now);
    }
  }
  const reset = resetTime(headers, now);
  if (reset !== undefined) waits.push(reset - now);
  if (waits.length === 0) return undefined;
  return Math.max(0, ...waits);
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code;
    if (typeof code === 'string') return code;
  }
  return '';
}

function definedOnly<T extends object>(values: Partial<T> | undefined): Partial<T> {
  if (!values) return {};
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function combineSignals(
  a: AbortSignal | undefined,
  b: AbortSignal | undefined,
): AbortSignal | undefined {
  if (!a) return b;
  if (!b) return a;
  return AbortSignal.any([a, b]);
}

class BodyLimitError extends Error {}
class BodyDeadlineError extends Error {}

/**
 * Read a response body fully, refusing more than `maxBytes` (or, with `truncate`, keeping
 * only the first `maxBytes`) and giving up after `deadlineMs` in total.
 */
async function readBody(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  deadlineMs: number,
  truncate = false,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const deadline = setTimeout(() => {
    body.destroy(new BodyDeadlineError('body deadline'));
  }, deadlineMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        if (truncate) {
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          size = maxBytes;
          body.destroy();
          break;
        }
        body.destroy();
        throw new BodyLimitError(`response body larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks, size);
}
