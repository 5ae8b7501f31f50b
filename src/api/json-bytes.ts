// Reading JSON from its bytes where it lies, for single-pass readers of one known shape
// (log-page-reader.ts): plain functions over (bytes, position) that return the next position,
// so the position stays in a register; a string or number read goes to `scanned`. Each checks
// what JSON.parse would (grammar, control bytes, escapes) and throws GIVE_UP where the bytes are
// not JSON or not what the caller takes, so the caller can leave them to JSON.parse.
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;
export const MINUS = 0x2d;
export const ZERO = 0x30;
export const NINE = 0x39;
/** Nesting this deep in a skipped value is left to the general path. */
const MAX_DEPTH = 64;
/** Integers with more digits than this are read by Number() (exact up to 2^53 only). */
const MAX_INLINE_DIGITS = 15;

/** Thrown when the bytes are not of the shape the caller takes (or not JSON); the caller catches it. */
export const GIVE_UP = new Error('JSON bytes: not of the shape taken here, left to the general path');

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

/** Keys by length, as bytes, for comparing a key where it lies in the page. */
export type KeyTable = ReadonlyArray<ReadonlyArray<{ bytes: Buffer; action: number }> | undefined>;

export function keyTable(keys: ReadonlyArray<readonly [string, number]>): KeyTable {
  const table: { bytes: Buffer; action: number }[][] = [];
  for (const [key, action] of keys) (table[key.length] ??= []).push({ bytes: Buffer.from(key, 'latin1'), action });
  return table;
}

/** The last string or number read (the functions return the next position). */
export const scanned = { text: '', number: 0 };
/** The last string decoded per field, and where its bytes lie in the page (values repeat from entry to entry). */
const lastText: string[] = [];
const lastStart: number[] = [];
const lastLength: number[] = [];

/** Forgets the strings of the previous page (their positions are in its bytes). */
export function beginBytes(): void {
  lastLength.fill(-1);
}

/** Where the key starting at `i` (its opening quote) ends (its closing quote). Escaped keys and control bytes give up. */
export function keyEndOf(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) throw GIVE_UP;
  let c = b[++i];
  // An escaped key could spell a known one: left to the general path. Control bytes are not JSON.
  while (c !== undefined && c !== QUOTE && c !== BACKSLASH && c >= 0x20) c = b[++i];
  if (c !== QUOTE) throw GIVE_UP;
  return i;
}

/** The position of the value after the key that ends at `keyEnd` (past the colon and the space around it). */
export function valueStart(b: Buffer, keyEnd: number): number {
  const i = space(b, keyEnd + 1);
  if (b[i] !== COLON) throw GIVE_UP;
  return space(b, i + 1);
}

/** The action of the key in bytes [start, end) in `table`; 0 when it is not one of its keys. */
export function actionOf(table: KeyTable, b: Buffer, start: number, end: number): number {
  const candidates = table[end - start];
  if (candidates === undefined) return 0;
  for (let k = 0; k < candidates.length; k++) {
    const key = candidates[k]!.bytes;
    let j = 0;
    while (j < key.length && key[j] === b[start + j]) j++;
    if (j === key.length) return candidates[k]!.action;
  }
  return 0;
}

/**
 * Decodes the string at `i` (its opening quote) into `text`, checked as JSON (no control bytes,
 * valid escapes); `field` >= 0 reuses the field's last text when the bytes repeat.
 */
export function readString(b: Buffer, i: number, field: number): number {
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
        scanned.text = JSON.parse(b.toString('utf8', i, end + 1)) as string;
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
      scanned.text = lastText[field]!;
      return end + 1;
    }
    lastStart[field] = start;
    lastLength[field] = length;
    scanned.text = lastText[field] = decode(b, start, end, ascii);
    return end + 1;
  }
  scanned.text = decode(b, start, end, ascii);
  return end + 1;
}

/** Passes over the string at `i`, checked as JSON, not decoded. */
export function skipString(b: Buffer, i: number): number {
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
export function passString(b: Buffer, i: number): number {
  const from = i + 1;
  let quote = b.indexOf(QUOTE, from);
  for (;;) {
    if (quote === -1) throw GIVE_UP;
    if (backslashesBefore(b, quote, from) % 2 === 0) return quote + 1;
    quote = b.indexOf(QUOTE, quote + 1);
  }
}

/** A JSON number into `number` (grammar checked; finite). */
export function readNumber(b: Buffer, i: number): number {
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
    scanned.number = b[start] === MINUS ? -value : value;
    return i;
  }
  scanned.number = Number(b.toString('latin1', start, i));
  if (!Number.isFinite(scanned.number)) throw GIVE_UP;
  return i;
}

/** Passes over any JSON value at `i`, checked. */
export function skipValue(b: Buffer, i: number, depth: number): number {
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
      i = separator(b, skipValue(b, i, depth + 1), close);
      if (b[i] === close) return i + 1;
      i = space(b, i + 1);
    }
  }
  if (c === 0x74) return literal(b, i, TRUE_BYTES);
  if (c === 0x66) return literal(b, i, FALSE_BYTES);
  if (c === 0x6e) return literal(b, i, NULL_BYTES);
  return readNumber(b, i);
}

export const NULL_BYTES = Buffer.from('null');
const TRUE_BYTES = Buffer.from('true');
const FALSE_BYTES = Buffer.from('false');
/** The bytes that may follow a backslash in a JSON string (besides u). */
const ESCAPABLE = new Uint8Array(128);
for (const c of '"\\/bfnrt') ESCAPABLE[c.charCodeAt(0)] = 1;

export function literal(b: Buffer, i: number, word: Buffer): number {
  for (let j = 0; j < word.length; j++) if (b[i + j] !== word[j]) throw GIVE_UP;
  return i + word.length;
}

export function space(b: Buffer, i: number): number {
  let c = b[i];
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i];
  return i;
}

/** Whether the `length` bytes at `a` and at `b` of `bytes` are the same. */
export function sameBytes(bytes: Buffer, a: number, b: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (bytes[a + j] !== bytes[b + j]) return false;
  return true;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function isHexByte(c: number | undefined): boolean {
  return c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** How many backslashes immediately precede position `at`, not looking before `from`. */
export function backslashesBefore(bytes: Buffer, at: number, from: number): number {
  let count = 0;
  for (let j = at - 1; j >= from && bytes[j] === BACKSLASH; j--) count++;
  return count;
}

/** After a value in an object or array (and the space after it): the position of its comma or of `close`. */
export function separator(b: Buffer, i: number, close: number): number {
  i = space(b, i);
  const c = b[i];
  if (c !== COMMA && c !== close) throw GIVE_UP;
  return i;
}

/** A byte of a JSON number as the skimmer reads one: digits, sign, decimal point, exponent. */
export function isNumberByte(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}
