// The delivery log: one entry per state change of a message, kept in write order under a
// monotonic sequence number. Reads go newest first and page strictly below the sequence number
// of the last entry returned, so a walk that started before new events arrived still sees every
// entry that existed at its start exactly once. Retention keeps the newest N entries and, when
// asked, only those younger than an age; every event ever written is also counted in the ground
// truth, including those retention dropped. An entry may become visible later than its time
// (a per-entry lag), so reads can see newer entries before older ones, as the real service may.
import { hostOf } from '../../common/url.js';
import type { HeaderMap } from './message-options.js';
import { UsageLedger } from './usage-ledger.js';

/** States written into entries. */
export const LOG_STATES = [
  'CREATED',
  'ACTIVE',
  'RETRY',
  'ERROR',
  'DELIVERED',
  'FAILED',
  'CANCEL_REQUESTED',
  'CANCELLED',
] as const;
export type LogState = (typeof LOG_STATES)[number];

/** Fields shared by every entry of one message (one object per message, not per entry). */
export interface MessageFacts {
  messageId: string;
  url: string;
  method: string;
  header: HeaderMap;
  /** Base64 of the body, or `REDACTED:<sha256>`. */
  body: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  maxRetries: number;
  /** Milliseconds. */
  timeout: number;
  retryDelayExpression?: string;
  labels: string[];
  callback?: string;
  callbackHeaders?: HeaderMap;
  failureCallback?: string;
  failureCallbackHeaders?: HeaderMap;
  callerIP?: string;
  notBefore?: number;
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
  workflowRunId?: string;
  /** Precomputed for the host and path filters and the ground truth. */
  host: string;
  path: string;
}

/** Fields that belong to one state change. */
export interface TransitionFacts {
  error?: string;
  responseStatus?: number;
  /** Base64. */
  responseBody?: string;
  responseHeaders?: HeaderMap;
  nextDeliveryTime?: number;
}

export interface StoredEntry {
  seq: number;
  time: number;
  /** Epoch ms from which reads see the entry (time plus its lag). */
  visibleAt: number;
  state: LogState;
  message: MessageFacts;
  transition: TransitionFacts | undefined;
}

/** A log entry as the API serves it. */
export type LogEntryJson = Record<string, unknown>;

export function toLogEntryJson(entry: StoredEntry, omitState: boolean): LogEntryJson {
  const m = entry.message;
  const json: LogEntryJson = { time: entry.time, messageId: m.messageId };
  if (!omitState) json.state = entry.state;
  json.url = m.url;
  if (m.topicName !== undefined) json.topicName = m.topicName;
  if (m.endpointName !== undefined) json.endpointName = m.endpointName;
  if (m.queueName !== undefined) json.queueName = m.queueName;
  if (m.scheduleId !== undefined) json.scheduleId = m.scheduleId;
  json.header = m.header;
  json.body = m.body;
  json.method = m.method;
  json.timeout = m.timeout;
  json.maxRetries = m.maxRetries;
  if (m.retryDelayExpression !== undefined) {
    json.retryDelayExpression = m.retryDelayExpression;
    // qstash-py reads this spelling.
    json.retryDelayExpr = m.retryDelayExpression;
  }
  if (m.labels.length > 0) {
    json.label = m.labels[0];
    json.labels = m.labels;
  }
  if (m.callback !== undefined) json.callback = m.callback;
  if (m.callbackHeaders !== undefined) json.callbackHeaders = m.callbackHeaders;
  if (m.failureCallback !== undefined) json.failureCallback = m.failureCallback;
  if (m.failureCallbackHeaders !== undefined) json.failureCallbackHeaders = m.failureCallbackHeaders;
  if (m.callerIP !== undefined) json.callerIP = m.callerIP;
  if (m.notBefore !== undefined) json.notBefore = m.notBefore;
  if (m.flowControlKey !== undefined) {
    json.flowControlKey = m.flowControlKey;
    if (m.parallelism !== undefined) json.parallelism = m.parallelism;
    if (m.rate !== undefined) json.rate = m.rate;
    if (m.period !== undefined) json.period = m.period;
  }
  if (m.workflowRunId !== undefined) json.workflowRunId = m.workflowRunId;
  const t = entry.transition;
  if (t) {
    if (t.error !== undefined) json.error = t.error;
    if (t.responseStatus !== undefined) json.responseStatus = t.responseStatus;
    if (t.responseBody !== undefined) json.responseBody = t.responseBody;
    if (t.responseHeaders !== undefined) json.responseHeaders = t.responseHeaders;
    if (t.nextDeliveryTime !== undefined) json.nextDeliveryTime = t.nextDeliveryTime;
  }
  return json;
}

/** Filters of GET /v2/logs and /v2/events. Each set is OR within, AND across. */
export interface LogFilter {
  messageIds?: Set<string>;
  states?: Set<LogState>;
  urls?: Set<string>;
  topicNames?: Set<string>;
  scheduleIds?: Set<string>;
  queueNames?: Set<string>;
  labels?: Set<string>;
  callerIps?: Set<string>;
  flowControlKeys?: Set<string>;
  hosts?: Set<string>;
  paths?: Set<string>;
  /** Inclusive bounds, epoch ms. */
  fromDate?: number;
  toDate?: number;
}

function matches(entry: StoredEntry, filter: LogFilter): boolean {
  const m = entry.message;
  if (filter.states && !filter.states.has(entry.state)) return false;
  if (filter.messageIds && !filter.messageIds.has(m.messageId)) return false;
  if (filter.urls && !filter.urls.has(m.url)) return false;
  if (filter.topicNames && !filter.topicNames.has(m.topicName ?? '')) return false;
  if (filter.scheduleIds && !filter.scheduleIds.has(m.scheduleId ?? '')) return false;
  if (filter.queueNames && !filter.queueNames.has(m.queueName ?? '')) return false;
  if (filter.callerIps && !filter.callerIps.has(m.callerIP ?? '')) return false;
  if (filter.flowControlKeys && !filter.flowControlKeys.has(m.flowControlKey ?? '')) return false;
  if (filter.hosts && !filter.hosts.has(m.host)) return false;
  if (filter.paths && !filter.paths.has(m.path)) return false;
  if (filter.labels && !m.labels.some((label) => filter.labels!.has(label))) return false;
  return true;
}

export interface GroundTruthSeries {
  state: LogState;
  queue: string;
  urlGroup: string;
  endpoint: string;
  destination: string;
  count: number;
}

/** What the exporter's counters must equal (format fixed in docs/architecture.md). */
export interface GroundTruth {
  total: number;
  byState: Record<LogState, number>;
  series: GroundTruthSeries[];
  retained: number;
  dropped: number;
}

export interface PageRequest {
  filter: LogFilter;
  count: number;
  /** Only entries with a lower sequence number (from the cursor). */
  beforeSeq?: number;
  /** Entries newer than this (epoch ms) are not visible yet. */
  visibleUntil: number;
}

export interface Page {
  entries: StoredEntry[];
  /** Sequence number to continue below, present only when more matching entries exist. */
  nextBeforeSeq?: number;
}

export class LogStore {
  private entries: StoredEntry[] = [];
  /** Index in `entries` of the oldest retained entry (dropping from the front is O(1)). */
  private head = 0;
  private nextSeq = 1;
  private lastTime = 0;
  private total = 0;
  private dropped = 0;
  private byState = emptyByState();
  private series = new Map<string, GroundTruthSeries>();
  /** Billed usage per day and minute, for the management API's official usage. */
  readonly usage = new UsageLedger();

  /** Entries older than this many ms are dropped; null keeps by count only. */
  private retentionAgeMs: number | null = null;

  constructor(
    private retention: number,
    private readonly now: () => number = Date.now,
    /** Extra visibility lag of the next entry, ms. */
    private readonly lag: () => number = () => 0,
  ) {}

  get size(): number {
    return this.entries.length - this.head;
  }

  setRetention(retention: number): void {
    this.retention = retention;
    this.enforceRetention();
  }

  setRetentionAge(ageMs: number | null): void {
    this.retentionAgeMs = ageMs;
    this.enforceRetention();
  }

  /** Appends one state change. Times never go backwards, so entries stay in event order. */
  append(state: LogState, message: MessageFacts, transition?: TransitionFacts): StoredEntry {
    const time = Math.max(this.lastTime, this.now());
    this.lastTime = time;
    const entry: StoredEntry = { seq: this.nextSeq++, time, visibleAt: time + this.lag(), state, message, transition };
    this.entries.push(entry);
    this.count(entry);
    this.enforceRetention();
    return entry;
  }

  /** Forgets every entry and count; sequence numbers keep increasing so old cursors stay harmless. */
  reset(): void {
    this.entries = [];
    this.head = 0;
    this.total = 0;
    this.dropped = 0;
    this.byState = emptyByState();
    this.series.clear();
    this.usage.reset();
  }

  groundTruth(): GroundTruth {
    return {
      total: this.total,
      byState: { ...this.byState },
      series: [...this.series.values()].map((series) => ({ ...series })),
      retained: this.size,
      dropped: this.dropped,
    };
  }

  /** One page, newest first. */
  page(request: PageRequest): Page {
    this.enforceRetention();
    const { filter, count } = request;
    const firstSeq = this.entries[this.head]?.seq ?? this.nextSeq;
    // Sequence numbers are contiguous, so the position of a sequence number is arithmetic.
    let index = this.entries.length - 1;
    if (request.beforeSeq !== undefined) {
      index = Math.min(index, this.head + (request.beforeSeq - firstSeq) - 1);
    }
    const toDate = filter.toDate ?? Number.POSITIVE_INFINITY;
    const found: StoredEntry[] = [];
    for (; index >= this.head; index--) {
      const entry = this.entries[index]!;
      if (entry.visibleAt > request.visibleUntil || entry.time > toDate) continue;
      if (filter.fromDate !== undefined && entry.time < filter.fromDate) break;
      if (!matches(entry, filter)) continue;
      if (found.length === count) {
        // One more match exists beyond this page: hand out a cursor.
        return { entries: found, nextBeforeSeq: found[found.length - 1]!.seq };
      }
      found.push(entry);
    }
    return { entries: found };
  }

  private count(entry: StoredEntry): void {
    this.total++;
    this.byState[entry.state]++;
    this.usage.record(entry.state, entry.time, entry.message.body);
    const m = entry.message;
    const queue = m.queueName ?? '';
    const urlGroup = m.topicName ?? '';
    const endpoint = m.endpointName ?? '';
    const key = `${entry.state}\u0000${queue}\u0000${urlGroup}\u0000${endpoint}\u0000${m.host}`;
    const series = this.series.get(key);
    if (series) series.count++;
    else this.series.set(key, { state: entry.state, queue, urlGroup, endpoint, destination: m.host, count: 1 });
  }

  private enforceRetention(): void {
    let excess = Math.max(0, this.size - this.retention);
    if (this.retentionAgeMs !== null) {
      const oldest = this.now() - this.retentionAgeMs;
      // Times never go backwards, so the too-old entries are a prefix.
      while (this.head + excess < this.entries.length && this.entries[this.head + excess]!.time < oldest) excess++;
    }
    if (excess <= 0) return;
    this.head += excess;
    this.dropped += excess;
    // Compact once the dead prefix dominates, keeping appends amortised O(1).
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

function emptyByState(): Record<LogState, number> {
  return Object.fromEntries(LOG_STATES.map((state) => [state, 0])) as Record<LogState, number>;
}

/** Host and path of a destination URL, for MessageFacts. */
export function urlParts(url: string): { host: string; path: string } {
  try {
    return { host: hostOf(url), path: new URL(url).pathname };
  } catch {
    return { host: '', path: '' };
  }
}
