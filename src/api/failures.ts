// Classifying a failed attempt: the error class and code for a non-2xx status or a transport
// fault, whether another attempt may help, the wait a 429 announces, and the short,
// secret-free excerpt of an error body that goes into the message.
import type { Dispatcher } from 'undici';
import {
  ApiAuthError,
  ApiNetworkError,
  ApiDailyLimitError,
  ApiNotFoundError,
  ApiPageTooLargeError,
  ApiRateLimitError,
  ApiRequestError,
  ApiTimeoutError,
  ApiUpstreamError,
} from './errors.js';
import type { ApiError, ApiErrorDetails } from './errors.js';
import type { TimeoutOptions } from './http-types.js';
import { firstHeader, isDailyLimit, resetTime } from './rate-budget.js';
import { SkimLimitError } from './json-skim.js';
import { BodyDeadlineError, BodyLimitError } from './response-body.js';
import { errorCode } from '../common/errors.js';

const MAX_EXCERPT_CHARS = 200;

/** Why one attempt failed, and whether another attempt may help. */
export interface AttemptFailure {
  error: ApiError;
  retryable: boolean;
  /** Wait announced by the service (429), in ms. */
  announcedWaitMs?: number;
}

type Details = (extra?: Partial<ApiErrorDetails>) => ApiErrorDetails;

/** Connect-phase codes: the request was never sent (with a proxy, the connection to the proxy failed). */
export const NETWORK_CODES_BEFORE_SEND: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function statusFailure(
  status: number,
  headers: Dispatcher.ResponseData['headers'],
  excerpt: string,
  details: Details,
  idempotent: boolean,
  /** The upstream's now, unix ms: announced reset times are on its clock. */
  now: number = Date.now(),
): AttemptFailure {
  const said = excerpt === '' ? '' : `: ${excerpt}`;
  if (status === 401 || status === 403) {
    const problem = status === 401 ? 'authentication failed (401)' : 'permission denied (403)';
    return { error: new ApiAuthError(`${problem}${said}`, details({ status })), retryable: false };
  }
  if (status === 404) {
    return { error: new ApiNotFoundError(`not found (404)${said}`, details({ status })), retryable: false };
  }
  if (status === 429 && isDailyLimit(headers)) {
    const resetAt = resetTime(headers, now, 'ratelimit-reset');
    const waitMs = resetAt === undefined ? undefined : Math.max(0, resetAt - now);
    const until = resetAt === undefined ? '' : `; it resets at ${new Date(resetAt).toISOString()}`;
    const error = new ApiDailyLimitError(
      `daily request limit reached (429)${until}${said}`,
      details({ status, ...(waitMs === undefined ? {} : { retryAfterMs: waitMs }) }),
    );
    return { error, retryable: false };
  }
  if (status === 429) {
    const waitMs = rateLimitWaitMs(headers, now);
    const error = new ApiRateLimitError(
      `rate limited (429)${waitMs === undefined ? '' : `; retry after ${Math.ceil(waitMs)} ms`}${said}`,
      details({ status, ...(waitMs === undefined ? {} : { retryAfterMs: waitMs }) }),
    );
    return { error, retryable: true, ...(waitMs === undefined ? {} : { announcedWaitMs: waitMs }) };
  }
  if (status >= 300 && status < 400) {
    // Undici follows no redirect: the configured URL is not the API's (http for https, a moved path).
    const to = redirectTarget(firstHeader(headers.location));
    return {
      error: new ApiUpstreamError(
        `redirected (${status}) to ${to}: the API is not at the configured URL${said}`,
        details({ status }),
      ),
      retryable: false,
    };
  }
  const retryable = (status >= 500 || status === 408) && idempotent;
  return {
    error: new ApiUpstreamError(`unexpected status ${status}${said}`, details({ status })),
    retryable,
  };
}

export function transportFailure(
  timeouts: TimeoutOptions,
  cause: unknown,
  details: Details,
  idempotent: boolean,
  duringBody: boolean,
): AttemptFailure {
  const code = errorCode(cause);
  if (cause instanceof SkimLimitError) {
    return { error: new ApiPageTooLargeError(cause.message, details()), retryable: false };
  }
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
        ? `connect timeout (${timeouts.connectTimeoutMs} ms)`
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? `no response headers within ${timeouts.headersTimeoutMs} ms`
          : `response body not read within ${timeouts.bodyTimeoutMs} ms`;
    return { error: new ApiTimeoutError(phase, details({ cause })), retryable };
  }
  if (duringBody) {
    return {
      error: new ApiUpstreamError(
        `truncated response body (${code === 'ERR_UNKNOWN' ? 'connection closed' : code})`,
        details({ cause }),
      ),
      retryable,
    };
  }
  return {
    error: new ApiNetworkError(`network error (${code === 'ERR_UNKNOWN' ? 'unknown' : code})`, details({ cause })),
    retryable,
  };
}

/**
 * Where a redirect points, for the message: scheme, host and path, without user information or
 * query (either could carry a credential); `no Location` when the answer names none.
 */
export function redirectTarget(location: string | undefined): string {
  if (location === undefined || location.trim() === '') return 'no Location';
  let url: URL;
  try {
    url = new URL(location.trim(), 'relative:/');
  } catch {
    return 'an unreadable Location';
  }
  const query = url.search === '' ? '' : '?…';
  const where = url.protocol === 'relative:' ? url.pathname : `${url.protocol}//${url.host}${url.pathname}`;
  // eslint-disable-next-line no-control-regex
  const text = `${where}${query}`.replace(/[\u0000-\u001f\u007f]+/g, '');
  return text.length > MAX_EXCERPT_CHARS ? `${text.slice(0, MAX_EXCERPT_CHARS)}…` : text;
}

/**
 * The message of a 2xx body that is not JSON: an HTML page (a proxy's login page, a web site at
 * the configured URL) said as such, with its title; anything else as malformed JSON.
 */
export function notJsonText(
  status: number,
  headers: Dispatcher.ResponseData['headers'],
  raw: Buffer | string,
  scrub: (text: string) => string,
): string {
  const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
  const head = (typeof raw === 'string' ? raw.slice(0, 4096) : raw.subarray(0, 4096).toString('utf8')).trimStart();
  const type = firstHeader(headers['content-type']) ?? '';
  const html = /^text\/html\b/i.test(type) || /^(<!doctype\s+html|<html[\s>])/i.test(head);
  if (!html) return `malformed JSON in a ${status} response (${bytes} bytes)`;
  const title = /<title[^>]*>([^<]*)<\/title/i.exec(head)?.[1];
  const said = title === undefined ? '' : excerpt(Buffer.from(decodeEntities(title)), scrub);
  return `an HTML page, not JSON, in a ${status} response (${bytes} bytes)${said === '' ? ', without a title' : `: ${said}`}`;
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_m, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'quot' ? '"' : "'",
  );
}

/** A short, printable, secret-free excerpt of an error body: `{"error": ...}` or text. */
export function excerpt(raw: Buffer, scrub: (text: string) => string): string {
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
  text = scrub(text);
  // eslint-disable-next-line no-control-regex
  text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > MAX_EXCERPT_CHARS ? `${text.slice(0, MAX_EXCERPT_CHARS)}…` : text;
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
