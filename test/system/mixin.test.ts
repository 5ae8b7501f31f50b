// The monitoring mixin renders, with Debian's jsonnet, exactly the shipped rules (deploy/rules),
// the PrometheusRule manifest's groups and the dashboards (dashboards/*.json); its generated JSON
// is in sync with them (npm run deploy:generate); _config changes what it says it changes.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALERT_THRESHOLD_STEPS_FILE, alertThresholdSteps, buildDashboards } from '../../dashboards/src/index.js';
import { MIXIN_GENERATED_DIR, renderMixinFiles } from '../../deploy/kubernetes/generator/mixin.js';
import { PROMETHEUS_RULE_FILE, RULES_FILES } from '../../deploy/kubernetes/generator/prometheus-rule.js';
import { ROOT } from '../support/demo-helpers.js';
import { requireBinaries } from '../support/prometheus.js';

const run = promisify(execFile);
const MIXIN_DIR = join(ROOT, 'mixin');

interface Group {
  name: string;
  rules: {
    record?: string;
    alert?: string;
    expr: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  }[];
}

const shippedGroups = (): Group[] =>
  RULES_FILES.flatMap((file) => (parse(readFileSync(file, 'utf8')) as { groups: Group[] }).groups);

describe('mixin/generated', () => {
  it('holds the shipped rules and dashboards as JSON (regenerate: npm run deploy:generate)', () => {
    for (const { name, text } of renderMixinFiles())
      expect(readFileSync(join(MIXIN_GENERATED_DIR, name), 'utf8'), name).toBe(text);
    expect(readdirSync(MIXIN_GENERATED_DIR).sort()).toEqual(
      [...renderMixinFiles().map((file) => file.name), basename(ALERT_THRESHOLD_STEPS_FILE)].sort(),
    );
  });

  it("says which panel step is which alert's threshold, at the shipped threshold (regenerate: npm run dashboards)", () => {
    const committed = JSON.parse(readFileSync(ALERT_THRESHOLD_STEPS_FILE, 'utf8')) as StepsByAlert;
    expect(committed).toEqual(alertThresholdSteps(buildDashboards()));
    // The panels of the alerts _config.alertThresholds lists by default, among others.
    expect(Object.keys(committed)).toEqual(
      expect.arrayContaining([
        'UpstashDeliveryFailureRatioHigh',
        'UpstashQueueWaitHigh',
        'UpstashLogLagHigh',
        'UpstashQuotaUsageHigh',
        'UpstashQuotaUsageCritical',
      ]),
    );
    // Each step holds the threshold the rules state (the mixin moves both together).
    const ruleThresholds = JSON.parse(
      readFileSync(join(MIXIN_GENERATED_DIR, 'alert-thresholds.json'), 'utf8'),
    ) as Record<string, { value: number }>;
    for (const [alert, steps] of Object.entries(committed))
      for (const step of steps) {
        const dashboard = JSON.parse(readFileSync(join(ROOT, 'dashboards', step.file), 'utf8')) as unknown;
        expect(valueAt(dashboard, step.path), `${alert} ${step.file} ${step.path.join('.')}`).toEqual({
          value: ruleThresholds[alert]?.value,
          color: expect.any(String),
        });
      }
  });
});

type StepsByAlert = Record<string, { file: string; path: (string | number)[] }[]>;

/** The element at a path of keys and array indexes. */
function valueAt(value: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>((inner, key) => (inner as Record<string | number, unknown>)[key], value);
}

const binaries = requireBinaries('mixin: jsonnet, promtool', ['jsonnet', 'promtool']);

describe.skipIf(binaries.skip)(`jsonnet renders the mixin${binaries.needs}`, () => {
  beforeAll(() => binaries.ensure());

  /** `jsonnet -J vendor -e <expr>` in mixin/, as its README says; the parsed output. */
  async function render<T>(expr: string): Promise<T> {
    const { stdout } = await run(binaries.paths.jsonnet!, ['-J', 'vendor', '-e', expr], {
      cwd: MIXIN_DIR,
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(stdout) as T;
  }

  it('prometheusAlerts and prometheusRules are the shipped groups, alerts with the recording rules of their group', async () => {
    const alerts = await render<{ groups: Group[] }>('(import "mixin.libsonnet").prometheusAlerts');
    const rules = await render<{ groups: Group[] }>('(import "mixin.libsonnet").prometheusRules');
    for (const group of alerts.groups)
      expect(
        group.rules.some((rule) => rule.alert !== undefined),
        group.name,
      ).toBe(true);
    for (const group of rules.groups)
      expect(
        group.rules.every((rule) => rule.record !== undefined),
        group.name,
      ).toBe(true);
    const byName = (groups: Group[]): Group[] => [...groups].sort((a, b) => a.name.localeCompare(b.name));
    expect(byName([...alerts.groups, ...rules.groups])).toEqual(byName(shippedGroups()));
    const manifest = parse(readFileSync(PROMETHEUS_RULE_FILE, 'utf8')) as { spec: { groups: Group[] } };
    expect(byName([...alerts.groups, ...rules.groups])).toEqual(byName(manifest.spec.groups));
    expect(alerts.groups.map((group) => group.name)).toContain('upstash-slos.delivery-success.alerts');
  });

  it('grafanaDashboards are dashboards/*.json, by file name', async () => {
    const dashboards = await render<Record<string, unknown>>('(import "mixin.libsonnet").grafanaDashboards');
    const files = readdirSync(join(ROOT, 'dashboards'))
      .filter((name) => name.endsWith('.json'))
      .sort();
    expect(Object.keys(dashboards).sort()).toEqual(files);
    for (const file of files)
      expect(dashboards[file], file).toEqual(JSON.parse(readFileSync(join(ROOT, 'dashboards', file), 'utf8')));
    expect(files).toContain('upstash-slos.json');
  });

  it("grafanaDashboards follow _config.alertThresholds: an alert's panel steps move with it, nothing else does", async () => {
    const overrides = { UpstashQuotaUsageHigh: 0.7, UpstashDeliveryFailureRatioHigh: 0.25, UpstashQueueWaitHigh: 90 };
    const dashboards = await render<Record<string, unknown>>(
      `((import "mixin.libsonnet") + { _config+:: { alertThresholds+: ${JSON.stringify(overrides)} } }).grafanaDashboards`,
    );
    // The shipped dashboards with exactly the mapped steps of the overridden alerts moved.
    const steps = JSON.parse(readFileSync(ALERT_THRESHOLD_STEPS_FILE, 'utf8')) as StepsByAlert;
    const expected: Record<string, unknown> = {};
    for (const file of Object.keys(dashboards))
      expected[file] = JSON.parse(readFileSync(join(ROOT, 'dashboards', file), 'utf8')) as unknown;
    let moved = 0;
    for (const [alert, value] of Object.entries(overrides))
      for (const step of steps[alert]!) {
        const shipped = valueAt(expected[step.file], step.path) as { value: number };
        expect(shipped.value, `${alert} ${step.file}`).not.toBe(value);
        shipped.value = value;
        moved++;
      }
    expect(moved).toBeGreaterThanOrEqual(3);
    expect(dashboards).toEqual(expected);
    // For instance the overview's quota gauge: orange from 70%, red still from 95%.
    const quota = steps.UpstashQuotaUsageHigh!.find((step) => step.file === 'upstash-overview.json')!;
    expect(valueAt(dashboards['upstash-overview.json'], quota.path.slice(0, -1))).toEqual([
      { value: null, color: 'green' },
      { value: 0.7, color: 'orange' },
      { value: 0.95, color: 'red' },
    ]);
  });

  it('_config sets the job selector, runbook base, SLO objectives and burn rates', async () => {
    const config =
      '{ jobSelector: "job=\\"qstash\\"", runbookUrlBase: "https://runbooks.example/", sloObjectives: { "delivery-success": 99.5 }, sloBurnRates: { page: [10, 5], ticket: [2, 1] } }';
    const mixin = `(import "mixin.libsonnet") + { _config+:: ${config} }`;
    const groups = [
      ...(await render<{ groups: Group[] }>(`(${mixin}).prometheusAlerts`)).groups,
      ...(await render<{ groups: Group[] }>(`(${mixin}).prometheusRules`)).groups,
    ];
    const rules = groups.flatMap((group) => group.rules);
    const all = JSON.stringify(groups);
    expect(all).not.toContain('job=\\"upstash-exporter\\"');
    expect(rules.find((rule) => rule.alert === 'UpstashExporterDown')?.expr).toBe('up{job="qstash"} == 0');
    expect(rules.find((rule) => rule.alert === 'UpstashExporterDown')?.annotations?.runbook_url).toBe(
      'https://runbooks.example/runbooks.md#upstashexporterdown',
    );
    const delivery = rules.filter((rule) => rule.labels?.sloth_slo === 'delivery-success');
    expect(delivery.find((rule) => rule.record === 'slo:objective:ratio')?.expr).toBe('vector(0.995)');
    expect(
      Number(/vector\((.*)\)/.exec(delivery.find((rule) => rule.record === 'slo:error_budget:ratio')!.expr)![1]),
    ).toBeCloseTo(0.005, 12);
    const latency = rules.filter((rule) => rule.labels?.sloth_slo === 'delivery-latency');
    expect(latency.find((rule) => rule.record === 'slo:objective:ratio')?.expr).toBe('vector(0.99)');
    const page = rules.find(
      (rule) => rule.alert === 'UpstashSloDeliverySuccessBudgetBurn' && rule.labels?.sloth_severity === 'page',
    )!;
    expect(page.expr.match(/\((\d+(?:\.\d+)?) \* slo:error_budget:ratio/g)).toEqual([
      '(10 * slo:error_budget:ratio',
      '(10 * slo:error_budget:ratio',
      '(5 * slo:error_budget:ratio',
      '(5 * slo:error_budget:ratio',
    ]);
  });

  it('_config overrides follow into the rendered rules: exact job, thresholds, probe queue, poll intervals, objectives in expr and text; promtool accepts them', async () => {
    // The defaults: the exact job the shipped scrape configs name, never a regex.
    const defaults = (await render<{ groups: Group[] }>('(import "mixin.libsonnet").prometheusAlerts')).groups.flatMap(
      (group) => group.rules,
    );
    expect(defaults.find((rule) => rule.alert === 'UpstashExporterDown')?.expr).toBe('up{job="upstash-exporter"} == 0');
    expect(JSON.stringify(defaults)).not.toMatch(/job=~/);

    const config = `{
      jobSelector: 'job="qstash-prod"',
      probeQueue: 'canary',
      pollIntervals+: { probe: 120, schedules: 30 },
      alertThresholds+: { UpstashDeliveryFailureRatioHigh: 0.25, UpstashQueueWaitHigh: 90, UpstashProbeSlow: 4.5 },
      sloObjectives: { 'delivery-success': 99, 'exporter-freshness': 99.95 },
      sloBurnRates: { page: [10, 5], ticket: [2, 1] },
    }`;
    const mixin = `(import "mixin.libsonnet") + { _config+:: ${config} }`;
    const rendered = await render<{ alerts: { groups: Group[] }; rules: { groups: Group[] } }>(
      `local m = ${mixin}; { alerts: m.prometheusAlerts, rules: m.prometheusRules }`,
    );
    const rules = [...rendered.alerts.groups, ...rendered.rules.groups].flatMap((group) => group.rules);
    const alert = (name: string, severity?: string): Group['rules'][number] =>
      rules.find(
        (rule) => rule.alert === name && (severity === undefined || rule.labels?.sloth_severity === severity),
      )!;

    // Selector: every up{} reads the new job, in the expression and the text.
    expect(alert('UpstashExporterDown').expr).toBe('up{job="qstash-prod"} == 0');
    expect(alert('UpstashExporterAbsent').annotations?.description).toContain('up{job="qstash-prod"}');
    expect(JSON.stringify(rules)).not.toContain('upstash-exporter\\"}');

    // Thresholds: the literal is replaced where the alert compares, nowhere else; the text follows.
    const ratio = alert('UpstashDeliveryFailureRatioHigh');
    expect(ratio.expr).toMatch(/^upstash_qstash_destination:delivery_failure_ratio:rate5m > 0\.25\n/);
    expect(ratio.expr).toContain('* 300 >= 10');
    expect(ratio.annotations?.description).toContain('threshold 25%');
    expect(alert('UpstashQueueWaitHigh').expr).toMatch(/ > 90$/);
    expect(alert('UpstashQueueWaitHigh').annotations?.description).toContain('threshold 90 s');
    expect(alert('UpstashProbeSlow').expr).toContain('[15m]) > 4.5\n');
    expect(alert('UpstashProbeSlow').annotations?.description).toContain('threshold 4.5 s');
    // Poll intervals: ten probe intervals without a probe, five schedules polls past a due run.
    expect(alert('UpstashProbeFailing').expr).toContain('upstash_probe_last_success_timestamp_seconds > 1200\n');
    expect(alert('UpstashProbeFailing').annotations?.description).toContain('threshold 1200 s');
    expect(alert('UpstashScheduleMissedRun').expr).toContain(
      'upstash_qstash_schedule_next_run_timestamp_seconds > 150\n',
    );

    // The probe queue left out of the delivery SLIs is the configured one.
    const sli = rules.filter(
      (rule) => rule.record === 'slo:sli_error:ratio_rate5m' && rule.labels?.sloth_slo === 'delivery-success',
    );
    expect(sli[0]!.expr).toContain('queue!="canary"');
    // And out of the per-route alerts on delivery failures, backlog and wait, and the
    // per-destination ratios they read.
    for (const name of [
      'UpstashDeliveryFailureRatioHigh',
      'UpstashMessagesFailed',
      'UpstashQueueBacklogGrowing',
      'UpstashQueueWaitHigh',
    ])
      expect(alert(name).expr, name).toContain('queue!="canary"');
    for (const ratio of ['delivery_failure_ratio', 'delivery_error_ratio'])
      for (const window of ['rate5m', 'rate1h'])
        expect(rules.find((rule) => rule.record === `upstash_qstash_destination:${ratio}:${window}`)!.expr).toContain(
          'queue!="canary"',
        );
    expect(JSON.stringify(rules)).not.toContain('upstash-exporter-probe');

    // Objectives: short decimals in the expressions (99 / 100 is 0.98999999999999999 as a double),
    // the overridden objective and burn rates in the alert text.
    const meta = (slo: string, record: string): string =>
      rules.find((rule) => rule.record === record && rule.labels?.sloth_slo === slo)!.expr;
    expect(meta('delivery-success', 'slo:objective:ratio')).toBe('vector(0.99)');
    expect(meta('delivery-success', 'slo:error_budget:ratio')).toBe('vector(0.01)');
    expect(meta('exporter-freshness', 'slo:objective:ratio')).toBe('vector(0.9995)');
    expect(meta('exporter-freshness', 'slo:error_budget:ratio')).toBe('vector(0.0005)');
    expect(meta('workflow-run-success', 'slo:objective:ratio')).toBe('vector(0.99)');
    const page = alert('UpstashSloDeliverySuccessBudgetBurn', 'page').annotations!.description!;
    expect(page).toContain('(objective 99% over 30d; page at 10x over 1h and 5m, or 5x over 6h and 30m;');
    expect(page).not.toContain('99.9%');
    expect(alert('UpstashSloDeliverySuccessBudgetBurn', 'ticket').annotations!.description).toContain(
      '(objective 99% over 30d; ticket at 2x over 1d and 2h, or 1x over 3d and 6h;',
    );
    expect(alert('UpstashSloExporterFreshnessBudgetBurn', 'page').annotations!.description).toContain(
      'objective 99.95% ',
    );
    expect(alert('UpstashSloDeliveryLatencyBudgetBurn', 'page').annotations!.description).toContain('objective 99% ');

    // promtool reads the rendered groups (JSON is YAML).
    const dir = mkdtempSync(join(tmpdir(), 'upstash-mixin-'));
    try {
      const file = join(dir, 'rendered.rules.json');
      writeFileSync(file, JSON.stringify({ groups: [...rendered.alerts.groups, ...rendered.rules.groups] }));
      const { stdout } = await run(binaries.paths.promtool!, ['check', 'rules', file], { timeout: 60_000 });
      expect(stdout).toContain('SUCCESS');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
