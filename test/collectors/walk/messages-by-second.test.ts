// The by-second index of message ids behind the window's prune and the tracker's slice completion.
import { describe, expect, it } from 'vitest';
import { MessagesBySecond } from '../../../src/collectors/walk/messages-by-second.js';

const T = 1_767_268_800_000;

describe('message ids by second', () => {
  it("visits the seconds up to upTo's, keeps upTo's own second, and forgets those before it", () => {
    const index = new MessagesBySecond();
    index.add(T + 100, 'a');
    index.add(T + 200, 'a'); // the same run in one second: listed once
    index.add(T + 1_500, 'b');
    index.add(T + 300, 'c'); // back to an earlier second
    index.add(T + 2_100, 'd');
    const visited = (upTo: number): string[] => {
      const ids: string[] = [];
      index.visitUpTo(upTo, (id) => ids.push(id));
      return ids;
    };
    expect(visited(T + 1_200)).toEqual(['a', 'c', 'b']);
    // The second of T + 1,200 was kept; the one before it is gone.
    expect(visited(T + 1_999)).toEqual(['b']);
    index.add(T + 1_600, 'e');
    expect(visited(Number.POSITIVE_INFINITY)).toEqual(['b', 'e', 'd']);
    expect(visited(Number.POSITIVE_INFINITY)).toEqual([]);
    index.add(T, 'f');
    index.clear();
    expect(visited(Number.POSITIVE_INFINITY)).toEqual([]);
  });
});
