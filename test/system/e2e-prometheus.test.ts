// End to end with a real Prometheus and Alertmanager (Debian packages, on 127.0.0.1 with temporary
// storage): Prometheus scrapes the demo every 2 s and evaluates the shipped rules every second;
// every expression of every dashboard panel and every rule evaluates without error, and returns
// data where the demo produces it; the delivery failure-ratio alert, driven by the demo's
// always-failing destination, reaches a webhook receiver through Alertmanager.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
// Install: apt-get install prometheus prometheus-alertmanager.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  allExpressions,
  RULES_FILE,
  SHIPPED_RULE_FILES,
  shippedRuleGroups,
  type ShippedExpression,
} from '../../dashboards/src/expressions.js';
import { sleep, startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('e2e-prometheus', ['prometheus', 'prometheus-alertmanager']);
/** Job name of the scrape config: the rules' up-based alerts select job="upstash-exporter" exactly. */
const JOB = 'upstash-exporter';
const FAILURE_ALERT = 'UpstashDeliveryFailureRatioHigh';
/** Grafana's intervals, as a dashboard over the last minutes of a 2 s scrape would use them. */
const INTERVALS = { rateInterval: '1m', interval: '15s', range: '5m' };
/**
 * Successful scrapes of the demo allowed for every expression to have data and for the alert to
 * arrive (a quiet machine needs about 8). Counted in scrapes, not seconds: on a busy machine the
 * demo answers some scrapes after Prometheus' 1 s timeout, and what the expressions need (two
 * samples in a rate window, three schedule runs seen, a histogram observed) comes with the
 * scrapes that succeed, not with the time.
 */
const SCRAPES_FOR_DATA = 30;
/** How long an exporter-health alert's expression may hold at most in a healthy demo (see the check). */
const QUIET_WINDOW_S = 30;
/** The demo's scrape interval, and timeout. */
const SCRAPE_INTERVAL_S = 2;
/** Upper bound on the wait above, whatever the scrapes do (the tests' own timeouts are above it). */
const HARD_DEADLINE_MS = 150_000;

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

/** The vector selectors of an expression, as written (`name{matchers}`), each once. */
function vectorSelectors(expr: string): string[] {
  const selectors = new Set<string>();
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name !== 'VectorSelector') return;
      selectors.add(expr.slice(node.from, node.to));
      return false;
    },
  });
  return [...selectors];
}

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
 * Every shipped rules file's groups (deploy/rules/*.rules.yml) with one change: UpstashDeliveryFailureRatioHigh
 * waits `for: 1s` instead of its production 10m, so the alert can fire within the test. Its
 * expression, window (5m) and minimum volume are the shipped ones: the demo's failing destination
 * meets them in seconds.
 */
function rulesForTest(): string {
  const rules: { groups: { rules: { alert?: string; for?: string }[] }[] } = { groups: [] };
  for (const file of SHIPPED_RULE_FILES)
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
      // The demo serves the emulator and its traffic from the exporter's process: on a busy
      // machine a scrape can take over a second, and a scrape past its timeout marks every series
      // stale until the next succeeds. Two seconds halve how often that happens.
      scrapeSettings: { scrape_interval: `${SCRAPE_INTERVAL_S}s`, scrape_timeout: `${SCRAPE_INTERVAL_S}s` },
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
    await stack.waitForTargetUp(60_000);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stack?.close(), demo?.stop('SIGINT')]);
    if (webhook) await new Promise<void>((resolve) => webhook!.close(() => resolve()));
  });

  async function query(expr: string, time?: number): Promise<QueryResult> {
    const response = await fetch(`${prometheusUrl}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) }).toString(),
    });
    return (await response.json()) as QueryResult;
  }

  /**
   * The expression at every second from `from` to now (unix s): data at any of them counts. A
   * scrape that fails (the demo answering after the scrape timeout on a busy machine) marks the
   * series stale until the next one succeeds, so "now" alone can fall in such a gap.
   */
  async function queryRange(expr: string, from: number, to = Date.now() / 1000): Promise<QueryResult> {
    const response = await fetch(`${prometheusUrl}/api/v1/query_range`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        query: expr,
        start: String(from),
        end: String(to),
        step: '1',
      }).toString(),
    });
    return (await response.json()) as QueryResult;
  }

  /** The demo's scrapes since Prometheus started: all, those that succeeded, and the time of the last that did (unix s). */
  async function scrapes(): Promise<{
    attempts: number;
    succeeded: number;
    firstUp: number | null;
    lastUp: number | null;
  }> {
    const since = Math.ceil((Date.now() - prometheusStartedAt) / 1000) + 1;
    const result = await query(`up{job="${JOB}"}[${since}s]`);
    const values = ((result.data?.result ?? []) as { values: [number, string][] }[])[0]?.values ?? [];
    const up = values.filter(([, value]) => value === '1');
    return {
      attempts: values.length,
      succeeded: up.length,
      firstUp: up[0]?.[0] ?? null,
      lastUp: up.at(-1)?.[0] ?? null,
    };
  }

  /** Waits until `done()`, SCRAPES_FOR_DATA successful scrapes, or HARD_DEADLINE_MS after Prometheus started. */
  async function waitWhileScrapesLeft(done: () => Promise<boolean>): Promise<void> {
    while (!(await done())) {
      if ((await scrapes()).succeeded >= SCRAPES_FOR_DATA) return;
      if (Date.now() - prometheusStartedAt > HARD_DEADLINE_MS) return;
      await sleep(500);
    }
  }

  async function scrapeSummary(): Promise<string> {
    const { attempts, succeeded } = await scrapes();
    return `${succeeded} of ${attempts} scrapes succeeded, ${((Date.now() - prometheusStartedAt) / 1000).toFixed(1)} s after Prometheus started`;
  }

  /**
   * What each input of an empty expression held since Prometheus started: per selector, its series
   * (labels that tell them apart) and their samples, so a failure names the missing or odd input.
   */
  async function explainEmpty(expression: ShippedExpression): Promise<string> {
    const since = Math.ceil((Date.now() - prometheusStartedAt) / 1000);
    const lines: string[] = [];
    for (const selector of vectorSelectors(expression.query)) {
      const result = await query(`${selector}[${since}s]`);
      const series = (result.data?.result ?? []) as { metric: Record<string, string>; values: [number, string][] }[];
      lines.push(`    ${selector}: ${result.status === 'success' ? `${series.length} series` : result.error}`);
      for (const { metric, values } of series.slice(0, 6)) {
        const { __name__: _name, job: _job, instance: _instance, ...labels } = metric;
        const samples = values.map(([at, value]) => `${(at - prometheusStartedAt / 1000).toFixed(0)}s=${value}`);
        lines.push(`      ${JSON.stringify(labels)} ${samples.slice(-25).join(' ')}`);
      }
    }
    return lines.join('\n');
  }

  /** Each scrape of the demo since Prometheus started: up, and how long it took. */
  async function scrapeHistory(): Promise<string> {
    const since = Math.ceil((Date.now() - prometheusStartedAt) / 1000);
    const lines: string[] = [];
    for (const series of [`up{job="${JOB}"}`, `scrape_duration_seconds{job="${JOB}"}`]) {
      const result = await query(`${series}[${since}s]`);
      const values = ((result.data?.result ?? []) as { values: [number, string][] }[])[0]?.values ?? [];
      const samples = values.map(
        ([at, value]) => `${(at - prometheusStartedAt / 1000).toFixed(1)}s=${Number(value).toFixed(2)}`,
      );
      lines.push(`    ${series}: ${samples.join(' ')}`);
    }
    return lines.join('\n');
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
    { timeout: HARD_DEADLINE_MS + 10_000 },
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
      await waitWhileScrapesLeft(() => Promise.resolve(arrived()));
      const received = notifications.flatMap((notification) =>
        notification.alerts.map((alert) => `${alert.labels.alertname} ${alert.labels.destination ?? ''}`),
      );
      expect(arrived(), `webhook received: ${JSON.stringify(received)}; ${await scrapeSummary()}`).toBe(true);
      // This destination's: another one's may come first (see below).
      const alert = notifications
        .flatMap((n) => n.alerts)
        .find((a) => a.labels.alertname === FAILURE_ALERT && a.labels.destination === failingDestination)!;
      expect(alert.labels.severity).toBe('warning');
      expect(alert.labels.job).toBe(JOB);
      expect(alert.annotations.summary).toContain(failingDestination);
      expect(alert.annotations.runbook_url).toMatch(/runbooks\.md#upstashdeliveryfailureratiohigh$/);
      // Only the failing destination crosses 10%: the flaky one fails ~0.01% of messages after
      // retries. The slow one answers near the 2 s delivery timeout on purpose: on a busy machine
      // some of its answers pass it and fail (seen: 22% at a load average of 26 on 2 cores).
      const slowDestination = /slow http:\/\/(\S+)/.exec(demo!.stdout())?.[1];
      const others = notifications
        .flatMap((n) => n.alerts)
        .filter((a) => a.labels.alertname === FAILURE_ALERT)
        .filter((a) => a.labels.destination !== failingDestination && a.labels.destination !== slowDestination);
      const destinations = /destinations: .*/.exec(demo!.stdout())?.[0] ?? '';
      expect(
        others.map((a) => a.annotations.summary),
        destinations,
      ).toEqual([]);
    },
  );

  it(
    'every dashboard and rule expression evaluates, with data wherever the demo produces it',
    { timeout: HARD_DEADLINE_MS + 30_000 },
    async () => {
      const expressions: ShippedExpression[] = allExpressions(INTERVALS);
      expect(expressions.filter((e) => e.origin === 'dashboard').length).toBeGreaterThan(50);
      expect(expressions.filter((e) => e.origin === 'rule').length).toBeGreaterThan(20);
      const stale = MAY_BE_EMPTY.filter((entry) => !expressions.some((e) => allowedEmpty(e) === entry));
      expect(stale, 'MAY_BE_EMPTY entries that match no shipped expression').toEqual([]);

      const errors: string[] = [];
      // Every expression but the allowed-empty ones is waited for: data at any second since the
      // last pass counts.
      let waiting = expressions.filter((e) => allowedEmpty(e) === undefined);
      let from = prometheusStartedAt / 1000;
      await waitWhileScrapesLeft(async () => {
        const passStart = Date.now() / 1000;
        const still: ShippedExpression[] = [];
        for (const expression of waiting) {
          const result = await queryRange(expression.query, from);
          if (result.status !== 'success')
            errors.push(`${expression.where}: ${result.error ?? result.status}\n    ${expression.query}`);
          else if ((result.data?.result.length ?? 0) === 0) still.push(expression);
        }
        waiting = still;
        // The next pass looks again from a little before this one started: no second is skipped.
        from = passStart - 2;
        return errors.length > 0 || waiting.length === 0;
      });
      console.info(
        `e2e-prometheus: ${expressions.length} expressions, ${waiting.length} still empty, with ${await scrapeSummary()}`,
      );
      expect(errors, 'expressions Prometheus refused').toEqual([]);
      if (waiting.length > 0) console.error(`e2e-prometheus: the scrapes so far\n${await scrapeHistory()}`);
      for (const expression of waiting)
        console.error(`e2e-prometheus: still empty: ${expression.where}\n${await explainEmpty(expression)}`);
      expect(
        waiting.map((e) => `${e.where}: ${e.query}`),
        `expressions still empty with ${await scrapeSummary()}`,
      ).toEqual([]);

      // The allowed-empty ones must evaluate too.
      for (const expression of expressions.filter((e) => allowedEmpty(e) !== undefined)) {
        const result = await query(expression.query);
        expect(result.status, `${expression.where}: ${result.error ?? ''}`).toBe('success');
      }
      // The exporter-health alerts must be quiet: none of their series holds through the
      // QUIET_WINDOW_S seconds up to the last scrape that succeeded (waited for; all the time
      // since the first, when the deadline comes sooner), as it would have to for the alert to
      // fire with a `for` that long. Not at one instant: after a scrape that failed, up is
      // 0 (UpstashExporterDown's expression) until the next succeeds, and a demo starved of CPU
      // polls late (UpstashCollectorDataStale, at three poll intervals of 2 s): the machine's load,
      // which the shipped `for` durations (5 m and more) absorb, not the demo's health.
      await waitWhileScrapesLeft(async () => {
        const { firstUp, lastUp } = await scrapes();
        return firstUp !== null && lastUp !== null && lastUp - firstUp >= QUIET_WINDOW_S;
      });
      const { firstUp, lastUp } = await scrapes();
      expect(lastUp, 'a scrape of the demo succeeded').not.toBeNull();
      const window = { start: Math.max(lastUp! - QUIET_WINDOW_S, firstUp!), end: lastUp! };
      const steps = Math.floor(window.end - window.start) + 1;
      for (const expression of expressions.filter((e) => MUST_BE_QUIET.includes(e.where.split(' / ')[1] ?? ''))) {
        const result = await queryRange(expression.query, window.start, window.end);
        expect(result.status, `${expression.where}: ${result.error ?? ''}`).toBe('success');
        const held = ((result.data?.result ?? []) as { metric: Record<string, string>; values: unknown[] }[]).filter(
          (series) => series.values.length >= steps,
        );
        expect(
          held.map((series) => series.metric),
          `${expression.where} holds through the ${steps} s up to the last scrape in a healthy demo`,
        ).toEqual([]);
      }
    },
  );
});
