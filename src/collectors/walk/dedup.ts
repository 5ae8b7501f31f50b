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
// Hot path (observeEvent): nothing is built per entry. Identities are grouped by messageId, each
// in a slot of columns of unboxed numbers (identity-pool.ts): time, state, status,
// next delivery time (-Infinity when absent), the packed count (walk stamp * 4096 + occurrences
// in that walk) * 4096 + times counted, and the message's next slot (a chain). A message with
// unusually many entries gets a map keyed by the rest of the identity, so a hostile log cannot
// make the lookup quadratic. The text form (eventKey) is what checkpoints hold and observe() takes.
//
// With a lateness horizon, identities pruned from the window are not forgotten: they move to a
// compact store of fingerprints (cold-identities.ts), which answers for entries older than the
// window, so an entry that becomes visible after the walk passed its time is counted exactly once.

import { ColdIdentities, fingerprint } from './cold-identities.js';
import { ABSENT, eventKey, parseKey, present, restKey, type Identity } from './event-key.js';
import { IdentityPool, NONE } from './identity-pool.js';
import { MessagesBySecond } from './messages-by-second.js';

export { eventKey };

const SLOT = 4096;
const MAX_SLOT = SLOT - 1;
const STAMP = SLOT * SLOT;
/** Identities of one message kept in its chain; beyond it the message gets a map. */
const MAX_LINEAR = 32;

/** A message's identities: the first slot of its chain while few, a map beyond (value: [time, packed]). */
type Identities = number | Map<string, [number, number]>;

export class DedupWindow {
  readonly #messages = new Map<string, Identities>();
  #pool = new IdentityPool();
  /**
   * By second (unix seconds), the messages given an identity with a time in it (a message once
   * per run of its identities): prune visits the messages of the seconds leaving the window, not
   * the whole window.
   */
  readonly #bySecond = new MessagesBySecond();
  /** Identities pruned from the window, over the lateness horizon (null: forgotten when pruned). */
  readonly cold: ColdIdentities | null;
  /** The window holds every counted identity from this time on; older ones are in `cold`. */
  #hotFrom = Number.NEGATIVE_INFINITY;
  #size = 0;
  #stamp = 1;
  /** The newest stamp handed out. */
  #latest = 1;

  /**
   * With `latenessHorizonMs`, pruned identities are kept as fingerprints for that long behind the
   * watermark (0: none, only the counts per second that let the audit report what it finds);
   * without it they are forgotten.
   */
  constructor(options: { latenessHorizonMs?: number } = {}) {
    const horizon = options.latenessHorizonMs;
    this.cold = horizon === undefined ? null : new ColdIdentities(Number.NEGATIVE_INFINITY, horizon);
  }

  get size(): number {
    return this.#size;
  }

  /** The window holds every counted identity from this time on (older ones: `cold`). */
  get hotFrom(): number {
    return this.#hotFrom;
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
  observeEvent(
    time: number,
    stateIndex: number,
    messageId: string,
    responseStatus: number | undefined,
    nextDeliveryTime: number | undefined,
  ): boolean {
    if (time < this.#hotFrom && this.cold !== null) {
      return this.cold.observe(
        time,
        fingerprint(time, stateIndex, messageId, responseStatus, nextDeliveryTime),
        this.#stamp,
      );
    }
    const status = responseStatus === undefined ? ABSENT : responseStatus;
    const next = nextDeliveryTime === undefined ? ABSENT : nextDeliveryTime;
    const stamp = this.#stamp;
    const pool = this.#pool;
    const identities = this.#messages.get(messageId);
    if (identities === undefined) {
      this.#messages.set(messageId, pool.add(time, stateIndex, status, next, stamp * STAMP + SLOT + 1));
      this.#size += 1;
      this.#bySecond.add(time, messageId);
      return true;
    }
    if (typeof identities === 'number') {
      let last = identities;
      let held = 0;
      for (let slot = identities; slot !== NONE; slot = pool.links[slot]!) {
        if (
          pool.times[slot] === time &&
          pool.states[slot] === stateIndex &&
          pool.statuses[slot] === status &&
          pool.nexts[slot] === next
        ) {
          const before = pool.packed[slot]!;
          const after = nextPacked(before, stamp);
          pool.packed[slot] = after;
          return after % SLOT > before % SLOT;
        }
        last = slot;
        held += 1;
      }
      this.#size += 1;
      if (held < MAX_LINEAR) {
        // At the chain's end (the map entry stays).
        const slot = pool.add(time, stateIndex, status, next, stamp * STAMP + SLOT + 1);
        pool.links[last] = slot;
      } else {
        const map = pool.toMap(identities);
        map.set(restKey(time, stateIndex, status, next), [time, stamp * STAMP + SLOT + 1]);
        this.#messages.set(messageId, map);
      }
      this.#bySecond.add(time, messageId);
      return true;
    }
    const key = restKey(time, stateIndex, status, next);
    const known = identities.get(key);
    if (known === undefined) {
      identities.set(key, [time, stamp * STAMP + SLOT + 1]);
      this.#size += 1;
      this.#bySecond.add(time, messageId);
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
    return this.observeEvent(time, state, messageId, present(status), present(next));
  }

  /** Times `key` was counted (0 when unknown). */
  countedTimes(key: string): number {
    const identity = parseKey(key);
    if (identity === null) return 0;
    const packed = this.#packedOf(identity);
    return packed === undefined ? 0 : packed % SLOT;
  }

  /**
   * The walk moved back to `from` (its watermark to `watermark`) because the window had gone
   * beyond the upstream's now (watermark-guard.ts): nothing the window or the cold store holds
   * lies before the upstream's now, so the window answers again from `from` on, and the cold
   * store keeps fingerprints again over the horizon behind the new watermark.
   */
  rewind(from: number, watermark: number): void {
    if (from < this.#hotFrom) this.#hotFrom = from;
    this.cold?.rewind(from, watermark);
  }

  /** Lets entries older than `from` leave the window (no walk will read them again): to `cold`, or forgotten. */
  prune(from: number): void {
    if (from > this.#hotFrom) this.#hotFrom = from;
    this.#bySecond.visitUpTo(from, (messageId) => {
      const identities = this.#messages.get(messageId);
      if (identities !== undefined) this.#pruneMessage(messageId, identities, from);
    });
    if (this.#pool.sparse) this.#pool = this.#pool.compacted(this.#messages);
  }

  /** Moves the identities of one message older than `from` out of the window. */
  #pruneMessage(messageId: string, identities: Identities, from: number): void {
    if (typeof identities === 'number') {
      const pool = this.#pool;
      let head = identities;
      let previous = NONE;
      for (let slot = identities; slot !== NONE;) {
        const following = pool.links[slot]!;
        const time = pool.times[slot]!;
        if (time < from) {
          this.#toCold(
            time,
            pool.states[slot]!,
            messageId,
            pool.statuses[slot]!,
            pool.nexts[slot]!,
            pool.packed[slot]!,
          );
          if (previous === NONE) head = following;
          else pool.links[previous] = following;
          pool.release(slot);
          this.#size -= 1;
        } else {
          previous = slot;
        }
        slot = following;
      }
      if (head === NONE) this.#messages.delete(messageId);
      else if (head !== identities) this.#messages.set(messageId, head);
    } else {
      for (const [key, [time, packed]] of identities) {
        if (time >= from) continue;
        if (this.cold !== null) {
          const [, state, status, next] = key.split('|').map(Number) as [number, number, number, number];
          this.#toCold(time, state, messageId, status, next, packed);
        }
        identities.delete(key);
        this.#size -= 1;
      }
      if (identities.size === 0) this.#messages.delete(messageId);
    }
  }

  /** An identity leaving the window into the cold store, if there is one, with the times it was counted. */
  #toCold(time: number, state: number, messageId: string, status: number, next: number, packed: number): void {
    if (this.cold === null) return;
    const print = fingerprint(time, state, messageId, present(status), present(next));
    this.cold.absorb(time, print, packed % SLOT);
  }

  export(): { keys: string[]; repeats: Array<[string, number]> } {
    const keys: string[] = [];
    const repeats: Array<[string, number]> = [];
    this.#forEach((time, state, messageId, status, next, packed) => {
      const key = eventKey(time, state, messageId, present(status), present(next));
      const counted = packed % SLOT;
      if (counted <= 1) keys.push(key);
      else repeats.push([key, counted]);
    });
    return { keys, repeats };
  }

  /** The window of a checkpoint; `hotFrom` is where it starts (its dedupFrom). */
  restore(
    state: { keys: readonly string[]; repeats: ReadonlyArray<readonly [string, number]> },
    hotFrom = Number.NEGATIVE_INFINITY,
  ): void {
    this.#messages.clear();
    this.#pool.clear();
    this.#bySecond.clear();
    this.#size = 0;
    this.#hotFrom = Number.NEGATIVE_INFINITY;
    // Stamp 0 belongs to no walk: restored keys start with no occurrence in the next walk.
    for (const key of state.keys) this.#restoreKey(key, 1);
    for (const [key, counted] of state.repeats) this.#restoreKey(key, Math.min(MAX_SLOT, counted));
    this.#stamp = 1;
    this.#latest = 1;
    this.#hotFrom = hotFrom;
  }

  #restoreKey(key: string, packed: number): void {
    const identity = parseKey(key);
    if (identity === null) return;
    const { time, state, messageId, status, next } = identity;
    const known = this.#packedOf(identity);
    if (known === undefined) {
      // Recorded as a fresh identity, then given the restored count.
      this.observeEvent(time, state, messageId, present(status), present(next));
    }
    this.#setPacked(identity, packed);
  }

  #packedOf(identity: Identity): number | undefined {
    const identities = this.#messages.get(identity.messageId);
    if (identities === undefined) return undefined;
    if (typeof identities !== 'number')
      return identities.get(restKey(identity.time, identity.state, identity.status, identity.next))?.[1];
    const slot = this.#pool.find(identities, identity.time, identity.state, identity.status, identity.next);
    return slot === NONE ? undefined : this.#pool.packed[slot];
  }

  #setPacked(identity: Identity, packed: number): void {
    const identities = this.#messages.get(identity.messageId)!;
    if (typeof identities !== 'number') {
      identities.get(restKey(identity.time, identity.state, identity.status, identity.next))![1] = packed;
      return;
    }
    this.#pool.packed[this.#pool.find(identities, identity.time, identity.state, identity.status, identity.next)] =
      packed;
  }

  #forEach(
    visit: (time: number, state: number, messageId: string, status: number, next: number, packed: number) => void,
  ): void {
    const pool = this.#pool;
    for (const [messageId, identities] of this.#messages) {
      if (typeof identities === 'number') {
        for (let slot = identities; slot !== NONE; slot = pool.links[slot]!) {
          visit(
            pool.times[slot]!,
            pool.states[slot]!,
            messageId,
            pool.statuses[slot]!,
            pool.nexts[slot]!,
            pool.packed[slot]!,
          );
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
