// The shipped Alertmanager configuration (deploy/alertmanager/alertmanager.yml) in the real
// prometheus-alertmanager (Debian package, 127.0.0.1, temporary storage): amtool accepts it and
// routes each severity to its receiver, and one fault reaches the pager once. The alerts are the
// ones the shipped rules fire for the demo's failing destination (measured against `npm run demo`
// with Prometheus, docs/alerts.md), posted to Alertmanager's API as Prometheus posts them, with the
// labels the rules give them (severity read from the rules files): Prometheus itself is left out
// because the SLO pages need half an hour of history before they fire. The receivers get a webhook
// each on 127.0.0.1 that counts the notifications; group_wait is cut to 1 s, the rest is as shipped.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { shippedRuleGroups } from '../../dashboards/src/expressions.js';
import { ROOT } from '../support/demo-helpers.js';
import { startDestination, type Destination } from '../support/emulator-helpers.js';
import { eventually } from '../support/exporter-e2e-helpers.js';
import { freePort, requireBinaries, startDaemon, type Daemon } from '../support/prometheus.js';

const run = promisify(execFile);
const CONFIG = join(ROOT, 'deploy', 'alertmanager', 'alertmanager.yml');
const binaries = requireBinaries('alertmanager', ['prometheus-alertmanager', 'amtool']);
/** The receivers of the shipped configuration. */
type ReceiverName = 'pager' | 'tickets' | 'records';

const TARGET = { job: 'upstash-exporter', instance: 'exporter:9824' };

/** The labels the shipped rules give an alert (its severity), chosen by sloth_severity for SLO alerts. */
function ruleLabels(alertname: string, slothSeverity?: string): Record<string, string> {
  const rule = shippedRuleGroups()
    .flatMap((group) => group.rules)
    .find((r) => r.alert === alertname && (slothSeverity === undefined || r.labels?.sloth_severity === slothSeverity));
  if (rule === undefined) throw new Error(`no shipped alert ${alertname} ${slothSeverity ?? ''}`);
  return { alertname, ...rule.labels };
}

/** An alert of one exporter as Prometheus would post it: the rule's labels, the target's, its own. */
function firing(alertname: string, own: Record<string, string> = {}, slothSeverity?: string): Record<string, unknown> {
  return {
    labels: { ...ruleLabels(alertname, slothSeverity), ...TARGET, ...own },
    annotations: { summary: `${alertname} (posted by the test)` },
    startsAt: new Date().toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
  };
}

/** The sloth_* labels of one SLO's alerts. */
const slo = (name: string): Record<string, string> => ({
  sloth_id: `upstash-qstash-${name}`,
  sloth_service: 'upstash-qstash',
  sloth_slo: name,
});

/** What the demo's one failing destination (and the schedule that calls it) fires. */
function failingDestinationAlerts(destination: string): Record<string, unknown>[] {
  return [
    firing('UpstashMessagesFailed', { destination, queue: '', url_group: '', state: 'FAILED' }),
    firing('UpstashDeliveryFailureRatioHigh', { destination }),
    firing('UpstashDlqGrowing'),
    firing('UpstashScheduleLastRunFailed', { schedule_id: 'demo-partner-sync', state: 'FAIL' }),
    firing('UpstashSloDeliverySuccessBudgetBurn', slo('delivery-success'), 'page'),
    firing('UpstashSloDeliverySuccessBudgetBurn', slo('delivery-success'), 'ticket'),
    firing('UpstashSloDeliveryLatencyBudgetBurn', slo('delivery-latency'), 'page'),
    firing('UpstashSloDeliveryLatencyBudgetBurn', slo('delivery-latency'), 'ticket'),
  ];
}

interface Notification {
  receiver: string;
  alerts: { labels: Record<string, string> }[];
}

describe.skipIf(binaries.skip)(`the shipped Alertmanager configuration${binaries.needs}`, () => {
  let dir = '';
  let receiver: Destination;
  beforeAll(async () => {
    binaries.ensure();
    dir = mkdtempSync(join(tmpdir(), 'upstash-alertmanager-'));
    receiver = await startDestination(() => ({ status: 200, body: 'ok' }));
  });
  afterAll(async () => {
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let daemon: Daemon | undefined;
  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  /** The shipped config with a webhook per receiver (path = its name) and group_wait 1 s. */
  function testConfig(): string {
    const config = YAML.parse(readFileSync(CONFIG, 'utf8')) as {
      route: Record<string, unknown>;
      receivers: { name: string; webhook_configs?: unknown[] }[];
    };
    config.route.group_wait = '1s';
    for (const r of config.receivers) r.webhook_configs = [{ url: `${receiver.url}/${r.name}`, send_resolved: false }];
    const file = join(dir, `alertmanager-${Date.now()}.yml`);
    writeFileSync(file, YAML.stringify(config));
    return file;
  }

  async function startAlertmanager(): Promise<string> {
    const port = await freePort();
    const storage = mkdtempSync(join(dir, 'data-'));
    daemon = startDaemon(binaries.paths['prometheus-alertmanager']!, [
      `--config.file=${testConfig()}`,
      `--storage.path=${storage}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ]);
    const url = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      try {
        return (await fetch(`${url}/-/ready`)).ok ? [] : ['not ready'];
      } catch {
        return ['not listening'];
      }
    }, 20_000);
    return url;
  }

  /** Notifications received since `from`, by receiver. */
  function notifications(from: number): Notification[] {
    return receiver.requests.slice(from).map((request) => ({
      receiver: request.url.slice(1),
      alerts: (JSON.parse(request.body) as { alerts: Notification['alerts'] }).alerts,
    }));
  }

  /**
   * Posts the alerts, waits until Alertmanager has notified every group that has an active
   * (not inhibited) alert, and returns the notifications sent.
   */
  async function notify(url: string, alerts: Record<string, unknown>[]): Promise<Notification[]> {
    const from = receiver.requests.length;
    const posted = await fetch(`${url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    expect(posted.status).toBe(200);
    let expectedGroups = -1;
    await eventually(async () => {
      const groups = (await (await fetch(`${url}/api/v2/alerts/groups`)).json()) as {
        alerts: { status: { state: string } }[];
      }[];
      const all = groups.flatMap((group) => group.alerts);
      if (all.length < alerts.length) return [`${all.length} of ${alerts.length} alerts in groups`];
      if (all.some((alert) => alert.status.state === 'unprocessed')) return ['alerts not processed yet'];
      expectedGroups = groups.filter((group) => group.alerts.some((alert) => alert.status.state === 'active')).length;
      const got = receiver.requests.length - from;
      return got >= expectedGroups ? [] : [`${got} of ${expectedGroups} groups notified`];
    }, 20_000);
    // A notification more than the groups would show here as a further request.
    const sent = notifications(from);
    expect(sent).toHaveLength(expectedGroups);
    return sent;
  }

  const names = (sent: Notification[], to: ReceiverName): string[] =>
    sent
      .filter((n) => n.receiver === to)
      .flatMap((n) => n.alerts.map((a) => `${a.labels.alertname}/${a.labels.sloth_severity ?? a.labels.severity}`))
      .sort();

  it('amtool accepts it and routes critical to the pager, warning to tickets, info to records', async () => {
    const amtool = binaries.paths.amtool!;
    const check = await run(amtool, ['check-config', CONFIG]);
    expect(check.stdout).toContain('SUCCESS');
    for (const [severity, expected] of [
      ['critical', 'pager'],
      ['warning', 'tickets'],
      ['info', 'records'],
    ] as const) {
      const routed = await run(amtool, [
        'config',
        'routes',
        'test',
        `--config.file=${CONFIG}`,
        'alertname=UpstashAnything',
        `severity=${severity}`,
      ]);
      expect(routed.stdout.trim(), severity).toBe(expected);
    }
  });

  it('one failing destination: eight alerts, one page (delivery-success), no ticket or record of the same fault', async () => {
    const url = await startAlertmanager();
    const sent = await notify(url, failingDestinationAlerts('127.0.0.1:45521'));
    expect(names(sent, 'pager')).toEqual(['UpstashSloDeliverySuccessBudgetBurn/page']);
    expect(sent.filter((n) => n.receiver === 'pager')).toHaveLength(1);
    // Everything else of the fault is inhibited: the SLO ticket by its page, the latency SLO by
    // the success page, the ratio alert by the burn, DLQ growth and every per-failure record by both.
    expect(names(sent, 'tickets')).toEqual([]);
    expect(names(sent, 'records')).toEqual([]);
  });

  it('an exporter that cannot be scraped: one page, nothing else of that exporter; another exporter still notifies', async () => {
    const url = await startAlertmanager();
    const other = { instance: 'other:9824' };
    const sent = await notify(url, [
      firing('UpstashExporterDown'),
      firing('UpstashSloExporterFreshnessBudgetBurn', slo('exporter-freshness'), 'page'),
      firing('UpstashSloExporterFreshnessBudgetBurn', slo('exporter-freshness'), 'ticket'),
      firing('UpstashCollectorDataStale', { collector: 'logs' }),
      firing('UpstashDlqGrowing', other),
    ]);
    expect(names(sent, 'pager')).toEqual(['UpstashExporterDown/critical']);
    expect(names(sent, 'tickets')).toEqual(['UpstashDlqGrowing/warning']);
    expect(sent.find((n) => n.receiver === 'tickets')?.alerts[0]?.labels.instance).toBe('other:9824');
  });

  it('the hard daily limit inhibits the soft one; the critical quota alert the warning of the same quota', async () => {
    const url = await startAlertmanager();
    const region = { qstash_region: 'eu-central-1', source: 'official' };
    const sent = await notify(url, [
      firing('UpstashDailyRequestHardLimitNear', region),
      firing('UpstashDailyRequestSoftLimitReached', region),
      firing('UpstashQuotaUsageCritical', { quota: 'qstash_dlq_messages' }),
      firing('UpstashQuotaUsageHigh', { quota: 'qstash_dlq_messages' }),
      firing('UpstashQuotaUsageHigh', { quota: 'qstash_schedules' }),
    ]);
    expect(names(sent, 'pager')).toEqual([
      'UpstashDailyRequestHardLimitNear/critical',
      'UpstashQuotaUsageCritical/critical',
    ]);
    expect(names(sent, 'tickets')).toEqual(['UpstashQuotaUsageHigh/warning']);
    const ticket = sent.find((n) => n.receiver === 'tickets')!;
    expect(ticket.alerts.map((a) => a.labels.quota)).toEqual(['qstash_schedules']);
  });

  it('a QStash outage the probe and the delivery SLO both see: one page (the SLO); the probe alone pages in the other region', async () => {
    const url = await startAlertmanager();
    const eu = { qstash_region: 'eu-central-1' };
    const us = { qstash_region: 'us-east-1' };
    const sent = await notify(url, [
      firing('UpstashSloDeliverySuccessBudgetBurn', { ...slo('delivery-success'), ...eu }, 'page'),
      firing('UpstashProbeFailing', { ...eu, kind: 'message' }),
      firing('UpstashProbeSlow', { ...eu, kind: 'workflow' }),
      // No SLO page in us-east-1 (a quiet account has no traffic to burn): the probe pages alone,
      // and its slow alert of the same kind is inhibited by it.
      firing('UpstashProbeFailing', { ...us, kind: 'message' }),
      firing('UpstashProbeSlow', { ...us, kind: 'message' }),
    ]);
    expect(names(sent, 'pager')).toEqual(['UpstashProbeFailing/critical', 'UpstashSloDeliverySuccessBudgetBurn/page']);
    const probePage = sent.find(
      (n) => n.receiver === 'pager' && n.alerts[0]?.labels.alertname === 'UpstashProbeFailing',
    )!;
    expect(probePage.alerts.map((a) => a.labels.qstash_region)).toEqual(['us-east-1']);
    expect(names(sent, 'tickets')).toEqual([]);
  });

  it("a failing probe fills its region's DLQ: that region's DLQ growth is no second notice, another region's still is", async () => {
    const url = await startAlertmanager();
    const eu = { qstash_region: 'eu-central-1' };
    const us = { qstash_region: 'us-east-1' };
    const sent = await notify(url, [
      firing('UpstashProbeFailing', { ...us, kind: 'message' }),
      firing('UpstashDlqGrowing', us),
      firing('UpstashDlqGrowing', eu),
    ]);
    expect(names(sent, 'pager')).toEqual(['UpstashProbeFailing/critical']);
    const tickets = sent.filter((n) => n.receiver === 'tickets').flatMap((n) => n.alerts);
    expect(tickets.map((a) => `${a.labels.alertname} ${a.labels.qstash_region}`)).toEqual([
      'UpstashDlqGrowing eu-central-1',
    ]);
  });

  it("one region's hard daily limit does not inhibit the other region's soft limit", async () => {
    const url = await startAlertmanager();
    const sent = await notify(url, [
      firing('UpstashDailyRequestHardLimitNear', { qstash_region: 'eu-central-1', source: 'official' }),
      firing('UpstashDailyRequestSoftLimitReached', { qstash_region: 'eu-central-1', source: 'official' }),
      firing('UpstashDailyRequestSoftLimitReached', { qstash_region: 'us-east-1', source: 'official' }),
    ]);
    expect(names(sent, 'pager')).toEqual(['UpstashDailyRequestHardLimitNear/critical']);
    expect(names(sent, 'tickets')).toEqual(['UpstashDailyRequestSoftLimitReached/warning']);
    const ticket = sent.find((n) => n.receiver === 'tickets')!;
    expect(ticket.alerts.map((a) => a.labels.qstash_region)).toEqual(['us-east-1']);
  });
});
