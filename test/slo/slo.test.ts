// The SLO kit: the shipped SLO rules are what the generator makes of the default spec (drift
// test), promtool accepts them and their unit tests pass (pages, tickets, silence, no traffic,
// a new exporter's first failure, an exporter outage), the burn-rate factors are the workbook's,
// the spec is read strictly through the CLI (one line, exit 2), and every SLO alert has its
// runbook section in docs/slos.md.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadRuleGroups, SLO_RULES_FILE } from '../../dashboards/src/expressions.js';
import {
  BURN_WINDOWS,
  burnFactor,
  generateRuleGroups,
  renderRulesFile,
  requiredHistorySeconds,
  SLI_WINDOWS,
} from '../../src/slo/rules.js';
import { loadSloSpec, parseSloSpec } from '../../src/slo/spec.js';
import { CLI, ROOT } from '../support/demo-helpers.js';
import { requireBinaries } from '../support/prometheus.js';

const run = promisify(execFile);
const SPEC = 'deploy/slo/upstash-slos.yaml';
const RULE_TESTS = join(ROOT, 'deploy', 'rules', 'upstash-slos.rules.test.yml');
const SLO_DOC = join(ROOT, 'docs', 'slos.md');

const spec = loadSloSpec(join(ROOT, SPEC));
const groups = loadRuleGroups(SLO_RULES_FILE);
const alerts = groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined);

/** Exit code and combined output of a command (never throws on a non-zero exit). */
async function command(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: ROOT, timeout: 150_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

describe('the generator', () => {
  it('made the shipped deploy/rules/upstash-slos.rules.yml from the default spec (regenerate: npm run generate)', () => {
    expect(readFileSync(SLO_RULES_FILE, 'utf8')).toBe(renderRulesFile(spec, { source: SPEC }));
  });

  it("uses the workbook's burn-rate factors for 30 days, and scales them with the period", () => {
    expect(BURN_WINDOWS.map((window) => burnFactor(window, '30d'))).toEqual([14.4, 6, 3, 1]);
    expect(BURN_WINDOWS.map((window) => [window.severity, window.long, window.short])).toEqual([
      ['page', '1h', '5m'],
      ['page', '6h', '30m'],
      ['ticket', '1d', '2h'],
      ['ticket', '3d', '6h'],
    ]);
    expect(BURN_WINDOWS.map((window) => burnFactor(window, '28d'))).toEqual([13.44, 5.6, 2.8, 0.933333333333]);
  });

  it('records the error ratio over every window, and objective, budget and budget left per SLO', () => {
    for (const slo of spec.slos) {
      const records = groups
        .filter((group) => group.name.startsWith(`upstash-slos.${slo.name}.`))
        .flatMap((group) => group.rules);
      const windows = records
        .filter((rule) => rule.record?.startsWith('slo:sli_error:ratio_rate'))
        .map((rule) => rule.labels?.sloth_window);
      expect(windows).toEqual([...SLI_WINDOWS, '30d']);
      const objective = records.find((rule) => rule.record === 'slo:objective:ratio');
      expect(objective?.expr).toBe(`vector(${Number((slo.objective / 100).toPrecision(12))})`);
      expect(records.map((rule) => rule.record)).toContain('slo:period_error_budget_remaining:ratio');
      expect(records.filter((rule) => rule.alert !== undefined).map((rule) => rule.labels?.sloth_severity)).toEqual([
        'page',
        'ticket',
      ]);
    }
  });

  it('guards events ratios against no traffic (no 0/0) and alerts against a single bad event', () => {
    const delivery = generateRuleGroups(spec).flatMap((group) => group.rules);
    const ratio = delivery.find((rule) => rule.record === 'slo:sli_error:ratio_rate1h')!;
    expect(ratio.expr).toMatch(/\) > 0\)\s*$/);
    const page = delivery.find((rule) => rule.alert !== undefined)!;
    expect(page.expr).toContain('[1h]))) * 3600 > 1.5');
  });

  it('pages and tickets only once the long window holds history: half of it, at most an hour', () => {
    expect(BURN_WINDOWS.map((window) => requiredHistorySeconds(window) / 60)).toEqual([30, 60, 60, 60]);
    const rules = generateRuleGroups(spec).flatMap((group) => group.rules);
    for (const alert of rules.filter((rule) => rule.alert !== undefined)) {
      const guards = [...alert.expr.matchAll(/count_over_time\([^[]+\[(\w+)\]\)\)\n {2}>= (\d+) \* /g)].map((m) => [
        m[1],
        Number(m[2]),
      ]);
      expect(guards, alert.alert).toEqual(
        alert.labels?.sloth_severity === 'page'
          ? [
              ['1h', 6],
              ['6h', 12],
            ]
          : [
              ['1d', 12],
              ['3d', 12],
            ],
      );
    }
  });

  it("leaves out a disabled ticket alert and keeps the spec's labels on every series", () => {
    const custom = parseSloSpec(
      {
        version: 'prometheus/v1',
        service: 'svc',
        labels: { team: 'payments' },
        slos: [
          {
            name: 'one',
            objective: 99,
            sli: { events: { error_query: 'sum(rate(bad[{{.window}}]))', total_query: 'sum(rate(all[{{.window}}]))' } },
            alerting: { name: 'SvcOne', ticket_alert: { disable: true } },
          },
        ],
      },
      'inline',
    );
    const rules = generateRuleGroups(custom).flatMap((group) => group.rules);
    expect(rules.filter((rule) => rule.alert !== undefined).map((rule) => rule.labels?.sloth_severity)).toEqual([
      'page',
    ]);
    for (const rule of rules.filter((r) => r.record !== undefined))
      expect(rule.labels?.team, rule.record).toBe('payments');
    expect(rules.find((rule) => rule.alert !== undefined)!.expr).toContain(
      'ignoring (sloth_id, sloth_service, sloth_slo, team)',
    );
  });
});

describe('the SLO spec, read strictly', () => {
  const base = (): Record<string, unknown> => parse(readFileSync(join(ROOT, SPEC), 'utf8')) as Record<string, unknown>;
  const cases: [string, (value: Record<string, unknown>) => void, RegExp][] = [
    ['an unknown key', (value) => (value.window = '30d'), /^SLO spec inline: window: unknown key$/],
    [
      'an objective of 100',
      (value) => ((value.slos as Record<string, unknown>[])[0]!.objective = 100),
      /slos\[0\]\.objective: must be below 100/,
    ],
    [
      'a query without {{.window}}',
      (value) =>
        (((value.slos as Record<string, unknown>[])[1]!.sli as { events: { total_query: string } }).events.total_query =
          'sum(x)'),
      /slos\[1\]\.sli\.events\.total_query: must use \{\{\.window\}\}/,
    ],
    ['another version', (value) => (value.version = 'openslo/v1'), /version: /],
  ];
  for (const [what, change, message] of cases) {
    it(`refuses ${what}, naming the key`, () => {
      const value = base();
      change(value);
      expect(() => parseSloSpec(value, 'inline')).toThrow(message);
    });
  }
});

describe('upstash-exporter slo (the CLI; needs npm run build)', () => {
  let scratch = '';
  beforeAll(() => (scratch = mkdtempSync(join(tmpdir(), 'upstash-slo-'))));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('prints the rules of a spec, the same as the shipped file', async () => {
    const result = await command(process.execPath, [CLI, 'slo', '--spec', SPEC]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(SLO_RULES_FILE, 'utf8'));
  });

  it('exits 2 with one line naming the key of an invalid spec, no stack trace', async () => {
    const file = join(scratch, 'bad.yaml');
    const value = parse(readFileSync(join(ROOT, SPEC), 'utf8')) as { slos: { objective: unknown }[] };
    value.slos[2]!.objective = '99';
    writeFileSync(file, stringify(value));
    const result = await command(process.execPath, [CLI, 'slo', '--spec', file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^SLO spec .*bad\.yaml: slos\[2\]\.objective: /);
  });

  it('exits 2 without --spec, on an unknown flag and on a period under a day', async () => {
    for (const args of [[], ['--spec', SPEC, '--window', '30d'], ['--spec', SPEC, '--period', '6h']]) {
      const result = await command(process.execPath, [CLI, 'slo', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});

const binaries = requireBinaries('slo: promtool', ['promtool']);

describe.skipIf(binaries.skip)(`promtool on the SLO rules${binaries.needs}`, () => {
  beforeAll(() => binaries.ensure());

  it('checks the SLO rules without errors or warnings', async () => {
    const { code, stdout, stderr } = await command(binaries.paths.promtool!, ['check', 'rules', SLO_RULES_FILE]);
    const rules = groups.reduce((n, group) => n + group.rules.length, 0);
    expect(stdout + stderr).toContain(`SUCCESS: ${rules} rules found`);
    expect((stdout + stderr).toLowerCase()).not.toContain('warning');
    expect(code).toBe(0);
  });

  // About 20 s of CPU (40 s on a loaded machine): 19 cases of up to 130 minutes at a 1 m step.
  it(
    'passes the SLO unit tests: pages, tickets, silence, no traffic, first failure, exporter outage',
    { timeout: 160_000 },
    async () => {
      const { code, stdout, stderr } = await command(binaries.paths.promtool!, ['test', 'rules', RULE_TESTS]);
      expect(stdout + stderr).toContain('SUCCESS');
      expect(code).toBe(0);
    },
  );

  it('has a test case per SLO at 20x (page, not in the first minutes), 5x (ticket) and half (nothing) its budget, and a burst in a fresh Prometheus that pages nothing', () => {
    const names = (parse(readFileSync(RULE_TESTS, 'utf8')) as { tests: { name: string }[] }).tests.map(
      (test) => test.name,
    );
    for (const slo of spec.slos.filter((s) => s.sli.events !== undefined)) {
      expect(names.filter((name) => name.startsWith(`${slo.name} `)).length, slo.name).toBeGreaterThanOrEqual(3);
      expect(
        names.some(
          (name) => name.startsWith(slo.name) && /pages within 40 minutes, not in the first minutes/.test(name),
        ),
        slo.name,
      ).toBe(true);
      expect(
        names.some((name) => name.startsWith(slo.name) && /opens a ticket, no page/.test(name)),
        slo.name,
      ).toBe(true);
      expect(
        names.some((name) => name.startsWith(slo.name) && /fires nothing/.test(name)),
        slo.name,
      ).toBe(true);
    }
    expect(names).toContain('exporter-freshness outage fires the freshness SLO, not the delivery ones');
    expect(names).toContain('delivery-success a burst of failures in a fresh Prometheus pages nothing');
    expect(names).toContain('delivery-success two regions: only the failing region pages');
  });
});

describe('SLO alerts', () => {
  it('have a CamelCase UpstashSlo name, critical (page) or warning (ticket), and a runbook section in docs/slos.md', () => {
    const doc = readFileSync(SLO_DOC, 'utf8');
    const sections = new Map(
      doc
        .split(/^### /m)
        .slice(1)
        .map((part) => [part.slice(0, part.indexOf('\n')).trim().toLowerCase(), part]),
    );
    for (const alert of alerts) {
      const name = alert.alert ?? '';
      expect(name).toMatch(/^UpstashSlo(?:[A-Z][a-z0-9]*)+BudgetBurn$/);
      expect(alert.labels?.severity, name).toBe(alert.labels?.sloth_severity === 'page' ? 'critical' : 'warning');
      expect(alert.annotations?.runbook_url, name).toBe(
        `https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/slos.md#${name.toLowerCase()}`,
      );
      const section = sections.get(name.toLowerCase());
      expect(section, name).toBeDefined();
      for (const part of ['**Meaning.**', '**Impact.**', '**Diagnosis.**', '**Mitigation.**'])
        expect(section, `${name} ${part}`).toContain(part);
    }
  });
});
