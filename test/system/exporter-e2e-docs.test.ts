// docs/metrics.md stays honest for the schedules, account, search and vector sections: every
// family its tables list is served by the real exporter (against the emulator) with the
// documented type and label names, and the exporter serves no family of these collectors that
// the page does not list.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectorValue, eventually, startStack, type Family, type Stack } from '../support/exporter-e2e-helpers.js';
import { documentedFamilies, INVENTORY_SECTIONS } from '../support/exporter-e2e-docs.js';

/** Name prefixes of the families the inventory collectors own. */
const INVENTORY_PREFIXES = [
  'upstash_qstash_schedule',
  'upstash_qstash_queue',
  'upstash_qstash_global_parallelism_',
  'upstash_qstash_url_group',
  'upstash_qstash_dlq_',
  'upstash_qstash_flow_control_',
  'upstash_qstash_account_',
  'upstash_qstash_plan_',
  'upstash_qstash_usage_',
  'upstash_search_',
  'upstash_vector_',
];

let stack: Stack;
let scraped: Map<string, Family>;
let text: string;

beforeAll(async () => {
  stack = await startStack();
  await eventually(async () => {
    const families = await stack.scrape();
    return ['schedules', 'queues', 'url_groups', 'dlq', 'flow_control', 'account', 'search', 'vector', 'usage']
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
  it('the parser finds every section and a plausible number of families', () => {
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
    const served = [...scraped.keys()].filter((name) => INVENTORY_PREFIXES.some((prefix) => name.startsWith(prefix)));
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
      .filter((line) => INVENTORY_PREFIXES.some((prefix) => familyOf(line).startsWith(prefix)))
      .join('\n');
    expect(ours).toContain('# TYPE upstash_vector_index_info gauge');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});
