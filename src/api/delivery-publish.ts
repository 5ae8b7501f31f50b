// The publishing requests of the QStash delivery API: enqueue a message, trigger a workflow run,
// each with its `Upstash-` headers as the official SDK sends them (delivery-wire.ts).
// DeliveryClient (delivery.ts) checks the arguments and exposes them as methods; this module holds
// the requests.
import type { ApiErrorDetails } from './errors.js';
import type { HttpClient, HttpMethod } from './http.js';
import {
  durationText,
  flowControlValue,
  joinList,
  rawTargetPath,
  setIfDefined,
  signalOf,
  unixSeconds,
} from './delivery-wire.js';
import type { CallOptions, FlowControl } from './delivery-wire.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import { enqueueResponseSchema, triggerResultSchema } from './schemas/publish.js';
import type { EnqueueResult, TriggerResult } from './schemas/publish.js';

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

export const PUBLISH_ENDPOINTS = {
  enqueue: '/v2/enqueue/:queue/:destination',
  trigger: '/v2/trigger/:url',
} as const;

export class DeliveryPublisher {
  constructor(
    private readonly http: HttpClient,
    private readonly prefix: string,
  ) {}

  /** Enqueue a message; a URL Group destination yields one result per endpoint. */
  async enqueue(request: EnqueueRequest, call: CallOptions = {}): Promise<EnqueueResult[]> {
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
      endpoint: PUBLISH_ENDPOINTS.enqueue,
      path: rawTargetPath(`/v2/enqueue/${encodeURIComponent(request.queueName)}/`, request.destination),
      headers,
      body: request.body,
      response: 'json',
      // With a deduplication id a second copy is dropped by the service: safe to retry.
      idempotent: request.deduplicationId !== undefined || request.contentBasedDeduplication === true,
      ...signalOf(call),
    });
    return parseWith(enqueueResponseSchema, data, this.context('POST', PUBLISH_ENDPOINTS.enqueue));
  }

  /** Start a workflow run by posting its payload to the workflow URL. */
  async triggerWorkflow(request: TriggerRequest, call: CallOptions = {}): Promise<TriggerResult> {
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
      endpoint: PUBLISH_ENDPOINTS.trigger,
      path: rawTargetPath('/v2/trigger/', request.workflowUrl),
      headers,
      body: request.body,
      response: 'json',
      idempotent: false,
      ...signalOf(call),
    });
    return parseWith(triggerResultSchema, data, this.context('POST', PUBLISH_ENDPOINTS.trigger));
  }

  private forward(headers: Record<string, string>, forward: Readonly<Record<string, string>> | undefined): void {
    for (const [name, value] of Object.entries(forward ?? {})) {
      headers[`${this.prefix}Forward-${name}`] = value;
    }
  }

  private context(method: HttpMethod, endpoint: string): SchemaContext & ApiErrorDetails {
    return { api: 'qstash', endpoint, method };
  }
}
