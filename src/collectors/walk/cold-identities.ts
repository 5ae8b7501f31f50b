// The identities of counted entries that have left the de-duplication window (dedup.ts), kept
// compactly over the lateness horizon so that an entry that becomes visible late, after the walk
// has passed its time, is still told from one counted before: per second, the 53-bit
// fingerprint of each counted identity (as many times as it was counted), sorted. Behind the
// horizon only the number counted per second is kept, for BEYOND_HORIZON_MS more, so that the
// late-entry audit (late-audit.ts) can say exactly how many entries it found there uncounted.
// docs/counting.md, "Late entries and the lateness horizon".

/** Default lateness horizon (logs.lateness_horizon): entries up to this late are counted exactly once. */
export const DEFAULT_LATENESS_HORIZON_MS = 5 * 60_000;
/** Behind the horizon, per-second counts are kept this much longer, so misses there are reported. */
export const BEYOND_HORIZON_MS = 60_000;

const TWO_21 = 2_097_152;
const TWO_32 = 4_294_967_296;
/** Stands for an absent status or next delivery time (a present one is another number). */
const ABSENT_WORD = 0x5bd1e995;
/** Makes the second hash's words differ from the first's. */
const SALT = 0x27d4eb2f;

/**
 * A 53-bit fingerprint of an entry's identity (the window's fields), as a safe integer: two
 * independent 32-bit hashes, 32 + 21 bits of them. Two identities of one second share one with
 * odds of 1 in 2^53 per pair. No string is built.
 */
export function fingerprint(
  time: number,
  stateIndex: number,
  messageId: string,
  responseStatus: number | undefined,
  nextDeliveryTime: number | undefined,
): number {
  const next = nextDeliveryTime ?? -1;
  let a = 0x811c9dc5 | 0;
  let b = 0x9747b28c | 0;
  a = mix(a, time % TWO_32);
  b = mix(b, (time % TWO_32) ^ SALT);
  a = mix(a, Math.floor(time / TWO_32));
  b = mix(b, Math.floor(time / TWO_32) ^ SALT);
  a = mix(a, stateIndex);
  b = mix(b, stateIndex ^ SALT);
  a = mix(a, responseStatus === undefined ? ABSENT_WORD : responseStatus);
  b = mix(b, (responseStatus === undefined ? ABSENT_WORD : responseStatus) ^ SALT);
  a = mix(a, nextDeliveryTime === undefined ? ABSENT_WORD : next % TWO_32);
  b = mix(b, (nextDeliveryTime === undefined ? ABSENT_WORD : next % TWO_32) ^ SALT);
  a = mix(a, Math.floor(next / TWO_32));
  b = mix(b, Math.floor(next / TWO_32) ^ SALT);
  for (let i = 0; i < messageId.length; i++) {
    const code = messageId.charCodeAt(i);
    a = mix(a, code);
    b = mix(b, code + 0x27d4eb2d);
  }
  return (finish(a) >>> 0) * TWO_21 + (finish(b) >>> 11);
}

/** One 32-bit word into a murmur3 state. */
function mix(hash: number, word: number): number {
  let k = Math.imul(word | 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  hash ^= Math.imul(k, 0x1b873593);
  hash = (hash << 13) | (hash >>> 19);
  return (Math.imul(hash, 5) + 0xe6546b64) | 0;
}

/** murmur3's final avalanche. */
function finish(hash: number): number {
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

interface Second {
  /** Entries counted with a time in this second (every time each was counted). */
  counted: number;
  /**
   * Their fingerprints, sorted (a repeat once per count); null behind the horizon. A plain array
   * in V8's heap, not a typed array: hundreds of small typed arrays, each grown as its second
   * fills, left glibc's heap fragmented (RSS after a million events rose by 10 MiB). Sorting and
   * the checkpoint's text go through one shared typed array (scratchFor).
   */
  prints: number[] | null;
  /** `prints` got new ones since it was last sorted. */
  unsorted: boolean;
  /** The checkpoint's text of `prints` as they are now (null: changed since it was made). */
  text: string | null;
}

/** The checkpoint's form: [second, entries counted, fingerprints (base64 of little-endian float64) or null behind the horizon]. */
export interface ColdState {
  validFrom: number;
  seconds: Array<[number, number, string | null]>;
}

export class ColdIdentities {
  readonly #seconds = new Map<number, Second>();
  /** Seconds before this one keep counts only (behind the horizon). */
  #printsFrom = Number.NEGATIVE_INFINITY;
  /** Every counted entry with a time after this one is known here or in the window. */
  validFrom: number;
  readonly horizonMs: number;
  /** The walk stamp of `#occurrences` and the occurrences of each fingerprint in that walk. */
  #walk = 0;
  readonly #occurrences = new Map<number, number>();

  constructor(validFrom: number, horizonMs: number) {
    this.validFrom = validFrom;
    this.horizonMs = horizonMs;
  }

  /** Fingerprints held (docs/performance.md's memory figure). */
  get fingerprints(): number {
    let held = 0;
    for (const second of this.#seconds.values()) held += second.prints?.length ?? 0;
    return held;
  }

  /** The first second whose fingerprints are kept. */
  get printsFromSecond(): number {
    return this.#printsFrom;
  }

  /** An identity leaves the window: it was counted `times` times. */
  absorb(time: number, print: number, times: number): void {
    const key = Math.floor(time / 1000);
    const second = this.#second(key);
    second.counted += times;
    if (second.prints === null) return;
    for (let i = 0; i < times; i++) second.prints.push(print);
    second.unsorted = true;
    second.text = null;
  }

  /**
   * One occurrence, in walk `stamp`, of an entry older than the window: true when it is new (the
   * n-th occurrence of a fingerprint in one walk is new when it was counted fewer than n times),
   * and then it is recorded as counted. Behind the horizon nothing is known: never new (the
   * audit reports what it finds there instead).
   */
  observe(time: number, print: number, stamp: number): boolean {
    const key = Math.floor(time / 1000);
    if (key < this.#printsFrom) return false;
    if (stamp !== this.#walk) {
      this.#walk = stamp;
      this.#occurrences.clear();
    }
    const occurrence = (this.#occurrences.get(print) ?? 0) + 1;
    this.#occurrences.set(print, occurrence);
    const second = this.#second(key);
    if (second.unsorted) sortPrints(second);
    const prints = second.prints!;
    const first = lowerBound(prints, print);
    let known = 0;
    while (first + known < prints.length && prints[first + known] === print) known += 1;
    if (occurrence <= known) return false;
    prints.splice(first, 0, print);
    second.text = null;
    second.counted += 1;
    return true;
  }

  /** Entries counted with a time in second `key` (unix seconds). */
  countedIn(key: number): number {
    return this.#seconds.get(key)?.counted ?? 0;
  }

  /** The audit found `count` entries in second `key` behind the horizon: reported once, then taken as known. */
  settle(key: number, count: number): void {
    this.#second(key).counted = count;
  }

  /** Keeps fingerprints from the horizon behind `watermark` on, and counts for BEYOND_HORIZON_MS behind that. */
  prune(watermark: number): void {
    const printsFrom = Math.floor((watermark - this.horizonMs) / 1000);
    const keepFrom = Math.floor((watermark - this.horizonMs - BEYOND_HORIZON_MS) / 1000);
    this.#printsFrom = Math.max(this.#printsFrom, printsFrom);
    for (const [key, second] of this.#seconds) {
      if (key < keepFrom) this.#seconds.delete(key);
      else if (key < this.#printsFrom) dropPrints(second);
      else if (second.unsorted) sortPrints(second);
    }
    this.#occurrences.clear();
  }

  /** The walk moved back to `from` (watermark-guard.ts): the horizon follows the new `watermark`, and nothing counted lies between. */
  rewind(from: number, watermark: number): void {
    this.#printsFrom = Math.min(this.#printsFrom, Math.floor((watermark - this.horizonMs) / 1000));
    // A second already behind the old horizon keeps only its count: what was counted there is
    // not known one by one, so its entries are never taken for new ones.
    if (from - 1 < this.validFrom) this.validFrom = from - 1;
    this.#occurrences.clear();
  }

  export(): ColdState {
    const seconds: ColdState['seconds'] = [];
    for (const [key, second] of this.#seconds) {
      let text: string | null = null;
      if (second.prints !== null) {
        if (second.unsorted) sortPrints(second);
        // A second is written by many checkpoints and changes only while identities arrive in it.
        text = second.text ??= printsText(second.prints);
      }
      seconds.push([key, second.counted, text]);
    }
    return { validFrom: this.validFrom, seconds };
  }

  restore(state: ColdState): void {
    this.#seconds.clear();
    this.#occurrences.clear();
    this.validFrom = state.validFrom;
    this.#printsFrom = Number.NEGATIVE_INFINITY;
    for (const [key, , text] of state.seconds)
      if (text === null) this.#printsFrom = Math.max(this.#printsFrom, key + 1);
    for (const [key, counted, text] of state.seconds) {
      let prints: number[] | null = null;
      if (text !== null) {
        const bytes = Buffer.from(text, 'base64');
        prints = [];
        for (let i = 0; i + 8 <= bytes.length; i += 8) prints.push(bytes.readDoubleLE(i));
      }
      // A second behind the horizon in the file keeps its count only.
      const kept = key < this.#printsFrom ? null : (prints ?? []);
      this.#seconds.set(key, { counted, prints: kept, unsorted: prints !== null, text: null });
    }
  }

  #second(key: number): Second {
    let second = this.#seconds.get(key);
    if (second === undefined) {
      second = { counted: 0, prints: key >= this.#printsFrom ? [] : null, unsorted: false, text: null };
      this.#seconds.set(key, second);
    }
    return second;
  }
}

/** Whether this machine stores a float64 little-endian (the checkpoint's byte order). */
const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

function sortPrints(second: Second): void {
  const prints = second.prints;
  if (prints !== null) {
    // Fingerprints are non-negative integers: a typed array's own order is the numeric one,
    // and it sorts without a comparator.
    const sorted = scratchFor(prints).sort();
    for (let i = 0; i < prints.length; i++) prints[i] = sorted[i]!;
  }
  second.unsorted = false;
}

/** Behind the horizon: the count stays, the fingerprints go. */
function dropPrints(second: Second): void {
  second.prints = null;
  second.text = null;
}

/**
 * One typed array shared by every second, grown to the most fingerprints a second held and
 * kept: one allocation outside V8's heap instead of one per second.
 */
let scratch = new Float64Array(0);

/** `prints` copied into the shared typed array (a view of its first prints.length). */
function scratchFor(prints: readonly number[]): Float64Array {
  if (scratch.length < prints.length) scratch = new Float64Array(Math.max(prints.length, 2 * scratch.length, 1024));
  const view = scratch.subarray(0, prints.length);
  for (let i = 0; i < prints.length; i++) view[i] = prints[i]!;
  return view;
}

/** The checkpoint's text of fingerprints: base64 of their little-endian float64 bytes. */
function printsText(prints: readonly number[]): string {
  if (LITTLE_ENDIAN) {
    const view = scratchFor(prints);
    return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
  }
  const bytes = Buffer.alloc(prints.length * 8);
  for (let i = 0; i < prints.length; i++) bytes.writeDoubleLE(prints[i]!, i * 8);
  return bytes.toString('base64');
}

/** The first index of `values` whose value is not below `value`. */
function lowerBound(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
