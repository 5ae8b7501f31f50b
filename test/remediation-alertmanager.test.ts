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
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadConfig } from '../src/config/index.js';
import { createEmulator, type EmulatorHandle } from '../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../src/exporter.js';
import { captureLogger, eventually, parseExposition, valueOf, type CapturedLogger } from './exporter-e2e-helpers.js';
import { startDestination, type Destination } from './emulator-helpers.js';

const BINARIES = ['prometheus', 'prometheus-alertmanager'] as const;
const RULES_FILE = resolve('deploy/rules/upstash-exporter.rules.yml');
const ALERT = 'UpstashScheduleLastRunFailed';
const TOKEN = 'remediation-e2e-qstash-token-2c8e';
const BEARER = 'remediation-e2e-bearer-7d41';
/** From Prometheus' start: its first scrape alone takes about 6 s (discovery batches its first update). */
const PAUSE_DEADLINE_MS = 40_000;

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const missing = BINARIES.filter((binary) => !onPath(binary));
const inCi = process.env.CI === 'true';
if (missing.length > 0 && !inCi) {
  console.warn(`remediation-alertmanager: skipped, ${missing.join(' and ')} not installed (apt-get install prometheus prometheus-alertmanager)`);
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

interface Daemon {
  output(): string;
  stop(): Promise<void>;
}

function startDaemon(command: string, args: string[]): Daemon {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

describe.skipIf(missing.length > 0 && !inCi)(
  `remediation through a real Prometheus and Alertmanager${missing.length > 0 ? ` (needs ${missing.join(', ')})` : ''}`,
  () => {
    let dir = '';
    let failingDestination: Destination | undefined;
    let healthyDestination: Destination | undefined;
    let emulator: EmulatorHandle | undefined;
    let exporter: ExporterHandle | undefined;
    let prometheus: Daemon | undefined;
    let alertmanager: Daemon | undefined;
    let log: CapturedLogger;
    let sdk: Client;
    let alertmanagerUrl = '';
    let prometheusStartedAt = 0;
    const daemonOutput = (): string => `--- prometheus ---\n${prometheus?.output().slice(-3000) ?? ''}\n--- alertmanager ---\n${alertmanager?.output().slice(-3000) ?? ''}`;

    beforeAll(async () => {
      if (missing.length > 0) {
        throw new Error(`CI=true: ${missing.join(' and ')} must be installed (apt-get install prometheus prometheus-alertmanager)`);
      }
      dir = mkdtempSync(join(tmpdir(), 'remediation-e2e-'));
      failingDestination = await startDestination(() => ({ status: 500, body: 'always failing' }));
      healthyDestination = await startDestination(() => ({ status: 200, body: 'ok' }));
      // Scale 60: a `* * * * *` schedule runs every real second.
      emulator = await createEmulator({ token: TOKEN, knobs: { timeScale: 60 } });
      sdk = new Client({ baseUrl: emulator.url, token: TOKEN, retry: false });
      await sdk.schedules.create({ scheduleId: 'scd-failing', destination: `${failingDestination.url}/nightly`, cron: '* * * * *', retries: 0 });
      await sdk.schedules.create({ scheduleId: 'scd-healthy', destination: `${healthyDestination.url}/hourly`, cron: '* * * * *', retries: 0 });

      const config = loadConfig(
        [
          '--listen-address', '127.0.0.1:0',
          '--qstash-url', emulator.url,
          '--qstash-token', TOKEN,
          '--state-file', 'none',
          '--disable-collector', 'logs',
          '--poll-interval', '1s',
          '--http-max-retries', '0',
          '--remediation-enabled',
          '--remediation-bearer-token', BEARER,
        ],
        {},
      );
      log = captureLogger('info');
      exporter = await startExporter(config, log.logger);
      const webhookUrl = new URL('/-/remediation/alertmanager', exporter.url).href;

      const [prometheusPort, alertmanagerPort] = [await freePort(), await freePort()];
      alertmanagerUrl = `http://127.0.0.1:${alertmanagerPort}`;
      const webhook = (credentials: string): Record<string, unknown> => ({
        url: webhookUrl,
        send_resolved: false,
        http_config: { authorization: { type: 'Bearer', credentials } },
      });
      writeFileSync(
        join(dir, 'alertmanager.yml'),
        YAML.stringify({
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
        }),
      );
      writeFileSync(
        join(dir, 'prometheus.yml'),
        YAML.stringify({
          global: { scrape_interval: '1s', evaluation_interval: '1s' },
          rule_files: [RULES_FILE],
          alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${alertmanagerPort}`] }] }] },
          scrape_configs: [{ job_name: 'upstash-exporter', static_configs: [{ targets: [new URL(exporter.url).host] }] }],
        }),
      );
      alertmanager = startDaemon('prometheus-alertmanager', [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'alertmanager-data')}`,
        `--web.listen-address=127.0.0.1:${alertmanagerPort}`,
        '--cluster.listen-address=',
      ]);
      prometheusStartedAt = Date.now();
      prometheus = startDaemon('prometheus', [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus-data')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
        '--log.level=warn',
      ]);
    }, 30_000);

    afterAll(async () => {
      await prometheus?.stop();
      await alertmanager?.stop();
      await exporter?.close();
      await emulator?.close();
      await failingDestination?.close();
      await healthyDestination?.close();
      if (dir !== '') rmSync(dir, { recursive: true, force: true });
    });

    it('the failing-schedule alert fires, reaches the webhook through Alertmanager, and the schedule ends paused', async () => {
      try {
        await eventually(async () => ((await sdk.schedules.get('scd-failing')).isPaused === true ? [] : ['scd-failing is not paused yet']), PAUSE_DEADLINE_MS, 250);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${daemonOutput()}`);
      }
      console.info(`remediation-alertmanager: schedule paused ${((Date.now() - prometheusStartedAt) / 1000).toFixed(1)} s after Prometheus started`);
      expect((await sdk.schedules.get('scd-healthy')).isPaused).toBe(false);

      const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
      expect(valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result: 'paused' })).toBe(1);
      expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'unauthorized' })).toBe(0);
      const action = log.lines().find((line) => line.action === 'pause_schedule' && line.result === 'paused');
      expect(action).toMatchObject({ scheduleId: 'scd-failing', alertname: ALERT, dryRun: false });
      expect(log.text()).not.toContain(BEARER);
    }, PAUSE_DEADLINE_MS + 10_000);

    it('an alert routed with the wrong bearer token gets 401 and pauses nothing', async () => {
      const posted = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ labels: { alertname: ALERT, schedule_id: 'scd-healthy', via: 'wrong-token', severity: 'warning' }, annotations: { summary: 'posted by the test' } }]),
      });
      expect(posted.status).toBe(200);
      // Alertmanager tried, the exporter refused: its own counter of failed notifications moves.
      await eventually(async () => {
        const exporterFamilies = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
        const refused = valueOf(exporterFamilies, 'upstash_remediation_webhooks_total', { result: 'unauthorized' }) ?? 0;
        const alertmanagerFamilies = parseExposition(await (await fetch(`${alertmanagerUrl}/metrics`)).text());
        const failed = alertmanagerFamilies.get('alertmanager_notifications_failed_total')?.samples.find((s) => s.labels.integration === 'webhook')?.value ?? 0;
        return refused >= 1 && failed >= 1 ? [] : [`exporter refused ${refused}, Alertmanager failed notifications ${failed}`];
      }, 15_000);
      expect((await sdk.schedules.get('scd-healthy')).isPaused).toBe(false);
      const families = parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
      expect(valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result: 'paused' })).toBe(1);
    }, 25_000);
  },
);
