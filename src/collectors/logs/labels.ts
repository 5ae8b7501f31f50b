// Label values derived from log entries: the opt-in URL without its secrets and the class of a
// delivery error (the destination host is src/collectors/destination.ts, shared with schedules).

/**
 * The opt-in `url` label: scheme, host and path only. Query strings, fragments and user info
 * often carry tokens, and secrets never go into labels.
 */
export function safeUrlOf(url: string | undefined): string {
  if (url === undefined || url === '') return '';
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '';
  }
}

export const ERROR_REASONS = ['4xx', '5xx', 'timeout', 'connection', 'other'] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

const TIMEOUT = /time[- ]?out|timed out|deadline/i;
const CONNECTION =
  /connect|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|socket|dns|tls|certificate|unreachable|refused|reset/i;

/** Index into ERROR_REASONS of an ERROR entry: its HTTP status class, else its error text. */
export function errorReasonOf(responseStatus: number | undefined, error: string | undefined): number {
  if (responseStatus !== undefined && responseStatus > 0) {
    if (responseStatus >= 400 && responseStatus < 500) return 0;
    if (responseStatus >= 500 && responseStatus < 600) return 1;
    return 4;
  }
  if (error === undefined || error === '') return 4;
  if (TIMEOUT.test(error)) return 2;
  if (CONNECTION.test(error)) return 3;
  return 4;
}

/** Label values must not contain NUL (series keys use it as a separator). */
export function cleanLabel(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}
