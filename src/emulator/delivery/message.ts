// A message inside the emulator: what is delivered (original body and headers), how (method,
// timeout, retries, retry delay), where it came from (queue, URL Group, schedule, workflow run),
// and the facts its log entries show (with redaction applied).
import { urlParts, type MessageFacts } from './log-store.js';
import type { CallbackSpec, FlowControlSpec, HeaderMap, HttpMethod, RedactionSpec } from './message-options.js';
import { makeId } from '../random.js';
import { recordedBody, recordedHeaders } from './redaction.js';
import type { RetryDelayExpression } from './retry-delay.js';

export type MessageKind = 'message' | 'callback' | 'failure-callback';
export type FinalOutcome = 'SUCCESS' | 'FAIL';

/** What a message is delivered with and where it came from: as asked, and as kept. */
interface MessageSpec {
  kind: MessageKind;
  url: string;
  method: HttpMethod;
  /** Original headers delivered to the destination (not redacted). */
  headers: HeaderMap;
  /** Original body (not redacted). */
  body: Buffer;
  timeoutMs: number;
  retries: number;
  retryDelay: RetryDelayExpression | undefined;
  queueName?: string;
  topicName?: string;
  endpointName?: string;
  scheduleId?: string;
  workflowRunId?: string;
  callerIP?: string;
  notBefore?: number;
  /** The flow-control key and the limits the message asked for. */
  flowControl?: FlowControlSpec;
  /** Told once the message reaches DELIVERED or FAILED. */
  onFinal?: (messageId: string, outcome: FinalOutcome) => void;
  /** Told after every attempt (workflow steps read the answer): final, or the retry's due time. */
  onAttempt?: (messageId: string, result: AttemptOutcome) => void;
}

/** One attempt as a workflow run sees it. */
export interface AttemptOutcome {
  ok: boolean;
  status?: number;
  body: Buffer;
  /** No further attempt follows. */
  final: boolean;
  nextDeliveryTime?: number;
}

export interface Message extends MessageSpec {
  id: string;
  /** Reset epoch the message belongs to; messages of an older epoch are dropped silently. */
  generation: number;
  /** Retries done so far (0 during the first attempt). */
  retried: number;
  createdAt: number;
  callback: CallbackSpec | undefined;
  failureCallback: CallbackSpec | undefined;
  /** Extra service headers for the destination (e.g. the workflow run id). */
  extraHeaders: Record<string, string>;
  facts: MessageFacts;
}

export interface NewMessage extends MessageSpec {
  labels: string[];
  redact: RedactionSpec;
  callback?: CallbackSpec;
  failureCallback?: CallbackSpec;
  extraHeaders?: Record<string, string>;
}

export const NO_REDACTION: RedactionSpec = Object.freeze({
  body: false,
  allHeaders: false,
  headerNames: new Set<string>(),
});

export function buildMessage(input: NewMessage, generation: number, now: number): Message {
  const id = makeId('msg');
  const { host, path } = urlParts(input.url);
  const facts: MessageFacts = {
    messageId: id,
    url: input.url,
    method: input.method,
    header: recordedHeaders(input.headers, input.redact),
    body: recordedBody(input.body, input.redact),
    maxRetries: input.retries,
    timeout: input.timeoutMs,
    labels: input.labels,
    host,
    path,
  };
  if (input.topicName !== undefined) facts.topicName = input.topicName;
  if (input.endpointName !== undefined) facts.endpointName = input.endpointName;
  if (input.queueName !== undefined) facts.queueName = input.queueName;
  if (input.scheduleId !== undefined) facts.scheduleId = input.scheduleId;
  if (input.retryDelay) facts.retryDelayExpression = input.retryDelay.source;
  if (input.callback) {
    facts.callback = input.callback.url;
    facts.callbackHeaders = input.callback.headers;
  }
  if (input.failureCallback) {
    facts.failureCallback = input.failureCallback.url;
    facts.failureCallbackHeaders = input.failureCallback.headers;
  }
  if (input.callerIP !== undefined) facts.callerIP = input.callerIP;
  if (input.notBefore !== undefined) facts.notBefore = input.notBefore;
  if (input.flowControl) {
    facts.flowControlKey = input.flowControl.key;
    facts.parallelism = input.flowControl.parallelism;
    facts.rate = input.flowControl.rate;
    facts.period = input.flowControl.period;
  }
  if (input.workflowRunId !== undefined) facts.workflowRunId = input.workflowRunId;

  return {
    id,
    kind: input.kind,
    generation,
    url: input.url,
    method: input.method,
    headers: input.headers,
    body: input.body,
    timeoutMs: input.timeoutMs,
    retries: input.retries,
    retryDelay: input.retryDelay,
    retried: 0,
    queueName: input.queueName,
    topicName: input.topicName,
    endpointName: input.endpointName,
    scheduleId: input.scheduleId,
    workflowRunId: input.workflowRunId,
    callerIP: input.callerIP,
    createdAt: now,
    notBefore: input.notBefore,
    flowControl: input.flowControl,
    callback: input.callback,
    failureCallback: input.failureCallback,
    extraHeaders: input.extraHeaders ?? {},
    facts,
    onFinal: input.onFinal,
    onAttempt: input.onAttempt,
  };
}
