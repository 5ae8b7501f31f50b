// End to end with a real Prometheus and Alertmanager (Debian packages, on 127.0.0.1 with temporary
// storage): Prometheus scrapes the demo every second and evaluates the shipped rules every second;
// every expression of every dashboard panel and every rule evaluates without error, and returns
// data where the demo produces it; the delivery failure-ratio alert, driven by the demo's
// always-failing destination, reaches a webhook receiver through Alertmanager.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
// Install: apt-get install prometheus prometheus-alertmanager.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  allExpressions,
  REDIS_RULES_FILE,
  RULES_FILE,
  shippedRuleGroups,
  SLO_RULES_FILE,
  type ShippedExpression,
} from '../../dashboards/src/expressions.js';
import { sleep, startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('e2e-prometheus', ['prometheus', 'prometheus-alertmanager']);
/** Job name of the scrape config: the rules' up-based alerts select job="upstash-exporter" exactly. */
const JOB = 'upstash-exporter';
const FAILURE_ALERT = 'UpstashDeliveryFailureRatioHigh';
/** Grafana's intervals, as a dashboard over the last minutes of a 1 s scrape would use them. */
const INTERVALS = { rateInterval: '1m', interval: '15s', range: '5m' };
/** Time allowed, from Prometheus' start, for every expression to have data and the alert to arrive. */
const DATA_DEADLINE_MS = 40_000;

interface AllowedEmpty {
  /** `where` of the expression (see ShippedExpression); several rules may share one. */
  where: string;
  /** Narrows to the expressions under `where` whose query contains this text. */
  contains?: string;
  reason: string;
}

/**
 * Expressions that legitimately return nothing in a short, healthy demo. They must still evaluate
 * without error. An entry that matches no expression fails the test, so the list cannot go stale.
 */
const MAY_BE_EMPTY: AllowedEmpty[] = [
  // The demo's Redis databases are healthy but for one suspended and one near its disk threshold
  // (test/system/redis-prometheus.test.ts checks these alerts fire and the others stay quiet).
  { where: 'upstash-redis / UpstashRedisConnectionsNearMax', reason: 'no demo database is near its connections' },
  { where: 'upstash-redis / UpstashRedisCommandsNearMax', reason: 'no demo database is near its commands/s' },
  { where: 'upstash-redis / UpstashRedisSpendNearBudget', reason: 'no demo database is near its budget' },
  { where: 'upstash-redis / UpstashRedisStatsStale', reason: 'the demo reads fresh stats' },
  // Alerts that stay quiet while the exporter is healthy (MUST_BE_QUIET below asserts they are empty).
  { where: 'upstash-exporter.exporter / UpstashExporterDown', reason: 'the demo is up' },
  {
    where: 'upstash-exporter.exporter / UpstashExporterAbsent',
    reason: 'the demo is scraped under job upstash-exporter',
  },
  {
    where: 'upstash-exporter.exporter / UpstashCollectorFailing',
    reason: 'every collector succeeds against the emulator',
  },
  {
    where: 'upstash-exporter.exporter / UpstashCollectorDataStale',
    reason: 'every collector of the demo succeeds every few seconds',
  },
  { where: 'upstash-exporter.exporter / UpstashLogLagHigh', reason: 'the demo reads its logs within seconds' },
  {
    where: 'upstash-exporter.exporter / UpstashLogEventRateNearCeiling',
    reason: 'the emulator announces no burst limit by default (rateLimitPerSecond 0): no ceiling to approach',
  },
  {
    where: 'upstash-exporter.exporter / UpstashLogGapsDetected',
    reason: 'the emulator keeps 10,000 log entries; the demo never outruns them',
  },
  {
    where: 'upstash-exporter.exporter / UpstashExporterCheckpointFailing',
    reason: 'the demo writes its state file in a temporary directory',
  },
  {
    where: 'upstash-exporter.exporter / UpstashExporterClockSkew',
    reason: 'the demo exporter and its emulator read one clock',
  },
  {
    where: 'upstash-exporter.exporter / UpstashRemediationWebhookUnauthorized',
    reason: "nothing sends the demo's remediation webhook a wrong token",
  },
  // The demo's canary probe arrives, signed, at its own receiver within a second or two.
  { where: 'upstash-exporter.probe / UpstashProbeFailing', reason: "the demo's probe arrives" },
  { where: 'upstash-exporter.probe / UpstashProbeSlow', reason: "the demo's probe arrives within seconds" },
  // Alerts on conditions the demo does not create.
  { where: 'upstash-exporter.qstash / UpstashScheduleMissedRun', reason: 'the emulator runs every schedule on time' },
  {
    where: 'upstash-exporter.quota / UpstashQuotaUsageHigh',
    reason: 'the emulator account and indexes are far from their limits',
  },
  { where: 'upstash-exporter.quota / UpstashQuotaUsageCritical', reason: 'as above' },
  {
    where: 'upstash-exporter.quota / UpstashDailyRequestQuotaRunningOut',
    reason: 'the payg plan allows 2147483647 messages a day',
  },
  { where: 'upstash-exporter.quota / UpstashDailyRequestHardLimitNear', reason: 'as above, for the hard limit' },
  { where: 'upstash-exporter.quota / UpstashDailyRequestSoftLimitReached', reason: 'as above, for the soft limit' },
  {
    where: 'upstash-exporter.quota / UpstashVectorIndexFillingUp',
    reason: 'no index is half full, and predict_linear over 6h needs more history',
  },
  // Queues, DLQ and flow control (group upstash-exporter.queues): conditions a short demo may not create.
  {
    where: 'upstash-exporter.queues / UpstashQueueBacklogGrowing',
    reason: 'the active demo queues drain as fast as they fill; the paused one is left out on purpose',
  },
  {
    where: 'upstash-exporter.queues / UpstashDlqGrowing',
    reason: 'delta over 30m needs two DLQ samples apart in time',
  },
  { where: 'upstash-exporter.queues / UpstashDlqNearLimit', reason: 'the payg plan keeps 10,000 dead letters' },
  {
    where: 'upstash-exporter.queues / UpstashFlowControlWaitlistGrowing',
    reason: 'the demo key releases its wait list every round',
  },
  { where: 'upstash-exporter.queues / UpstashParallelismSaturated', reason: 'saturation is momentary in the demo' },
  {
    where: 'upstash-exporter.workflows / UpstashWorkflowRunsStuck',
    reason: "the demo's workflow runs end within seconds",
  },
  {
    where: 'upstash-exporter.workflows / UpstashQueueWaitHigh',
    reason: 'no demo queue makes its messages wait a minute',
  },
  // SLO burn-rate alerts: the demo's failing destination is one of several, and its workflows succeed.
  {
    where: 'upstash-slos.delivery-success.alerts / UpstashSloDeliverySuccessBudgetBurn',
    reason: 'one bad event in a long window alerts nobody, and a page needs the 1h ratio above 1.44%',
  },
  {
    where: 'upstash-slos.delivery-latency.alerts / UpstashSloDeliveryLatencyBudgetBurn',
    reason: "the demo's slow messages are a small share",
  },
  {
    where: 'upstash-slos.workflow-run-success.alerts / UpstashSloWorkflowRunSuccessBudgetBurn',
    reason: "the demo's workflow runs succeed",
  },
  {
    where: 'upstash-slos.exporter-freshness.alerts / UpstashSloExporterFreshnessBudgetBurn',
    reason: 'the demo reads its logs within seconds',
  },
  // Panels of rare events.
  {
    where: 'upstash-exporter-health / Series dropped by metric / A',
    reason: 'the demo stays under the series cap (see test/system/demo.test.ts)',
  },
];

function allowedEmpty(expression: ShippedExpression): AllowedEmpty | undefined {
  return MAY_BE_EMPTY.find(
    (entry) =>
      entry.where === expression.where && (entry.contains === undefined || expression.query.includes(entry.contains)),
  );
}

/** Alerts that must be quiet: firing would mean the demo's exporter is unhealthy. */
const MUST_BE_QUIET = [
  'UpstashSloExporterFreshnessBudgetBurn',
  'UpstashExporterDown',
  'UpstashExporterAbsent',
  'UpstashCollectorFailing',
  'UpstashCollectorDataStale',
  'UpstashLogLagHigh',
  'UpstashLogGapsDetected',
  'UpstashExporterCheckpointFailing',
  'UpstashExporterClockSkew',
  'UpstashProbeFailing',
  'UpstashProbeSlow',
];

interface Notification {
  status: string;
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string> }[];
}

interface QueryResult {
  status: string;
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

/**
 * The shipped rules files (the SLO groups appended) with one change: UpstashDeliveryFailureRatioHigh
 * waits `for: 1s` instead of its production 10m, so the alert can fire within the test. Its
 * expression, window (5m) and minimum volume are the shipped ones: the demo's failing destination
 * meets them in seconds.
 */
function rulesForTest(): string {
  const rules = YAML.parse(readFileSync(RULES_FILE, 'utf8')) as {
    groups: { rules: { alert?: string; for?: string }[] }[];
  };
  for (const file of [SLO_RULES_FILE, REDIS_RULES_FILE])
    rules.groups.push(...(YAML.parse(readFileSync(file, 'utf8')) as typeof rules).groups);
  const alert = rules.groups.flatMap((group) => group.rules).find((rule) => rule.alert === FAILURE_ALERT);
  if (alert === undefined) throw new Error(`${RULES_FILE} has no alert ${FAILURE_ALERT}`);
  alert.for = '1s';
  return YAML.stringify(rules);
}

describe.skipIf(binaries.skip)(`real Prometheus and Alertmanager against the demo${binaries.needs}`, () => {
  let demo: DemoProcess | undefined;
  let stack: PrometheusStack | undefined;
  let webhook: Server | undefined;
  const notifications: Notification[] = [];
  let prometheusUrl = '';
  let failingDestination = '';
  let prometheusStartedAt = 0;

  beforeAll(async () => {
    binaries.ensure();
    webhook = createHttpServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        notifications.push(JSON.parse(body) as Notification);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => webhook!.listen(0, '127.0.0.1', resolve));
    const webhookPort = (webhook.address() as AddressInfo).port;

    demo = await startDemoProcess();
    failingDestination = /failing http:\/\/(\S+)/.exec(demo.stdout())?.[1] ?? '';
    expect(failingDestination, demo.stdout()).toMatch(/^127\.0\.0\.1:\d+$/);

    stack = await startPrometheusStack({
      name: 'upstash-exporter-e2e',
      rules: { content: rulesForTest() },
      job: JOB,
      target: new URL(demo.exporterUrl).host,
      alertmanagerConfig: {
        route: {
          receiver: 'webhook',
          group_by: ['alertname', 'destination'],
          group_wait: '0s',
          group_interval: '1s',
          repeat_interval: '1h',
        },
        receivers: [
          {
            name: 'webhook',
            webhook_configs: [{ url: `http://127.0.0.1:${webhookPort}/alerts`, send_resolved: false }],
          },
        ],
      },
    });
    prometheusUrl = stack.prometheusUrl;
    prometheusStartedAt = stack.startedAt;
    await stack.waitForTargetUp(20_000);
  }, 45_000);

  afterAll(async () => {
    await Promise.all([stack?.close(), demo?.stop('SIGINT')]);
    if (webhook) await new Promise<void>((resolve) => webhook!.close(() => resolve()));
  });

  async function query(expr: string): Promise<QueryResult> {
    const response = await fetch(`${prometheusUrl}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: expr }).toString(),
    });
    return (await response.json()) as QueryResult;
  }

  it('loads every shipped rule group', async () => {
    const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    const shipped = shippedRuleGroups();
    // The API lists groups by name, not in file order.
    expect(rules.data.groups.map((group) => group.name).sort()).toEqual(shipped.map((group) => group.name).sort());
    const unhealthy = rules.data.groups.flatMap((group) => group.rules).filter((rule) => rule.health === 'err');
    expect(unhealthy).toEqual([]);
  });

  it(
    'the delivery failure-ratio alert reaches the webhook through Alertmanager',
    { timeout: DATA_DEADLINE_MS + 5_000 },
    async () => {
      const arrived = (): boolean =>
        notifications.some((notification) =>
          notification.alerts.some(
            (alert) =>
              alert.status === 'firing' &&
              alert.labels.alertname === FAILURE_ALERT &&
              alert.labels.destination === failingDestination,
          ),
        );
      while (!arrived() && Date.now() - prometheusStartedAt < DATA_DEADLINE_MS) await sleep(250);
      const received = notifications.flatMap((notification) =>
        notification.alerts.map((alert) => `${alert.labels.alertname} ${alert.labels.destination ?? ''}`),
      );
      expect(arrived(), `webhook received: ${JSON.stringify(received)}`).toBe(true);
      const alert = notifications.flatMap((n) => n.alerts).find((a) => a.labels.alertname === FAILURE_ALERT)!;
      expect(alert.labels.severity).toBe('warning');
      expect(alert.labels.job).toBe(JOB);
      expect(alert.annotations.summary).toContain(failingDestination);
      expect(alert.annotations.runbook_url).toMatch(/runbooks\.md#upstashdeliveryfailureratiohigh$/);
      // Only the failing destination crosses 10%: the flaky one fails ~0.01% of messages after retries.
      const others = notifications
        .flatMap((n) => n.alerts)
        .filter((a) => a.labels.alertname === FAILURE_ALERT && a.labels.destination !== failingDestination);
      expect(others).toEqual([]);
    },
  );

  it(
    'every dashboard and rule expression evaluates, with data wherever the demo produces it',
    { timeout: DATA_DEADLINE_MS + 10_000 },
    async () => {
      const expressions: ShippedExpression[] = allExpressions(INTERVALS);
      expect(expressions.filter((e) => e.origin === 'dashboard').length).toBeGreaterThan(50);
      expect(expressions.filter((e) => e.origin === 'rule').length).toBeGreaterThan(20);
      const stale = MAY_BE_EMPTY.filter((entry) => !expressions.some((e) => allowedEmpty(e) === entry));
      expect(stale, 'MAY_BE_EMPTY entries that match no shipped expression').toEqual([]);

      const errors: string[] = [];
      let waiting = expressions.filter((e) => allowedEmpty(e) === undefined);
      for (;;) {
        const still: ShippedExpression[] = [];
        for (const expression of waiting) {
          const result = await query(expression.query);
          if (result.status !== 'success')
            errors.push(`${expression.where}: ${result.error ?? result.status}\n    ${expression.query}`);
          else if ((result.data?.result.length ?? 0) === 0) still.push(expression);
        }
        waiting = still;
        if (errors.length > 0 || waiting.length === 0 || Date.now() - prometheusStartedAt > DATA_DEADLINE_MS) break;
        await sleep(1_000);
      }
      console.info(
        `e2e-prometheus: ${expressions.length} expressions; all with data ${((Date.now() - prometheusStartedAt) / 1000).toFixed(1)} s after Prometheus started`,
      );
      expect(errors, 'expressions Prometheus refused').toEqual([]);
      expect(
        waiting.map((e) => `${e.where}: ${e.query}`),
        `expressions still empty ${DATA_DEADLINE_MS / 1000} s after Prometheus started`,
      ).toEqual([]);

      // The allowed-empty ones must evaluate too; the exporter-health alerts must be quiet.
      for (const expression of expressions.filter((e) => allowedEmpty(e) !== undefined)) {
        const result = await query(expression.query);
        expect(result.status, `${expression.where}: ${result.error ?? ''}`).toBe('success');
        const alert = expression.where.split(' / ')[1] ?? '';
        if (MUST_BE_QUIET.includes(alert)) {
          expect(result.data?.result, `${expression.where} fires in a healthy demo`).toEqual([]);
        }
      }
    },
  );
});
