// docs/metrics.md stays honest for the inventory collectors: every family they declare (the data
// its tables are written from, src/collectors/family-catalogue.ts) is served by the real exporter
// (against the emulator) with the declared type and label names, and the exporter serves no
// family of these collectors that they do not declare.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectorValue, eventually, startStack, type Family, type Stack } from '../support/exporter-e2e-helpers.js';
import { documentedFamilies, INVENTORY_SECTIONS } from '../support/exporter-e2e-docs.js';

/** Whether a served family belongs to an inventory collector: its HELP ends with the collector's cadence note. */
const INVENTORY_COLLECTORS = new Set(documentedFamilies().map((d) => d.collector));
function isInventory(family: Family | undefined): boolean {
  const collector = /by the ([a-z_]+) collector, scrapes serve/.exec(family?.help ?? '')?.[1];
  return collector !== undefined && INVENTORY_COLLECTORS.has(collector as never);
}

let stack: Stack;
let scraped: Map<string, Family>;
let text: string;

beforeAll(async () => {
  stack = await startStack();
  await eventually(async () => {
    const families = await stack.scrape();
    return [...INVENTORY_COLLECTORS]
      .filter((collector) => collectorValue(families, 'upstash_exporter_collector_success', collector) !== 1)
      .map((c) => `${c} has not succeeded yet`);
  });
  text = (await stack.get('/metrics')).text;
  scraped = await stack.scrape();
});

afterAll(async () => {
  await stack?.close();
});

describe('docs/metrics.md, inventory sections', () => {
  it('the catalogue holds every section and a plausible number of families', () => {
    const documented = documentedFamilies();
    expect([...new Set(documented.map((d) => d.section))]).toEqual([...INVENTORY_SECTIONS]);
    expect(documented.length).toBeGreaterThanOrEqual(7 + 25 + 24 + 5 + 21);
    expect(new Set(documented.map((d) => d.name)).size).toBe(documented.length);
    expect(documented.find((d) => d.name === 'upstash_qstash_account_info')!.labels).toEqual([
      'state',
      'plan',
      'reserved_plan',
      'region',
      'selected_by',
    ]);
    expect(documented.find((d) => d.name === 'upstash_qstash_schedule_last_run_messages')!.labels).toEqual([
      'schedule_id',
      'state',
    ]);
  });

  it('every documented family is served with its type and label names', () => {
    const problems: string[] = [];
    for (const doc of documentedFamilies()) {
      const family = scraped.get(doc.name);
      if (!family) {
        problems.push(`${doc.name}: not served`);
        continue;
      }
      if (family.type !== doc.type) problems.push(`${doc.name}: type ${family.type}, documented ${doc.type}`);
      if (family.help === '') problems.push(`${doc.name}: no HELP`);
      // A QStash family also carries qstash_region, documented once at the top of the page.
      const labels = doc.name.startsWith('upstash_qstash_') ? [...doc.labels, 'qstash_region'] : doc.labels;
      for (const sample of family.samples) {
        const names = Object.keys(sample.labels).sort();
        if (JSON.stringify(names) !== JSON.stringify([...labels].sort())) {
          problems.push(`${doc.name}: labels ${names.join(',')}, documented ${doc.labels.join(',')}`);
          break;
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('no undocumented family of these collectors is served', () => {
    const documented = new Set(documentedFamilies().map((d) => d.name));
    const served = [...scraped.keys()].filter((name) => isInventory(scraped.get(name)));
    expect(served.length).toBeGreaterThan(50);
    expect(served.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('passes promtool check metrics (naming, units, HELP) on these families', (ctx) => {
    if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status !== 0) {
      if (process.env.CI === 'true') throw new Error('promtool is required under CI (apt-get install prometheus)');
      ctx.skip('promtool not installed');
    }
    const familyOf = (line: string): string => (line.startsWith('# ') ? (line.split(' ')[2] ?? '') : line);
    const ours = text
      .split('\n')
      .filter((line) => isInventory(scraped.get(familyOf(line))))
      .join('\n');
    expect(ours).toContain('# TYPE upstash_vector_index_info gauge');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});
