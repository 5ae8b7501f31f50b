// The monitoring mixin renders, with Debian's jsonnet, exactly the shipped rules (deploy/rules),
// the PrometheusRule manifest's groups and the dashboards (dashboards/*.json); its generated JSON
// is in sync with them (npm run deploy:generate); _config changes what it says it changes.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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
      renderMixinFiles()
        .map((file) => file.name)
        .sort(),
    );
  });
});

const binaries = requireBinaries('mixin: jsonnet', ['jsonnet']);

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
    expect(all).not.toContain('job=~\\"upstash.*\\"');
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
});
