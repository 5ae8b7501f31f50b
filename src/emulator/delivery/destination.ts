// The destination travels RAW in the request path (`/v2/publish/https://host/a`), its query
// string in the request's query string: the official SDKs do not percent-encode it. These
// helpers take it from the raw request URL, never from a cleaned or decoded path.
import { isIPv4 } from 'node:net';
import { EmulatorInputError } from '../errors.js';

export type Destination = { kind: 'url'; url: string } | { kind: 'group'; name: string };

export interface RawRequestTarget {
  /** What followed the route prefix, with the destination's own query string re-attached. */
  destination: string;
  /** Configuration passed as lower-case `<prefix>*` query keys (e.g. `upstash-retries=3`), by header name. */
  queryConfig: Map<string, string>;
}

const NAME_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;

function decodeQueryComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * Splits a raw request URL such as `/v2/enqueue/q/https://h:1/a?x=1&qstash_token=t` after the
 * given path prefix. `qstash_token` and lower-case `<prefix>*` keys are removed from the
 * destination's query; the latter are returned as configuration.
 */
export function splitRawTarget(rawUrl: string, pathPrefix: string, headerPrefix: string): RawRequestTarget {
  const questionMark = rawUrl.indexOf('?');
  const path = questionMark === -1 ? rawUrl : rawUrl.slice(0, questionMark);
  const query = questionMark === -1 ? '' : rawUrl.slice(questionMark + 1);
  const configPrefix = headerPrefix.toLowerCase();
  const kept: string[] = [];
  const queryConfig = new Map<string, string>();
  if (query !== '') {
    for (const pair of query.split('&')) {
      const equals = pair.indexOf('=');
      const rawKey = equals === -1 ? pair : pair.slice(0, equals);
      const key = decodeQueryComponent(rawKey);
      if (key === 'qstash_token') continue;
      if (key.startsWith(configPrefix) && key === key.toLowerCase()) {
        queryConfig.set(key, decodeQueryComponent(equals === -1 ? '' : pair.slice(equals + 1)));
        continue;
      }
      kept.push(pair);
    }
  }
  let destination = path.startsWith(pathPrefix) ? path.slice(pathPrefix.length) : '';
  // A proxy may have collapsed "https://" into "https:/"; put the slash back.
  destination = destination.replace(/^(https?):\/(?!\/)/i, '$1://');
  if (kept.length > 0) destination += `?${kept.join('&')}`;
  return { destination, queryConfig };
}

/** Classifies a destination: an http(s) URL, or a URL Group name. Throws 400 naming `destination`. */
export function parseDestination(text: string): Destination {
  if (text === '') throw new EmulatorInputError('destination', 'missing; put a URL or a URL Group name after the path');
  if (/^https?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new EmulatorInputError('destination', `"${text}" is not a valid URL`);
    }
    if (url.hostname === '') throw new EmulatorInputError('destination', 'URL has no host');
    return { kind: 'url', url: text };
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(text) || text.includes('/')) {
    throw new EmulatorInputError('destination', 'endpoint has invalid scheme, add http:// or https://');
  }
  if (!NAME_PATTERN.test(text)) {
    throw new EmulatorInputError('destination', 'a URL Group name may only contain letters, digits, "-", "_" and "."');
  }
  return { kind: 'group', name: text };
}

/** Validates a callback-style URL header (must start with http:// or https://). */
export function parseHttpUrl(field: string, text: string): string {
  if (!/^https?:\/\//i.test(text)) throw new EmulatorInputError(field, 'must start with http:// or https://');
  try {
    new URL(text);
  } catch {
    throw new EmulatorInputError(field, `"${text}" is not a valid URL`);
  }
  return text;
}

/** Validates a queue or URL Group name taken from a path segment. */
export function parseName(field: string, raw: string): string {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw new EmulatorInputError(field, 'bad percent-encoding');
  }
  if (!NAME_PATTERN.test(name)) {
    throw new EmulatorInputError(field, 'may only contain letters, digits, "-", "_" and "." (1 to 200 characters)');
  }
  return name;
}

/** True for 127.0.0.0/8, localhost and ::1: the only hosts the emulator delivers to by default. */
export function isLoopbackUrl(url: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  if (hostname === '[::1]') return true;
  if (isIPv4(hostname)) return hostname.startsWith('127.');
  const mapped = /^\[::ffff:(\d+\.\d+\.\d+\.\d+)\]$/.exec(hostname);
  return mapped !== null && mapped[1]!.startsWith('127.');
}
