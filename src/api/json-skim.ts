// Reading a JSON response while dropping the string values of some keys (`body`, `responseBody`
// of log entries: base64 message bodies of up to 50 MB each) as they stream past, so a page whose
// entries carry huge bodies is read in bounded memory. A small byte-level tokenizer tracks only
// what it needs (inside a string or not, object key or value, container nesting); every byte
// outside a skipped value is kept and the kept text is then parsed by JSON.parse. A skipped
// value becomes `null` (which the lenient log schema reads as absent). The tokenizer does not
// validate: malformed input stays malformed and JSON.parse reports it.
import type { Dispatcher } from 'undici';
import { BodyDeadlineError, BodyLimitError } from './response-body.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const NULL_TEXT = Buffer.from('null');
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
}

export interface SkimStats {
  keptBytes: number;
  totalBytes: number;
  /** String values dropped. */
  skippedValues: number;
}

/** The tokenizer: feed chunks with write(), take the kept text with end(). */
export class JsonSkimmer {
  readonly #skipKeys: ReadonlySet<string>;
  readonly #limits: SkimLimits;
  readonly #kept: Buffer[] = [];
  /** Container stack: true for an object, false for an array. */
  readonly #stack: boolean[] = [];
  #expectKey = false;
  #inString = false;
  #escape = false;
  #isKey = false;
  #skipping = false;
  /** The last key read names a skipped key and its value has not started yet. */
  #pendingSkip = false;
  #key: number[] = [];
  #keyTooLong = false;
  readonly stats: SkimStats = { keptBytes: 0, totalBytes: 0, skippedValues: 0 };

  constructor(limits: SkimLimits) {
    this.#limits = limits;
    this.#skipKeys = new Set(limits.skipKeys);
  }

  write(chunk: Buffer): void {
    this.stats.totalBytes += chunk.length;
    if (this.stats.totalBytes > this.#limits.maxTotalBytes) {
      throw new SkimLimitError(`response body larger than ${this.#limits.maxTotalBytes} bytes in all`);
    }
    let segmentStart = this.#skipping ? -1 : 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.#inString) {
        if (this.#escape) {
          this.#escape = false;
          if (this.#isKey) this.#keyTooLong = true; // an escaped key is never a skipped one
        } else if (c === BACKSLASH) {
          this.#escape = true;
        } else if (c === QUOTE) {
          this.#inString = false;
          if (this.#skipping) {
            this.#skipping = false;
            this.stats.skippedValues += 1;
            segmentStart = i + 1;
          } else if (this.#isKey) {
            this.#isKey = false;
            this.#pendingSkip = !this.#keyTooLong && this.#skipKeys.has(String.fromCharCode(...this.#key));
          }
        } else if (this.#isKey) {
          if (this.#key.length < MAX_KEY_BYTES) this.#key.push(c);
          else this.#keyTooLong = true;
        }
        continue;
      }
      switch (c) {
        case QUOTE:
          this.#inString = true;
          if (this.#stack[this.#stack.length - 1] === true && this.#expectKey) {
            this.#isKey = true;
            this.#key = [];
            this.#keyTooLong = false;
          } else if (this.#pendingSkip) {
            this.#pendingSkip = false;
            this.#skipping = true;
            this.#keep(chunk, segmentStart, i);
            this.#keepBuffer(NULL_TEXT);
            segmentStart = -1;
          }
          break;
        case LBRACE:
          this.#stack.push(true);
          this.#expectKey = true;
          this.#pendingSkip = false;
          break;
        case LBRACKET:
          this.#stack.push(false);
          this.#pendingSkip = false;
          break;
        case RBRACE:
        case RBRACKET:
          this.#stack.pop();
          this.#expectKey = false;
          this.#pendingSkip = false;
          break;
        case COLON:
          this.#expectKey = false;
          break;
        case COMMA:
          this.#expectKey = this.#stack[this.#stack.length - 1] === true;
          this.#pendingSkip = false;
          break;
        default:
          // Whitespace keeps a pending skip; a number or a literal is a value that is not a string.
          if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) this.#pendingSkip = false;
      }
    }
    if (segmentStart >= 0) this.#keep(chunk, segmentStart, chunk.length);
  }

  /** The kept JSON text. */
  end(): Buffer {
    return Buffer.concat(this.#kept, this.stats.keptBytes);
  }

  #keep(chunk: Buffer, from: number, to: number): void {
    if (from < 0 || to <= from) return;
    // A copy: a subarray would keep the whole chunk (mostly body bytes) alive.
    this.#keepBuffer(Buffer.from(chunk.subarray(from, to)));
  }

  #keepBuffer(buffer: Buffer): void {
    this.stats.keptBytes += buffer.length;
    if (this.stats.keptBytes > this.#limits.maxKeptBytes) {
      throw new SkimLimitError(`response larger than ${this.#limits.maxKeptBytes} bytes without its bodies`);
    }
    this.#kept.push(buffer);
  }
}

/**
 * Read a response body through a JsonSkimmer, chunk by chunk as undici delivers it, giving up
 * after `deadlineMs` in total. Resolves the kept JSON text and the reading's figures.
 */
export async function readSkimmed(
  body: Dispatcher.ResponseData['body'],
  limits: SkimLimits,
  deadlineMs: number,
): Promise<{ text: Buffer; stats: SkimStats }> {
  const skimmer = new JsonSkimmer(limits);
  const deadline = setTimeout(() => {
    body.destroy(new BodyDeadlineError('body deadline'));
  }, deadlineMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      try {
        skimmer.write(chunk);
      } catch (error) {
        body.destroy();
        throw error;
      }
    }
  } finally {
    clearTimeout(deadline);
  }
  return { text: skimmer.end(), stats: skimmer.stats };
}
