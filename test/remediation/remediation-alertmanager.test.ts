// Remediation end to end with a real Prometheus and Alertmanager (Debian packages, on 127.0.0.1
// with temporary storage): a schedule created with the official SDK on the emulator fails on
// every run (its destination answers 500, after 1.5 s: each run of the 3 s schedule is IN_PROGRESS
// for half of it, as a failing message being retried is on the real service, and the exporter,
// polling every second, sees every run both in progress and failed); the exporter's schedules
// collector reports it; Prometheus, with the shipped rules file (only the `for` of
// UpstashScheduleRunsFailing cut from 5m to 2s: the test cannot wait minutes; its expression is as
// shipped), fires UpstashScheduleRunsFailing (a rule that wanted FAIL in every sample of 15
// minutes never would); Alertmanager calls the exporter's webhook with the bearer token; the
// schedule ends paused, once: a person resumes it, it keeps failing, the alert fires again, and
// the webhook leaves it running. A schedule with one transient failure and a healthy one are never
// paused. Then an alert routed to a receiver with the wrong bearer token gets 401 (Alertmanager
// counts a failed notification) and pauses nothing.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
// Install: apt-get install prometheus prometheus-alertmanager.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import {
  captureLogger,
  eventually,
  exporterTestArgs,
  parseExposition,
  valueOf,
  type CapturedLogger,
} from '../support/exporter-e2e-helpers.js';
import { startDestination, type Destination } from '../support/emulator-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('remediation-alertmanager', ['prometheus', 'prometheus-alertmanager']);
const RULES_FILE = resolve('deploy/rules/upstash-exporter.rules.yml');
const ALERT = 'UpstashScheduleRunsFailing';
const TOKEN = 'remediation-e2e-qstash-token-2c8e';
const BEARER = 'remediation-e2e-bearer-7d41-0123456789';
/**
 * A bound, not a wait: the test goes on as soon as the schedule is paused. From Prometheus' start
 * its first scrape alone takes about 6 s (discovery batches its first update), then three runs of
 * the failing schedule (up to 9 s) and the 2 s `for`: a quiet machine paused it at 14 s; a busy CI
 * machine once took 38 s, so the bound leaves room.
 */
const PAUSE_DEADLINE_MS = 90_000;

/** The shipped rules with the `for` of the remediated alert cut to 2 s (its expression unchanged). */
function rulesWithShortFor(): string {
  const rules = YAML.parse(readFileSync(RULES_FILE, 'utf8')) as {
    groups: { rules: { alert?: string; for?: string }[] }[];
  };
  const rule = rules.groups.flatMap((group) => group.rules).find((r) => r.alert === ALERT);
  if (rule === undefined) throw new Error(`${ALERT} is not in ${RULES_FILE}`);
  rule.for = '2s';
  return YAML.stringify(rules);
}

describe.skipIf(binaries.skip)(`remediation through a real Prometheus and Alertmanager${binaries.needs}`, () => {
  let failingDestination: Destination | undefined;
  let healthyDestination: Destination | undefined;
  let transientDestination: Destination | undefined;
  let emulator: EmulatorHandle | undefined;
  let exporter: ExporterHandle | undefined;
  let stack: PrometheusStack | undefined;
  let log: CapturedLogger;
  let sdk: Client;
  let alertmanagerUrl = '';
  let prometheusStartedAt = 0;

  beforeAll(async () => {
    binaries.ensure();
    // Slower than a poll interval both in progress and failed: every run shows both ways.
    failingDestination = await startDestination(() => ({ status: 500, body: 'always failing', delayMs: 1_500 }));
    healthyDestination = await startDestination(() => ({ status: 200, body: 'ok' }));
    // One failed run, then healthy again.
    transientDestination = await startDestination((_request, index) =>
      index === 0 ? { status: 500, body: 'one blip' } : { status: 200, body: 'ok' },
    );
    // Scale 60: a `* * * * *` schedule runs every real second, `*/3 * * * *` every 3 s.
    emulator = await createEmulator({ token: TOKEN, knobs: { timeScale: 60 } });
    sdk = new Client({ baseUrl: emulator.url, token: TOKEN, retry: false });
    await sdk.schedules.create({
      scheduleId: 'scd-failing',
      destination: `${failingDestination.url}/nightly`,
      cron: '*/3 * * * *',
      retries: 0,
    });
    await sdk.schedules.create({
      scheduleId: 'scd-transient',
      destination: `${transientDestination.url}/often`,
      cron: '* * * * *',
      retries: 0,
    });
    await sdk.schedules.create({
      scheduleId: 'scd-healthy',
      destination: `${healthyDestination.url}/hourly`,
      cron: '* * * * *',
      retries: 0,
    });

    const config = loadConfig(
      [
        ...exporterTestArgs(emulator.url, TOKEN),
        '--poll-interval',
        '1s',
        '--remediation-enabled',
        '--remediation-bearer-token',
        BEARER,
      ],
      {},
    );
    log = captureLogger('info');
    exporter = await startExporter(config, log.logger);
    const webhookUrl = new URL('/-/remediation/alertmanager', exporter.url).href;

    const webhook = (credentials: string): Record<string, unknown> => ({
      url: webhookUrl,
      send_resolved: false,
      http_config: { authorization: { type: 'Bearer', credentials } },
    });
    stack = await startPrometheusStack({
      name: 'remediation-e2e',
      rules: { content: rulesWithShortFor() },
      job: 'upstash-exporter',
      target: new URL(exporter.url).host,
      alertmanagerConfig: {
        route: {
          receiver: 'remediation',
          group_by: ['alertname', 'schedule_id'],
          group_wait: '0s',
          group_interval: '1s',
          repeat_interval: '2s',
          // Alerts posted by the test with via="wrong-token" go to a receiver with a bad secret.
          routes: [{ receiver: 'remediation-wrong-token', matchers: ['via="wrong-token"'] }],
        },
        receivers: [
          { name: 'remediation', webhook_configs: [webhook(BEARER)] },
          { name: 'remediation-wrong-token', webhook_configs: [webhook(`${BEARER}-wrong`)] },
        ],
      },
      prometheusArgs: ['--log.level=warn'],
    });
    alertmanagerUrl = stack.alertmanagerUrl;
    prometheusStartedAt = stack.startedAt;
  }, 30_000);

  afterAll(async () => {
    await stack?.close();
    await exporter?.close();
    await emulator?.close();
    await failingDestination?.close();
    await healthyDestination?.close();
    await transientDestination?.close();
  });

  it(
    'the sustained failing-schedule alert fires, reaches the webhook through Alertmanager, and the schedule is paused once; one transient failure pauses nothing',
    async () => {
      try {
        await eventually(
          async () =>
            (await sdk.schedules.get('scd-failing')).isPaused === true ? [] : ['scd-failing is not paused yet'],
          PAUSE_DEADLINE_MS,
          250,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${stack?.output() ?? ''}`);
      }
      console.info(
        `remediation-alertmanager: schedule paused ${((Date.now() - prometheusStartedAt) / 1000).toFixed(1)} s after Prometheus started`,
      );
      // A person resumes it; it keeps failing; the alert fires again and Alertmanager repeats it
      // every 2 s: the webhook leaves the schedule running.
      await sdk.schedules.resume({ schedule: 'scd-failing' });
      await eventually(async () => {
        const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
        const left =
          valueOf(families, 'upstash_remediation_actions_total', {
            action: 'pause_schedule',
            result: 'resumed_by_person',
          }) ?? 0;
        return left >= 2 ? [] : [`resumed_by_person ${left} (want 2: the re-fired alert and a repeat)`];
      }, PAUSE_DEADLINE_MS);
      expect((await sdk.schedules.get('scd-failing')).isPaused).toBe(false);
      expect((await sdk.schedules.get('scd-healthy')).isPaused).toBe(false);
      // The transient schedule failed once (its first run) and was never the subject of an alert.
      expect(transientDestination!.requests.length).toBeGreaterThan(3);
      expect((await sdk.schedules.get('scd-transient')).isPaused).toBe(false);

      const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
      expect(
        valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result: 'paused' }),
      ).toBe(1);
      expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'unauthorized' })).toBe(0);
      const paused = log.lines().filter((line) => line.action === 'pause_schedule' && line.result === 'paused');
      expect(paused.map((line) => line.scheduleId)).toEqual(['scd-failing']);
      expect(paused[0]).toMatchObject({ alertname: ALERT, dryRun: false });
      expect(
        log.lines().filter((line) => line.action === 'pause_schedule' && line.scheduleId === 'scd-transient'),
      ).toEqual([]);
      expect(log.text()).not.toContain(BEARER);
    },
    3 * PAUSE_DEADLINE_MS,
  );

  it('an alert routed with the wrong bearer token gets 401 and pauses nothing', async () => {
    const posted = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          labels: { alertname: ALERT, schedule_id: 'scd-healthy', via: 'wrong-token', severity: 'warning' },
          annotations: { summary: 'posted by the test' },
        },
      ]),
    });
    expect(posted.status).toBe(200);
    // Alertmanager tried, the exporter refused: its own counter of failed notifications moves.
    await eventually(async () => {
      const exporterFamilies = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
      const refused = valueOf(exporterFamilies, 'upstash_remediation_webhooks_total', { result: 'unauthorized' }) ?? 0;
      const alertmanagerFamilies = parseExposition(await (await fetch(`${alertmanagerUrl}/metrics`)).text());
      const failed =
        alertmanagerFamilies
          .get('alertmanager_notifications_failed_total')
          ?.samples.find((s) => s.labels.integration === 'webhook')?.value ?? 0;
      return refused >= 1 && failed >= 1
        ? []
        : [`exporter refused ${refused}, Alertmanager failed notifications ${failed}`];
    }, 15_000);
    expect((await sdk.schedules.get('scd-healthy')).isPaused).toBe(false);
    const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
    expect(valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result: 'paused' })).toBe(
      1,
    );
  }, 25_000);
});
