// The dead-letter queue: a message that reaches FAILED (retries spent, or a non-retryable error)
// is kept here with the answer of its last attempt, until deleted or pushed out by the plan's
// max_dlq_size (oldest first). Records follow the SDK's DlqMessage; ids are `<ms>-<seq>` (a
// Redis-stream-like id, as the failure callback's `dlqId` shows), so they sort by arrival.
import { EmulatorNotFoundError } from '../errors.js';
import type { HeaderMap } from './message-options.js';
import type { Message } from './message.js';

/** Messages per DLQ page, and the most a `count` may ask for. */
export const DLQ_MAX_PAGE_SIZE = 100;

export interface DlqLastAttempt {
  responseStatus?: number;
  responseHeaders?: HeaderMap;
  responseBody?: Buffer;
}

export interface DlqEntry {
  dlqId: string;
  message: Message;
  lastAttempt: DlqLastAttempt;
}

export interface DlqFilter {
  queueName?: string;
  topicName?: string;
  url?: string;
  label?: string;
}

export class DlqStore {
  /** By dlqId, in arrival order (ids grow). */
  private readonly entries = new Map<string, DlqEntry>();
  private lastMs = 0;
  private seq = 0;

  constructor(
    private readonly now: () => number,
    /** Most messages kept; the oldest is dropped beyond it. */
    private readonly capacity: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  add(message: Message, lastAttempt: DlqLastAttempt): string {
    const now = this.now();
    this.seq = now === this.lastMs ? this.seq + 1 : 0;
    this.lastMs = now;
    const dlqId = `${now}-${this.seq}`;
    this.entries.set(dlqId, { dlqId, message, lastAttempt });
    const capacity = this.capacity();
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= capacity) break;
      this.entries.delete(oldest);
    }
    return dlqId;
  }

  has(dlqId: string): boolean {
    return this.entries.has(dlqId);
  }

  delete(dlqId: string): void {
    if (!this.entries.delete(dlqId)) throw new EmulatorNotFoundError(`dlq message ${dlqId} not found`);
  }

  /** Oldest first; the cursor is the dlqId to continue after (absent on the last page). */
  page(cursor: string | undefined, count: number, filter: DlqFilter): { entries: DlqEntry[]; cursor?: string } {
    const size = Math.min(DLQ_MAX_PAGE_SIZE, Math.max(1, count));
    const out: DlqEntry[] = [];
    let more = false;
    for (const entry of this.entries.values()) {
      // Ids grow with arrival: continue after the cursor even when its own entry is gone.
      if (cursor !== undefined && compareIds(entry.dlqId, cursor) <= 0) continue;
      if (!matches(entry, filter)) continue;
      if (out.length === size) {
        more = true;
        break;
      }
      out.push(entry);
    }
    return more ? { entries: out, cursor: out[out.length - 1]!.dlqId } : { entries: out };
  }

  clear(): void {
    this.entries.clear();
  }
}

function matches(entry: DlqEntry, filter: DlqFilter): boolean {
  const m = entry.message;
  if (filter.queueName !== undefined && m.queueName !== filter.queueName) return false;
  if (filter.topicName !== undefined && m.topicName !== filter.topicName) return false;
  if (filter.url !== undefined && m.url !== filter.url) return false;
  if (filter.label !== undefined && !m.facts.labels.includes(filter.label)) return false;
  return true;
}

function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

/** The record GET /v2/dlq serves (the SDK's DlqMessage, with the redacted forms of body and headers). */
export function dlqJson(entry: DlqEntry): Record<string, unknown> {
  const m = entry.message;
  const f = m.facts;
  const json: Record<string, unknown> = {
    dlqId: entry.dlqId,
    messageId: m.id,
    url: m.url,
    method: m.method,
    header: f.header,
    maxRetries: m.retries,
    createdAt: m.createdAt,
    labels: f.labels,
  };
  if (f.labels.length > 0) json.label = f.labels[0];
  const bodyText = f.body.startsWith('REDACTED:') ? undefined : utf8(Buffer.from(f.body, 'base64'));
  if (f.body.startsWith('REDACTED:')) json.body = f.body;
  else if (bodyText !== undefined) json.body = bodyText;
  else json.bodyBase64 = f.body;
  for (const key of [
    'topicName',
    'endpointName',
    'queueName',
    'scheduleId',
    'callback',
    'failureCallback',
    'callerIP',
    'notBefore',
    'flowControlKey',
    'parallelism',
    'rate',
    'period',
    'retryDelayExpression',
  ] as const) {
    if (f[key] !== undefined) json[key] = f[key];
  }
  const last = entry.lastAttempt;
  if (last.responseStatus !== undefined) json.responseStatus = last.responseStatus;
  if (last.responseHeaders !== undefined) json.responseHeader = last.responseHeaders;
  if (last.responseBody !== undefined) {
    const text = utf8(last.responseBody);
    if (text !== undefined) json.responseBody = text;
    else json.responseBodyBase64 = last.responseBody.toString('base64');
  }
  return json;
}

function utf8(buffer: Buffer): string | undefined {
  const text = buffer.toString('utf8');
  return Buffer.from(text, 'utf8').equals(buffer) ? text : undefined;
}
