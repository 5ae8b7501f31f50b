// How long to wait before the next delivery attempt: the destination's own hint
// (Retry-After and the X-RateLimit-Reset family), else the message's retry-delay expression,
// else the default exponential backoff. All values are virtual milliseconds (the time scale
// shortens them when waiting).
import type { RetryDelayExpression } from './retry-delay.js';

export const ONE_DAY_MS = 86_400_000;

/** Default backoff of the service: min(86400, e^(2.5·n)) seconds, n = the retry about to happen (1-based). */
export function defaultBackoffMs(retried: number): number {
  const seconds = Math.min(86_400, Math.exp(2.5 * (retried + 1)));
  return Math.round(seconds * 1000);
}

const GO_DURATION_UNITS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};

/** Parses a Go-style duration such as `6m5s`, `1.5h` or `250ms`; undefined when it is not one. */
function parseGoDurationMs(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) {
    total += Number(match[1]) * GO_DURATION_UNITS[match[2]!]!;
  }
  return total;
}

/**
 * Reads a retry hint sent by a destination: seconds, an HTTP date, a Go duration, or (for the
 * rate-limit reset headers) a unix timestamp in seconds. Capped at one day.
 */
export function parseRetryHintMs(value: string, nowMs: number): number | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  let ms: number | undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const number = Number(text);
    // Values that look like an epoch in seconds are a reset time, not a delay.
    ms = number > 1_000_000_000 ? number * 1000 - nowMs : number * 1000;
  } else {
    ms = parseGoDurationMs(text);
    if (ms === undefined) {
      const date = Date.parse(text);
      if (!Number.isNaN(date)) ms = date - nowMs;
    }
  }
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  return Math.min(ONE_DAY_MS, Math.max(0, Math.round(ms)));
}

// Canonical names, as HttpDelivery records response headers.
const RETRY_HINT_HEADERS = [
  'Retry-After',
  'X-Ratelimit-Reset',
  'X-Ratelimit-Reset-Requests',
  'X-Ratelimit-Reset-Tokens',
];

/** The first usable retry hint among the destination's response headers (canonical names). */
export function retryHintFromHeaders(headers: Record<string, string[]>, nowMs: number): number | undefined {
  for (const name of RETRY_HINT_HEADERS) {
    const value = headers[name]?.[0];
    if (value === undefined) continue;
    const ms = parseRetryHintMs(value, nowMs);
    if (ms !== undefined) return ms;
  }
  return undefined;
}

/**
 * The wait before the retry that follows `retried` retries. A non-finite expression result falls
 * back to the default backoff; results are clamped to [0, 1 day].
 */
export function nextRetryDelayMs(
  retried: number,
  expression: RetryDelayExpression | undefined,
  hintMs: number | undefined,
): number {
  if (hintMs !== undefined) return hintMs;
  if (expression) {
    const value = expression.evaluate(retried);
    if (Number.isFinite(value)) return Math.min(ONE_DAY_MS, Math.max(0, Math.round(value)));
  }
  return defaultBackoffMs(retried);
}
