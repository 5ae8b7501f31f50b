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
// Hot path: one Map lookup and one Map write per entry. The value packs three numbers:
// (walk stamp * 4096 + occurrences in that walk) * 4096 + times counted.

const SLOT = 4096;
const MAX_SLOT = SLOT - 1;
const STAMP = SLOT * SLOT;

/** Identity key of an entry; `time` first so the window can be pruned by time. */
export function eventKey(time: number, stateIndex: number, messageId: string, responseStatus: unknown, nextDeliveryTime: unknown): string {
  let key = `${time}|${stateIndex}|${messageId}`;
  if (responseStatus !== undefined) key += `|s${responseStatus as number}`;
  if (nextDeliveryTime !== undefined) key += `|n${nextDeliveryTime as number}`;
  return key;
}

/** Event time of a key made by eventKey. */
export function keyTime(key: string): number {
  return Number(key.slice(0, key.indexOf('|')));
}

export class DedupWindow {
  readonly #keys = new Map<string, number>();
  #stamp = 1;

  get size(): number {
    return this.#keys.size;
  }

  /** Identifies the current walk. */
  get stamp(): number {
    return this.#stamp;
  }

  /** Starts a new walk: occurrence counts restart from zero. */
  beginWalk(): void {
    this.#stamp += 1;
  }

  /** Records one occurrence of `key` in the current walk; true when it is to be counted. */
  observe(key: string): boolean {
    const packed = this.#keys.get(key);
    const stamp = this.#stamp;
    if (packed === undefined) {
      this.#keys.set(key, stamp * STAMP + SLOT + 1);
      return true;
    }
    const packedStamp = Math.floor(packed / STAMP);
    const rest = packed - packedStamp * STAMP;
    const previous = packedStamp === stamp ? Math.floor(rest / SLOT) : 0;
    const counted = rest % SLOT;
    const occurrence = Math.min(MAX_SLOT, previous + 1);
    if (occurrence > counted) {
      this.#keys.set(key, stamp * STAMP + occurrence * SLOT + occurrence);
      return true;
    }
    this.#keys.set(key, stamp * STAMP + occurrence * SLOT + counted);
    return false;
  }

  /** Times `key` was counted (0 when unknown). */
  countedTimes(key: string): number {
    const packed = this.#keys.get(key);
    return packed === undefined ? 0 : packed % SLOT;
  }

  /** Forgets keys older than `from` (no walk will read them again). */
  prune(from: number): void {
    for (const key of this.#keys.keys()) {
      if (keyTime(key) < from) this.#keys.delete(key);
    }
  }

  export(): { keys: string[]; repeats: Array<[string, number]> } {
    const keys: string[] = [];
    const repeats: Array<[string, number]> = [];
    for (const [key, packed] of this.#keys) {
      const counted = packed % SLOT;
      if (counted <= 1) keys.push(key);
      else repeats.push([key, counted]);
    }
    return { keys, repeats };
  }

  restore(state: { keys: readonly string[]; repeats: ReadonlyArray<readonly [string, number]> }): void {
    this.#keys.clear();
    // Stamp 0 belongs to no walk: restored keys start with no occurrence in the next walk.
    for (const key of state.keys) this.#keys.set(key, 1);
    for (const [key, counted] of state.repeats) this.#keys.set(key, Math.min(MAX_SLOT, counted));
    this.#stamp = 1;
  }
}
