// The de-duplication window's identities (dedup.ts), one slot each in typed columns: held outside
// the collected heap, so the many identities waiting in the window for prune cost the garbage
// collector nothing; freed slots are reused.

import { restKey } from './event-key.js';

/** The end of a chain (and of the free list). */
export const NONE = -1;

/** The window's identities, one slot each, in typed columns; freed slots are reused. */
export class IdentityPool {
  times = new Float64Array(1024);
  states = new Float64Array(1024);
  statuses = new Float64Array(1024);
  nexts = new Float64Array(1024);
  packed = new Float64Array(1024);
  /** The next slot of the same message, or of the free list; NONE ends either. */
  links = new Int32Array(1024);
  #used = 0;
  #free = NONE;

  add(time: number, state: number, status: number, next: number, packed: number): number {
    let slot = this.#free;
    if (slot !== NONE) this.#free = this.links[slot]!;
    else {
      if (this.#used === this.times.length) this.#grow();
      slot = this.#used++;
    }
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

  clear(): void {
    this.#used = 0;
    this.#free = NONE;
  }

  #grow(): void {
    const size = this.times.length * 2;
    const grown = <T extends Float64Array | Int32Array>(old: T, next: T): T => {
      next.set(old);
      return next;
    };
    this.times = grown(this.times, new Float64Array(size));
    this.states = grown(this.states, new Float64Array(size));
    this.statuses = grown(this.statuses, new Float64Array(size));
    this.nexts = grown(this.nexts, new Float64Array(size));
    this.packed = grown(this.packed, new Float64Array(size));
    this.links = grown(this.links, new Int32Array(size));
  }
}
