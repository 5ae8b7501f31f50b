// The de-duplication window over many messages: its identities live in typed columns that grow
// (identity-pool.ts), and a message's identities are chained through them. An identity added to
// a chain while the columns grow must stay on the chain: the entry read again is not new.
import { describe, expect, it } from 'vitest';
import { DedupWindow } from '../../../src/collectors/walk/dedup.js';

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
});
