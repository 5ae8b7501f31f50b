// DeliveryClient: the message-delivery service (QStash) with Bearer auth. Logs (cursor pages,
// read without their bodies: path-choice.ts, json-skim.ts), workflow runs (at either of their two
// paths), schedules (list, pause), enqueue and workflow trigger (their requests: delivery-publish.ts).
import { ApiNotFoundError, ApiRequestError, ApiUpstreamError } from './errors.js';
import type { ApiErrorDetails } from './errors.js';
import type { UpstreamClock } from './upstream-clock.js';
import { HttpClient } from './http.js';
import type { CallGate } from './call-gate.js';
import { isWorkflowEventsPath, otherLogsPath, otherWorkflowRunsPath, PathChoice } from './path-choice.js';
import { DeliveryInventory, INVENTORY_ENDPOINTS } from './delivery-inventory.js';
import type { DlqPage, FlowControlInfo, GlobalParallelism, QueueInfo, UrlGroupInfo } from './delivery-inventory.js';
import { DeliveryPublisher, PUBLISH_ENDPOINTS } from './delivery-publish.js';
import type { EnqueueRequest, TriggerRequest } from './delivery-publish.js';
import { logsSearchParams, signalOf } from './delivery-wire.js';
import type { CallOptions, LogsQuery } from './delivery-wire.js';
import type { CommonClientOptions, HttpMethod } from './http.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import { ReadLogsPage, readLogsPage } from './log-page-reader.js';
import { parseLogsPage } from './schemas/logs.js';
import type { LogsPage } from './schemas/logs.js';
import type { EnqueueResult, TriggerResult } from './schemas/publish.js';
import { scheduleListSchema } from './schemas/schedules.js';
import { workflowLogsPageSchema } from './schemas/workflows.js';
import type { WorkflowLogsPage, WorkflowLogsQuery } from './schemas/workflows.js';
import type { Schedule } from './schemas/schedules.js';

export type { LogEntry, LogsPage, MessageState } from './schemas/logs.js';
export type { Schedule } from './schemas/schedules.js';
export type { WorkflowLogsPage, WorkflowLogsQuery, WorkflowRun, WorkflowStep } from './schemas/workflows.js';
export type { EnqueueResult, TriggerResult } from './schemas/publish.js';
export { logsSearchParams, MAX_LOGS_PAGE_SIZE } from './delivery-wire.js';
export type { CallOptions, FlowControl, LogsQuery } from './delivery-wire.js';
export type { EnqueueRequest, TriggerRequest } from './delivery-publish.js';
export type {
  DlqMessage,
  DlqPage,
  FlowControlInfo,
  GlobalParallelism,
  QueueInfo,
  UrlGroupInfo,
} from './delivery-inventory.js';
export { DLQ_PAGE_SIZE, INVENTORY_ENDPOINTS } from './delivery-inventory.js';

/** Default cap of a log page's kept bytes (everything but the dropped bodies). */
export const DEFAULT_LOGS_MAX_PAGE_BYTES = 32 * 1024 * 1024;
/**
 * Sanity limit of all bytes read for one log page, bodies included: an entry's `body` and
 * `responseBody` can be 50 MB each (base64: about 67 MB).
 */
export const LOGS_MAX_TOTAL_BYTES = 1024 * 1024 * 1024;
/** String values of log entries that are dropped while a page streams in. */
export const LOG_BODY_KEYS: readonly string[] = ['body', 'responseBody'];
/** Body-like values of workflow runs and steps, dropped while a page streams in. */
export const WORKFLOW_BODY_KEYS: readonly string[] = [
  'out',
  'callBody',
  'callResponseBody',
  'workflowRunResponse',
  'body',
  'responseBody',
  'failResponse',
];
/** What every SDK calls; `/v2/logs` (the OpenAPI's) is the other one tried on a 404. */
export const DEFAULT_LOGS_PATH = '/v2/events';
/**
 * What the official workflow SDK (`client.logs()`) and Upstash's MCP server call, with
 * `groupBy=workflowRunId`; `/v2/workflows/logs` (the OpenAPI's) is the other one tried on a 404.
 */
export const DEFAULT_WORKFLOW_RUNS_PATH = '/v2/workflows/events';
/** Top-level keys of a page whose bare number value is read as its exact digits. */
const CURSOR_KEYS: readonly string[] = ['cursor'];

export interface DeliveryClientOptions extends CommonClientOptions {
  token: string;
  /** Prefix of the service's custom headers; `Upstash-` on the real service. */
  headerPrefix?: string;
  /**
   * `/v2/events` (what the SDKs call; default) or `/v2/logs` (the OpenAPI's). When the path
   * answers 404 before it ever answered, the other is tried once and kept if it answers.
   */
  logsPath?: string;
  /** Cap of a log page's kept bytes (bodies dropped); passing it is ApiPageTooLargeError. */
  logsMaxPageBytes?: number;
  /**
   * `/v2/workflows/events` (the workflow SDK's; default) or `/v2/workflows/logs` (the OpenAPI's);
   * the other is tried on a 404 as for the logs path.
   */
  workflowRunsPath?: string;
}

const ENDPOINTS = {
  schedules: '/v2/schedules',
  pause: '/v2/schedules/:id/pause',
  resume: '/v2/schedules/:id/resume',
} as const;

export class DeliveryClient {
  private readonly http: HttpClient;
  private readonly logsPaths: PathChoice;
  private readonly workflowPaths: PathChoice;
  private readonly logsMaxPageBytes: number;
  private readonly logger: CommonClientOptions['logger'];
  private readonly inventory: DeliveryInventory;
  private readonly publisher: DeliveryPublisher;
  /** The verb the schedule pause/resume endpoints answered (null: not known yet). */
  private scheduleVerb: 'PATCH' | 'POST' | null = null;

  constructor(options: DeliveryClientOptions) {
    this.http = new HttpClient({
      ...options,
      api: 'qstash',
      credentials: { scheme: 'bearer', token: options.token },
    });
    const logsPath = options.logsPath ?? DEFAULT_LOGS_PATH;
    this.logsPaths = new PathChoice({
      configured: logsPath,
      other: otherLogsPath(logsPath),
      serves: 'the logs',
      remedy: 'set logs.path to the logs endpoint',
      logger: options.logger,
    });
    const workflowPath = options.workflowRunsPath ?? DEFAULT_WORKFLOW_RUNS_PATH;
    this.workflowPaths = new PathChoice({
      configured: workflowPath,
      other: otherWorkflowRunsPath(workflowPath),
      serves: 'the workflow runs',
      remedy: 'the service has no workflow logs',
      logger: options.logger,
    });
    this.logsMaxPageBytes = options.logsMaxPageBytes ?? DEFAULT_LOGS_MAX_PAGE_BYTES;
    this.logger = options.logger;
    this.inventory = new DeliveryInventory(this.http);
    this.publisher = new DeliveryPublisher(this.http, options.headerPrefix ?? 'Upstash-');
  }

  /** The logs path in use (the configured one, or the other after a 404 on it). */
  get logsPath(): string {
    return this.logsPaths.current;
  }

  /** Time spent waiting for rate-limit windows (paced requests and 429 retries), all time. */
  get rateLimitWaitedMs(): number {
    return this.http.rateLimitWaitedMs;
  }

  /** The service's clock, from the Date header of its answers. */
  get upstreamClock(): UpstreamClock {
    return this.http.upstreamClock;
  }

  /** The wait the service asked for, kept by every request of this client. */
  get callGate(): CallGate {
    return this.http.callGate;
  }

  /** How long the next log page request would wait for its rate-limit window (0: none). */
  pendingLogsWaitMs(): number {
    return this.http.pendingRateLimitWaitMs(this.logsPath);
  }

  /** The workflow runs path in use (the default one, or the other after a 404 on it). */
  get workflowRunsPath(): string {
    return this.workflowPaths.current;
  }

  /** Log page requests the burst limit held back (429s, waits for a window announced spent), all time. */
  logsRateLimitHeld(): number {
    return this.http.rateLimitHeld(this.logsPath);
  }

  /** Workflow logs requests the burst limit held back, all time. */
  workflowLogsRateLimitHeld(): number {
    return this.http.rateLimitHeld(this.workflowRunsPath);
  }

  /** How long the next workflow logs request would wait for its rate-limit window (0: none). */
  pendingWorkflowLogsWaitMs(): number {
    return this.http.pendingRateLimitWaitMs(this.workflowRunsPath);
  }

  /** The logs endpoint's announced burst limit and this client's share of it (undefined: none announced yet). */
  logsRateLimit(): { limit: number; allowedPerSecond: number } | undefined {
    return this.http.rateLimitOf(this.logsPath);
  }

  /**
   * One page of logs, newest first. The page has no `cursor` when it is the last one. Entries
   * come without `body` and `responseBody` (asked trimmed with `trimBody=0`, and dropped while
   * the page streams in whatever the service did with that).
   */
  async logsPage(query: LogsQuery = {}, call: CallOptions = {}): Promise<LogsPage> {
    const params = logsSearchParams(query);
    params.set('trimBody', '0');
    const data = await this.logsPaths.request((path) =>
      this.http.request({
        method: 'GET',
        endpoint: path,
        path,
        query: params,
        response: 'json',
        skim: {
          skipKeys: LOG_BODY_KEYS,
          quoteNumberKeys: CURSOR_KEYS,
          maxKeptBytes: this.logsMaxPageBytes,
          maxTotalBytes: LOGS_MAX_TOTAL_BYTES,
        },
        readWhole: readLogsPage,
        ...signalOf(call),
      }),
    );
    // The single-pass reader's pages are checked already; the others are parsed JSON.
    return data instanceof ReadLogsPage ? data : parseLogsPage(data, this.context('GET', this.logsPath));
  }

  /**
   * One page of workflow runs, newest first (by creation time), without bodies (trimBody=-1),
   * from `/v2/workflows/events?groupBy=workflowRunId` or `/v2/workflows/logs` (path-choice.ts).
   */
  async workflowLogsPage(query: WorkflowLogsQuery = {}, call: CallOptions = {}): Promise<WorkflowLogsPage> {
    const params = new URLSearchParams();
    if (query.runs !== undefined)
      params.set('workflowRuns', query.runs.map((run) => `${run.id}@${run.createdAt}`).join(','));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    if (query.count !== undefined) params.set('count', String(query.count));
    if (query.fromDate !== undefined) params.set('fromDate', String(query.fromDate));
    if (query.toDate !== undefined) params.set('toDate', String(query.toDate));
    if (query.state !== undefined) params.set('state', query.state);
    params.set('trimBody', '-1');
    const data = await this.workflowPaths.request((path) => {
      const asked = new URLSearchParams(params);
      if (isWorkflowEventsPath(path)) asked.set('groupBy', 'workflowRunId');
      return this.http.request({
        method: 'GET',
        endpoint: path,
        path,
        query: asked,
        response: 'json',
        skim: {
          skipKeys: WORKFLOW_BODY_KEYS,
          quoteNumberKeys: CURSOR_KEYS,
          maxKeptBytes: this.logsMaxPageBytes,
          maxTotalBytes: LOGS_MAX_TOTAL_BYTES,
        },
        ...signalOf(call),
      });
    });
    return parseWith(workflowLogsPageSchema, data, this.context('GET', this.workflowRunsPath));
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
    await this.scheduleAction('pause', scheduleId, call);
  }

  /** Resume a schedule; resuming an active schedule succeeds too. */
  async resumeSchedule(scheduleId: string, call: CallOptions = {}): Promise<void> {
    await this.scheduleAction('resume', scheduleId, call);
  }

  /**
   * `PATCH /v2/schedules/{id}/pause|resume` as every SDK sends it; the OpenAPI says POST, so a
   * 404 or 405 to the first verb tried is asked again with the other, and the verb that
   * answered is kept for later calls.
   */
  private async scheduleAction(action: 'pause' | 'resume', scheduleId: string, call: CallOptions): Promise<void> {
    const endpoint = ENDPOINTS[action];
    this.require(scheduleId, 'schedule id', this.scheduleVerb ?? 'PATCH', endpoint);
    const send = (method: 'PATCH' | 'POST'): Promise<unknown> =>
      this.http.request({
        method,
        endpoint,
        path: `/v2/schedules/${encodeURIComponent(scheduleId)}/${action}`,
        response: 'none',
        // Pausing (resuming) twice is harmless.
        idempotent: true,
        ...signalOf(call),
      });
    if (this.scheduleVerb !== null) {
      await send(this.scheduleVerb);
      return;
    }
    try {
      await send('PATCH');
      this.scheduleVerb = 'PATCH';
    } catch (error) {
      if (!isVerbRefused(error)) throw error;
      try {
        await send('POST');
      } catch (second) {
        // Refused both ways: the first answer (an unknown id says 404 to PATCH) is the one to tell.
        throw isVerbRefused(second) ? error : second;
      }
      this.scheduleVerb = 'POST';
      this.logger?.warn({ endpoint }, 'the schedule endpoint refused PATCH and answered POST; using POST from now on');
    }
  }

  /** Enqueue a message; a URL Group destination yields one result per endpoint. */
  async enqueue(request: EnqueueRequest, call: CallOptions = {}): Promise<EnqueueResult[]> {
    this.require(request.queueName, 'queue name', 'POST', PUBLISH_ENDPOINTS.enqueue);
    this.require(request.destination, 'destination', 'POST', PUBLISH_ENDPOINTS.enqueue);
    return this.publisher.enqueue(request, call);
  }

  /** Start a workflow run by posting its payload to the workflow URL. */
  async triggerWorkflow(request: TriggerRequest, call: CallOptions = {}): Promise<TriggerResult> {
    this.require(request.workflowUrl, 'workflow URL', 'POST', PUBLISH_ENDPOINTS.trigger);
    return this.publisher.triggerWorkflow(request, call);
  }

  /** GET /v2/queues. */
  listQueues(call: CallOptions = {}): Promise<QueueInfo[]> {
    return this.inventory.listQueues(call);
  }

  /** GET /v2/topics (URL Groups). */
  listUrlGroups(call: CallOptions = {}): Promise<UrlGroupInfo[]> {
    return this.inventory.listUrlGroups(call);
  }

  /** One page of GET /v2/dlq (DLQ_PAGE_SIZE messages); no cursor on the last page. */
  dlqPage(cursor?: string, call: CallOptions = {}): Promise<DlqPage> {
    return this.inventory.dlqPage(cursor, call);
  }

  /** GET /v2/flowControl (a 404 or 405 where the service has no such list). */
  listFlowControls(call: CallOptions = {}): Promise<FlowControlInfo[]> {
    return this.inventory.listFlowControls(call);
  }

  /** GET /v2/flowControl/{key}. */
  flowControl(key: string, call: CallOptions = {}): Promise<FlowControlInfo> {
    this.require(key, 'flow-control key', 'GET', INVENTORY_ENDPOINTS.flowControl);
    return this.inventory.flowControl(key, call);
  }

  /** GET /v2/globalParallelism. */
  globalParallelism(call: CallOptions = {}): Promise<GlobalParallelism> {
    return this.inventory.globalParallelism(call);
  }

  async close(): Promise<void> {
    await this.http.close();
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

/** A 404 or 405: the server does not route this verb (or the id does not exist: then the other verb says so too). */
function isVerbRefused(error: unknown): boolean {
  return error instanceof ApiNotFoundError || (error instanceof ApiUpstreamError && error.status === 405);
}
