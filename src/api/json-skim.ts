// Reading a JSON response while dropping the string values of some keys (`body`, `responseBody`
// of log entries: base64 message bodies of up to 50 MB each) as they stream past, so a page whose
// entries carry huge bodies is read in bounded memory. A small byte-level tokenizer tracks only
// what it needs (inside a string or not, object key or value, container nesting); every byte
// outside a skipped value is kept and the kept text is then parsed by JSON.parse. A skipped
// value becomes `null` (which the lenient log schema reads as absent). The tokenizer does not
// validate: malformed input stays malformed and JSON.parse reports it. The bare number value of
// some top-level keys (`cursor`: numbers beyond 2^53 lose digits in JSON.parse) is kept as a
// JSON string of its exact digits.
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import {
  backslashesBefore,
  COLON,
  COMMA,
  isNumberByte,
  LBRACE,
  LBRACKET,
  QUOTE,
  RBRACE,
  RBRACKET,
} from './json-bytes.js';
import { BodyDeadlineError, BodyLimitError } from './response-body.js';

const NULL_TEXT = Buffer.from('null');
const QUOTE_TEXT = Buffer.from('"');
/** Kept bytes per block: below glibc's initial mmap threshold of 128 KiB. */
const BLOCK_BYTES = 64 * 1024;
/** Keys longer than this are never among the skipped ones; their text is not collected. */
const MAX_KEY_BYTES = 32;

/** Thrown when the kept bytes or all bytes read pass their limit. */
export class SkimLimitError extends BodyLimitError {}

export interface SkimLimits {
  /** Keys whose string values are dropped, at any depth. */
  skipKeys: readonly string[];
  /** Most bytes kept (the JSON without the dropped values). */
  maxKeptBytes: number;
  /** Most bytes read in all (a sanity limit: a page that never ends). */
  maxTotalBytes: number;
  /** Top-level keys whose bare number value is kept as a string of its digits (nothing rounded). */
  quoteNumberKeys?: readonly string[];
}

export interface SkimStats {
  keptBytes: number;
  totalBytes: number;
  /** String values dropped. */
  skippedValues: number;
}

/** The tokenizer: feed chunks with write(), take the kept text with end(). */
export class JsonSkimmer {
  readonly #limits: SkimLimits;
  /**
   * The kept bytes, in blocks of BLOCK_BYTES: full ones, then the one being filled (allocated at
   * the first kept byte). Not one buffer grown to the page's size: a page of 1000 entries keeps
   * about 700 KB, and buffers that large, once freed, raise glibc's mmap threshold and leave the
   * main malloc heap holding tens of MiB (docs/performance.md, "Memory"). Kept as bytes until
   * end(), outside V8's heap: text decoded while the page is still being read would be moved
   * to the old generation by the young generation's collections (2 MiB semi-spaces).
   */
  readonly #blocks: Buffer[] = [];
  #block: Buffer | null = null;
  #blockUsed = 0;
  /** Container stack: true for an object, false for an array. */
  readonly #stack: boolean[] = [];
  #expectKey = false;
  #inString = false;
  #escape = false;
  #isKey = false;
  #skipping = false;
  /** The last key read names a skipped key and its value has not started yet. */
  #pendingSkip = false;
  /** The last key read is a top-level quoted-number key and its value has not started yet. */
  #pendingQuote = false;
  /** Inside a number value being kept as a string: a closing quote is due where it ends. */
  #quoting = false;
  /** The bytes of the key being read, and how many (-1: too long or escaped, never skipped). */
  readonly #keyBytes = Buffer.alloc(MAX_KEY_BYTES);
  #keyLength = 0;
  readonly #skipKeyBytes: readonly Buffer[];
  readonly #quoteKeyBytes: readonly Buffer[];
  readonly stats: SkimStats = { keptBytes: 0, totalBytes: 0, skippedValues: 0 };

  constructor(limits: SkimLimits) {
    this.#limits = limits;
    this.#skipKeyBytes = limits.skipKeys.map((key) => Buffer.from(key, 'latin1'));
    this.#quoteKeyBytes = (limits.quoteNumberKeys ?? []).map((key) => Buffer.from(key, 'latin1'));
  }

  write(chunk: Buffer): void {
    this.stats.totalBytes += chunk.length;
    if (this.stats.totalBytes > this.#limits.maxTotalBytes) {
      throw new SkimLimitError(`response body larger than ${this.#limits.maxTotalBytes} bytes in all`);
    }
    // The state in locals for the byte loop (fields are loads and stores on every byte), written
    // back at the end.
    const stack = this.#stack;
    let inObject = stack[stack.length - 1] === true;
    let expectKey = this.#expectKey;
    let inString = this.#inString;
    let escape = this.#escape;
    let isKey = this.#isKey;
    let skipping = this.#skipping;
    let pendingSkip = this.#pendingSkip;
    let pendingQuote = this.#pendingQuote;
    let quoting = this.#quoting;
    let segmentStart = skipping ? -1 : 0;
    /** Where the key being read starts in this chunk (-1: it started in an earlier one). */
    let keyFrom = -1;
    const length = chunk.length;
    let i = 0;
    try {
      while (i < length) {
        if (inString) {
          // The string's end: the next quote not escaped. The bytes in between are scanned by
          // indexOf (memchr), not one by one: most of a page is string content.
          let from = i;
          if (escape) {
            escape = false;
            from += 1;
            if (isKey) this.#keyLength = -1; // an escaped key is never a skipped one
          }
          let quote = chunk.indexOf(QUOTE, from);
          while (quote !== -1 && backslashesBefore(chunk, quote, from) % 2 === 1)
            quote = chunk.indexOf(QUOTE, quote + 1);
          if (quote === -1) {
            if (isKey) this.#collectKey(chunk, from, length);
            // The string goes on in the next chunk; an odd run of backslashes at the end escapes its first byte.
            escape = backslashesBefore(chunk, length, from) % 2 === 1;
            break;
          }
          inString = false;
          if (skipping) {
            skipping = false;
            this.stats.skippedValues += 1;
            segmentStart = quote + 1;
          } else if (isKey) {
            isKey = false;
            // A key read whole in this chunk is compared where it lies; one begun in an earlier
            // chunk, from its collected bytes.
            let key = chunk;
            let keyStart = keyFrom;
            let keyEnd = quote;
            if (keyFrom < 0) {
              this.#collectKey(chunk, from, quote);
              key = this.#keyBytes;
              keyStart = 0;
              keyEnd = this.#keyLength;
            }
            pendingSkip = keyIsOneOf(key, keyStart, keyEnd, this.#skipKeyBytes);
            pendingQuote = stack.length === 1 && keyIsOneOf(key, keyStart, keyEnd, this.#quoteKeyBytes);
          }
          i = quote + 1;
          continue;
        }
        const c = chunk[i]!;
        if (quoting && !isNumberByte(c)) {
          this.#keep(chunk, segmentStart, i);
          this.#keepBuffer(QUOTE_TEXT);
          segmentStart = i;
          quoting = false;
        }
        switch (c) {
          case QUOTE:
            inString = true;
            pendingQuote = false;
            if (inObject && expectKey) {
              isKey = true;
              keyFrom = i + 1;
              this.#keyLength = 0;
            } else if (pendingSkip) {
              pendingSkip = false;
              skipping = true;
              this.#keep(chunk, segmentStart, i);
              this.#keepBuffer(NULL_TEXT);
              segmentStart = -1;
            }
            break;
          case LBRACE:
            stack.push(true);
            inObject = true;
            expectKey = true;
            pendingSkip = false;
            pendingQuote = false;
            break;
          case LBRACKET:
            stack.push(false);
            inObject = false;
            pendingSkip = false;
            pendingQuote = false;
            break;
          case RBRACE:
          case RBRACKET:
            stack.pop();
            inObject = stack[stack.length - 1] === true;
            expectKey = false;
            pendingSkip = false;
            pendingQuote = false;
            break;
          case COLON:
            expectKey = false;
            break;
          case COMMA:
            expectKey = inObject;
            pendingSkip = false;
            pendingQuote = false;
            break;
          default:
            // Whitespace keeps a pending skip; a number or a literal is a value that is not a string.
            if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
              pendingSkip = false;
              if (pendingQuote && isNumberByte(c)) {
                this.#keep(chunk, segmentStart, i);
                this.#keepBuffer(QUOTE_TEXT);
                segmentStart = i;
                quoting = true;
              }
              pendingQuote = false;
            }
        }
        i += 1;
      }
      if (segmentStart >= 0) this.#keep(chunk, segmentStart, length);
    } finally {
      this.#expectKey = expectKey;
      this.#inString = inString;
      this.#escape = escape;
      this.#isKey = isKey;
      this.#skipping = skipping;
      this.#pendingSkip = pendingSkip;
      this.#pendingQuote = pendingQuote;
      this.#quoting = quoting;
    }
  }

  /**
   * Adds bytes [from, to) of a key being read, compared as bytes at its end (no string made per
   * key); a key longer than MAX_KEY_BYTES is never skipped.
   */
  #collectKey(chunk: Buffer, from: number, to: number): void {
    let length = this.#keyLength;
    if (length < 0) return;
    if (length + (to - from) > MAX_KEY_BYTES) {
      this.#keyLength = -1;
      return;
    }
    const key = this.#keyBytes;
    for (let j = from; j < to; j++) key[length++] = chunk[j]!;
    this.#keyLength = length;
  }

  /** The kept JSON text. */
  end(): string {
    const decoder = new StringDecoder('utf8');
    const pieces = this.#blocks.map((block) => decoder.write(block));
    if (this.#block !== null) pieces.push(decoder.write(this.#block.subarray(0, this.#blockUsed)));
    pieces.push(decoder.end());
    return pieces.join('');
  }

  #keep(chunk: Buffer, from: number, to: number): void {
    if (from < 0 || to <= from) return;
    const kept = this.stats.keptBytes + (to - from);
    if (kept > this.#limits.maxKeptBytes) {
      throw new SkimLimitError(`response larger than ${this.#limits.maxKeptBytes} bytes without its bodies`);
    }
    this.stats.keptBytes = kept;
    // Copied: a subarray would keep the whole chunk (mostly body bytes) alive.
    while (from < to) {
      if (this.#block === null || this.#blockUsed === this.#block.length) {
        if (this.#block !== null) this.#blocks.push(this.#block);
        this.#block = Buffer.allocUnsafe(BLOCK_BYTES);
        this.#blockUsed = 0;
      }
      const copied = chunk.copy(
        this.#block,
        this.#blockUsed,
        from,
        Math.min(to, from + this.#block.length - this.#blockUsed),
      );
      this.#blockUsed += copied;
      from += copied;
    }
  }

  #keepBuffer(buffer: Buffer): void {
    this.#keep(buffer, 0, buffer.length);
  }
}

/**
 * A page up to this many bytes is held whole (and offered to a single-pass reader first, e.g.
 * log-page-reader.ts); a larger one is skimmed as it streams in, in bounded memory.
 */
export const WHOLE_PAGE_BYTES = 4 * 1024 * 1024;

/** A body read by readSkimmed: held whole (`bytes`, valid until `release()`, called once they
 *  are read, before anything awaits), or skimmed (`text`). */
export type SkimmedBody = { bytes: Buffer; release(): void; text?: undefined } | { text: string; bytes?: undefined };

/**
 * Read a response body, giving up after `deadlineMs` in total: held whole while it stays within
 * WHOLE_PAGE_BYTES and the kept limit (neither limit can be passed then), else through a
 * JsonSkimmer chunk by chunk as undici delivers it.
 * A body held whole in several chunks is copied into a join buffer as they come: a chunk is
 * malloc'd by the socket's read and freed when its Buffer is collected; kept to the page's end,
 * chunks reached the old generation and glibc's heap grew to hold them, then stayed fragmented
 * (docs/performance.md, "Memory"). Copied at once, a chunk dies young.
 */
export async function readSkimmed(
  body: Dispatcher.ResponseData['body'],
  limits: SkimLimits,
  deadlineMs: number,
): Promise<SkimmedBody> {
  const wholeBytes = Math.min(WHOLE_PAGE_BYTES, limits.maxKeptBytes);
  // The body's only chunk so far (one chunk is not copied), then the join buffer.
  let first: Buffer | null = null;
  let joined: Buffer | null = null;
  let held = 0;
  let skimmer: JsonSkimmer | null = null;
  const deadline = setTimeout(() => {
    body.destroy(new BodyDeadlineError('body deadline'));
  }, deadlineMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (skimmer === null && held + chunk.length <= wholeBytes) {
        if (first === null && joined === null) {
          first = chunk;
        } else {
          if (joined === null) {
            joined = takeJoinBuffer();
            first!.copy(joined, 0);
            first = null;
          }
          chunk.copy(joined, held);
        }
        held += chunk.length;
        continue;
      }
      try {
        if (skimmer === null) {
          skimmer = new JsonSkimmer(limits);
          if (joined !== null) {
            skimmer.write(joined.subarray(0, held));
            joinBuffers.push(joined);
            joined = null;
          } else if (first !== null) {
            skimmer.write(first);
          }
          first = null;
        }
        skimmer.write(chunk);
      } catch (error) {
        body.destroy();
        throw error;
      }
    }
  } catch (error) {
    if (joined !== null) joinBuffers.push(joined);
    throw error;
  } finally {
    clearTimeout(deadline);
  }
  if (skimmer !== null) return { text: skimmer.end() };
  if (joined === null) return { bytes: first ?? Buffer.alloc(0), release: () => undefined };
  const buffer = joined;
  return { bytes: buffer.subarray(0, held), release: () => void joinBuffers.push(buffer) };
}

/**
 * Join buffers of WHOLE_PAGE_BYTES not in use, one per body read at once (parallel chains), never
 * freed: mapped apart from glibc's heap, and only the bytes a page touched count in RSS.
 */
const joinBuffers: Buffer[] = [];

function takeJoinBuffer(): Buffer {
  return joinBuffers.pop() ?? Buffer.allocUnsafeSlow(WHOLE_PAGE_BYTES);
}

/** The kept text of a body held whole. */
export function skimWhole(bytes: Buffer, limits: SkimLimits): string {
  const skimmer = new JsonSkimmer(limits);
  skimmer.write(bytes);
  return skimmer.end();
}

/** Whether bytes [start, end) of `bytes` spell one of `keys` (end below start: a key never skipped). */
function keyIsOneOf(bytes: Buffer, start: number, end: number, keys: readonly Buffer[]): boolean {
  const length = end - start;
  if (length > MAX_KEY_BYTES) return false;
  outer: for (const key of keys) {
    if (key.length !== length) continue;
    for (let j = 0; j < length; j++) if (key[j] !== bytes[start + j]) continue outer;
    return true;
  }
  return false;
}
