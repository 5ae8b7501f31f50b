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
import {
  actionOf,
  beginBytes,
  GIVE_UP,
  isNumberByte,
  keyEndOf,
  keyTable,
  LBRACE,
  LBRACKET,
  literal,
  NULL_BYTES,
  QUOTE,
  RBRACE,
  RBRACKET,
  readString,
  scanned,
  separator,
  skipValue,
  space,
  valueStart,
} from './json-bytes.js';
import { beginEntries, newEntry, readEntry } from './log-entry-reader.js';
import type { LogEntry, LogsPage } from './schemas/logs.js';

/** A page read by this reader; the general path's pages are plain objects. */
export class ReadLogsPage implements LogsPage {
  constructor(
    readonly logs: LogEntry[],
    readonly cursor: string | undefined,
  ) {}
}

// Top-level keys.
const LIST = 1;
const CURSOR = 2;
const PAGE_KEYS: ReadonlyArray<readonly [string, number]> = [
  ['logs', LIST],
  ['events', LIST],
  ['cursor', CURSOR],
];

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

function readPage(b: Buffer): ReadLogsPage {
  beginBytes();
  beginEntries();
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
        cursor = scanned.text === '' ? undefined : scanned.text;
      } else {
        i = skipValue(b, i, 0);
      }
      i = separator(b, i, RBRACE);
      if (b[i] === RBRACE) break;
      i = space(b, i + 1);
    }
  }
  i = space(b, i + 1);
  if (i !== b.length || logs === null) throw GIVE_UP;
  scanned.text = '';
  return new ReadLogsPage(logs, cursor);
}

/** The cursor into `text`: a string, null (''), or a bare number kept as its text (as the skimmer keeps it). */
function readCursor(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return readString(b, i, -1);
  if (c === 0x6e) {
    scanned.text = '';
    return literal(b, i, NULL_BYTES);
  }
  let end = i;
  while (end < b.length && isNumberByte(b[end]!)) end++;
  if (end === i) throw GIVE_UP;
  scanned.text = b.toString('latin1', i, end);
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
    i = separator(b, i, RBRACKET);
    if (b[i] === RBRACKET) return i + 1;
    i = space(b, i + 1);
  }
}
