// docs/metrics.md's family tables are the ones the collectors' families write
// (src/collectors/families-doc.ts, `npm run docs:metrics`), as docs/configuration.md's settings
// table is the settings rows'.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generatedSections, renderMetricsDoc } from '../../src/collectors/families-doc.js';
import { FAMILY_CATALOGUE } from '../../src/collectors/family-catalogue.js';

const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

describe('docs/metrics.md, generated family tables', () => {
  it('holds every table as the families write it (run `npm run docs:metrics` after changing a family)', () => {
    expect(doc).toBe(renderMetricsDoc(doc));
  });

  it('has a generated table for every collector that declares its families, once', () => {
    expect(generatedSections(doc).sort()).toEqual(Object.keys(FAMILY_CATALOGUE).sort());
  });

  it('declares each family name once, in Prometheus syntax, with meaning and source', () => {
    const rows = Object.values(FAMILY_CATALOGUE).flat();
    expect(new Set(rows.map((row) => row.name)).size).toBe(rows.length);
    for (const row of rows) {
      expect(row.name).toMatch(/^upstash_[a-z0-9_]+$/);
      expect(row.meaning.length, row.name).toBeGreaterThan(10);
      expect(row.source.length, row.name).toBeGreaterThan(5);
    }
  });

  it('a changed family shows as a difference (the check can fail)', () => {
    const stale = doc.replace('| `upstash_qstash_queue_lag` | gauge |', '| `upstash_qstash_queue_lag` | counter |');
    expect(stale).not.toBe(doc);
    expect(renderMetricsDoc(stale)).toBe(doc);
  });
});
