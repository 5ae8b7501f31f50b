// Remediation end to end with a real Prometheus and Alertmanager (Debian packages, on 127.0.0.1
// with temporary storage): a schedule created with the official SDK on the emulator fails on
// every run (its destination always answers 500); the exporter's schedules collector reports it;
// Prometheus, with the shipped rules file unchanged, fires UpstashScheduleLastRunFailed;
// Alertmanager calls the exporter's webhook with the bearer token; the schedule ends paused, and
// a healthy schedule does not. Then an alert routed to a receiver with the wrong bearer token
// gets 401 (Alertmanager counts a failed notification) and pauses nothing.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
// Install: apt-get install prometheus prometheus-alertmanager.
import { resolve } from 'node:path';
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
const ALERT = 'UpstashScheduleLastRunFailed';
const TOKEN = 'remediation-e2e-qstash-token-2c8e';
const BEARER = 'remediation-e2e-bearer-7d41-0123456789';
/** From Prometheus' start: its first scrape alone takes about 6 s (discovery batches its first update). */
const PAUSE_DEADLINE_MS = 40_000;

describe.skipIf(binaries.skip)(`remediation through a real Prometheus and Alertmanager${binaries.needs}`, () => {
  let failingDestination: Destination | undefined;
  let healthyDestination: Destination | undefined;
  let emulator: EmulatorHandle | undefined;
  let exporter: ExporterHandle | undefined;
  let stack: PrometheusStack | undefined;
  let log: CapturedLogger;
  let sdk: Client;
  let alertmanagerUrl = '';
  let prometheusStartedAt = 0;

  beforeAll(async () => {
    binaries.ensure();
    failingDestination = await startDestination(() => ({ status: 500, body: 'always failing' }));
    healthyDestination = await startDestination(() => ({ status: 200, body: 'ok' }));
    // Scale 60: a `* * * * *` schedule runs every real second.
    emulator = await createEmulator({ token: TOKEN, knobs: { timeScale: 60 } });
    sdk = new Client({ baseUrl: emulator.url, token: TOKEN, retry: false });
    await sdk.schedules.create({
      scheduleId: 'scd-failing',
      destination: `${failingDestination.url}/nightly`,
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
      rules: { path: RULES_FILE },
      job: 'upstash-exporter',
      target: new URL(exporter.url).host,
      alertmanagerConfig: {
        route: {
          receiver: 'remediation',
          group_by: ['alertname', 'schedule_id'],
          group_wait: '0s',
          group_interval: '1s',
          repeat_interval: '1h',
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
  });

  it(
    'the failing-schedule alert fires, reaches the webhook through Alertmanager, and the schedule ends paused',
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
      expect((await sdk.schedules.get('scd-healthy')).isPaused).toBe(false);

      const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
      expect(
        valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result: 'paused' }),
      ).toBe(1);
      expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'unauthorized' })).toBe(0);
      const action = log.lines().find((line) => line.action === 'pause_schedule' && line.result === 'paused');
      expect(action).toMatchObject({ scheduleId: 'scd-failing', alertname: ALERT, dryRun: false });
      expect(log.text()).not.toContain(BEARER);
    },
    PAUSE_DEADLINE_MS + 10_000,
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
