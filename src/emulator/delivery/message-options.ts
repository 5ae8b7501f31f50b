// Reads the service's request headers (prefix `Upstash-` by default, e.g. `Svc-` when configured)
// into the settings of a message: method, timeout, retries, retry delay, delay / not-before,
// de-duplication, labels, redaction, callbacks, flow control. Malformed values are 400 errors
// naming the header; unknown prefixed headers are ignored, like the service does.
import { DurationError, parseDuration } from '../../common/duration.js';
import { parseHttpUrl } from './destination.js';
import { EmulatorInputError } from '../errors.js';
import { RetryDelayExpression } from './retry-delay.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Header name → values, as in log entries and schedules. */
export type HeaderMap = Record<string, string[]>;

/** Header names the way the service (a Go server) writes them: `x-custom-id` → `X-Custom-Id`. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

/** Request headers by lower-case name, keeping the name as sent and every value. */
export class RequestHeaders {
  private readonly byLowerName = new Map<string, { name: string; values: string[] }>();

  /** From Node's rawHeaders (name, value, name, value...) plus query-string configuration. */
  constructor(rawHeaders: string[], queryConfig: Map<string, string> = new Map()) {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      const lower = name.toLowerCase();
      const entry = this.byLowerName.get(lower);
      if (entry) entry.values.push(rawHeaders[i + 1]!);
      else this.byLowerName.set(lower, { name, values: [rawHeaders[i + 1]!] });
    }
    for (const [key, value] of queryConfig) {
      if (!this.byLowerName.has(key)) this.byLowerName.set(key, { name: key, values: [value] });
    }
  }

  /** The value of a header (several values joined with ", "), or undefined. */
  get(name: string): string | undefined {
    const entry = this.byLowerName.get(name.toLowerCase());
    return entry ? entry.values.join(', ') : undefined;
  }

  /** Headers whose name starts with `prefix` (case-insensitive), with the prefix removed. */
  withPrefix(prefix: string): HeaderMap {
    const lowerPrefix = prefix.toLowerCase();
    const out: HeaderMap = {};
    for (const [lower, entry] of this.byLowerName) {
      if (lower.startsWith(lowerPrefix) && lower.length > lowerPrefix.length) {
        const name = canonicalHeaderName(entry.name.slice(prefix.length));
        out[name] = [...(out[name] ?? []), ...entry.values];
      }
    }
    return out;
  }
}

export interface RedactionSpec {
  body: boolean;
  allHeaders: boolean;
  /** Lower-case names of single headers to redact. */
  headerNames: Set<string>;
}

export interface CallbackSpec {
  url: string;
  method: HttpMethod;
  /** Undefined: the plan's timeout. */
  timeoutMs: number | undefined;
  retries: number;
  retryDelay: RetryDelayExpression | undefined;
  /** Headers delivered to the callback (its `*-Forward-*` headers with the prefix removed). */
  headers: HeaderMap;
}

export interface FlowControlSpec {
  key: string;
  parallelism?: number;
  rate?: number;
  /** Seconds. */
  period?: number;
}

export interface MessageSpec {
  method: HttpMethod;
  /** Headers delivered to the destination: Content-Type and the forwarded ones (prefix removed). */
  headers: HeaderMap;
  /** Undefined: the plan's timeout. Otherwise the requested one, never above the plan's. */
  timeoutMs: number | undefined;
  retries: number;
  retryDelay: RetryDelayExpression | undefined;
  /** Wait before the first attempt, virtual ms (from Delay, or Not-Before which wins). */
  delayMs: number;
  /** Real epoch ms of Not-Before, when given. */
  notBeforeMs: number | undefined;
  deduplicationId: string | undefined;
  contentBasedDeduplication: boolean;
  labels: string[];
  redact: RedactionSpec;
  callback: CallbackSpec | undefined;
  failureCallback: CallbackSpec | undefined;
  flowControl: FlowControlSpec | undefined;
}

export interface ParseContext {
  prefix: string;
  defaultRetries: number;
  planTimeoutMs: number;
  nowMs: number;
}

const MAX_RETRIES = 100;

function name(ctx: ParseContext, suffix: string): string {
  return `${ctx.prefix}${suffix}`;
}

function parseMethod(field: string, text: string | undefined, fallback: HttpMethod): HttpMethod {
  if (text === undefined || text.trim() === '') return fallback;
  const upper = text.trim().toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(upper)) {
    throw new EmulatorInputError(field, `must be one of ${HTTP_METHODS.join(', ')}`);
  }
  return upper as HttpMethod;
}

function parseRetries(field: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === '') return fallback;
  if (!/^\d+$/.test(text.trim())) throw new EmulatorInputError(field, 'must be a non-negative integer');
  const value = Number(text.trim());
  if (value > MAX_RETRIES) throw new EmulatorInputError(field, `must be at most ${MAX_RETRIES}`);
  return value;
}

/** A `<value><unit>` duration header (compound values allowed), in ms. */
export function parseDurationHeader(field: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    if (!(error instanceof DurationError)) throw error;
    throw new EmulatorInputError(field, `${error.reason}; use <value><unit> such as 30s, 5m or 1h30m`);
  }
}

function parseTimeout(field: string, text: string | undefined, planTimeoutMs: number): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const ms = parseDurationHeader(field, text.trim());
  if (ms <= 0) throw new EmulatorInputError(field, 'must be greater than zero');
  // The header can only shorten the plan's limit.
  return Math.min(ms, planTimeoutMs);
}

function parseRetryDelay(field: string, text: string | undefined): RetryDelayExpression | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return RetryDelayExpression.parse(text);
  } catch (error) {
    throw new EmulatorInputError(field, error instanceof Error ? error.message : 'not an expression');
  }
}

function parseBoolean(field: string, text: string | undefined): boolean {
  if (text === undefined || text.trim() === '') return false;
  const lower = text.trim().toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new EmulatorInputError(field, 'must be true or false');
}

export function parseLabels(text: string | undefined): string[] {
  if (text === undefined) return [];
  return [
    ...new Set(
      text
        .split(',')
        .map((label) => label.trim())
        .filter((label) => label !== ''),
    ),
  ];
}

function parseRedaction(field: string, text: string | undefined): RedactionSpec {
  const spec: RedactionSpec = { body: false, allHeaders: false, headerNames: new Set() };
  if (text === undefined) return spec;
  for (const part of text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')) {
    const single = /^headers?\[([^\]]+)\]$/i.exec(part);
    if (part.toLowerCase() === 'body') spec.body = true;
    else if (part.toLowerCase() === 'header' || part.toLowerCase() === 'headers') spec.allHeaders = true;
    else if (single) spec.headerNames.add(single[1]!.trim().toLowerCase());
    else throw new EmulatorInputError(field, `unknown item "${part}"; use body, headers or header[<name>]`);
  }
  return spec;
}

function parseFlowControl(ctx: ParseContext, headers: RequestHeaders): FlowControlSpec | undefined {
  const keyField = name(ctx, 'Flow-Control-Key');
  const valueField = name(ctx, 'Flow-Control-Value');
  const key = headers.get(keyField)?.trim();
  const value = headers.get(valueField)?.trim();
  if (!key) {
    if (value) throw new EmulatorInputError(keyField, `is required when ${valueField} is given`);
    return undefined;
  }
  if (!value) throw new EmulatorInputError(valueField, `is required with ${keyField}`);
  const spec: FlowControlSpec = { key };
  for (const part of value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')) {
    const match = /^(parallelism|rate|period)\s*=\s*(\S+)$/i.exec(part);
    if (!match)
      throw new EmulatorInputError(
        valueField,
        `unknown item "${part}"; use parallelism=<n>, rate=<n>, period=<duration>`,
      );
    const setting = match[1]!.toLowerCase();
    const raw = match[2]!;
    if (setting === 'period') {
      const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : parseDurationHeader(valueField, raw);
      spec.period = Math.round(ms / 1000);
    } else {
      if (!/^\d+$/.test(raw) || Number(raw) < 1)
        throw new EmulatorInputError(valueField, `${setting} must be a positive integer`);
      spec[setting as 'parallelism' | 'rate'] = Number(raw);
    }
  }
  if (spec.parallelism === undefined && spec.rate === undefined) {
    throw new EmulatorInputError(valueField, 'needs parallelism or rate');
  }
  return spec;
}

function parseCallback(
  ctx: ParseContext,
  headers: RequestHeaders,
  kind: 'Callback' | 'Failure-Callback',
  message: { retries: number; retryDelay: RetryDelayExpression | undefined },
): CallbackSpec | undefined {
  const urlField = name(ctx, kind);
  const url = headers.get(urlField)?.trim();
  if (!url) return undefined;
  const retryDelay = parseRetryDelay(name(ctx, `${kind}-Retry-Delay`), headers.get(name(ctx, `${kind}-Retry-Delay`)));
  return {
    url: parseHttpUrl(urlField, url),
    method: parseMethod(name(ctx, `${kind}-Method`), headers.get(name(ctx, `${kind}-Method`)), 'POST'),
    timeoutMs: parseTimeout(name(ctx, `${kind}-Timeout`), headers.get(name(ctx, `${kind}-Timeout`)), ctx.planTimeoutMs),
    retries: parseRetries(name(ctx, `${kind}-Retries`), headers.get(name(ctx, `${kind}-Retries`)), message.retries),
    retryDelay: retryDelay ?? message.retryDelay,
    headers: headers.withPrefix(name(ctx, `${kind}-Forward-`)),
  };
}

/** The headers a destination receives from the message: Content-Type and the forwarded ones. */
function deliveredHeaders(ctx: ParseContext, headers: RequestHeaders): HeaderMap {
  const out: HeaderMap = {};
  const contentType = headers.get('content-type');
  if (contentType !== undefined) out['Content-Type'] = [contentType];
  for (const [header, values] of Object.entries(headers.withPrefix(name(ctx, 'Forward-')))) {
    out[header] = values;
  }
  return out;
}

/** Reads every message setting from the request headers; throws EmulatorInputError naming the header. */
export function parseMessageSpec(ctx: ParseContext, headers: RequestHeaders): MessageSpec {
  const retries = parseRetries(name(ctx, 'Retries'), headers.get(name(ctx, 'Retries')), ctx.defaultRetries);
  const retryDelay = parseRetryDelay(name(ctx, 'Retry-Delay'), headers.get(name(ctx, 'Retry-Delay')));

  let delayMs = 0;
  const delayText = headers.get(name(ctx, 'Delay'))?.trim();
  if (delayText) delayMs = parseDurationHeader(name(ctx, 'Delay'), delayText);
  let notBeforeMs: number | undefined;
  const notBeforeText = headers.get(name(ctx, 'Not-Before'))?.trim();
  if (notBeforeText) {
    if (!/^\d+$/.test(notBeforeText))
      throw new EmulatorInputError(name(ctx, 'Not-Before'), 'must be a unix timestamp in seconds');
    notBeforeMs = Number(notBeforeText) * 1000;
    // Not-Before wins over Delay.
    delayMs = Math.max(0, notBeforeMs - ctx.nowMs);
  }

  const deduplicationId = headers.get(name(ctx, 'Deduplication-Id'))?.trim() || undefined;
  return {
    method: parseMethod(name(ctx, 'Method'), headers.get(name(ctx, 'Method')), 'POST'),
    headers: deliveredHeaders(ctx, headers),
    timeoutMs: parseTimeout(name(ctx, 'Timeout'), headers.get(name(ctx, 'Timeout')), ctx.planTimeoutMs),
    retries,
    retryDelay,
    delayMs,
    notBeforeMs,
    deduplicationId,
    contentBasedDeduplication: parseBoolean(
      name(ctx, 'Content-Based-Deduplication'),
      headers.get(name(ctx, 'Content-Based-Deduplication')),
    ),
    labels: parseLabels(headers.get(name(ctx, 'Label'))),
    redact: parseRedaction(name(ctx, 'Redact-Fields'), headers.get(name(ctx, 'Redact-Fields'))),
    callback: parseCallback(ctx, headers, 'Callback', { retries, retryDelay }),
    failureCallback: parseCallback(ctx, headers, 'Failure-Callback', { retries, retryDelay }),
    flowControl: parseFlowControl(ctx, headers),
  };
}
