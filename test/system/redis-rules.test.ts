// The Redis rules (deploy/rules/upstash-redis.rules.yml): promtool accepts them and their unit
// tests pass (every alert fires in one case and stays quiet in another), every alert has a
// runbook section in docs/runbooks-redis.md, and the shipped copies (PrometheusRule manifest,
// mixin) hold them.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { requireBinaries } from '../support/prometheus.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RULES = join(ROOT, 'deploy', 'rules', 'upstash-redis.rules.yml');
const RULE_TESTS = join(ROOT, 'deploy', 'rules', 'upstash-redis.rules.test.yml');
const run = promisify(execFile);
const binaries = requireBinaries('redis rules: promtool', ['promtool']);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const alerts = rules.filter((rule) => rule.alert !== undefined);

describe('Redis rules', () => {
  it.skipIf(binaries.skip)('pass promtool check rules and promtool test rules', async () => {
    binaries.ensure();
    const check = await run(binaries.paths.promtool!, ['check', 'rules', RULES]);
    expect(check.stdout).toContain('SUCCESS');
    const test = await run(binaries.paths.promtool!, ['test', 'rules', RULE_TESTS], { timeout: 120_000 });
    expect(`${test.stdout}${test.stderr}`).toContain('SUCCESS');
  });

  it('cover each alert the issue asks for, each with a firing and a quiet unit test', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'UpstashRedisCommandsNearMax',
      'UpstashRedisConnectionsNearMax',
      'UpstashRedisDatabaseNotActive',
      'UpstashRedisSpendNearBudget',
      'UpstashRedisStatsStale',
      'UpstashRedisStorageNearDiskThreshold',
    ]);
    const tests = parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of alerts) {
      const own = cases.filter((c) => c.alertname === alert);
      expect(
        own.some((c) => c.exp_alerts.length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        own.some((c) => c.exp_alerts.length === 0),
        `${alert} is quiet in a test`,
      ).toBe(true);
    }
  });

  it('every alert has a severity, a summary, a description and a runbook section', () => {
    const runbooks = readFileSync(join(ROOT, 'docs', 'runbooks-redis.md'), 'utf8');
    for (const rule of alerts) {
      expect(['warning', 'critical']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      const anchor = rule.alert!.toLowerCase();
      expect(rule.annotations?.runbook_url).toBe(
        `https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/runbooks-redis.md#${anchor}`,
      );
      expect(runbooks).toContain(`\n## ${rule.alert}\n`);
    }
  });

  it('are shipped in the PrometheusRule manifest and the mixin', () => {
    const manifest = readFileSync(join(ROOT, 'deploy', 'kubernetes', 'prometheus-rule.yaml'), 'utf8');
    const mixinFiles = JSON.parse(readFileSync(join(ROOT, 'mixin', 'generated', 'rules.json'), 'utf8')) as {
      file: string;
    }[];
    const mixin = JSON.stringify(mixinFiles.find((entry) => entry.file === 'upstash-redis.rules.yml'));
    for (const rule of rules) {
      const name = rule.alert ?? rule.record!;
      expect(manifest, name).toContain(name);
      expect(mixin, name).toContain(name);
    }
  });
});
