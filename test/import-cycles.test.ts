// Every import arrow in src/ points down: no module reaches itself through static imports
// (type-only imports included). A new circle fails this test with the circle spelled out.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycles, importGraph } from './support/import-graph.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

describe('import graph of src/', () => {
  it('has no cycles', () => {
    const graph = importGraph(SRC);
    // The parse must see the code, or this test would pass on an empty graph.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('collectors/index.ts')?.length ?? 0).toBeGreaterThan(3);
    expect(findCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('finds a cycle where there is one (the check can fail)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(findCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
