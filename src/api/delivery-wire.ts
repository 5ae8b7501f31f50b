// The wire format of DeliveryClient requests: the logs query string and the header values of
// enqueue and trigger (durations, times, lists, flow control), as the official SDK sends them.

import type { MessageState } from './schemas/logs.js';
/**
 * Most entries asked for in one log page: the SDK documents "max 1000" (the OpenAPI says 100;
 * what the service honours is detected from its answers by the log walk).
 */
export const MAX_LOGS_PAGE_SIZE = 1000;

/** Filters of GET /v2/logs. */
export interface LogsQuery {
  cursor?: string;
  messageId?: string;
  state?: MessageState | (string & {});
  url?: string;
  /** URL Group name. */
  topicName?: string;
  scheduleId?: string;
  queueName?: string;
  /** Unix milliseconds, inclusive. */
  fromDate?: number | Date;
  /** Unix milliseconds, inclusive. */
  toDate?: number | Date;
  /** Entries per page; clamped to 1..MAX_LOGS_PAGE_SIZE. */
  count?: number;
  /** Sent as repeated `label` parameters; an entry matches any of them. */
  label?: string | readonly string[];
}

export interface FlowControl {
  key: string;
  parallelism?: number;
  rate?: number;
  /** A duration text or a number of seconds. */
  period?: string | number;
}

/** Query string of a logs request: every filter given, `label` repeated, `count` clamped. */
export function logsSearchParams(query: LogsQuery): URLSearchParams {
  const params = new URLSearchParams();
  const single: Array<[string, string | undefined]> = [
    ['cursor', query.cursor],
    ['messageId', query.messageId],
    ['state', query.state],
    ['url', query.url],
    ['topicName', query.topicName],
    ['scheduleId', query.scheduleId],
    ['queueName', query.queueName],
    ['fromDate', epochMs(query.fromDate)],
    ['toDate', epochMs(query.toDate)],
  ];
  for (const [name, value] of single) {
    if (value !== undefined && value !== '') params.set(name, value);
  }
  if (query.count !== undefined && Number.isFinite(query.count)) {
    params.set('count', String(Math.min(MAX_LOGS_PAGE_SIZE, Math.max(1, Math.trunc(query.count)))));
  }
  const labels = typeof query.label === 'string' ? [query.label] : (query.label ?? []);
  for (const label of labels) params.append('label', label);
  return params;
}

/**
 * `prefix` + the target exactly as the official SDK puts it in the path: not percent-encoded,
 * only normalised by WHATWG URL parsing (so `https://a/b?x=1` travels as path `.../https://a/b`
 * with query `x=1`, and a `#fragment` is dropped).
 */
export function rawTargetPath(prefix: string, target: string): string {
  const url = new URL(`http://placeholder${prefix}${target}`);
  return url.pathname + url.search;
}

export function setIfDefined(headers: Record<string, string>, name: string, value: string | number | undefined): void {
  if (value !== undefined) headers[name] = String(value);
}

export function durationText(value: string | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'number' ? `${value}s` : value;
}

export function unixSeconds(value: number | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value instanceof Date ? Math.floor(value.getTime() / 1000) : Math.floor(value);
}

export function epochMs(value: number | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  return Number.isFinite(ms) ? String(Math.trunc(ms)) : undefined;
}

export function joinList(values: readonly string[] | undefined): string | undefined {
  return values && values.length > 0 ? values.join(',') : undefined;
}

export function flowControlValue(flow: FlowControl): string | undefined {
  const parts: string[] = [];
  if (flow.parallelism !== undefined) parts.push(`parallelism=${flow.parallelism}`);
  if (flow.rate !== undefined) parts.push(`rate=${flow.rate}`);
  if (flow.period !== undefined) parts.push(`period=${durationText(flow.period)}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** The request option of a call's abort signal (none when the call has none). */
export function signalOf(call: CallOptions): { signal?: AbortSignal } {
  return call.signal ? { signal: call.signal } : {};
}
