// One log entry read from a page's bytes where it lies (log-page-reader.ts reads the page): the
// fields the exporter reads are kept, every known field is checked as schemas/logs.ts checks it,
// the rest is checked as JSON and passed over. Gives up (GIVE_UP) where parseLogsPage would
// decide otherwise or report drift.
import {
  actionOf,
  GIVE_UP,
  keyEndOf,
  keyTable,
  LBRACE,
  LBRACKET,
  literal,
  MINUS,
  NINE,
  NULL_BYTES,
  passString,
  QUOTE,
  RBRACE,
  RBRACKET,
  readNumber,
  readString,
  sameBytes,
  scanned,
  separator,
  skipString,
  skipValue,
  space,
  valueStart,
  ZERO,
} from './json-bytes.js';
import type { LogEntry } from './schemas/logs.js';

/** Integers in a time string with more digits than this are read by Number() (exact up to 2^53 only). */
const MAX_INLINE_DIGITS = 15;
/** The keys of the previous entry, in order: where their bytes lie in the page, how long, their action. */
const shapeStart: number[] = [];
const shapeLength: number[] = [];
const shapeAction: number[] = [];

/** Forgets the previous page's key order (its positions are in that page's bytes). */
export function beginEntries(): void {
  shapeLength.length = 0;
}

/** One entry: every field the exporter reads, in one shape (property reads stay monomorphic). */
interface ReadEntry extends LogEntry {
  state: string | undefined;
  error: string | undefined;
  nextDeliveryTime: number | undefined;
  url: string | undefined;
  topicName: string | undefined;
  endpointName: string | undefined;
  scheduleId: string | undefined;
  queueName: string | undefined;
  responseStatus: number | undefined;
  label: string | undefined;
  labels: string[] | undefined;
  notBefore: number | null | undefined;
}

/** A new entry (an object literal: V8 allocates it from one boilerplate). */
export function newEntry(): ReadEntry {
  return {
    time: 0,
    messageId: '',
    state: undefined,
    error: undefined,
    nextDeliveryTime: undefined,
    url: undefined,
    topicName: undefined,
    endpointName: undefined,
    scheduleId: undefined,
    queueName: undefined,
    responseStatus: undefined,
    label: undefined,
    labels: undefined,
    notBefore: undefined,
  };
}

// What the reader does with a key's value (0: not a known key, json-bytes.ts actionOf).
const SKIP = 0;
const TIME = 1;
const MESSAGE_ID = 2;
const STATE = 3;
const ERROR = 4;
const NEXT_DELIVERY_TIME = 5;
const URL = 6;
const TOPIC_NAME = 7;
const ENDPOINT_NAME = 8;
const SCHEDULE_ID = 9;
const QUEUE_NAME = 10;
const RESPONSE_STATUS = 11;
const LABEL = 12;
const LABELS = 13;
/** A string or null, checked and not kept. */
const CHECK_STRING = 14;
const CHECK_NUMBER = 15;
const CHECK_OBJECT = 16;
/** `body`, `responseBody`: a string passed over unread (as the skimmer drops it), or null. */
const BODY = 17;
/** Not checked (schemas/logs.ts): a number is kept, any other value reads as null (notBeforeMs: not a time). */
const NOT_BEFORE = 18;

/** The known keys of an entry (schemas/logs.ts OPTIONAL_FIELDS, and time and messageId). */
const ENTRY_KEYS: ReadonlyArray<readonly [string, number]> = [
  ['time', TIME],
  ['messageId', MESSAGE_ID],
  ['state', STATE],
  ['header', CHECK_OBJECT],
  ['body', BODY],
  ['error', ERROR],
  ['nextDeliveryTime', NEXT_DELIVERY_TIME],
  ['url', URL],
  ['topicName', TOPIC_NAME],
  ['endpointName', ENDPOINT_NAME],
  ['scheduleId', SCHEDULE_ID],
  ['queueName', QUEUE_NAME],
  ['responseStatus', RESPONSE_STATUS],
  ['responseBody', BODY],
  ['responseHeaders', CHECK_OBJECT],
  ['timeout', CHECK_NUMBER],
  ['method', CHECK_STRING],
  ['callback', CHECK_STRING],
  ['callbackHeaders', CHECK_OBJECT],
  ['failureCallback', CHECK_STRING],
  ['failureCallbackHeaders', CHECK_OBJECT],
  ['maxRetries', CHECK_NUMBER],
  ['retryDelayExpression', CHECK_STRING],
  ['retryDelayExpr', CHECK_STRING],
  ['label', LABEL],
  ['labels', LABELS],
  ['notBefore', NOT_BEFORE],
];

const ENTRY_TABLE = keyTable(ENTRY_KEYS);

export function readEntry(b: Buffer, i: number, entry: ReadEntry): number {
  if (b[i] !== LBRACE) throw GIVE_UP;
  i = space(b, i + 1);
  if (b[i] === RBRACE) throw GIVE_UP; // no time, no messageId
  let hasTime = false;
  let hasMessageId = false;
  for (let k = 0; ; k++) {
    // The entries of a page mostly have their keys in one order: the key at the same place in
    // the previous entry is compared first (its bytes lie in this page), then the table.
    let keyEnd: number;
    let action: number;
    const length = shapeLength[k];
    if (
      length !== undefined &&
      b[i] === QUOTE &&
      b[i + 1 + length] === QUOTE &&
      sameBytes(b, shapeStart[k]!, i + 1, length)
    ) {
      keyEnd = i + 1 + length;
      action = shapeAction[k]!;
    } else {
      keyEnd = keyEndOf(b, i);
      action = actionOf(ENTRY_TABLE, b, i + 1, keyEnd);
      shapeStart[k] = i + 1;
      shapeLength[k] = keyEnd - i - 1;
      shapeAction[k] = action;
    }
    i = valueStart(b, keyEnd);
    const c = b[i];
    if (c === 0x6e && action !== SKIP && action !== NOT_BEFORE) {
      if (action === TIME || action === MESSAGE_ID) throw GIVE_UP;
      i = literal(b, i, NULL_BYTES);
      setAbsent(entry, action);
    } else {
      switch (action) {
        case TIME:
          i = readTime(b, i);
          entry.time = scanned.number;
          hasTime = true;
          break;
        case MESSAGE_ID:
          i = readString(b, i, -1);
          entry.messageId = scanned.text;
          hasMessageId = true;
          break;
        case STATE:
          i = readString(b, i, STATE);
          entry.state = scanned.text;
          break;
        case ERROR:
          i = readString(b, i, -1);
          entry.error = scanned.text;
          break;
        case URL:
          i = readString(b, i, URL);
          entry.url = scanned.text;
          break;
        case TOPIC_NAME:
          i = readString(b, i, TOPIC_NAME);
          entry.topicName = scanned.text;
          break;
        case ENDPOINT_NAME:
          i = readString(b, i, ENDPOINT_NAME);
          entry.endpointName = scanned.text;
          break;
        case SCHEDULE_ID:
          i = readString(b, i, SCHEDULE_ID);
          entry.scheduleId = scanned.text;
          break;
        case QUEUE_NAME:
          i = readString(b, i, QUEUE_NAME);
          entry.queueName = scanned.text;
          break;
        case LABEL:
          i = readString(b, i, LABEL);
          entry.label = scanned.text;
          break;
        case NEXT_DELIVERY_TIME:
          i = readNumber(b, i);
          entry.nextDeliveryTime = scanned.number;
          break;
        case RESPONSE_STATUS:
          i = readNumber(b, i);
          entry.responseStatus = scanned.number;
          break;
        case LABELS: {
          const labels: string[] = [];
          i = readLabels(b, i, labels);
          entry.labels = labels;
          break;
        }
        case CHECK_STRING:
          if (c !== QUOTE) throw GIVE_UP;
          i = skipString(b, i);
          break;
        case CHECK_NUMBER:
          i = readNumber(b, i);
          break;
        case CHECK_OBJECT:
          if (c !== LBRACE) throw GIVE_UP;
          i = skipValue(b, i, 0);
          break;
        case BODY:
          if (c !== QUOTE) throw GIVE_UP;
          i = passString(b, i);
          break;
        case NOT_BEFORE:
          if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) {
            i = readNumber(b, i);
            entry.notBefore = scanned.number;
          } else {
            i = skipValue(b, i, 0);
            entry.notBefore = null;
          }
          break;
        default:
          i = skipValue(b, i, 0);
      }
    }
    i = separator(b, i, RBRACE);
    if (b[i] === RBRACE) break;
    i = space(b, i + 1);
  }
  if (!hasTime || !hasMessageId) throw GIVE_UP;
  return i + 1;
}

/** The entry's property of each action that keeps a value (the property is named as its key). */
const KEPT_FIELD: readonly (string | undefined)[] = (() => {
  const fields: (string | undefined)[] = [];
  for (const [key, action] of ENTRY_KEYS) if (action >= STATE && action <= LABELS) fields[action] = key;
  return fields;
})();

/** A field given as null reads as absent (a later duplicate key wins, as in JSON.parse). */
function setAbsent(entry: ReadEntry, action: number): void {
  const field = KEPT_FIELD[action];
  if (field !== undefined) entry[field] = undefined;
}

/** `time` into `number`: integer milliseconds, or a string of 1 to 16 digits. */
function readTime(b: Buffer, i: number): number {
  if (b[i] === QUOTE) {
    const start = i + 1;
    let end = start;
    let value = 0;
    for (let c = b[end]; c !== undefined && c >= ZERO && c <= NINE; c = b[++end]) value = value * 10 + (c - ZERO);
    const digits = end - start;
    if (b[end] !== QUOTE || digits === 0 || digits > 16) throw GIVE_UP;
    scanned.number = digits > MAX_INLINE_DIGITS ? Number(b.toString('latin1', start, end)) : value;
    return end + 1;
  }
  i = readNumber(b, i);
  if (!Number.isSafeInteger(scanned.number) || scanned.number < 0) throw GIVE_UP;
  return i;
}

function readLabels(b: Buffer, i: number, labels: string[]): number {
  if (b[i] !== LBRACKET) throw GIVE_UP;
  i = space(b, i + 1);
  if (b[i] === RBRACKET) return i + 1;
  for (;;) {
    i = readString(b, i, -1);
    labels.push(scanned.text);
    i = separator(b, i, RBRACKET);
    if (b[i] === RBRACKET) return i + 1;
    i = space(b, i + 1);
  }
}
