// The request vocabulary of the HTTP core (http.ts): what a request is, the options both API
// clients take, their defaults, and the report the core gives after every attempt.

import type { ApiLogger } from './api-logger.js';
import type { CallGate } from './call-gate.js';
import type { ApiName } from './errors.js';
import type { SkimLimits } from './json-skim.js';
import type { UpstreamConnection } from './proxy-choice.js';

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
  /** From Burst-RateLimit-Limit when the answer carried it. */
  rateLimitLimit?: number;
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
   * The longest wait a 429 may ask for that is honoured (the whole API waits, call-gate.ts); a
   * longer one is cut to it. Undefined: the whole wait, however long (the default).
   */
  maxRetryAfterMs?: number;
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

/** What the clients log: a subset that a pino logger satisfies. */
export type { ApiLogger } from './api-logger.js';

export type Credentials = { scheme: 'bearer'; token: string } | { scheme: 'basic'; username: string; password: string };

/** Options both clients accept besides their credentials. */
export interface CommonClientOptions {
  baseUrl: string;
  timeouts?: Partial<TimeoutOptions>;
  retry?: Partial<RetryOptions>;
  onRequest?: (report: RequestReport) => void;
  logger?: ApiLogger;
  /** Aborts every request and every wait of this client (shutdown). */
  signal?: AbortSignal;
  /**
   * The wait the service asked for, shared with the other clients of the same API and account
   * (the management API's client of each region): a 429's Retry-After holds them all. Absent:
   * the client keeps its own.
   */
  callGate?: CallGate;
  maxResponseBytes?: number;
  userAgent?: string;
  /** Connections kept to the upstream origin. */
  connections?: number;
  /** The egress proxy and extra CAs (proxy-choice.ts, dispatcher.ts); absent: direct, Node's CAs. */
  connection?: UpstreamConnection;
  /** Part of the announced burst limit this client may use, 0 < share <= 1 (default 1; rate-budget.ts). */
  rateLimitShare?: number;
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
   * With 'json': read the body as a stream, dropping the string values of these keys as they
   * pass (json-skim.ts), under these limits instead of the client's maxResponseBytes. Passing a
   * limit is ApiPageTooLargeError.
   */
  skim?: SkimLimits;
  /**
   * With `skim`: a single-pass reader tried first on a body held whole (json-skim.ts
   * WHOLE_PAGE_BYTES). It returns the checked value, or null to leave the body to the general
   * path (skimmed, JSON.parse, then the caller's schema check).
   */
  readWhole?: (bytes: Buffer) => unknown;
  /**
   * Whether sending the request twice is harmless. Non-idempotent requests are retried only
   * when the server cannot have acted on them: 429, or a connection that never opened.
   * Default: true for GET, PUT, DELETE.
   */
  idempotent?: boolean;
  signal?: AbortSignal;
}
