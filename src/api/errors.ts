// Typed errors of the API clients. Every error names the upstream (`api`) and the route
// TEMPLATE (`endpoint`), never a concrete id, URL, header or secret. Messages carry at most a
// short, sanitized excerpt of an upstream error body.

export type ApiName = 'qstash' | 'management';

/** Every code an ApiError carries (a closed set: metrics pre-initialise a series per code). */
export const API_ERROR_CODES = [
  'ERR_API_AUTH',
  'ERR_API_NOT_FOUND',
  'ERR_API_RATE_LIMIT',
  'ERR_API_DAILY_LIMIT',
  'ERR_API_PAGE_TOO_LARGE',
  'ERR_API_UPSTREAM',
  'ERR_API_TIMEOUT',
  'ERR_API_NETWORK',
  'ERR_API_SCHEMA_DRIFT',
  'ERR_API_ABORTED',
  'ERR_API_REQUEST',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiErrorDetails {
  api: ApiName;
  endpoint: string;
  /** HTTP method of the request, for the message. */
  method: string;
  status?: number;
  retryAfterMs?: number;
  /** HTTP attempts made before giving up (1 = no retry). */
  attempts?: number;
  /** The client logged the cause already (a wait the service asked for): callers need not again. */
  loggedByClient?: boolean;
  /** Low-level cause (undici/zod error); kept non-enumerable so JSON.stringify skips it. */
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly api: ApiName;
  readonly endpoint: string;
  readonly method: string;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly attempts?: number;
  readonly loggedByClient?: boolean;

  constructor(code: ApiErrorCode, problem: string, details: ApiErrorDetails) {
    super(
      `${details.api} ${details.method} ${details.endpoint}: ${problem}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = new.target.name;
    this.code = code;
    this.api = details.api;
    this.endpoint = details.endpoint;
    this.method = details.method;
    if (details.status !== undefined) this.status = details.status;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.attempts !== undefined) this.attempts = details.attempts;
    if (details.loggedByClient === true) this.loggedByClient = true;
  }

  /** Plain, secret-free view; also what JSON.stringify shows. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      api: this.api,
      endpoint: this.endpoint,
      method: this.method,
      status: this.status,
      retryAfterMs: this.retryAfterMs,
      attempts: this.attempts,
    };
  }
}

/** 401 or 403: the token or the management credentials are wrong or lack permission. */
export class ApiAuthError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_AUTH', problem, details);
  }
}

/** 404: unknown route, schedule, index... */
export class ApiNotFoundError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_NOT_FOUND', problem, details);
  }
}

/**
 * 404 on every path an endpoint has (both names of the logs or of the workflow runs) before any
 * of them answered: the service does not have it (ERR_API_NOT_FOUND like any 404).
 */
export class ApiEndpointAbsentError extends ApiNotFoundError {}

/** 429 after the retries, or a 429 whose announced wait exceeds the allowed maximum. */
export class ApiRateLimitError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_RATE_LIMIT', problem, details);
  }
}

/**
 * A 429 carrying `RateLimit-Limit/-Remaining/-Reset`: the plan's DAILY request limit (the SDK
 * tells it from the per-second burst limit the same way). Never retried: waiting seconds does
 * not help. `retryAfterMs` is the time to `RateLimit-Reset` when the answer said it.
 */
export class ApiDailyLimitError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_DAILY_LIMIT', problem, details);
  }
}

/**
 * A 2xx response too large to keep: more than the cap of kept (non-body) bytes, or more than the
 * sanity limit in all. Not retried as it is; the log walk asks again for fewer entries.
 */
export class ApiPageTooLargeError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_PAGE_TOO_LARGE', problem, details);
  }
}

/** Any other non-2xx answer (5xx after retries), a malformed/truncated/oversized body. */
export class ApiUpstreamError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_UPSTREAM', problem, details);
  }
}

/** Connect, headers or body timeout (after retries). */
export class ApiTimeoutError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_TIMEOUT', problem, details);
  }
}

/** Connection refused/reset, DNS failure and the like (after retries). */
export class ApiNetworkError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_NETWORK', problem, details);
  }
}

/** The request was cancelled through its AbortSignal (shutdown). Never retried. */
export class ApiAbortedError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_ABORTED', problem, details);
  }
}

/** The caller built a request that cannot be sent (e.g. a header value with a newline). */
export class ApiRequestError extends ApiError {
  constructor(problem: string, details: ApiErrorDetails) {
    super('ERR_API_REQUEST', problem, details);
  }
}

/**
 * A 2xx answer whose JSON does not have the expected shape: a required field is missing or a
 * field has the wrong type. `path` points at the field (`logs[3].time`), `expected` says what
 * was wanted and `received` the JSON type found (never the value: it could be a secret).
 */
export class ApiSchemaDriftError extends ApiError {
  readonly path: string;
  readonly expected: string;
  readonly received: string;

  constructor(drift: { path: string; expected: string; received: string }, details: ApiErrorDetails) {
    const where = drift.path === '' ? 'the response' : drift.path;
    super(
      'ERR_API_SCHEMA_DRIFT',
      `schema drift at ${where}: expected ${drift.expected}, received ${drift.received}`,
      details,
    );
    this.path = drift.path;
    this.expected = drift.expected;
    this.received = drift.received;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), path: this.path, expected: this.expected, received: this.received };
  }
}

/** JSON type name of a value, for drift messages: never the value itself. */
export function jsonTypeOf(value: unknown): string {
  if (value === undefined) return 'nothing (missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Format a property path the way drift messages show it: `logs[3].time`, `[0].id`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
