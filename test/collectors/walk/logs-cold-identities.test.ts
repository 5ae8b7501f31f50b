// The de-duplication window's cold store: identities that left the window are still told from
// new ones over the lateness horizon, across walks, twins and a checkpoint round trip.
import { describe, expect, it } from 'vitest';
import type { ColdIdentities } from '../../../src/collectors/walk/cold-identities.js';
import { BEYOND_HORIZON_MS, fingerprint } from '../../../src/collectors/walk/cold-identities.js';
import { DedupWindow } from '../../../src/collectors/walk/dedup.js';

const T = 1_700_000_000_000;
const HORIZON = 5 * 60_000;

/** One walk over `entries` (time, messageId, status?): how many the window counts. */
function walk(window: DedupWindow, entries: ReadonlyArray<readonly [number, string, number?]>): number {
  window.beginWalk();
  let counted = 0;
  for (const [time, messageId, status] of entries)
    if (window.observeEvent(time, 2, messageId, status, undefined)) counted += 1;
  return counted;
}

describe('cold identities', () => {
  it('an entry counted before the window moved on is not counted again; a new one at the same second is, once', () => {
    const window = new DedupWindow({ latenessHorizonMs: HORIZON });
    expect(
      walk(window, [
        [T + 100, 'm1'],
        [T + 200, 'm2'],
        [T + 200, 'm3', 500],
      ]),
    ).toBe(3);
    window.prune(T + 10_000);
    expect(window.size).toBe(0);
    expect(window.cold!.fingerprints).toBe(3);
    // The audit reads the second again: m4 became visible late.
    expect(
      walk(window, [
        [T + 300, 'm4'],
        [T + 200, 'm3', 500],
        [T + 200, 'm2'],
        [T + 100, 'm1'],
      ]),
    ).toBe(1);
    // And again: nothing new.
    expect(
      walk(window, [
        [T + 300, 'm4'],
        [T + 200, 'm3', 500],
        [T + 200, 'm2'],
        [T + 100, 'm1'],
      ]),
    ).toBe(0);
    // Another field makes another identity.
    expect(walk(window, [[T + 200, 'm3', 502]])).toBe(1);
  });

  it('twins (identical entries) are counted as often as they occur in one walk, never more', () => {
    const window = new DedupWindow({ latenessHorizonMs: HORIZON });
    expect(
      walk(window, [
        [T + 5, 'twin'],
        [T + 5, 'twin'],
      ]),
    ).toBe(2);
    window.prune(T + 1_000);
    expect(
      walk(window, [
        [T + 5, 'twin'],
        [T + 5, 'twin'],
      ]),
    ).toBe(0);
    expect(
      walk(window, [
        [T + 5, 'twin'],
        [T + 5, 'twin'],
        [T + 5, 'twin'],
      ]),
    ).toBe(1);
    expect(
      walk(window, [
        [T + 5, 'twin'],
        [T + 5, 'twin'],
        [T + 5, 'twin'],
      ]),
    ).toBe(0);
  });

  it('keeps fingerprints over the horizon only; behind it, counts for a while, then nothing', () => {
    const window = new DedupWindow({ latenessHorizonMs: HORIZON });
    walk(window, [
      [T + 5, 'a'],
      [T + 6, 'b'],
    ]);
    window.prune(T + 1_000);
    const cold = window.cold!;
    cold.prune(T + HORIZON + 2_000);
    expect(cold.fingerprints).toBe(0);
    expect(cold.countedIn(Math.floor(T / 1000))).toBe(2);
    // Behind the horizon nothing is known, so nothing is counted (the audit reports instead).
    expect(walk(window, [[T + 7, 'c']])).toBe(0);
    cold.prune(T + HORIZON + BEYOND_HORIZON_MS + 2_000);
    expect(cold.countedIn(Math.floor(T / 1000))).toBe(0);
  });

  it('survives a checkpoint: export, restore, and the restored store still knows what was counted', () => {
    const window = new DedupWindow({ latenessHorizonMs: HORIZON });
    walk(window, [
      [T + 100, 'm1'],
      [T + 1_200, 'm2', 200],
      [T + 1_200, 'm2', 200],
    ]);
    window.prune(T + 5_000);
    window.cold!.validFrom = T - 1;
    const state = JSON.parse(JSON.stringify(window.cold!.export())) as ReturnType<ColdIdentities['export']>;
    const restored = new DedupWindow({ latenessHorizonMs: HORIZON });
    restored.restore({ keys: [], repeats: [] }, T + 5_000);
    restored.cold!.restore(state);
    expect(restored.cold!.validFrom).toBe(T - 1);
    expect(
      walk(restored, [
        [T + 100, 'm1'],
        [T + 1_200, 'm2', 200],
        [T + 1_200, 'm2', 200],
        [T + 1_300, 'new'],
      ]),
    ).toBe(1);
  });

  it('a window restored from a checkpoint sends what is older than its start to the cold store, not to the count', () => {
    const window = new DedupWindow({ latenessHorizonMs: HORIZON });
    window.restore({ keys: [], repeats: [] }, T + 5_000);
    // Nothing is known of T + 100 in the cold store: it is new, and then known.
    expect(walk(window, [[T + 100, 'm1']])).toBe(1);
    expect(walk(window, [[T + 100, 'm1']])).toBe(0);
    // Entries in the window are handled there as always.
    expect(
      walk(window, [
        [T + 6_000, 'm9'],
        [T + 6_000, 'm9'],
      ]),
    ).toBe(2);
    expect(
      walk(window, [
        [T + 6_000, 'm9'],
        [T + 6_000, 'm9'],
      ]),
    ).toBe(0);
  });

  it('a horizon of 0 keeps no fingerprint behind the watermark, only the counts, and takes nothing there for new', () => {
    const window = new DedupWindow({ latenessHorizonMs: 0 });
    walk(window, [[T + 100, 'm1']]);
    window.prune(T + 1_000);
    window.cold!.prune(T + 1_000);
    expect(window.cold!.fingerprints).toBe(0);
    expect(window.cold!.countedIn(Math.floor(T / 1000))).toBe(1);
    expect(
      walk(window, [
        [T + 100, 'm1'],
        [T + 200, 'late'],
      ]),
    ).toBe(0);
  });

  it('without a horizon, pruned identities are forgotten as before', () => {
    const window = new DedupWindow();
    expect(window.cold).toBeNull();
    walk(window, [[T + 100, 'm1']]);
    window.prune(T + 1_000);
    expect(walk(window, [[T + 100, 'm1']])).toBe(1);
  });

  it('fingerprints are safe integers that tell every field apart', () => {
    const base = fingerprint(T, 2, 'msg_1', 200, undefined);
    expect(Number.isSafeInteger(base)).toBe(true);
    const others = [
      fingerprint(T + 1, 2, 'msg_1', 200, undefined),
      fingerprint(T, 3, 'msg_1', 200, undefined),
      fingerprint(T, 2, 'msg_2', 200, undefined),
      fingerprint(T, 2, 'msg_1', 500, undefined),
      fingerprint(T, 2, 'msg_1', undefined, undefined),
      fingerprint(T, 2, 'msg_1', 200, T + 60_000),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
    const many = new Set<number>();
    for (let i = 0; i < 100_000; i++) many.add(fingerprint(T, i % 7, `msg_${i}`, undefined, undefined));
    expect(many.size).toBe(100_000);
  });
});
