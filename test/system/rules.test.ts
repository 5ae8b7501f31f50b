// The Prometheus rules: promtool accepts them and their unit tests pass, every dashboard query
// passes Prometheus' own parser, and the alerts follow the project's conventions (names,
// severities, annotations, runbook sections, a firing and a quiet unit test each).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { dashboardExpressions, loadRuleGroups, RULES_FILE } from '../../dashboards/src/expressions.js';
import { loadConfig } from '../../src/config/index.js';
import { requireBinaries } from '../support/prometheus.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RULE_TESTS = [
  join(ROOT, 'deploy', 'rules', 'upstash-exporter.rules.test.yml'),
  join(ROOT, 'deploy', 'rules', 'upstash-exporter-daily-reset.rules.test.yml'),
];
const RUNBOOKS = join(ROOT, 'docs', 'runbooks.md');
const RUNBOOK_BASE = 'https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/runbooks.md';
/** Exact: `job=~"upstash.*"` also matched other Upstash jobs (a Redis exporter). The shipped scrape configs' job name. */
const JOB_SELECTOR = 'job="upstash-exporter"';

const groups = loadRuleGroups();
const rules = groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule) => rule.alert !== undefined);
const records = rules.filter((rule) => rule.record !== undefined);

// ---------------------------------------------------------------------------------------------
// promtool
// ---------------------------------------------------------------------------------------------

const run = promisify(execFile);

const binaries = requireBinaries('rules: promtool', ['promtool']);
const PROMTOOL = binaries.paths.promtool;

/**
 * promtool's unit tests take about 10 s on two idle cores (the alert tests walk hours of series
 * at a 1 m step); under a loaded CI machine they took over 20 s, which killed them half way.
 */
const PROMTOOL_TIMEOUT_MS = 120_000;

/** Exit code and combined output; promtool reports both on stdout and stderr. */
async function promtool(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL!, args, { cwd: ROOT, timeout: PROMTOOL_TIMEOUT_MS });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      output: `${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    };
  }
}

describe.skipIf(binaries.skip)(`promtool${binaries.needs}`, () => {
  let scratch = '';
  beforeAll(() => {
    binaries.ensure();
    scratch = mkdtempSync(join(tmpdir(), 'upstash-rules-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('checks the rules file without errors or warnings', async () => {
    const { code, output } = await promtool(['check', 'rules', RULES_FILE]);
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(output.toLowerCase()).not.toContain('warning');
    expect(code).toBe(0);
  });

  it(
    'passes the rules unit tests',
    async () => {
      const { code, output } = await promtool(['test', 'rules', ...RULE_TESTS]);
      expect(output.match(/SUCCESS/g)).toHaveLength(RULE_TESTS.length);
      expect(code).toBe(0);
    },
    PROMTOOL_TIMEOUT_MS + 10_000,
  );

  it('fails a unit test whose expectation is wrong (the harness can fail)', async () => {
    const file = join(scratch, 'wrong.test.yml');
    writeFileSync(
      file,
      stringify({
        rule_files: [RULES_FILE],
        tests: [
          {
            interval: '1m',
            input_series: [{ series: 'up{job="upstash",instance="a:9400"}', values: '1x20' }],
            alert_rule_test: [
              {
                eval_time: '10m',
                alertname: 'UpstashExporterDown',
                exp_alerts: [{ exp_labels: { severity: 'critical' } }],
              },
            ],
          },
        ],
      }),
    );
    const { code, output } = await promtool(['test', 'rules', file]);
    expect(output).toContain('FAILED');
    expect(code).not.toBe(0);
  });

  it('accepts every dashboard query with the Prometheus parser (type checks included)', async () => {
    const queries = dashboardExpressions();
    const file = join(scratch, 'dashboard-queries.yml');
    writeFileSync(
      file,
      stringify({
        groups: [
          {
            name: 'dashboard-queries',
            rules: queries.map((q, i) => ({ record: `dashboard_query:check:${i}`, expr: q.query })),
          },
        ],
      }),
    );
    const { code, output } = await promtool(['check', 'rules', file]);
    expect(output).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(code).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Conventions
// ---------------------------------------------------------------------------------------------

const UnitTestsSchema = z.object({
  rule_files: z.array(z.string()),
  tests: z.array(
    z.object({
      name: z.string(),
      alert_rule_test: z.array(z.object({ alertname: z.string(), exp_alerts: z.array(z.unknown()) })).optional(),
      promql_expr_test: z.array(z.object({ expr: z.string() })).optional(),
    }),
  ),
});

/** The test groups of every unit test file. */
function unitTestGroups(): z.infer<typeof UnitTestsSchema>['tests'] {
  return RULE_TESTS.flatMap((file) => UnitTestsSchema.parse(parse(readFileSync(file, 'utf8'))).tests);
}

/** Runbook sections by anchor (GitHub's slug of a `## Heading`: lower case, spaces to dashes). */
function runbookSections(): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = readFileSync(RUNBOOKS, 'utf8').split(/^## /m).slice(1);
  for (const part of parts) {
    const heading = part.slice(0, part.indexOf('\n')).trim();
    sections.set(
      heading
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
      part,
    );
  }
  return sections;
}

describe('alerts', () => {
  it('are the expected set', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual(
      [
        'UpstashExporterDown',
        'UpstashExporterAbsent',
        'UpstashCollectorFailing',
        'UpstashCollectorDataStale',
        'UpstashLogLagHigh',
        'UpstashLogGapsDetected',
        'UpstashExporterCheckpointFailing',
        'UpstashLogEventRateNearCeiling',
        'UpstashExporterClockSkew',
        'UpstashRemediationWebhookUnauthorized',
        'UpstashDeliveryFailureRatioHigh',
        'UpstashMessagesFailed',
        'UpstashScheduleMissedRun',
        'UpstashScheduleLastRunFailed',
        'UpstashScheduleRunsFailing',
        'UpstashQuotaUsageHigh',
        'UpstashQuotaUsageCritical',
        'UpstashDailyRequestQuotaRunningOut',
        'UpstashDailyRequestHardLimitNear',
        'UpstashDailyRequestSoftLimitReached',
        'UpstashVectorIndexFillingUp',
        'UpstashQueueBacklogGrowing',
        'UpstashQueuePausedLong',
        'UpstashDlqGrowing',
        'UpstashDlqNearLimit',
        'UpstashFlowControlWaitlistGrowing',
        'UpstashParallelismSaturated',
        'UpstashWorkflowFailureRatioHigh',
        'UpstashWorkflowRunsStuck',
        'UpstashQueueWaitHigh',
        'UpstashProbeFailing',
        'UpstashProbeSlow',
      ].sort(),
    );
  });

  it('have a CamelCase Upstash name, a severity, and summary, description and runbook_url', () => {
    for (const alert of alerts) {
      const name = alert.alert ?? '';
      expect(name).toMatch(/^Upstash(?:[A-Z][a-z0-9]*)+$/);
      expect(['critical', 'warning', 'info'], name).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary, name).toBeTruthy();
      // absent() yields no labels to name: the one alert whose description cannot template any.
      if (name !== 'UpstashExporterAbsent')
        expect(alert.annotations?.description, name).toMatch(/\{\{ \$labels\.\w+ \}\}|\{\{ \$value/);
      expect(alert.annotations?.runbook_url, name).toBe(`${RUNBOOK_BASE}#${name.toLowerCase()}`);
    }
  });

  it('each have a runbook section with meaning, impact, diagnosis and mitigation, and no section is orphaned', () => {
    const sections = runbookSections();
    for (const alert of alerts) {
      const section = sections.get((alert.alert ?? '').toLowerCase());
      expect(section, alert.alert).toBeDefined();
      for (const part of ['**Meaning.**', '**Impact.**', '**Diagnosis.**', '**Mitigation.**'])
        expect(section, `${alert.alert} ${part}`).toContain(part);
    }
    expect([...sections.keys()].sort()).toEqual(alerts.map((a) => (a.alert ?? '').toLowerCase()).sort());
  });

  it('each have a firing and a quiet unit test', () => {
    const cases = unitTestGroups().flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of alerts) {
      const own = cases.filter((c) => c.alertname === alert.alert);
      expect(
        own.some((c) => c.exp_alerts.length > 0),
        `${alert.alert} firing`,
      ).toBe(true);
      expect(
        own.some((c) => c.exp_alerts.length === 0),
        `${alert.alert} quiet`,
      ).toBe(true);
    }
  });

  it('name the QStash region in their summary, except those about the exporter as a whole or an account-scoped product', () => {
    // The scrape, the one state file, the one remediation webhook and vector indexes have no region.
    const regionless = [
      'UpstashExporterDown',
      'UpstashExporterAbsent',
      'UpstashExporterCheckpointFailing',
      'UpstashRemediationWebhookUnauthorized',
      'UpstashVectorIndexFillingUp',
    ];
    for (const alert of alerts.filter((a) => !regionless.includes(a.alert ?? '')))
      expect(alert.annotations?.summary, alert.alert).toContain('$labels.qstash_region');
  });

  it('select the exporter job only where they must (up), with the documented selector', () => {
    const onUp = alerts.filter((a) => /\bup\{/.test(a.expr));
    expect(onUp.map((a) => a.alert).sort()).toEqual(['UpstashExporterAbsent', 'UpstashExporterDown']);
    for (const alert of onUp) expect(alert.expr).toContain(JOB_SELECTOR);
    for (const rule of [...alerts, ...records]) expect(rule.expr, rule.alert ?? rule.record).not.toMatch(/\bup\{job=~/);
    expect(readFileSync(join(ROOT, 'docs', 'alerts.md'), 'utf8')).toContain(JOB_SELECTOR);
  });

  it("leave the canary probe's queue out of the per-route delivery, backlog and wait alerts, with the matcher the mixin rewrites", () => {
    // The exporter's default --probe-queue, spelt as mixin/lib/rules.libsonnet's `shipped.probeQueue`
    // finds it: another spelling would not follow _config.probeQueue.
    const matcher = `queue!="${loadConfig([], { QSTASH_TOKEN: 'example-token' }).probe.queue}"`;
    const withQueueExclusion = rules.filter((rule) => /\bqueue\s*!=/.test(rule.expr));
    for (const rule of withQueueExclusion)
      for (const found of rule.expr.matchAll(/\bqueue\s*!=\s*"[^"]*"/g))
        expect(found[0], rule.alert ?? rule.record).toBe(matcher);
    expect(withQueueExclusion.map((rule) => rule.alert ?? rule.record).sort()).toEqual([
      'UpstashDeliveryFailureRatioHigh',
      'UpstashMessagesFailed',
      'UpstashQueueBacklogGrowing',
      'UpstashQueueWaitHigh',
      'upstash_qstash_destination:delivery_error_ratio:rate1h',
      'upstash_qstash_destination:delivery_error_ratio:rate5m',
      'upstash_qstash_destination:delivery_failure_ratio:rate1h',
      'upstash_qstash_destination:delivery_failure_ratio:rate5m',
    ]);
    expect(readFileSync(join(ROOT, 'mixin', 'lib', 'rules.libsonnet'), 'utf8')).toContain(`probeQueue: '${matcher}'`);
  });
});

describe('recording rules', () => {
  it('are named level:metric[:operations] in the upstash namespace', () => {
    for (const rule of records) expect(rule.record).toMatch(/^upstash[a-z_]*:[a-z0-9_]+(?::[a-z0-9_]+)?$/);
  });

  it('each name a level that docs/alerts.md lists with the labels it keeps', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'alerts.md'), 'utf8');
    const levels = new Set([...doc.matchAll(/^\| `(upstash[a-z_]*)` \|/gm)].map((m) => m[1]!));
    for (const rule of records) expect(levels, rule.record).toContain(rule.record!.split(':')[0]);
  });

  it('apply rate() and increase() to counters only, and histogram_quantile() to buckets summed by le', () => {
    for (const rule of rules) {
      const name = rule.record ?? rule.alert;
      for (const [, series] of rule.expr.matchAll(/\b(?:rate|irate|increase)\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/g))
        expect(series, name).toMatch(/_(?:total|count|sum|bucket)$/);
      for (const [call] of rule.expr.matchAll(/histogram_quantile\([^,]+,\s*[a-z_]+/g))
        expect(call, name).toMatch(/,\s*sum$/);
      if (rule.expr.includes('histogram_quantile')) expect(rule.expr, name).toMatch(/sum by \([^)]*\ble\b[^)]*\)/);
    }
  });

  it('each have an expression test', () => {
    const tested = unitTestGroups()
      .flatMap((t) => (t.promql_expr_test ?? []).map((e) => e.expr))
      .join('\n');
    for (const rule of records) expect(tested, rule.record).toContain(rule.record ?? '');
  });

  it('keep qstash_region wherever they match or aggregate region-scoped series by instance', () => {
    // Region-scoped: every QStash and workflow series, the logs and collector self metrics. The
    // freshness rule also reads up{}, which has no region; its two-region unit test covers it.
    const regionScoped = /upstash_qstash|upstash_workflow|upstash:quota_usage|upstash_exporter_(?:log|collector)_/;
    const checked = rules.filter(
      (r) => regionScoped.test(r.expr) && r.record !== 'upstash_exporter:log_freshness:bool',
    );
    expect(checked.length).toBeGreaterThan(40);
    for (const rule of checked)
      for (const [clause, labels] of rule.expr.matchAll(/\b(?:on|by|ignoring|without)\s*\(([^)]*)\)/g))
        if (/\binstance\b/.test(labels ?? ''))
          expect(labels, `${rule.record ?? rule.alert}: ${clause}`).toContain('qstash_region');
  });

  it('come before the alerts of their group, so alerts read values of the same evaluation', () => {
    for (const group of groups) {
      const firstAlert = group.rules.findIndex((r) => r.alert !== undefined);
      if (firstAlert === -1) continue;
      expect(
        group.rules.slice(firstAlert).filter((r) => r.record !== undefined),
        group.name,
      ).toEqual([]);
    }
  });

  it('leave the poll intervals to the exporter: the staleness alert reads its gauge, no rule holds a constant interval', () => {
    const stale = alerts.find((a) => a.alert === 'UpstashCollectorDataStale')!;
    expect(stale.expr).toContain('3 * upstash_exporter_collector_poll_interval_seconds');
    for (const rule of rules) expect(rule.expr, rule.record ?? rule.alert).not.toMatch(/^vector\(\d+\)$/);
  });
});
