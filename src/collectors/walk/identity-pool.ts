// The de-duplication window's identities (dedup.ts), one slot each in columns of numbers: arrays
// of plain numbers hold them unboxed, so the many identities waiting in the window for prune are
// a few objects for the garbage collector, not one each; freed slots are reused. Plain arrays,
// not typed ones: a typed array's memory comes from malloc, and columns doubled while the walk
// allocates around them left glibc's heap fragmented (RSS after a million events rose by
// several MiB); V8 returns an array's old backing store to the system.

import { restKey } from './event-key.js';

/** The end of a chain (and of the free list). */
export const NONE = -1;
/**
 * A pool smaller than this is never compacted (1.5 MiB of columns). The live walk's window fills
 * and empties every few seconds (at 4,500 events a second, pages of 100: from a few identities to
 * about 18,000 every 3.3 s); with a floor of 16,384 the pool was rebuilt each time and grew back
 * by copying its columns, about 0.8 MB a second of garbage in the old generation (issue 38).
 */
export const MIN_COMPACTED_SLOTS = 32_768;

/** The window's identities, one slot each, in columns; freed slots are reused. */
export class IdentityPool {
  readonly times: number[] = [];
  readonly states: number[] = [];
  readonly statuses: number[] = [];
  readonly nexts: number[] = [];
  readonly packed: number[] = [];
  /** The next slot of the same message, or of the free list; NONE ends either. */
  readonly links: number[] = [];
  #free = NONE;
  #freeSlots = 0;

  /** Slots in use (identities held). */
  get used(): number {
    return this.links.length - this.#freeSlots;
  }

  /**
   * Whether most slots are free, as after a backlog's walk, which can hold far more identities
   * than the live walk after it: then the pool is worth replacing by `compacted`.
   */
  get sparse(): boolean {
    return this.links.length > MIN_COMPACTED_SLOTS && this.used * 4 < this.links.length;
  }

  add(time: number, state: number, status: number, next: number, packed: number): number {
    const slot = this.#free;
    if (slot === NONE) {
      this.times.push(time);
      this.states.push(state);
      this.statuses.push(status);
      this.nexts.push(next);
      this.packed.push(packed);
      this.links.push(NONE);
      return this.links.length - 1;
    }
    this.#free = this.links[slot]!;
    this.#freeSlots -= 1;
    this.times[slot] = time;
    this.states[slot] = state;
    this.statuses[slot] = status;
    this.nexts[slot] = next;
    this.packed[slot] = packed;
    this.links[slot] = NONE;
    return slot;
  }

  release(slot: number): void {
    this.links[slot] = this.#free;
    this.#free = slot;
    this.#freeSlots += 1;
  }

  /** The slot of the chain from `head` holding the identity, or NONE. */
  find(head: number, time: number, state: number, status: number, next: number): number {
    for (let slot = head; slot !== NONE; slot = this.links[slot]!) {
      if (
        this.times[slot] === time &&
        this.states[slot] === state &&
        this.statuses[slot] === status &&
        this.nexts[slot] === next
      )
        return slot;
    }
    return NONE;
  }

  /** The chain from `head` as a map keyed by the rest of each identity (value: [time, packed]); its slots are freed. */
  toMap(head: number): Map<string, [number, number]> {
    const map = new Map<string, [number, number]>();
    for (let slot = head; slot !== NONE;) {
      const following = this.links[slot]!;
      map.set(restKey(this.times[slot]!, this.states[slot]!, this.statuses[slot]!, this.nexts[slot]!), [
        this.times[slot]!,
        this.packed[slot]!,
      ]);
      this.release(slot);
      slot = following;
    }
    return map;
  }

  /**
   * A pool of just the slots in use: the chain of every head in `heads` (a map's number values)
   * copied in order, and the map pointed at the copies. This pool is left to be dropped.
   */
  compacted<K>(heads: Map<K, number | object>): IdentityPool {
    const into = new IdentityPool();
    for (const [key, head] of heads) {
      if (typeof head !== 'number') continue;
      let last = NONE;
      for (let slot = head; slot !== NONE; slot = this.links[slot]!) {
        const copy = into.add(
          this.times[slot]!,
          this.states[slot]!,
          this.statuses[slot]!,
          this.nexts[slot]!,
          this.packed[slot]!,
        );
        if (last === NONE) heads.set(key, copy);
        else into.links[last] = copy;
        last = copy;
      }
    }
    return into;
  }

  clear(): void {
    for (const column of [this.times, this.states, this.statuses, this.nexts, this.packed, this.links])
      column.length = 0;
    this.#free = NONE;
    this.#freeSlots = 0;
  }
}
