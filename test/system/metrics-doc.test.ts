// docs/metrics.md's family tables are the ones the families write (src/metrics-doc.ts,
// `npm run docs:metrics`), as docs/configuration.md's settings table is the settings rows': every
// collector's families, the logs walk's, the exporter's own (self metrics), the canary probe's
// and remediation's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAMILY_CATALOGUE } from '../../src/collectors/family-catalogue.js';
import { generatedSections, METRICS_DOC_TABLES, renderMetricsDoc } from '../../src/metrics-doc.js';
import { COLLECTOR_NAMES } from '../../src/config/collector-catalogue.js';

const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

describe('docs/metrics.md, generated family tables', () => {
  it('holds every table as the families write it (run `npm run docs:metrics` after changing a family)', () => {
    expect(doc).toBe(renderMetricsDoc(doc));
  });

  it('has a generated table for every collector, the logs walk, the self metrics, the probe and remediation, once', () => {
    expect(Object.keys(FAMILY_CATALOGUE).sort()).toEqual([...COLLECTOR_NAMES].sort());
    expect(generatedSections(doc).sort()).toEqual(Object.keys(METRICS_DOC_TABLES).sort());
    for (const table of ['self', 'logs_walk', 'probe', 'remediation']) expect(generatedSections(doc)).toContain(table);
  });

  it('has no hand-written family table left (every row of docs/metrics.md is generated)', () => {
    const outside = doc.replace(/<!-- families: [a-z_]+ -->[\s\S]*?<!-- \/families -->/g, '');
    expect(outside.split('\n').filter((line) => /^\| `upstash_/.test(line))).toEqual([]);
  });

  it('declares each family name once, in Prometheus syntax, with meaning and source', () => {
    const all = Object.values(METRICS_DOC_TABLES).flat();
    expect(new Set(all.map((row) => row.name)).size).toBe(all.length);
    // Each collector's families are in its table or, for the logs walk's, in logs_walk.
    const tabled = new Set(all.map((row) => row.name));
    for (const row of Object.values(FAMILY_CATALOGUE).flat()) expect(tabled, row.name).toContain(row.name);
    for (const row of all) {
      expect(row.name).toMatch(/^upstash_[a-z0-9_]+$/);
      expect(row.meaning.length, row.name).toBeGreaterThan(10);
      expect(row.source.length, row.name).toBeGreaterThan(5);
      if (row.type === 'counter') expect(row.name, 'a counter ends in _total').toMatch(/_total$/);
      else expect(row.name, 'only counters end in _total').not.toMatch(/_total$/);
    }
  });

  it('a changed family shows as a difference (the check can fail)', () => {
    for (const [before, after] of [
      ['| `upstash_qstash_queue_lag` | gauge |', '| `upstash_qstash_queue_lag` | counter |'],
      ['| `upstash_workflow_runs_total` | counter |', '| `upstash_workflow_runs_total` | gauge |'],
      ['| `upstash_exporter_rate_limit` | gauge |', '| `upstash_exporter_rate_limit` | counter |'],
      ['| `upstash_probe_success` | gauge |', '| `upstash_probe_success` | counter |'],
    ] as const) {
      const stale = doc.replace(before, after);
      expect(stale).not.toBe(doc);
      expect(renderMetricsDoc(stale)).toBe(doc);
    }
  });
});
