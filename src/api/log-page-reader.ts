// The fast path of a log page: one pass over the page's bytes that checks them as JSON and as a
// log page and builds the entries with the fields the exporter reads. No text is decoded but
// those fields, nothing goes through JSON.parse, and no value nobody reads is built (bodies,
// header objects, unknown fields: checked as JSON, then passed over).
//
// It takes the common shape only: one top-level object with one `logs` or `events` array of
// entry objects and a `cursor`, every known field of its type or null. Anything else (the
// grouped `messages` shape, a wrong type, a missing field, malformed JSON, an escaped key, a
// duplicate list key, nesting deeper than MAX_DEPTH) makes it give up and return null: the page
// then takes the general path (json-skim.ts, JSON.parse, parseLogsPage in schemas/logs.ts),
// which decides and reports. So this reader returns what that path would, or nothing.
//
// What it checks is what the general path rejects: JSON's grammar everywhere except inside the
// string values of `body` and `responseBody` (which the skimmer drops unread there too), and the
// rules of parseLogsPage for the known fields (time an integer of milliseconds or a string of
// digits, messageId a string, the others of their kind or null).
import type { LogEntry, LogsPage } from './schemas/logs.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Nesting this deep in a skipped value is left to the general path. */
const MAX_DEPTH = 64;
/** Integers with more digits than this are read by Number() (exact up to 2^53 only). */
const MAX_INLINE_DIGITS = 15;

/** Thrown inside the reader when the page is not of the shape it takes; caught in readLogsPage. */
const GIVE_UP = new Error('log page reader: left to the general path');

/** A page read by this reader; the general path's pages are plain objects. */
export class ReadLogsPage implements LogsPage {
  constructor(
    readonly logs: LogEntry[],
    readonly cursor: string | undefined,
  ) {}
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
}

/** A new entry (an object literal: V8 allocates it from one boilerplate). */
function newEntry(): ReadEntry {
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
  };
}

/** Buffer's decoders without toString's argument handling (they are Buffer.prototype methods since Node 0.x). */
interface Decoders {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Bytes [start, end) of `b` as text (`ascii`: every byte below 0x80, so latin1 decodes them alike, faster). */
function decode(b: Buffer, start: number, end: number, ascii: boolean): string {
  const decoders = b as unknown as Decoders;
  return ascii ? decoders.latin1Slice(start, end) : decoders.utf8Slice(start, end);
}

// What the reader does with a key's value.
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
];

// Top-level keys.
const LIST = 1;
const CURSOR = 2;
const PAGE_KEYS: ReadonlyArray<readonly [string, number]> = [
  ['logs', LIST],
  ['events', LIST],
  ['cursor', CURSOR],
];

/** Keys by length, as bytes, for comparing a key where it lies in the page. */
type KeyTable = ReadonlyArray<ReadonlyArray<{ bytes: Buffer; action: number }> | undefined>;

function keyTable(keys: ReadonlyArray<readonly [string, number]>): KeyTable {
  const table: { bytes: Buffer; action: number }[][] = [];
  for (const [key, action] of keys) (table[key.length] ??= []).push({ bytes: Buffer.from(key, 'latin1'), action });
  return table;
}

const ENTRY_TABLE = keyTable(ENTRY_KEYS);
const PAGE_TABLE = keyTable(PAGE_KEYS);

/**
 * Reads a whole log page from its bytes; null when the page is not of the shape this reader
 * takes (the caller then parses it the general way, which reports what is wrong, if anything).
 */
export function readLogsPage(bytes: Buffer): ReadLogsPage | null {
  try {
    return readPage(bytes);
  } catch (error) {
    if (error === GIVE_UP) return null;
    throw error;
  }
}

// The reader is plain functions over (bytes, position) returning the next position, so the
// position stays in a register; a value read goes to the module's `value` slots below. One page
// is read at a time (the functions never wait).

/** The last string or number read. */
let text = '';
let number = 0;
/** The last string decoded per field, and where its bytes lie in the page (values repeat from entry to entry). */
const lastText: string[] = [];
const lastStart: number[] = [];
const lastLength: number[] = [];

function readPage(b: Buffer): ReadLogsPage {
  lastLength.fill(-1);
  let i = space(b, 0);
  if (b[i] !== LBRACE) throw GIVE_UP;
  i = space(b, i + 1);
  let logs: LogEntry[] | null = null;
  let cursor: string | undefined;
  let sawCursor = false;
  if (b[i] !== RBRACE) {
    for (;;) {
      const keyEnd = keyEndOf(b, i);
      const action = actionOf(PAGE_TABLE, b, i + 1, keyEnd);
      i = valueStart(b, keyEnd);
      if (action === LIST) {
        if (logs !== null) throw GIVE_UP; // both lists, or one twice: the general path decides which
        logs = [];
        i = readEntries(b, i, logs);
      } else if (action === CURSOR) {
        if (sawCursor) throw GIVE_UP;
        sawCursor = true;
        i = readCursor(b, i);
        cursor = text === '' ? undefined : text;
      } else {
        i = skipValue(b, i, 0);
      }
      i = space(b, i);
      if (b[i] === COMMA) {
        i = space(b, i + 1);
        continue;
      }
      if (b[i] === RBRACE) break;
      throw GIVE_UP;
    }
  }
  i = space(b, i + 1);
  if (i !== b.length || logs === null) throw GIVE_UP;
  text = '';
  return new ReadLogsPage(logs, cursor);
}

/** The cursor into `text`: a string, null (''), or a bare number kept as its text (as the skimmer keeps it). */
function readCursor(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return readString(b, i, -1);
  if (c === 0x6e) {
    text = '';
    return literal(b, i, NULL_BYTES);
  }
  let end = i;
  while (end < b.length && isNumberByte(b[end]!)) end++;
  if (end === i) throw GIVE_UP;
  text = b.toString('latin1', i, end);
  return end;
}

function readEntries(b: Buffer, i: number, entries: LogEntry[]): number {
  if (b[i] !== LBRACKET) throw GIVE_UP;
  i = space(b, i + 1);
  if (b[i] === RBRACKET) return i + 1;
  for (;;) {
    const entry = newEntry();
    i = readEntry(b, i, entry);
    entries.push(entry);
    i = space(b, i);
    if (b[i] === COMMA) {
      i = space(b, i + 1);
      continue;
    }
    if (b[i] === RBRACKET) return i + 1;
    throw GIVE_UP;
  }
}

function readEntry(b: Buffer, i: number, entry: ReadEntry): number {
  if (b[i] !== LBRACE) throw GIVE_UP;
  i = space(b, i + 1);
  if (b[i] === RBRACE) throw GIVE_UP; // no time, no messageId
  let hasTime = false;
  let hasMessageId = false;
  for (;;) {
    const keyEnd = keyEndOf(b, i);
    const action = actionOf(ENTRY_TABLE, b, i + 1, keyEnd);
    i = valueStart(b, keyEnd);
    const c = b[i];
    if (c === 0x6e && action !== SKIP) {
      if (action === TIME || action === MESSAGE_ID) throw GIVE_UP;
      i = literal(b, i, NULL_BYTES);
      setAbsent(entry, action);
    } else {
      switch (action) {
        case TIME:
          i = readTime(b, i);
          entry.time = number;
          hasTime = true;
          break;
        case MESSAGE_ID:
          i = readString(b, i, -1);
          entry.messageId = text;
          hasMessageId = true;
          break;
        case STATE:
          i = readString(b, i, STATE);
          entry.state = text;
          break;
        case ERROR:
          i = readString(b, i, -1);
          entry.error = text;
          break;
        case URL:
          i = readString(b, i, URL);
          entry.url = text;
          break;
        case TOPIC_NAME:
          i = readString(b, i, TOPIC_NAME);
          entry.topicName = text;
          break;
        case ENDPOINT_NAME:
          i = readString(b, i, ENDPOINT_NAME);
          entry.endpointName = text;
          break;
        case SCHEDULE_ID:
          i = readString(b, i, SCHEDULE_ID);
          entry.scheduleId = text;
          break;
        case QUEUE_NAME:
          i = readString(b, i, QUEUE_NAME);
          entry.queueName = text;
          break;
        case LABEL:
          i = readString(b, i, LABEL);
          entry.label = text;
          break;
        case NEXT_DELIVERY_TIME:
          i = readNumber(b, i);
          entry.nextDeliveryTime = number;
          break;
        case RESPONSE_STATUS:
          i = readNumber(b, i);
          entry.responseStatus = number;
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
        default:
          i = skipValue(b, i, 0);
      }
    }
    i = space(b, i);
    if (b[i] === COMMA) {
      i = space(b, i + 1);
      continue;
    }
    if (b[i] === RBRACE) break;
    throw GIVE_UP;
  }
  if (!hasTime || !hasMessageId) throw GIVE_UP;
  return i + 1;
}

/** A field given as null reads as absent (a later duplicate key wins, as in JSON.parse). */
function setAbsent(entry: ReadEntry, action: number): void {
  switch (action) {
    case STATE:
      entry.state = undefined;
      break;
    case ERROR:
      entry.error = undefined;
      break;
    case URL:
      entry.url = undefined;
      break;
    case TOPIC_NAME:
      entry.topicName = undefined;
      break;
    case ENDPOINT_NAME:
      entry.endpointName = undefined;
      break;
    case SCHEDULE_ID:
      entry.scheduleId = undefined;
      break;
    case QUEUE_NAME:
      entry.queueName = undefined;
      break;
    case LABEL:
      entry.label = undefined;
      break;
    case NEXT_DELIVERY_TIME:
      entry.nextDeliveryTime = undefined;
      break;
    case RESPONSE_STATUS:
      entry.responseStatus = undefined;
      break;
    case LABELS:
      entry.labels = undefined;
      break;
  }
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
    number = digits > MAX_INLINE_DIGITS ? Number(b.toString('latin1', start, end)) : value;
    return end + 1;
  }
  i = readNumber(b, i);
  if (!Number.isSafeInteger(number) || number < 0) throw GIVE_UP;
  return i;
}

function readLabels(b: Buffer, i: number, labels: string[]): number {
  if (b[i] !== LBRACKET) throw GIVE_UP;
  i = space(b, i + 1);
  if (b[i] === RBRACKET) return i + 1;
  for (;;) {
    i = readString(b, i, -1);
    labels.push(text);
    i = space(b, i);
    if (b[i] === COMMA) {
      i = space(b, i + 1);
      continue;
    }
    if (b[i] === RBRACKET) return i + 1;
    throw GIVE_UP;
  }
}

/** Where the key starting at `i` (its opening quote) ends (its closing quote). Escaped keys and control bytes give up. */
function keyEndOf(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) throw GIVE_UP;
  let c = b[++i];
  // An escaped key could spell a known one: left to the general path. Control bytes are not JSON.
  while (c !== undefined && c !== QUOTE && c !== BACKSLASH && c >= 0x20) c = b[++i];
  if (c !== QUOTE) throw GIVE_UP;
  return i;
}

/** The position of the value after the key that ends at `keyEnd` (past the colon and the space around it). */
function valueStart(b: Buffer, keyEnd: number): number {
  const i = space(b, keyEnd + 1);
  if (b[i] !== COLON) throw GIVE_UP;
  return space(b, i + 1);
}

/** The action of the key in bytes [start, end) (SKIP: not a known one). */
function actionOf(table: KeyTable, b: Buffer, start: number, end: number): number {
  const candidates = table[end - start];
  if (candidates === undefined) return SKIP;
  for (let k = 0; k < candidates.length; k++) {
    const key = candidates[k]!.bytes;
    let j = 0;
    while (j < key.length && key[j] === b[start + j]) j++;
    if (j === key.length) return candidates[k]!.action;
  }
  return SKIP;
}

/**
 * Decodes the string at `i` (its opening quote) into `text`, checked as JSON (no control bytes,
 * valid escapes); `field` >= 0 reuses the field's last text when the bytes repeat.
 */
function readString(b: Buffer, i: number, field: number): number {
  if (b[i] !== QUOTE) throw GIVE_UP;
  const start = i + 1;
  let end = start;
  let c = b[end];
  let ascii = true;
  for (;;) {
    while (c !== undefined && c !== QUOTE && c !== BACKSLASH && c >= 0x20 && c < 0x80) c = b[++end];
    if (c === QUOTE) break;
    if (c === undefined || c < 0x20) throw GIVE_UP;
    if (c === BACKSLASH) {
      // Escapes are rare (error texts): JSON.parse of the string alone decodes and checks them.
      end = passString(b, i) - 1;
      try {
        text = JSON.parse(b.toString('utf8', i, end + 1)) as string;
      } catch {
        throw GIVE_UP;
      }
      return end + 1;
    }
    ascii = false;
    c = b[++end];
  }
  const length = end - start;
  if (field >= 0) {
    if (lastLength[field] === length && sameBytes(b, lastStart[field]!, start, length)) {
      text = lastText[field]!;
      return end + 1;
    }
    lastStart[field] = start;
    lastLength[field] = length;
    text = lastText[field] = decode(b, start, end, ascii);
    return end + 1;
  }
  text = decode(b, start, end, ascii);
  return end + 1;
}

/** Passes over the string at `i`, checked as JSON, not decoded. */
function skipString(b: Buffer, i: number): number {
  let c = b[++i];
  for (;;) {
    while (c !== undefined && c !== QUOTE && c !== BACKSLASH && c >= 0x20) c = b[++i];
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) throw GIVE_UP;
    const escaped = b[i + 1];
    if (escaped === 0x75) {
      for (let k = 2; k < 6; k++) if (!isHexByte(b[i + k])) throw GIVE_UP;
      i += 6;
    } else if (escaped !== undefined && ESCAPABLE[escaped] === 1) {
      i += 2;
    } else {
      throw GIVE_UP;
    }
    c = b[i];
  }
}

/** Passes over a body string unread: to the next quote not escaped (native search, no check, as the skimmer). */
function passString(b: Buffer, i: number): number {
  const from = i + 1;
  let quote = b.indexOf(QUOTE, from);
  for (;;) {
    if (quote === -1) throw GIVE_UP;
    let slashes = 0;
    for (let j = quote - 1; j >= from && b[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    quote = b.indexOf(QUOTE, quote + 1);
  }
}

/** A JSON number into `number` (grammar checked; finite). */
function readNumber(b: Buffer, i: number): number {
  const start = i;
  let c = b[i];
  if (c === MINUS) c = b[++i];
  const digitsFrom = i;
  let value = 0;
  if (c === ZERO) {
    c = b[++i];
  } else if (c !== undefined && c > ZERO && c <= NINE) {
    do {
      value = value * 10 + (c - ZERO);
      c = b[++i];
    } while (c !== undefined && c >= ZERO && c <= NINE);
  } else {
    throw GIVE_UP;
  }
  let simple = i - digitsFrom <= MAX_INLINE_DIGITS;
  if (c === 0x2e) {
    simple = false;
    c = b[++i];
    if (!isDigit(c)) throw GIVE_UP;
    while (isDigit(c)) c = b[++i];
  }
  if (c === 0x65 || c === 0x45) {
    simple = false;
    c = b[++i];
    if (c === 0x2b || c === MINUS) c = b[++i];
    if (!isDigit(c)) throw GIVE_UP;
    while (isDigit(c)) c = b[++i];
  }
  if (simple) {
    number = b[start] === MINUS ? -value : value;
    return i;
  }
  number = Number(b.toString('latin1', start, i));
  if (!Number.isFinite(number)) throw GIVE_UP;
  return i;
}

/** Passes over any JSON value at `i`, checked. */
function skipValue(b: Buffer, i: number, depth: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === LBRACE || c === LBRACKET) {
    if (depth >= MAX_DEPTH) throw GIVE_UP;
    const close = c === LBRACE ? RBRACE : RBRACKET;
    i = space(b, i + 1);
    if (b[i] === close) return i + 1;
    for (;;) {
      if (close === RBRACE) {
        if (b[i] !== QUOTE) throw GIVE_UP;
        i = valueStart(b, skipString(b, i) - 1);
      }
      i = space(b, skipValue(b, i, depth + 1));
      if (b[i] === COMMA) {
        i = space(b, i + 1);
        continue;
      }
      if (b[i] === close) return i + 1;
      throw GIVE_UP;
    }
  }
  if (c === 0x74) return literal(b, i, TRUE_BYTES);
  if (c === 0x66) return literal(b, i, FALSE_BYTES);
  if (c === 0x6e) return literal(b, i, NULL_BYTES);
  return readNumber(b, i);
}

const NULL_BYTES = Buffer.from('null');
const TRUE_BYTES = Buffer.from('true');
const FALSE_BYTES = Buffer.from('false');
/** The bytes that may follow a backslash in a JSON string (besides u). */
const ESCAPABLE = new Uint8Array(128);
for (const c of '"\\/bfnrt') ESCAPABLE[c.charCodeAt(0)] = 1;

function literal(b: Buffer, i: number, word: Buffer): number {
  for (let j = 0; j < word.length; j++) if (b[i + j] !== word[j]) throw GIVE_UP;
  return i + word.length;
}

function space(b: Buffer, i: number): number {
  let c = b[i];
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i];
  return i;
}

/** Whether the `length` bytes at `a` and at `b` of `bytes` are the same. */
function sameBytes(bytes: Buffer, a: number, b: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (bytes[a + j] !== bytes[b + j]) return false;
  return true;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function isHexByte(c: number | undefined): boolean {
  return c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** A byte of a JSON number as the skimmer reads one: digits, sign, decimal point, exponent. */
function isNumberByte(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}
