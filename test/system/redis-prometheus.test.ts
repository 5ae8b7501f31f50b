// The demo's Redis databases on a real Prometheus (Debian package, 127.0.0.1, temporary storage):
// the Redis dashboard's queries return data, and the Redis alerts (their `for` shortened to 0s,
// since the shipped ones wait 10 to 30 minutes) fire on the suspended database and on the one
// near its disk threshold, and stay quiet on the healthy ones.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { REDIS_RULES_FILE } from '../../dashboards/src/expressions.js';
import { buildDashboards } from '../../dashboards/src/index.js';
import { sleep, startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('redis-prometheus', ['prometheus', 'prometheus-alertmanager']);
const DEADLINE_MS = 60_000;

function rulesWithoutWaiting(): string {
  const rules = YAML.parse(readFileSync(REDIS_RULES_FILE, 'utf8')) as { groups: { rules: { for?: string }[] }[] };
  for (const rule of rules.groups.flatMap((group) => group.rules)) if (rule.for !== undefined) rule.for = '0s';
  return YAML.stringify(rules);
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(binaries.skip)(`the demo's Redis on a real Prometheus${binaries.needs}`, () => {
  let demo: DemoProcess | undefined;
  let stack: PrometheusStack | undefined;

  const query = async (expr: string): Promise<Sample[]> => {
    const url = new URL('/api/v1/query', stack!.prometheusUrl);
    url.searchParams.set('query', expr);
    const body = (await (await fetch(url)).json()) as { status: string; error?: string; data?: { result: Sample[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? body.status}`);
    return body.data!.result;
  };

  /** Polls `check` until it returns no problems, or fails with the last ones at the deadline. */
  const until = async (check: () => Promise<string[]>): Promise<void> => {
    const deadline = Date.now() + DEADLINE_MS;
    let problems: string[] = [];
    while (Date.now() < deadline) {
      stack!.assertRunning();
      problems = await check();
      if (problems.length === 0) return;
      await sleep(500);
    }
    throw new Error(`${problems.join('\n')}\n${stack!.output()}`);
  };

  beforeAll(async () => {
    binaries.ensure();
    demo = await startDemoProcess();
    stack = await startPrometheusStack({
      name: 'upstash-redis-e2e',
      rules: { content: rulesWithoutWaiting() },
      job: 'upstash-exporter',
      target: new URL(demo.exporterUrl).host,
      alertmanagerConfig: { route: { receiver: 'null' }, receivers: [{ name: 'null' }] },
    });
    await stack.waitForTargetUp();
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    await demo?.stop('SIGKILL');
  });

  it('fires on the suspended database and the one near its disk threshold, and on nothing else', async () => {
    const info = await (async () => {
      let found: Sample[] = [];
      await until(async () => {
        found = await query('upstash_redis_database_info');
        return found.length === 4 ? [] : [`${found.length} Redis databases scraped`];
      });
      return found;
    })();
    const idOf = (name: string): string => info.find((s) => s.metric.name === name)!.metric.database_id!;
    const expected = [
      `UpstashRedisDatabaseNotActive/${idOf('legacy-jobs')}`,
      `UpstashRedisStorageNearDiskThreshold/${idOf('sessions')}`,
    ].sort();
    await until(async () => {
      const firing = (await query('ALERTS{alertstate="firing", alertname=~"UpstashRedis.*"}'))
        .map((s) => `${s.metric.alertname}/${s.metric.database_id}`)
        .sort();
      return JSON.stringify(firing) === JSON.stringify(expected) ? [] : [`firing: ${firing.join(', ') || 'none'}`];
    });
    // Still exactly those a few evaluations later: the healthy databases stay quiet.
    await sleep(3_000);
    const firing = (await query('ALERTS{alertstate="firing", alertname=~"UpstashRedis.*"}'))
      .map((s) => `${s.metric.alertname}/${s.metric.database_id}`)
      .sort();
    expect(firing).toEqual(expected);
  }, 120_000);

  it('every query of the Redis dashboard returns data', async () => {
    const redis = buildDashboards().find((d) => d.dashboard.uid === 'upstash-redis')!.dashboard;
    const expressions = JSON.stringify(redis)
      .match(/"expr":"((?:[^"\\]|\\.)*)"/g)!
      .map((match) => JSON.parse(match.slice('"expr":'.length)) as string)
      .map((expr) => expr.replaceAll('$database', '.*').replaceAll('$job', '.*').replaceAll('$instance', '.*'));
    expect(expressions.length).toBeGreaterThan(10);
    await until(async () => {
      const empty: string[] = [];
      for (const expr of expressions) {
        if ((await query(expr)).length === 0) empty.push(expr);
      }
      return empty.map((expr) => `no data: ${expr}`);
    });
  }, 120_000);
});
