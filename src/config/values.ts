// Parsers from one raw value (a flag or variable string, or any YAML value) to a typed value.
// Each failure is a ConfigError naming where the value came from, what is wrong and the fix.

import { DurationError, formatDuration, parseDuration } from '../common/duration.js';
import { ConfigError, quoteValue } from './errors.js';
import type { RawValue } from './precedence.js';
import { didYouMean } from './suggest.js';

/** setTimeout's upper bound: longer timers fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

const DURATION_EXAMPLES = 'e.g. 15s, 5m, 1h30m or 500ms';

function typeName(value: unknown): string {
  if (value === null) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `a ${typeof value}`;
}

/** The value as text; YAML numbers and booleans are accepted where text is expected. */
export function asText(key: string, raw: RawValue, what: string): string {
  const { value, origin } = raw;
  if (typeof value === 'string') return value;
  if (value === null) throw new ConfigError(key, `${origin} has no value; give it ${what} or remove the key`);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConfigError(key, `${origin} is ${typeName(value)} but should be ${what}; fix its value`);
}

/** Items of a list setting: repeated flags, a comma list in a variable, a YAML list or comma string. */
export function asList(key: string, raw: RawValue, what: string): string[] {
  const items = Array.isArray(raw.value) ? (raw.value as unknown[]) : [raw.value];
  return items
    .flatMap((item) => asText(key, { ...raw, value: item }, what).split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Items of a list setting, each checked (and possibly converted) by `check`, duplicates dropped. */
export function asUniqueList<T extends string>(
  key: string,
  raw: RawValue,
  what: string,
  check: (item: string) => T,
): T[] {
  return [...new Set(asList(key, raw, what).map(check))];
}

export interface DurationBounds {
  minMs?: number;
  maxMs?: number;
}

export function parseDurationText(key: string, text: string, origin: string, bounds: DurationBounds = {}): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (error) {
    if (!(error instanceof DurationError)) throw error;
    throw new ConfigError(
      key,
      `${origin}: ${quoteValue(text)} is not a duration (${error.reason}); write a number and a unit, ${DURATION_EXAMPLES}`,
    );
  }
  const { minMs = 0, maxMs = Number.MAX_SAFE_INTEGER } = bounds;
  if (ms < minMs) {
    throw new ConfigError(key, `${origin}: ${quoteValue(text)} is too short; use at least ${formatDuration(minMs)}`);
  }
  if (ms > maxMs) {
    throw new ConfigError(key, `${origin}: ${quoteValue(text)} is too long; use at most ${formatDuration(maxMs)}`);
  }
  return ms;
}

export function asDuration(key: string, raw: RawValue, bounds: DurationBounds = {}): number {
  if (typeof raw.value === 'number' && raw.value !== 0) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${raw.value} has no unit; write a number and a unit, e.g. ${raw.value}s`,
    );
  }
  return parseDurationText(key, asText(key, raw, `a duration (${DURATION_EXAMPLES})`), raw.origin, bounds);
}

export function asInteger(key: string, raw: RawValue, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const { value, origin } = raw;
  const text = asText(key, raw, 'a whole number');
  const number = typeof value === 'number' ? value : /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(number)) {
    throw new ConfigError(key, `${origin}: ${quoteValue(text)} is not a whole number; write digits only, e.g. ${min}`);
  }
  if (number < min || number > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
    throw new ConfigError(key, `${origin}: ${number} is out of range; use a number ${range}`);
  }
  return number;
}

/** A share: a decimal number above 0 and at most 1 (`0.5`, `1`; a percentage is refused). */
export function asShare(key: string, raw: RawValue): number {
  const { value, origin } = raw;
  const text = asText(key, raw, 'a number above 0 and at most 1').trim();
  const number = typeof value === 'number' ? value : /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(number)) {
    throw new ConfigError(key, `${origin}: ${quoteValue(text)} is not a number; write a share such as 0.5`);
  }
  if (!(number > 0 && number <= 1)) {
    throw new ConfigError(key, `${origin}: ${number} is out of range; use a number above 0 and at most 1, e.g. 0.5`);
  }
  return number;
}

export function asBoolean(key: string, raw: RawValue): boolean {
  if (typeof raw.value === 'boolean') return raw.value;
  const text = asText(key, raw, 'true or false').trim().toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new ConfigError(key, `${raw.origin}: ${quoteValue(text)} is not a boolean; write true or false`);
}

export function asEnum<T extends string>(key: string, raw: RawValue, allowed: readonly T[], what: string): T {
  const text = asText(key, raw, `one of ${allowed.join(', ')}`).trim();
  return enumItem(key, text, raw.origin, allowed, what);
}

export function enumItem<T extends string>(
  key: string,
  text: string,
  origin: string,
  allowed: readonly T[],
  what: string,
): T {
  const found = allowed.find((value) => value === text.toLowerCase());
  if (found !== undefined) return found;
  const hint = didYouMean(text, allowed, `use one of ${allowed.join(', ')}`);
  const suffix = hint.startsWith('did you') ? `${hint} (one of ${allowed.join(', ')})` : hint;
  throw new ConfigError(key, `${origin}: ${quoteValue(text)} is not a known ${what}; ${suffix}`);
}

/**
 * The checks every URL setting shares: it parses, is http or https, and carries no user or
 * password. `literalScheme` also requires the text itself to start with http:// or https://
 * (the URL parser accepts `http:host`). Returns the trimmed text and the parsed URL.
 */
function parseHttpUrl(
  key: string,
  raw: RawValue,
  example: string,
  options: { literalScheme: boolean; credentialsHint: string },
): { text: string; url: URL } {
  const text = asText(key, raw, 'a URL').trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(text)} is not a URL; write an http:// or https:// URL, e.g. ${example}`,
    );
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    (options.literalScheme && !/^https?:\/\//i.test(text))
  ) {
    throw new ConfigError(key, `${raw.origin}: ${quoteValue(text)} is not an http or https URL; write e.g. ${example}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(key, `${raw.origin}: the URL must not carry a user or password; ${options.credentialsHint}`);
  }
  return { text, url };
}

/** An http(s) base URL without credentials, query or fragment; the trailing slash is dropped. */
export function asHttpUrl(key: string, raw: RawValue, example: string): string {
  const { text, url } = parseHttpUrl(key, raw, example, {
    literalScheme: false,
    credentialsHint: 'remove them and use the credential settings',
  });
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(text)} has a query or fragment; give the base URL only, e.g. ${example}`,
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A URL the service will call (a probe destination): http or https, no user, password or
 * fragment; a query is allowed. Kept as written, because the service signs it verbatim (the
 * signature's `sub`), so a normalised copy would no longer match.
 */
export function asTargetUrl(key: string, raw: RawValue, example: string): string {
  const { text } = parseHttpUrl(key, raw, example, { literalScheme: true, credentialsHint: 'remove them' });
  if (text.includes('#') || /\s/.test(text)) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(text)} has a fragment or whitespace; write the URL the service should call, e.g. ${example}`,
    );
  }
  return text;
}

/** A URL path such as /v2/logs: starts with a slash, no spaces, query or fragment. */
export function asUrlPath(key: string, raw: RawValue, example: string): string {
  const text = asText(key, raw, 'a URL path').trim();
  if (!/^\/[^\s?#]*$/.test(text)) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(text)} is not a URL path; write a path starting with /, e.g. ${example}`,
    );
  }
  return text;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** host:port, [ipv6]:port, or :port for every interface. */
export function asListenAddress(key: string, raw: RawValue): ListenAddress {
  const text = asText(key, raw, 'host:port').trim();
  const match = /^(?:\[([0-9A-Fa-f:.%\w]*)\]|([^\s:[\]]*)):(\d{1,5})$/.exec(text);
  const port = match === null ? NaN : Number(match[3]);
  if (match === null || port > 65_535) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(text)} is not host:port; write e.g. 0.0.0.0:9824, 127.0.0.1:9824 or [::]:9824 (port 0-65535)`,
    );
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}
