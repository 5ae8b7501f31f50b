// `upstash-exporter demo --scenario healthy`: a quiet exporter, as a user never saw one in the
// demo (its default traffic fires nine alerts on purpose). A real Prometheus scrapes it every
// second and evaluates the shipped rules (deploy/rules: the exporter's alerts and the SLO burn
// alerts) every second; over 40 scrapes with data flowing, no alert is even pending.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { RULES_FILE, SLO_RULES_FILE } from '../../dashboards/src/expressions.js';
import { sleep, startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('demo-healthy', ['prometheus', 'prometheus-alertmanager']);
const JOB = 'upstash-exporter';
/** Scrapes (and rule evaluations) Prometheus must have made before the verdict. */
const SCRAPES = 40;

/** The shipped rule files as Prometheus loads them, in one file of their groups. */
function shippedRules(): string {
  const rules = YAML.parse(readFileSync(RULES_FILE, 'utf8')) as { groups: unknown[] };
  rules.groups.push(...(YAML.parse(readFileSync(SLO_RULES_FILE, 'utf8')) as typeof rules).groups);
  return YAML.stringify(rules);
}

describe.skipIf(binaries.skip)(`demo --scenario healthy under the shipped rules${binaries.needs}`, () => {
  let demo: DemoProcess | undefined;
  let stack: PrometheusStack | undefined;
  let targetUpAt = 0;

  beforeAll(async () => {
    binaries.ensure();
    demo = await startDemoProcess(['--scenario', 'healthy']);
    stack = await startPrometheusStack({
      name: 'upstash-exporter-healthy-demo',
      rules: { content: shippedRules() },
      job: JOB,
      target: new URL(demo.exporterUrl).host,
      alertmanagerConfig: { route: { receiver: 'none' }, receivers: [{ name: 'none' }] },
    });
    await stack.waitForTargetUp(30_000);
    targetUpAt = Date.now();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stack?.close(), demo?.stop('SIGINT')]);
  });

  async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const url = `${stack!.prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`;
    const body = (await (await fetch(url)).json()) as {
      status: string;
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    expect(body.status).toBe('success');
    return body.data.result;
  }

  it('fires no alert, and none is even pending, while messages are delivered', { timeout: 120_000 }, async () => {
    // Every rule group loaded (a rule file Prometheus refused would make a quiet result vacuous).
    const groups = (await (await fetch(`${stack!.prometheusUrl}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { health: string; lastError?: string }[] }[] };
    };
    expect(groups.data.groups.length).toBe((YAML.parse(shippedRules()) as { groups: unknown[] }).groups.length);

    // Until Prometheus has scraped the demo SCRAPES times, with deliveries counted.
    const deadline = Date.now() + 100_000;
    for (;;) {
      stack!.assertRunning();
      const scrapes = Number((await query(`count_over_time(up{job="${JOB}"}[10m])`))[0]?.value[1] ?? 0);
      const delivered = Number(
        (await query('sum(upstash_qstash_message_events_total{state="DELIVERED"})'))[0]?.value[1] ?? 0,
      );
      if (scrapes >= SCRAPES && delivered > 0) break;
      if (Date.now() > deadline) throw new Error(`${scrapes} scrapes, ${delivered} delivered:\n${stack!.output()}`);
      await sleep(1_000);
    }

    // No rule failed to evaluate: an erroring rule is quiet too, and proves nothing.
    const evaluated = (await (await fetch(`${stack!.prometheusUrl}/api/v1/rules`)).json()) as typeof groups;
    const broken = evaluated.data.groups.flatMap((g) =>
      g.rules.filter((r) => r.health === 'err').map((r) => `${g.name}: ${r.lastError}`),
    );
    expect(broken).toEqual([]);
    // Not one alert, firing or pending, at any evaluation since the exporter was first scraped
    // (before that, UpstashExporterAbsent is rightly pending: Prometheus had nothing from it).
    const since = Math.floor((Date.now() - targetUpAt) / 1000) - 2;
    const alerts = await query(`max_over_time(ALERTS[${since}s])`);
    expect(alerts.map((a) => JSON.stringify(a.metric))).toEqual([]);
    // Nothing failed on the way: the scenario's traffic is all healthy.
    const failed = await query('sum(upstash_qstash_message_events_total{state=~"FAILED|CANCELLED"})');
    expect(Number(failed[0]?.value[1] ?? 0)).toBe(0);
  });
});
