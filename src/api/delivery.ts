// DeliveryClient: the message-delivery service (QStash) with Bearer auth. Logs (cursor pages),
// schedules (list, pause), enqueue and workflow trigger.
import { ApiRequestError, ApiUpstreamError } from './errors.js';
import type { ApiErrorDetails } from './errors.js';
import { HttpClient } from './http.js';
import type { CommonClientOptions, HttpMethod } from './http.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import { parseLogsPage } from './schemas/logs.js';
import type { LogsPage, MessageState } from './schemas/logs.js';
import { enqueueResponseSchema, triggerResultSchema } from './schemas/publish.js';
import type { EnqueueResult, TriggerResult } from './schemas/publish.js';
import { scheduleListSchema } from './schemas/schedules.js';
import type { Schedule } from './schemas/schedules.js';

export type { LogEntry, LogsPage, MessageState } from './schemas/logs.js';
export type { Schedule } from './schemas/schedules.js';
export type { EnqueueResult, TriggerResult } from './schemas/publish.js';

/** The service refuses more than this many entries per log page. */
export const MAX_LOGS_PAGE_SIZE = 100;

export interface DeliveryClientOptions extends CommonClientOptions {
  token: string;
  /** Prefix of the service's custom headers; `Upstash-` on the real service. */
  headerPrefix?: string;
  /** `/v2/logs` (interface) or `/v2/events` (what the SDKs call); both answer log pages. */
  logsPath?: string;
}

/** Filters of GET /v2/logs (interface §4.2). */
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
  /** Entries per page; clamped to 1..100. */
  count?: number;
  /** Sent as repeated `label` parameters; an entry matches any of them. */
  label?: string | readonly string[];
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface EnqueueRequest {
  queueName: string;
  /** A URL (http:// or https://) or a URL Group name; sent raw in the path, as the SDK does. */
  destination: string;
  body: string;
  contentType?: string;
  /** Method used toward the destination; default POST. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  retries?: number;
  /** Retry-delay expression, e.g. `pow(2, retried) * 1000`. */
  retryDelay?: string;
  /** Delivery timeout: a duration text (`30s`, `1m30s`) or a number of seconds. */
  timeout?: string | number;
  /** Delay before delivery: a duration text or a number of seconds. */
  delay?: string | number;
  /** Deliver not before this time: unix seconds or a Date. */
  notBefore?: number | Date;
  labels?: readonly string[];
  deduplicationId?: string;
  contentBasedDeduplication?: boolean;
  callback?: string;
  failureCallback?: string;
  /** Headers delivered to the destination (sent as `<prefix>Forward-<name>`). */
  forwardHeaders?: Readonly<Record<string, string>>;
  /** `body`, `header` / `headers`, `header[Name]`. */
  redactFields?: readonly string[];
}

export interface FlowControl {
  key: string;
  parallelism?: number;
  rate?: number;
  /** A duration text or a number of seconds. */
  period?: string | number;
}

export interface TriggerRequest {
  workflowUrl: string;
  body: string;
  runId?: string;
  retries?: number;
  delay?: string | number;
  notBefore?: number | Date;
  labels?: readonly string[];
  flowControl?: FlowControl;
  failureCallback?: string;
  forwardHeaders?: Readonly<Record<string, string>>;
  retryDelay?: string;
}

const ENDPOINTS = {
  schedules: '/v2/schedules',
  pause: '/v2/schedules/:id/pause',
  enqueue: '/v2/enqueue/:queue/:destination',
  trigger: '/v2/trigger/:url',
} as const;

export class DeliveryClient {
  private readonly http: HttpClient;
  private readonly prefix: string;
  private readonly logsPath: string;

  constructor(options: DeliveryClientOptions) {
    this.http = new HttpClient({
      ...options,
      api: 'qstash',
      credentials: { scheme: 'bearer', token: options.token },
    });
    this.prefix = options.headerPrefix ?? 'Upstash-';
    this.logsPath = options.logsPath ?? '/v2/logs';
  }

  /** Time spent waiting for rate-limit windows (paced requests and 429 retries), all time. */
  get rateLimitWaitedMs(): number {
    return this.http.rateLimitWaitedMs;
  }

  /** How long the next log page request would wait for its rate-limit window (0: none). */
  pendingLogsWaitMs(): number {
    return this.http.pendingRateLimitWaitMs(this.logsPath);
  }

  /** One page of logs, newest first. The page has no `cursor` when it is the last one. */
  async logsPage(query: LogsQuery = {}, call: CallOptions = {}): Promise<LogsPage> {
    const data = await this.http.request({
      method: 'GET',
      endpoint: this.logsPath,
      path: this.logsPath,
      query: logsSearchParams(query),
      response: 'json',
      ...signalOf(call),
    });
    return parseLogsPage(data, this.context('GET', this.logsPath));
  }

  /**
   * Every page of a query, following the cursor until the service omits it. A cursor that
   * comes back a second time would loop forever: the walk stops with ApiUpstreamError.
   */
  async *logsPages(query: LogsQuery = {}, call: CallOptions = {}): AsyncGenerator<LogsPage> {
    let cursor = query.cursor;
    const seen = new Set<string>(cursor === undefined ? [] : [cursor]);
    for (;;) {
      const page = await this.logsPage({ ...query, cursor }, call);
      yield page;
      if (page.cursor === undefined) return;
      if (seen.has(page.cursor)) {
        throw new ApiUpstreamError('the service returned a cursor already followed in this walk', {
          ...this.context('GET', this.logsPath),
        });
      }
      seen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  async listSchedules(call: CallOptions = {}): Promise<Schedule[]> {
    const data = await this.http.request({
      method: 'GET',
      endpoint: ENDPOINTS.schedules,
      path: ENDPOINTS.schedules,
      response: 'json',
      ...signalOf(call),
    });
    return parseWith(scheduleListSchema, data, this.context('GET', ENDPOINTS.schedules));
  }

  /** Pause a schedule; pausing a paused schedule succeeds too. */
  async pauseSchedule(scheduleId: string, call: CallOptions = {}): Promise<void> {
    this.require(scheduleId, 'schedule id', 'POST', ENDPOINTS.pause);
    await this.http.request({
      method: 'POST',
      endpoint: ENDPOINTS.pause,
      path: `/v2/schedules/${encodeURIComponent(scheduleId)}/pause`,
      response: 'none',
      // Pausing twice is harmless.
      idempotent: true,
      ...signalOf(call),
    });
  }

  /** Enqueue a message; a URL Group destination yields one result per endpoint. */
  async enqueue(request: EnqueueRequest, call: CallOptions = {}): Promise<EnqueueResult[]> {
    this.require(request.queueName, 'queue name', 'POST', ENDPOINTS.enqueue);
    this.require(request.destination, 'destination', 'POST', ENDPOINTS.enqueue);
    const p = this.prefix;
    const headers: Record<string, string> = {};
    if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    headers[`${p}Method`] = request.method ?? 'POST';
    setIfDefined(headers, `${p}Retries`, request.retries);
    setIfDefined(headers, `${p}Retry-Delay`, request.retryDelay);
    setIfDefined(headers, `${p}Timeout`, durationText(request.timeout));
    setIfDefined(headers, `${p}Delay`, durationText(request.delay));
    setIfDefined(headers, `${p}Not-Before`, unixSeconds(request.notBefore));
    setIfDefined(headers, `${p}Label`, joinList(request.labels));
    setIfDefined(headers, `${p}Deduplication-Id`, request.deduplicationId);
    if (request.contentBasedDeduplication) headers[`${p}Content-Based-Deduplication`] = 'true';
    setIfDefined(headers, `${p}Callback`, request.callback);
    setIfDefined(headers, `${p}Failure-Callback`, request.failureCallback);
    setIfDefined(headers, `${p}Redact-Fields`, joinList(request.redactFields));
    this.forward(headers, request.forwardHeaders);

    const data = await this.http.request({
      method: 'POST',
      endpoint: ENDPOINTS.enqueue,
      path: rawTargetPath(`/v2/enqueue/${encodeURIComponent(request.queueName)}/`, request.destination),
      headers,
      body: request.body,
      response: 'json',
      // With a deduplication id a second copy is dropped by the service: safe to retry.
      idempotent: request.deduplicationId !== undefined || request.contentBasedDeduplication === true,
      ...signalOf(call),
    });
    return parseWith(enqueueResponseSchema, data, this.context('POST', ENDPOINTS.enqueue));
  }

  /** Start a workflow run by posting its payload to the workflow URL. */
  async triggerWorkflow(request: TriggerRequest, call: CallOptions = {}): Promise<TriggerResult> {
    this.require(request.workflowUrl, 'workflow URL', 'POST', ENDPOINTS.trigger);
    const p = this.prefix;
    const headers: Record<string, string> = {};
    setIfDefined(headers, `${p}Workflow-RunId`, request.runId);
    setIfDefined(headers, `${p}Retries`, request.retries);
    setIfDefined(headers, `${p}Delay`, durationText(request.delay));
    setIfDefined(headers, `${p}Not-Before`, unixSeconds(request.notBefore));
    setIfDefined(headers, `${p}Label`, joinList(request.labels));
    if (request.flowControl) {
      headers[`${p}Flow-Control-Key`] = request.flowControl.key;
      setIfDefined(headers, `${p}Flow-Control-Value`, flowControlValue(request.flowControl));
    }
    setIfDefined(headers, `${p}Failure-Callback`, request.failureCallback);
    setIfDefined(headers, `${p}Retry-Delay`, request.retryDelay);
    this.forward(headers, request.forwardHeaders);

    const data = await this.http.request({
      method: 'POST',
      endpoint: ENDPOINTS.trigger,
      path: rawTargetPath('/v2/trigger/', request.workflowUrl),
      headers,
      body: request.body,
      response: 'json',
      idempotent: false,
      ...signalOf(call),
    });
    return parseWith(triggerResultSchema, data, this.context('POST', ENDPOINTS.trigger));
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private forward(headers: Record<string, string>, forward: Readonly<Record<string, string>> | undefined): void {
    for (const [name, value] of Object.entries(forward ?? {})) {
      headers[`${this.prefix}Forward-${name}`] = value;
    }
  }

  private context(method: HttpMethod, endpoint: string): SchemaContext & ApiErrorDetails {
    return { api: 'qstash', endpoint, method };
  }

  private require(value: string, what: string, method: HttpMethod, endpoint: string): void {
    if (typeof value !== 'string' || value === '') {
      throw new ApiRequestError(`a non-empty ${what} is required`, this.context(method, endpoint));
    }
  }
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
function rawTargetPath(prefix: string, target: string): string {
  const url = new URL(`http://placeholder${prefix}${target}`);
  return url.pathname + url.search;
}

function signalOf(call: CallOptions): { signal?: AbortSignal } {
  return call.signal ? { signal: call.signal } : {};
}

function setIfDefined(headers: Record<string, string>, name: string, value: string | number | undefined): void {
  if (value !== undefined) headers[name] = String(value);
}

function durationText(value: string | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'number' ? `${value}s` : value;
}

function unixSeconds(value: number | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value instanceof Date ? Math.floor(value.getTime() / 1000) : Math.floor(value);
}

function epochMs(value: number | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  return Number.isFinite(ms) ? String(Math.trunc(ms)) : undefined;
}

function joinList(values: readonly string[] | undefined): string | undefined {
  return values && values.length > 0 ? values.join(',') : undefined;
}

function flowControlValue(flow: FlowControl): string | undefined {
  const parts: string[] = [];
  if (flow.parallelism !== undefined) parts.push(`parallelism=${flow.parallelism}`);
  if (flow.rate !== undefined) parts.push(`rate=${flow.rate}`);
  if (flow.period !== undefined) parts.push(`period=${durationText(flow.period)}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}
