// The de-duplication window over many messages: its identities live in columns that grow
// (identity-pool.ts), and a message's identities are chained through them. An identity added to
// a chain while the columns grow must stay on the chain: the entry read again is not new. After a
// prune leaves most slots free, the pool is compacted: every chain must survive the move.
import { describe, expect, it } from 'vitest';
import { DedupWindow } from '../../../src/collectors/walk/dedup.js';
import { IdentityPool, MIN_COMPACTED_SLOTS, NONE } from '../../../src/collectors/walk/identity-pool.js';

describe('de-duplication window', () => {
  it('an identity chained while the columns grow is known when read again, at every growth', () => {
    const window = new DedupWindow();
    window.beginWalk();
    const T = 1_767_268_800_000;
    // Each round: message "a<n>" gets a first identity, then enough other messages to fill the
    // columns to a power of two, then its second identity (the one added as the columns grow).
    let added = 0;
    const grown: string[] = [];
    for (let capacity = 1024; capacity <= 16_384; capacity *= 2) {
      const first = `a${capacity}`;
      expect(window.observeEvent(T, 0, first, undefined, undefined)).toBe(true);
      added += 1;
      for (; added < capacity; added++) expect(window.observeEvent(T, 1, `m${added}`, undefined, undefined)).toBe(true);
      expect(window.observeEvent(T + 5, 2, first, 200, undefined)).toBe(true);
      added += 1;
      grown.push(first);
    }
    window.beginWalk();
    for (const message of grown) {
      expect(window.observeEvent(T, 0, message, undefined, undefined)).toBe(false);
      expect(window.observeEvent(T + 5, 2, message, 200, undefined)).toBe(false);
    }
    expect(window.size).toBe(added);
  });

  it('a pool left mostly free by a prune is compacted, and every chain is whole after it', () => {
    const pool = new IdentityPool();
    const heads = new Map<string, number | Map<string, unknown>>();
    const chain = (head: number): number[][] => {
      const rows: number[][] = [];
      for (let slot = head; slot !== NONE; slot = pool.links[slot]!)
        rows.push([pool.times[slot]!, pool.states[slot]!, pool.statuses[slot]!, pool.nexts[slot]!, pool.packed[slot]!]);
      return rows;
    };
    // 40,000 one-slot messages, then 100 messages of three chained slots, then the 40,000 freed.
    const gone: number[] = [];
    for (let i = 0; i < 40_000; i++) gone.push(pool.add(i, 0, 200, -1, 1));
    for (let m = 0; m < 100; m++) {
      let last = NONE;
      for (let s = 0; s < 3; s++) {
        const slot = pool.add(m * 10 + s, s, 200 + s, -1, m);
        if (last === NONE) heads.set(`m${m}`, slot);
        else pool.links[last] = slot;
        last = slot;
      }
    }
    heads.set('mapped', new Map());
    const before = new Map(
      [...heads].filter(([, h]) => typeof h === 'number').map(([k, h]) => [k, chain(h as number)]),
    );
    expect(pool.sparse).toBe(false);
    for (const slot of gone) pool.release(slot);
    expect(pool.used).toBe(300);
    expect(pool.sparse).toBe(true);

    const compacted = pool.compacted(heads);
    expect(compacted.links.length).toBe(300);
    expect(compacted.sparse).toBe(false);
    expect(heads.get('mapped')).toBeInstanceOf(Map);
    const after = (head: number): number[][] => {
      const rows: number[][] = [];
      for (let slot = head; slot !== NONE; slot = compacted.links[slot]!)
        rows.push([
          compacted.times[slot]!,
          compacted.states[slot]!,
          compacted.statuses[slot]!,
          compacted.nexts[slot]!,
          compacted.packed[slot]!,
        ]);
      return rows;
    };
    for (const [key, rows] of before) expect(after(heads.get(key) as number)).toEqual(rows);
  });

  it("a pool of the live walk's size is kept when it empties: its slots are reused, its columns not copied again", () => {
    // The live walk's window fills and empties every few seconds (about 18,000 identities at
    // 4,500 events a second); rebuilding the pool each time made its columns grow back by copying.
    const pool = new IdentityPool();
    const live = 18_000;
    expect(live).toBeLessThan(MIN_COMPACTED_SLOTS);
    const columns = [pool.times, pool.states, pool.statuses, pool.nexts, pool.packed, pool.links];
    for (let cycle = 0; cycle < 3; cycle++) {
      const slots: number[] = [];
      for (let i = 0; i < live; i++) slots.push(pool.add(cycle * live + i, 0, 200, -1, 1));
      for (const slot of slots.slice(4)) pool.release(slot);
      expect(pool.used).toBe(4 * (cycle + 1));
      expect(pool.sparse).toBe(false);
      for (const slot of slots.slice(0, 4)) expect(slot).toBeLessThan(live + 12);
    }
    // The same arrays throughout, no longer than one cycle's identities and those kept.
    [pool.times, pool.states, pool.statuses, pool.nexts, pool.packed, pool.links].forEach((column, k) =>
      expect(column).toBe(columns[k]),
    );
    expect(pool.links.length).toBeLessThanOrEqual(live + 8);
  });

  it('the window knows every identity it kept after a prune that compacts its pool', () => {
    const window = new DedupWindow();
    window.beginWalk();
    const T = 1_767_268_800_000;
    // 40,000 identities in the first second, then 1,000 messages of three identities ten seconds
    // on: pruning the first second leaves 3,000 of 43,000 slots in use, which compacts the pool.
    for (let i = 0; i < 40_000; i++) expect(window.observeEvent(T, 0, `old${i}`, undefined, undefined)).toBe(true);
    for (let m = 0; m < 1000; m++)
      for (let s = 0; s < 3; s++) expect(window.observeEvent(T + 10_000 + s, s, `m${m}`, 200, undefined)).toBe(true);
    window.prune(T + 5_000);
    expect(window.size).toBe(3000);
    window.beginWalk();
    for (let m = 0; m < 1000; m++) {
      for (let s = 0; s < 3; s++) expect(window.observeEvent(T + 10_000 + s, s, `m${m}`, 200, undefined)).toBe(false);
      expect(window.observeEvent(T + 10_003, 3, `m${m}`, 200, undefined)).toBe(true);
    }
    expect(window.size).toBe(4000);
  });
});
