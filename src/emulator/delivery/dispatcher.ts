// The delivery worker. Messages wait on the shared timer queue (delays, retries), then in a
// FIFO of ready messages; at most `concurrency` attempts are in flight, and a queue's messages
// respect its parallelism and pause flag, and a flow-control key's parallelism, rate and pause
// flag (held messages are its wait list). A message that fails for good goes to the DLQ.
// Every state change is written to the log:
// CREATED, ACTIVE, then DELIVERED, or ERROR + RETRY ... and finally FAILED.
import type { ScaledClock, TimerQueue } from '../clock.js';
import { isLoopbackUrl } from './destination.js';
import type { DlqStore } from './dlq.js';
import type { FlowControlState, FlowControlStore } from './flow-control.js';
import type { AttemptResult, HttpDelivery, RequestSigner } from './http-delivery.js';
import type { LogStore } from './log-store.js';
import { buildMessage, type FinalOutcome, type Message, type NewMessage } from './message.js';
import type { CallbackSpec } from './message-options.js';
import type { QueueStore } from './queues.js';
import { nextRetryDelayMs, retryHintFromHeaders } from './retry-policy.js';
import { errorMessage } from '../../common/errors.js';
import { regionHeaderValue } from '../regions.js';

export const NOT_ALLOWED_ERROR = 'destination not allowed by emulator';

export interface DispatcherDeps {
  clock: ScaledClock;
  timers: TimerQueue;
  log: LogStore;
  queues: QueueStore;
  flowControl: FlowControlStore;
  dlq: DlqStore;
  http: HttpDelivery;
  headerPrefix: string;
  /** The region delivering (`eu-central-1`): every delivery says it in `<prefix>Region`, as the service does. */
  region: string;
  concurrency: number;
  allowRemoteDestinations: boolean;
  planTimeoutMs: () => number;
  /** Signs each attempt (`<prefix>Signature`); see signing.ts. */
  signer?: RequestSigner;
  /** Where unexpected internal errors go; delivery keeps going after them. */
  report: (line: string) => void;
}

export class Dispatcher {
  private ready: Message[] = [];
  private readyHead = 0;
  /** Messages held by a queue (`queue:<name>`) or a flow-control key (`flow:<key>`). */
  private readonly waiting = new Map<string, Message[]>();
  private inFlight = 0;
  private generation = 0;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Accepts a new message: logs CREATED and delivers it after `delayMs` of virtual time. */
  submit(input: NewMessage, delayMs: number): Message {
    const message = buildMessage(input, this.generation, this.deps.clock.now());
    // A delayed message shows when it may be delivered (ms), as the service's Message.notBefore does.
    if (delayMs > 0 && message.facts.notBefore === undefined)
      message.facts.notBefore = Math.round(this.deps.clock.realAt(this.deps.clock.virtualNow() + delayMs));
    this.deps.log.append('CREATED', message.facts);
    if (message.queueName !== undefined) this.deps.queues.ensure(message.queueName).pending++;
    if (message.flowControl !== undefined) this.deps.flowControl.apply(message.flowControl);
    if (delayMs > 0) this.deps.timers.after(delayMs, () => this.makeReady(message));
    else this.makeReady(message);
    return message;
  }

  /** Attempts in flight now, across all messages (GET /v2/globalParallelism). */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /** Attempts allowed in flight at once, across all messages. */
  get concurrency(): number {
    return this.deps.concurrency;
  }

  /** Lets held messages of a queue go again (after resume or a parallelism change). */
  releaseQueue(name: string): void {
    const queue = this.deps.queues.get(name);
    this.release(
      `queue:${name}`,
      queue ? (queue.paused ? 0 : Math.max(0, queue.parallelism - queue.inFlight)) : Number.POSITIVE_INFINITY,
    );
  }

  /** Lets the wait list of a flow-control key go as far as its limits allow (after resume, pin, a finished attempt, a new rate period). */
  releaseFlow(key: string): void {
    const state = this.deps.flowControl.get(key);
    this.release(`flow:${key}`, state ? this.deps.flowControl.room(state) : Number.POSITIVE_INFINITY);
    if (state && this.waiting.has(`flow:${key}`)) this.armRateRelease(state);
  }

  private release(holdKey: string, room: number): void {
    const held = this.waiting.get(holdKey);
    if (!held || held.length === 0 || room <= 0) return;
    const released = held.splice(0, room);
    if (held.length === 0) this.waiting.delete(holdKey);
    if (holdKey.startsWith('flow:')) {
      const state = this.deps.flowControl.get(holdKey.slice('flow:'.length));
      if (state) state.waitListSize = held.length;
    }
    // Released messages go first: they were ready before anything queued after them.
    this.ready.splice(this.readyHead, 0, ...released);
    this.pump();
  }

  /** Forgets every pending message; attempts in flight finish without writing to the log. */
  reset(): void {
    this.generation++;
    this.ready = [];
    this.readyHead = 0;
    this.waiting.clear();
  }

  private hold(holdKey: string, message: Message): void {
    const held = this.waiting.get(holdKey) ?? [];
    held.push(message);
    this.waiting.set(holdKey, held);
  }

  /** The flow-control key holds the message back: into its wait list, with a timer when the rate is what holds it. */
  private holdForFlow(state: FlowControlState, message: Message): void {
    this.hold(`flow:${state.key}`, message);
    state.waitListSize++;
    this.armRateRelease(state);
  }

  /** When the rate holds the wait list, release it as the period ends (one timer per key). */
  private armRateRelease(state: FlowControlState): void {
    const resumeAt = this.deps.flowControl.rateResumesAt(state);
    if (resumeAt === undefined || state.releaseArmed) return;
    state.releaseArmed = true;
    const generation = this.generation;
    this.deps.timers.at(resumeAt, () => {
      state.releaseArmed = false;
      if (generation === this.generation) this.releaseFlow(state.key);
    });
  }

  private makeReady(message: Message): void {
    if (message.generation !== this.generation) return;
    this.ready.push(message);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.deps.concurrency && this.readyHead < this.ready.length) {
      const message = this.ready[this.readyHead++]!;
      if (message.generation !== this.generation) continue;
      const queue = message.queueName !== undefined ? this.deps.queues.get(message.queueName) : undefined;
      if (queue && (queue.paused || queue.inFlight >= queue.parallelism)) {
        this.hold(`queue:${queue.name}`, message);
        continue;
      }
      const flow = message.flowControl !== undefined ? this.deps.flowControl.get(message.flowControl.key) : undefined;
      if (flow && this.deps.flowControl.room(flow) <= 0) {
        this.holdForFlow(flow, message);
        continue;
      }
      this.inFlight++;
      if (queue) queue.inFlight++;
      if (flow) this.deps.flowControl.started(flow);
      void this.attempt(message)
        .catch((error: unknown) => {
          this.deps.report(`emulator: delivery of ${message.id} failed internally: ${errorMessage(error)}`);
        })
        .finally(() => {
          this.inFlight--;
          if (queue) {
            queue.inFlight = Math.max(0, queue.inFlight - 1);
            this.releaseQueue(queue.name);
          }
          if (flow) {
            this.deps.flowControl.finished(flow.key);
            this.releaseFlow(flow.key);
          }
          this.pump();
        });
    }
    if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.readyHead);
      this.readyHead = 0;
    }
  }

  private async attempt(message: Message): Promise<void> {
    const { log, clock } = this.deps;
    log.append('ACTIVE', message.facts);
    let result: AttemptResult;
    if (!this.deps.allowRemoteDestinations && !isLoopbackUrl(message.url)) {
      result = { ok: false, headers: {}, body: Buffer.alloc(0), error: NOT_ALLOWED_ERROR, nonRetryable: true };
    } else {
      result = await this.deps.http.send({
        url: message.url,
        method: message.method,
        headers: this.destinationHeaders(message),
        body: message.body,
        timeoutMs: message.timeoutMs,
      });
    }
    if (message.generation !== this.generation) return;

    if (result.ok) {
      log.append('DELIVERED', message.facts, { responseStatus: result.status });
      message.onAttempt?.(message.id, { ok: true, status: result.status, body: result.body, final: true });
      this.sendCallback(message, message.callback, result);
      this.finish(message, 'SUCCESS');
      return;
    }

    log.append('ERROR', message.facts, {
      error: result.error,
      responseStatus: result.status,
      responseBody: result.status !== undefined ? result.body.toString('base64') : undefined,
      responseHeaders: result.status !== undefined ? result.headers : undefined,
    });
    // The callback fires after every attempt, successful or not.
    this.sendCallback(message, message.callback, result);

    if (result.nonRetryable || message.retried >= message.retries) {
      log.append('FAILED', message.facts, { error: result.error, responseStatus: result.status });
      message.onAttempt?.(message.id, { ok: false, status: result.status, body: result.body, final: true });
      // Callbacks are the service's own messages: only a user's message lands in the DLQ.
      const dlqId =
        message.kind === 'message'
          ? this.deps.dlq.add(message, {
              responseStatus: result.status,
              responseHeaders: result.status !== undefined ? result.headers : undefined,
              responseBody: result.status !== undefined ? result.body : undefined,
            })
          : undefined;
      this.sendCallback(message, message.failureCallback, result, dlqId);
      this.finish(message, 'FAIL');
      return;
    }

    const hint = retryHintFromHeaders(result.headers, clock.now());
    const delayMs = nextRetryDelayMs(message.retried, message.retryDelay, hint);
    message.retried++;
    const dueVirtual = clock.virtualNow() + delayMs;
    const nextDeliveryTime = Math.round(clock.realAt(dueVirtual));
    log.append('RETRY', message.facts, { nextDeliveryTime });
    message.onAttempt?.(message.id, {
      ok: false,
      status: result.status,
      body: result.body,
      final: false,
      nextDeliveryTime,
    });
    this.deps.timers.at(dueVirtual, () => this.makeReady(message));
  }

  private finish(message: Message, outcome: FinalOutcome): void {
    if (message.queueName !== undefined) {
      const queue = this.deps.queues.get(message.queueName);
      if (queue) queue.pending = Math.max(0, queue.pending - 1);
    }
    message.onFinal?.(message.id, outcome);
  }

  /** Service headers plus the message's own; service headers win over same-named user headers. */
  private destinationHeaders(message: Message): Record<string, string | string[]> {
    const prefix = this.deps.headerPrefix;
    const byLower = new Map<string, [string, string | string[]]>();
    const set = (name: string, value: string | string[]): void => {
      byLower.set(name.toLowerCase(), [name, value]);
    };
    for (const [name, values] of Object.entries(message.headers)) set(name, values.length === 1 ? values[0]! : values);
    set('User-Agent', 'Upstash-QStash');
    set(`${prefix}Message-Id`, message.id);
    set(`${prefix}Retried`, String(message.retried));
    // The SDK's Receiver picks the region's signing keys by this header in migration mode.
    set(`${prefix}Region`, regionHeaderValue(this.deps.region));
    if (message.scheduleId !== undefined) set(`${prefix}Schedule-Id`, message.scheduleId);
    if (message.topicName !== undefined) set(`${prefix}Topic-Name`, message.topicName);
    if (message.callerIP !== undefined) set(`${prefix}Caller-Ip`, message.callerIP);
    for (const [name, value] of Object.entries(message.extraHeaders)) set(name, value);
    if (this.deps.signer) {
      // The signature covers the bytes sent: GET carries no body (http-delivery.ts).
      const sent = message.method === 'GET' ? Buffer.alloc(0) : message.body;
      for (const [name, value] of Object.entries(this.deps.signer({ url: message.url, body: sent }))) set(name, value);
    }
    return Object.fromEntries([...byLower.values()]);
  }

  /** Callbacks and failure callbacks are new messages (logged too) with the service's callback body. */
  /** `failureOf`: the DLQ id of the failed message this failure callback reports (undefined for a plain callback). */
  private sendCallback(
    source: Message,
    spec: CallbackSpec | undefined,
    result: AttemptResult,
    failureOf?: string,
  ): void {
    const failure = failureOf !== undefined;
    // Callbacks of callbacks would loop; the service does not chain them either.
    if (!spec || source.kind !== 'message') return;
    const payload: Record<string, unknown> = {
      status: result.status ?? 0,
      header: result.headers,
      body: result.body.toString('base64'),
      retried: source.retried,
      maxRetries: source.retries,
      sourceMessageId: source.id,
      topicName: source.topicName ?? '',
      endpointName: source.endpointName ?? '',
      url: source.url,
      method: source.method,
      // Records show the redacted forms, so the payload (itself logged) does too.
      sourceHeader: source.facts.header,
      sourceBody: source.facts.body,
      notBefore: source.notBefore ?? 0,
      createdAt: source.createdAt,
      scheduleId: source.scheduleId ?? '',
      callerIP: source.callerIP ?? '',
    };
    if (result.status === undefined && result.error !== undefined) payload.error = result.error;
    if (failure) payload.dlqId = failureOf;
    if (source.workflowRunId !== undefined) {
      payload.workflowRunId = source.workflowRunId;
      payload.workflowCreatedAt = source.createdAt;
    }
    this.submit(
      {
        kind: failure ? 'failure-callback' : 'callback',
        url: spec.url,
        method: spec.method,
        headers: { 'Content-Type': ['application/json'], ...spec.headers },
        body: Buffer.from(JSON.stringify(payload)),
        timeoutMs: spec.timeoutMs ?? this.deps.planTimeoutMs(),
        retries: spec.retries,
        retryDelay: spec.retryDelay,
        labels: [],
        redact: { body: false, allHeaders: false, headerNames: new Set() },
        callerIP: source.callerIP,
      },
      0,
    );
  }
}
