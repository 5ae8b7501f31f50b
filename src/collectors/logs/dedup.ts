// The de-duplication window: the identity of every entry counted with a time at or after
// `from`, and how many times it was counted. Log entries have no id of their own, so the
// identity is time + state + messageId + the fields that tell two transitions of one message
// apart (responseStatus, nextDeliveryTime); see docs/counting.md.
//
// Two entries can still be identical in every field (the same transition twice in one
// millisecond). Within one walk (one cursor chain) the service returns each entry once, so the
// window counts occurrences per walk: the n-th occurrence of a key in a walk is new only if the
// key was counted fewer than n times before. Re-reading a range (overlap, inclusive bounds,
// resumed walks) therefore never counts twice, and twins are not merged.
//
// Hot path (observeEvent): no string is built per entry. Identities are grouped by messageId (a
// message has a handful of entries in the window), each as five numbers in one flat array:
// time, state, status, next delivery time (-Infinity when absent: present values are finite)
// and the packed count (walk stamp * 4096 + occurrences in that walk) * 4096 + times counted.
// A message with unusually many entries gets a map keyed by the rest of the identity, so a
// hostile log cannot make the lookup quadratic. The text form (eventKey) is what checkpoints
// hold and what observe() accepts.

const SLOT = 4096;
const MAX_SLOT = SLOT - 1;
const STAMP = SLOT * SLOT;
const ABSENT = Number.NEGATIVE_INFINITY;
/** Numbers per identity in a message's array: time, state, status, next, packed. */
const WIDTH = 5;
/** Identities of one message kept in its array; beyond it the message gets a map. */
const MAX_LINEAR = 32;

/** Identity key of an entry; `time` first so the window can be pruned by time. */
export function eventKey(time: number, stateIndex: number, messageId: string, responseStatus: unknown, nextDeliveryTime: unknown): string {
  let key = `${time}|${stateIndex}|${messageId}`;
  if (responseStatus !== undefined) key += `|s${responseStatus as number}`;
  if (nextDeliveryTime !== undefined) key += `|n${nextDeliveryTime as number}`;
  return key;
}

interface Identity {
  time: number;
  state: number;
  messageId: string;
  status: number;
  next: number;
}

const NUMBER_TEXT = '-?\\d+(?:\\.\\d+)?(?:e[+-]\\d+)?';
const SUFFIXES = new RegExp(`^(.*?)(?:\\|s(${NUMBER_TEXT}))?(?:\\|n(${NUMBER_TEXT}))?$`, 's');

/** The identity an eventKey text stands for; null when the text is not one. */
function parseKey(key: string): Identity | null {
  const first = key.indexOf('|');
  const second = first < 0 ? -1 : key.indexOf('|', first + 1);
  if (second < 0) return null;
  const time = Number(key.slice(0, first));
  const state = Number(key.slice(first + 1, second));
  const rest = SUFFIXES.exec(key.slice(second + 1));
  if (!Number.isFinite(time) || !Number.isInteger(state) || rest === null) return null;
  return {
    time,
    state,
    messageId: rest[1]!,
    status: rest[2] === undefined ? ABSENT : Number(rest[2]),
    next: rest[3] === undefined ? ABSENT : Number(rest[3]),
  };
}

/** The identity without messageId, as the key of a message's map. */
function restKey(time: number, state: number, status: number, next: number): string {
  return `${time}|${state}|${status}|${next}`;
}

/** A message's identities: a flat array while few, a map beyond (value: [time, packed]). */
type Identities = number[] | Map<string, [number, number]>;

export class DedupWindow {
  readonly #messages = new Map<string, Identities>();
  #size = 0;
  #stamp = 1;
  /** The newest stamp handed out. */
  #latest = 1;

  get size(): number {
    return this.#size;
  }

  /** Identifies the current walk. */
  get stamp(): number {
    return this.#stamp;
  }

  /** Starts a new walk: occurrence counts restart from zero. */
  beginWalk(): void {
    this.#latest += 1;
    this.#stamp = this.#latest;
  }

  /** Makes `stamp` (a walk begun earlier, still going) the current walk: cursor chains walked side by side take turns. */
  useWalk(stamp: number): void {
    this.#stamp = stamp;
  }

  /** Records one occurrence of an entry in the current walk; true when it is to be counted. */
  observeEvent(time: number, stateIndex: number, messageId: string, responseStatus: number | undefined, nextDeliveryTime: number | undefined): boolean {
    const status = responseStatus === undefined ? ABSENT : responseStatus;
    const next = nextDeliveryTime === undefined ? ABSENT : nextDeliveryTime;
    const stamp = this.#stamp;
    const identities = this.#messages.get(messageId);
    if (identities === undefined) {
      this.#messages.set(messageId, [time, stateIndex, status, next, stamp * STAMP + SLOT + 1]);
      this.#size += 1;
      return true;
    }
    if (Array.isArray(identities)) {
      for (let i = 0; i < identities.length; i += WIDTH) {
        if (identities[i] === time && identities[i + 1] === stateIndex && identities[i + 2] === status && identities[i + 3] === next) {
          const before = identities[i + 4]!;
          const after = nextPacked(before, stamp);
          identities[i + 4] = after;
          return after % SLOT > before % SLOT;
        }
      }
      this.#size += 1;
      if (identities.length < MAX_LINEAR * WIDTH) {
        identities.push(time, stateIndex, status, next, stamp * STAMP + SLOT + 1);
      } else {
        const map = toMap(identities);
        map.set(restKey(time, stateIndex, status, next), [time, stamp * STAMP + SLOT + 1]);
        this.#messages.set(messageId, map);
      }
      return true;
    }
    const key = restKey(time, stateIndex, status, next);
    const known = identities.get(key);
    if (known === undefined) {
      identities.set(key, [time, stamp * STAMP + SLOT + 1]);
      this.#size += 1;
      return true;
    }
    const before = known[1];
    known[1] = nextPacked(before, stamp);
    return known[1] % SLOT > before % SLOT;
  }

  /** Records one occurrence of `key` (an eventKey text) in the current walk; true when it is to be counted. */
  observe(key: string): boolean {
    const identity = parseKey(key);
    if (identity === null) return false;
    const { time, state, messageId, status, next } = identity;
    return this.observeEvent(time, state, messageId, status === ABSENT ? undefined : status, next === ABSENT ? undefined : next);
  }

  /** Times `key` was counted (0 when unknown). */
  countedTimes(key: string): number {
    const identity = parseKey(key);
    if (identity === null) return 0;
    const packed = this.#packedOf(identity);
    return packed === undefined ? 0 : packed % SLOT;
  }

  /** Forgets entries older than `from` (no walk will read them again). */
  prune(from: number): void {
    for (const [messageId, identities] of this.#messages) {
      if (Array.isArray(identities)) {
        let kept = 0;
        for (let i = 0; i < identities.length; i += WIDTH) {
          if (identities[i]! < from) continue;
          for (let j = 0; j < WIDTH; j++) identities[kept + j] = identities[i + j]!;
          kept += WIDTH;
        }
        this.#size -= (identities.length - kept) / WIDTH;
        if (kept === 0) this.#messages.delete(messageId);
        else identities.length = kept;
      } else {
        for (const [key, [time]] of identities) {
          if (time >= from) continue;
          identities.delete(key);
          this.#size -= 1;
        }
        if (identities.size === 0) this.#messages.delete(messageId);
      }
    }
  }

  export(): { keys: string[]; repeats: Array<[string, number]> } {
    const keys: string[] = [];
    const repeats: Array<[string, number]> = [];
    this.#forEach((time, state, messageId, status, next, packed) => {
      const key = eventKey(time, state, messageId, status === ABSENT ? undefined : status, next === ABSENT ? undefined : next);
      const counted = packed % SLOT;
      if (counted <= 1) keys.push(key);
      else repeats.push([key, counted]);
    });
    return { keys, repeats };
  }

  restore(state: { keys: readonly string[]; repeats: ReadonlyArray<readonly [string, number]> }): void {
    this.#messages.clear();
    this.#size = 0;
    // Stamp 0 belongs to no walk: restored keys start with no occurrence in the next walk.
    for (const key of state.keys) this.#restoreKey(key, 1);
    for (const [key, counted] of state.repeats) this.#restoreKey(key, Math.min(MAX_SLOT, counted));
    this.#stamp = 1;
    this.#latest = 1;
  }

  #restoreKey(key: string, packed: number): void {
    const identity = parseKey(key);
    if (identity === null) return;
    const { time, state, messageId, status, next } = identity;
    const known = this.#packedOf(identity);
    if (known === undefined) {
      // Recorded as a fresh identity, then given the restored count.
      this.observeEvent(time, state, messageId, status === ABSENT ? undefined : status, next === ABSENT ? undefined : next);
    }
    this.#setPacked(identity, packed);
  }

  #packedOf(identity: Identity): number | undefined {
    const identities = this.#messages.get(identity.messageId);
    if (identities === undefined) return undefined;
    if (!Array.isArray(identities)) return identities.get(restKey(identity.time, identity.state, identity.status, identity.next))?.[1];
    const index = indexIn(identities, identity);
    return index < 0 ? undefined : identities[index + 4];
  }

  #setPacked(identity: Identity, packed: number): void {
    const identities = this.#messages.get(identity.messageId)!;
    if (!Array.isArray(identities)) {
      identities.get(restKey(identity.time, identity.state, identity.status, identity.next))![1] = packed;
      return;
    }
    identities[indexIn(identities, identity) + 4] = packed;
  }

  #forEach(visit: (time: number, state: number, messageId: string, status: number, next: number, packed: number) => void): void {
    for (const [messageId, identities] of this.#messages) {
      if (Array.isArray(identities)) {
        for (let i = 0; i < identities.length; i += WIDTH) {
          visit(identities[i]!, identities[i + 1]!, messageId, identities[i + 2]!, identities[i + 3]!, identities[i + 4]!);
        }
      } else {
        for (const [key, [time, packed]] of identities) {
          const [, state, status, next] = key.split('|').map(Number) as [number, number, number, number];
          visit(time, state, messageId, status, next, packed);
        }
      }
    }
  }
}

/**
 * The packed count after one more occurrence in walk `stamp`: the n-th occurrence in a walk
 * raises the times counted to n if it was lower (then the entry is counted).
 */
function nextPacked(packed: number, stamp: number): number {
  const packedStamp = Math.floor(packed / STAMP);
  const rest = packed - packedStamp * STAMP;
  const previous = packedStamp === stamp ? Math.floor(rest / SLOT) : 0;
  const counted = rest % SLOT;
  const occurrence = Math.min(MAX_SLOT, previous + 1);
  return stamp * STAMP + occurrence * SLOT + Math.max(counted, occurrence);
}

function indexIn(identities: readonly number[], identity: Identity): number {
  for (let i = 0; i < identities.length; i += WIDTH) {
    if (identities[i] === identity.time && identities[i + 1] === identity.state && identities[i + 2] === identity.status && identities[i + 3] === identity.next) return i;
  }
  return -1;
}

function toMap(identities: readonly number[]): Map<string, [number, number]> {
  const map = new Map<string, [number, number]>();
  for (let i = 0; i < identities.length; i += WIDTH) {
    map.set(restKey(identities[i]!, identities[i + 1]!, identities[i + 2]!, identities[i + 3]!), [identities[i]!, identities[i + 4]!]);
  }
  return map;
}

const TWO_32 = 4_294_967_296;
/** Stands for an absent status or next delivery time in a fingerprint (present ones are other numbers). */
const ABSENT_WORD = 0x5bd1e995;

/**
 * A 32-bit fingerprint of an entry's identity (the same fields as the window's), for the
 * late-entry ledger (late-audit.ts): compact, so the identities of every entry counted over the
 * lateness horizon can be kept. Two identities of one second share a fingerprint with odds of
 * 1 in 2^32 per pair (docs/counting.md, "Late entries"). No string is built.
 */
export function fingerprint(time: number, stateIndex: number, messageId: string, responseStatus: number | undefined, nextDeliveryTime: number | undefined): number {
  let hash = 0x811c9dc5;
  hash = mixWord(hash, time >>> 0);
  hash = mixWord(hash, Math.floor(time / TWO_32));
  hash = mixWord(hash, stateIndex);
  hash = mixWord(hash, responseStatus === undefined ? ABSENT_WORD : responseStatus >>> 0);
  if (nextDeliveryTime === undefined) hash = mixWord(hash, ABSENT_WORD);
  else {
    hash = mixWord(hash, nextDeliveryTime >>> 0);
    hash = mixWord(hash, Math.floor(nextDeliveryTime / TWO_32));
  }
  for (let i = 0; i < messageId.length; i++) hash = Math.imul(hash ^ messageId.charCodeAt(i), 0x01000193);
  // Final avalanche (murmur3 fmix32), so near identities spread over all 32 bits.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash | 0;
}

/** One 32-bit word into the hash (a murmur3 block). */
function mixWord(hash: number, word: number): number {
  let k = Math.imul(word | 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  hash ^= Math.imul(k, 0x1b873593);
  hash = (hash << 13) | (hash >>> 19);
  return (Math.imul(hash, 5) + 0xe6546b64) | 0;
}
