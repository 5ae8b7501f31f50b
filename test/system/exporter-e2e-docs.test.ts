// docs/metrics.md stays honest: every family a collector declares (the data its tables are
// written from, src/collectors/family-catalogue.ts) is served by the real exporter (against the
// emulator) with the declared type and label names, the self metrics served carry their declared
// labels, and the exporter serves no upstash_ family that is not declared.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_FAMILIES, SELF_FAMILY_ROWS } from '../../src/collectors/family-catalogue.js';
import { COLLECTOR_SCOPES } from '../../src/config/collector-catalogue.js';
import { eventually, startStack, type Family, type Stack } from '../support/exporter-e2e-helpers.js';
import { documentedFamilies } from '../support/exporter-e2e-docs.js';

let stack: Stack;
let scraped: Map<string, Family>;
let text: string;

/** Label names of a sample, without the `le` of a histogram bucket. */
const labelNamesOf = (family: Family, labels: Record<string, string>): string[] =>
  Object.keys(labels)
    .filter((name) => !(family.type === 'histogram' && name === 'le'))
    .sort();

beforeAll(async () => {
  stack = await startStack();
  await eventually(async () => {
    const families = await stack.scrape();
    const success = families.get('upstash_exporter_collector_success')?.samples ?? [];
    if (success.length === 0) return ['no collector reports yet'];
    return success.filter((s) => s.value !== 1).map((s) => `${s.labels.collector} has not succeeded yet`);
  });
  text = (await stack.get('/metrics')).text;
  scraped = await stack.scrape();
});

afterAll(async () => {
  await stack?.close();
});

describe('docs/metrics.md, every family declared and served', () => {
  it('the catalogue holds every collector and a plausible number of families', () => {
    const documented = documentedFamilies();
    expect(new Set(documented.map((d) => d.collector)).size).toBe(Object.keys(COLLECTOR_SCOPES).length);
    expect(documented.length).toBeGreaterThanOrEqual(24 + 9 + 7 + 25 + 24 + 5 + 21);
    expect(documented.find((d) => d.name === 'upstash_qstash_account_info')!.labels).toEqual([
      'state',
      'plan',
      'reserved_plan',
      'region',
      'selected_by',
    ]);
  });

  it("every enabled collector's declared family is served with its type and label names", () => {
    // The stack runs every collector but logs (its suites, test/collectors/logs, check its registry).
    const enabled = new Set(scraped.get('upstash_exporter_collector_success')!.samples.map((s) => s.labels.collector));
    expect([...enabled].sort()).toEqual(
      Object.keys(COLLECTOR_SCOPES)
        .filter((name) => name !== 'logs')
        .sort(),
    );
    const problems: string[] = [];
    for (const doc of documentedFamilies().filter((d) => enabled.has(d.collector))) {
      const family = scraped.get(doc.name);
      if (!family) {
        problems.push(`${doc.name}: not served`);
        continue;
      }
      if (family.type !== doc.type) problems.push(`${doc.name}: type ${family.type}, declared ${doc.type}`);
      if (family.help === '') problems.push(`${doc.name}: no HELP`);
      // A region-scoped collector's series also carry qstash_region (its registry's default label).
      const labels = COLLECTOR_SCOPES[doc.collector] === 'region' ? [...doc.labels, 'qstash_region'] : doc.labels;
      for (const sample of family.samples) {
        const names = labelNamesOf(family, sample.labels);
        if (JSON.stringify(names) !== JSON.stringify([...labels].sort())) {
          problems.push(`${doc.name}: labels ${names.join(',')}, declared ${labels.join(',')}`);
          break;
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('every self metric served has its declared type and labels (qstash_region only on QStash ones)', () => {
    const problems: string[] = [];
    for (const row of SELF_FAMILY_ROWS) {
      const family = scraped.get(row.name);
      if (!family) continue; // some are absent until their first event (endpoint_available, clock_offset)
      if (family.type !== row.type) problems.push(`${row.name}: type ${family.type}, declared ${row.type}`);
      const required = row.labelNames.filter((name) => name !== 'qstash_region');
      for (const sample of family.samples) {
        const names = labelNamesOf(family, sample.labels);
        const ok = required.every((name) => names.includes(name)) && names.every((n) => row.labelNames.includes(n));
        if (!ok) {
          problems.push(`${row.name}: labels ${names.join(',')}, declared ${row.labelNames.join(',')}`);
          break;
        }
      }
    }
    expect(scraped.has('upstash_exporter_collector_success')).toBe(true);
    expect(problems).toEqual([]);
  });

  it('no undeclared upstash_ family is served', () => {
    const declared = new Set(ALL_FAMILIES.map((row) => row.name));
    const served = [...scraped.keys()].filter((name) => name.startsWith('upstash_'));
    expect(served.length).toBeGreaterThan(100);
    expect(served.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('passes promtool check metrics (naming, units, HELP) on the collectors’ families', (ctx) => {
    if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status !== 0) {
      if (process.env.CI === 'true') throw new Error('promtool is required under CI (apt-get install prometheus)');
      ctx.skip('promtool not installed');
    }
    const declared = new Set(documentedFamilies().map((d) => d.name));
    const familyOf = (line: string): string =>
      line.startsWith('# ') ? (line.split(' ')[2] ?? '') : (/^[a-z_:][a-z0-9_:]*/.exec(line)?.[0] ?? '');
    const isDeclared = (name: string): boolean =>
      declared.has(name) || declared.has(name.replace(/_(bucket|sum|count)$/, ''));
    const ours = text
      .split('\n')
      .filter((line) => isDeclared(familyOf(line)))
      .join('\n');
    expect(ours).toContain('# TYPE upstash_vector_index_info gauge');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});
