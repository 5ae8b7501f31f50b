// The log list page: the exporter's hot path. A zod object schema copies every entry and costs
// about as much as JSON.parse itself, so this one is validated by a table-driven check that
// walks each freshly parsed entry once, in place: required fields and the type of every known
// field are checked, unknown fields pass untouched, nothing is copied. The rules are the same
// as the zod schemas': null reads as absent, a wrong type is ApiSchemaDriftError with its path.
import { ApiSchemaDriftError, jsonTypeOf } from '../errors.js';
import type { SchemaContext } from './common.js';

/** Message states of log entries (and the IN_PROGRESS filter); both cancel spellings exist. */
export type MessageState =
  | 'CREATED'
  | 'ACTIVE'
  | 'RETRY'
  | 'ERROR'
  | 'IN_PROGRESS'
  | 'DELIVERED'
  | 'FAILED'
  | 'CANCEL_REQUESTED'
  | 'CANCELLED'
  | 'CANCELED';

/** One log entry: one state change of one message (the documented fields, plus what the SDKs read). */
export interface LogEntry {
  /** Unix milliseconds; a numeric string (old docs) is converted to a number. */
  time: number;
  messageId: string;
  /** Not promised by the interface; the exporter has a per-state fallback walk. */
  state?: string;
  header?: Record<string, unknown>;
  /** Base64 of the message body. */
  body?: string;
  error?: string;
  nextDeliveryTime?: number;
  url?: string;
  topicName?: string;
  endpointName?: string;
  scheduleId?: string;
  queueName?: string;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, unknown>;
  /** Milliseconds per the service's OpenAPI. */
  timeout?: number;
  method?: string;
  callback?: string;
  callbackHeaders?: Record<string, unknown>;
  failureCallback?: string;
  failureCallbackHeaders?: Record<string, unknown>;
  maxRetries?: number;
  retryDelayExpression?: string;
  /** The key qstash-py reads for the same value. */
  retryDelayExpr?: string;
  /** Deprecated: first label only. */
  label?: string;
  labels?: string[];
  /** When a delayed message may first be delivered (unix ms, or s below 1e11); read by the waiting times, not checked. */
  notBefore?: unknown;
  [field: string]: unknown;
}

export interface LogsPage {
  /** Pass back as `cursor` for the next page; absent on the last page. */
  cursor?: string;
  logs: LogEntry[];
}

type FieldKind = 'string' | 'number' | 'object' | 'stringArray';

/** Optional fields of a log entry and their JSON types. `time`/`messageId` are checked apart. */
const OPTIONAL_FIELDS: ReadonlyArray<readonly [string, FieldKind]> = [
  ['state', 'string'],
  ['header', 'object'],
  ['body', 'string'],
  ['error', 'string'],
  ['nextDeliveryTime', 'number'],
  ['url', 'string'],
  ['topicName', 'string'],
  ['endpointName', 'string'],
  ['scheduleId', 'string'],
  ['queueName', 'string'],
  ['responseStatus', 'number'],
  ['responseBody', 'string'],
  ['responseHeaders', 'object'],
  ['timeout', 'number'],
  ['method', 'string'],
  ['callback', 'string'],
  ['callbackHeaders', 'object'],
  ['failureCallback', 'string'],
  ['failureCallbackHeaders', 'object'],
  ['maxRetries', 'number'],
  ['retryDelayExpression', 'string'],
  ['retryDelayExpr', 'string'],
  ['label', 'string'],
  ['labels', 'stringArray'],
];

const KIND_OF: ReadonlyMap<string, FieldKind> = new Map(OPTIONAL_FIELDS);

const EXPECTED: Record<FieldKind, string> = {
  string: 'string',
  number: 'number',
  object: 'object',
  stringArray: 'array of string',
};

const NUMERIC_TIME = /^\d{1,16}$/;

/**
 * Validate a parsed log list response and return its page. The entries array is the one from
 * `data` (entries are checked and normalised in place: `time` strings become numbers, nulls
 * become undefined). The list is read from `logs`, or from `events` (the SDKs' endpoint), or
 * from the grouped shape `messages[].events[]` (what the service answers to `groupBy=messageId`;
 * Upstash's MCP server reads it): flattened into entries, each taking its group's `messageId`
 * when it has none, newest first again. A grouped page is one page of the walk like a flat one:
 * each of its entries is on it once, and the cursor goes on after the whole page.
 */
export function parseLogsPage(data: unknown, context: SchemaContext): LogsPage {
  if (!isPlainObject(data)) throw drift(context, '', 'object', data);
  let key: string;
  let entries: unknown;
  if (!Array.isArray(data.logs) && !Array.isArray(data.events) && Array.isArray(data.messages)) {
    key = 'messages[].events';
    entries = flattenGroups(data.messages, context);
  } else {
    key = Array.isArray(data.logs) || data.events === undefined ? 'logs' : 'events';
    entries = data[key];
  }
  if (!Array.isArray(entries)) {
    throw drift(context, key, 'array (under "logs" or "events", or grouped under "messages")', entries);
  }
  for (let index = 0; index < entries.length; index++) {
    checkEntry(entries[index], key, index, context);
  }
  const cursor = readCursor(data.cursor, context);
  const page: LogsPage = { logs: entries as LogEntry[] };
  if (cursor !== undefined) page.cursor = cursor;
  return page;
}

/**
 * The entries of `messages[].events[]`, newest first. Groups come in the order each message
 * first appears on the page, so the flat order is not the page's: sorted again by time (stable,
 * so equal times keep the service's order). An entry's time is checked after this; one that is
 * not a number sorts as it comes and then fails the check with its path.
 */
function flattenGroups(groups: unknown[], context: SchemaContext): unknown[] {
  const entries: unknown[] = [];
  for (let index = 0; index < groups.length; index++) {
    const group = groups[index];
    if (!isPlainObject(group)) throw drift(context, `messages[${index}]`, 'object', group);
    const events = group.events ?? [];
    if (!Array.isArray(events)) throw drift(context, `messages[${index}].events`, 'array', events);
    for (const event of events) {
      if (isPlainObject(event) && event.messageId === undefined && typeof group.messageId === 'string')
        event.messageId = group.messageId;
      entries.push(event);
    }
  }
  const timeOf = (entry: unknown): number => {
    const time = isPlainObject(entry) ? entry.time : undefined;
    return typeof time === 'number' ? time : typeof time === 'string' ? Number(time) : Number.NaN;
  };
  if (groups.length > 1) entries.sort((a, b) => timeOf(b) - timeOf(a) || 0);
  return entries;
}

function readCursor(value: unknown, context: SchemaContext): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  // Old SDKs accepted numeric cursors ("<ms>-<seq>" strings today); keep the text of it. A
  // number beyond 2^53 lost its digits in JSON.parse: following it would skip or repeat
  // entries, so it is drift, not a cursor.
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'number') {
    throw drift(context, 'cursor', 'string (or a number up to 2^53: larger ones lose digits in JSON)', value);
  }
  throw drift(context, 'cursor', 'string', value);
}

function checkEntry(entry: unknown, key: string, index: number, context: SchemaContext): void {
  if (!isPlainObject(entry)) throw drift(context, `${key}[${index}]`, 'object', entry);

  const time = entry.time;
  if (typeof time === 'string' && NUMERIC_TIME.test(time)) {
    entry.time = Number(time);
  } else if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) {
    throw drift(context, `${key}[${index}].time`, 'integer milliseconds', time);
  }
  if (typeof entry.messageId !== 'string') {
    throw drift(context, `${key}[${index}].messageId`, 'string', entry.messageId);
  }

  if (!optionalFieldsFit(entry)) normaliseOptionalFields(entry, key, index, context);
}

/**
 * The common case: every known optional field present is of its type. The entry's own keys are
 * walked (about a dozen, in V8's fast for-in) instead of looking each of the 24 known fields up
 * by name, which costs as much as the parse on entries of varied shapes. Anything else (a null,
 * a wrong type) goes to normaliseOptionalFields, which decides in the table's order.
 */
function optionalFieldsFit(entry: Record<string, unknown>): boolean {
  for (const field in entry) {
    const kind = KIND_OF.get(field);
    if (kind !== undefined && !hasKind(entry[field], kind)) return false;
  }
  return true;
}

/** Nulls read as absent; a field of the wrong type is schema drift. */
function normaliseOptionalFields(
  entry: Record<string, unknown>,
  key: string,
  index: number,
  context: SchemaContext,
): void {
  for (const [field, kind] of OPTIONAL_FIELDS) {
    const value = entry[field];
    if (value === undefined) continue;
    if (value === null) {
      entry[field] = undefined;
      continue;
    }
    if (!hasKind(value, kind)) {
      throw drift(context, `${key}[${index}].${field}`, EXPECTED[kind], value);
    }
  }
}

function hasKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return isPlainObject(value);
    case 'stringArray':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function drift(context: SchemaContext, path: string, expected: string, value: unknown): ApiSchemaDriftError {
  return new ApiSchemaDriftError({ path, expected, received: jsonTypeOf(value) }, context);
}
