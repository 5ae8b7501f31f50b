// The remediation webhook in the running exporter, against the emulator, over real HTTP: an
// Alertmanager (version 4) notification for an allowlisted firing alert pauses the schedule its
// `schedule_id` names, idempotently; a wrong or missing bearer token is 401 and pauses nothing
// (the webhook sits outside the exporter's basic auth, so the bearer is its only protection);
// dry-run decides without pausing; an upstream failure answers 503 so Alertmanager retries.
// Then `upstash-exporter pause-schedule <id>` as users run it (node dist/cli.js; `npm run build`
// first, as `npm test` does).
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@upstash/qstash';
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { FailureThrottle, FREE_FAILURES } from '../../src/remediation/webhook.js';
import { REMEDIATION_FAMILIES } from '../../src/remediation/families.js';
import {
  captureLogger,
  eventually,
  exporterTestArgs,
  parseExposition,
  valueOf,
  type CapturedLogger,
  type Family,
} from '../support/exporter-e2e-helpers.js';
import { startDestination, startRegions, type Destination } from '../support/emulator-helpers.js';

const TOKEN = 'remediation-test-qstash-token-93ab';
const BEARER = 'remediation-bearer-canary-4f1d-0123456789';
const ALERT = 'UpstashScheduleRunsFailing';
const CLI = resolve('dist/cli.js');
const WEBHOOK = '/-/remediation/alertmanager';

let dir = '';
let destination: Destination;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'remediation-test-'));
  destination = await startDestination(() => ({ status: 500, body: 'always failing' }));
});
afterAll(async () => {
  await destination.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Stack {
  emulator: EmulatorHandle;
  exporter: ExporterHandle;
  log: CapturedLogger;
  sdk: Client;
  /** Creates a schedule (far-future cron: it never fires during the test) and returns its id. */
  schedule(id: string): Promise<string>;
  isPaused(id: string): Promise<boolean>;
  notify(
    body: unknown,
    authorization?: string,
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }>;
  scrape(): Promise<Map<string, Family>>;
  close(): Promise<void>;
}

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

const SCRAPE_USER = { user: 'prometheus', password: 'scrape-secret' };

async function startStack(extraArgs: string[] = [], timeScale = 1): Promise<Stack> {
  const emulator = await createEmulator({ token: TOKEN, knobs: { timeScale } });
  const webConfig = join(dir, `web-${stacks.length}.yml`);
  writeFileSync(webConfig, `basic_auth_users:\n  ${SCRAPE_USER.user}: ${bcrypt.hashSync(SCRAPE_USER.password, 4)}\n`);
  const config = loadConfig(
    [
      ...exporterTestArgs(emulator.url, TOKEN),
      '--web-config-file',
      webConfig,
      '--remediation-enabled',
      '--remediation-bearer-token',
      BEARER,
      ...extraArgs,
    ],
    {},
  );
  const log = captureLogger('debug');
  let exporter: ExporterHandle;
  try {
    exporter = await startExporter(config, log.logger);
  } catch (error) {
    await emulator.close();
    throw error;
  }
  const sdk = new Client({ baseUrl: emulator.url, token: TOKEN, retry: false });
  const stack: Stack = {
    emulator,
    exporter,
    log,
    sdk,
    schedule: async (id) =>
      (
        await sdk.schedules.create({
          scheduleId: id,
          destination: `${destination.url}/job`,
          cron: '0 0 1 1 *',
          retries: 0,
        })
      ).scheduleId,
    isPaused: async (id) => (await sdk.schedules.get(id)).isPaused === true,
    notify: async (body, authorization = `Bearer ${BEARER}`) => {
      const response = await fetch(new URL(WEBHOOK, exporter.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return {
        status: response.status,
        json: (await response.json()) as Record<string, unknown>,
        headers: response.headers,
      };
    },
    scrape: async () => {
      const response = await fetch(new URL('/metrics', exporter.url), {
        headers: {
          authorization: `Basic ${Buffer.from(`${SCRAPE_USER.user}:${SCRAPE_USER.password}`).toString('base64')}`,
        },
      });
      return parseExposition(await response.text());
    },
    close: async () => {
      await exporter.close();
      await emulator.close();
    },
  };
  stacks.push(stack);
  return stack;
}

function alert(
  labels: Record<string, string>,
  status: 'firing' | 'resolved' = 'firing',
  endsAt = '0001-01-01T00:00:00Z',
): Record<string, unknown> {
  return {
    status,
    labels,
    annotations: { summary: 'test' },
    startsAt: new Date().toISOString(),
    endsAt,
    generatorURL: 'http://prometheus.example/graph',
    fingerprint: 'abc123',
  };
}

function notification(alerts: Array<Record<string, unknown>>): Record<string, unknown> {
  return {
    version: '4',
    groupKey: '{}:{alertname="UpstashScheduleRunsFailing"}',
    truncatedAlerts: 0,
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    receiver: 'upstash-remediation',
    groupLabels: { alertname: ALERT },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager.example',
    alerts,
  };
}

const actions = (families: Map<string, Family>, result: string): number | undefined =>
  valueOf(families, 'upstash_remediation_actions_total', { action: 'pause_schedule', result });

describe('remediation webhook', () => {
  it('pauses the schedule of a firing allowlisted alert, then reports it already paused; each action logged and counted', async () => {
    const stack = await startStack();
    const failing = await stack.schedule('scd-failing');
    const healthy = await stack.schedule('scd-healthy');

    const first = await stack.notify(
      notification([alert({ alertname: ALERT, schedule_id: failing, severity: 'warning' })]),
    );
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      dryRun: false,
      ignored: 0,
      actions: [
        { action: 'pause_schedule', scheduleId: failing, region: 'eu-central-1', alertname: ALERT, result: 'paused' },
      ],
    });
    expect(await stack.isPaused(failing)).toBe(true);
    expect(await stack.isPaused(healthy)).toBe(false);

    // Alertmanager repeats notifications: the second one changes nothing.
    const again = await stack.notify(notification([alert({ alertname: ALERT, schedule_id: failing })]));
    expect(again.json.actions).toEqual([
      {
        action: 'pause_schedule',
        scheduleId: failing,
        region: 'eu-central-1',
        alertname: ALERT,
        result: 'already_paused',
      },
    ]);

    const families = await stack.scrape();
    expect(actions(families, 'paused')).toBe(1);
    expect(actions(families, 'already_paused')).toBe(1);
    expect(actions(families, 'error')).toBe(0);
    expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'accepted' })).toBe(2);
    const logged = stack.log.lines().filter((line) => line.action === 'pause_schedule');
    expect(logged.map((line) => [line.scheduleId, line.result, line.alertname])).toEqual([
      [failing, 'paused', ALERT],
      [failing, 'already_paused', ALERT],
    ]);
    expect(stack.log.text()).not.toContain(BEARER);
  });

  it('a wrong or missing bearer token is 401 and pauses nothing, even with the exporter basic-auth credentials', async () => {
    const stack = await startStack();
    const id = await stack.schedule('scd-guarded');
    const body = notification([alert({ alertname: ALERT, schedule_id: id })]);
    const basic = `Basic ${Buffer.from(`${SCRAPE_USER.user}:${SCRAPE_USER.password}`).toString('base64')}`;
    for (const authorization of [
      `Bearer ${BEARER}x`,
      `Bearer ${BEARER.slice(0, -1)}`,
      'Bearer',
      '',
      basic,
      `Token ${BEARER}`,
    ]) {
      const answer = await stack.notify(body, authorization);
      expect(answer.status, authorization).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(await stack.isPaused(id)).toBe(false);
    const families = await stack.scrape();
    expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'unauthorized' })).toBe(6);
    expect(actions(families, 'paused')).toBe(0);
    // Another method is 405 naming POST, not 404.
    const got = await fetch(new URL(WEBHOOK, stack.exporter.url));
    expect(got.status).toBe(405);
    expect(got.headers.get('allow')).toBe('POST');
    // The scheme is case-insensitive; the right token then works.
    expect((await stack.notify(body, `bearer ${BEARER}`)).status).toBe(200);
    expect(await stack.isPaused(id)).toBe(true);
  });

  it('wrong tokens from an address that sent too many wait (429 with Retry-After, counted as throttled); the right token from that address always gets through', async () => {
    const stack = await startStack();
    const id = await stack.schedule('scd-throttled');
    const body = notification([alert({ alertname: ALERT, schedule_id: id })]);
    for (let i = 0; i < FREE_FAILURES; i++) expect((await stack.notify(body, `Bearer guess-${i}`)).status).toBe(401);
    // One more wrong token: from now on the address waits 1 s before anything it sends is looked at.
    expect((await stack.notify(body, 'Bearer guess-last')).status).toBe(401);
    const throttled = await stack.notify(body, 'Bearer guess-during-wait');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('1');
    // Alertmanager behind the same address (a shared NAT): its right token is not held back.
    expect((await stack.notify(body)).status).toBe(200);
    expect(await stack.isPaused(id)).toBe(true);
    // Nor does it clear the guesser's record: the next wrong token still waits.
    expect((await stack.notify(body, 'Bearer guess-after-the-right-one')).status).toBe(429);
    const families = await stack.scrape();
    expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'unauthorized' })).toBe(FREE_FAILURES + 1);
    expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'throttled' })).toBe(2);
    expect(valueOf(families, 'upstash_remediation_webhooks_total', { result: 'accepted' })).toBe(1);
  });

  it('ignores resolved alerts, other alert names and alerts without schedule_id; an unknown schedule is not_found', async () => {
    const stack = await startStack();
    const id = await stack.schedule('scd-untouched');
    const answer = await stack.notify(
      notification([
        alert({ alertname: ALERT, schedule_id: id }, 'resolved'),
        alert({ alertname: 'UpstashScheduleMissedRun', schedule_id: id }),
        alert({ alertname: ALERT }),
        alert({ alertname: ALERT, schedule_id: 'scd-does-not-exist' }),
      ]),
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      ignored: 3,
      actions: [{ scheduleId: 'scd-does-not-exist', result: 'not_found' }],
    });
    expect(await stack.isPaused(id)).toBe(false);
    const families = await stack.scrape();
    for (const reason of ['resolved', 'not_allowed', 'no_schedule_id']) {
      expect(valueOf(families, 'upstash_remediation_alerts_ignored_total', { reason }), reason).toBe(1);
    }
    expect(actions(families, 'not_found')).toBe(1);
  });

  it("acts on the alert's evidence now: a schedule whose last run succeeded again stays running, an ended alert is resolved, a failing one is paused once and stays resumed when a person resumes it", async () => {
    // Scale 60: a `* * * * *` schedule runs every real second.
    const stack = await startStack([], 60);
    let healthy = false;
    const flaky = await startDestination(() => (healthy ? { status: 200, body: 'ok' } : { status: 500, body: 'down' }));
    try {
      const runStates = async (id: string): Promise<string[]> =>
        Object.values((await stack.sdk.schedules.get(id)).lastScheduleStates ?? {});
      const every = async (id: string, state: string): Promise<void> =>
        eventually(
          async () => {
            const states = await runStates(id);
            return states.length > 0 && states.every((s) => s === state) ? [] : [`${id}: last run ${states.join(',')}`];
          },
          15_000,
          100,
        );
      const create = async (id: string, url: string): Promise<string> =>
        (await stack.sdk.schedules.create({ scheduleId: id, destination: url, cron: '* * * * *', retries: 0 }))
          .scheduleId;
      const transient = await create('scd-transient', `${flaky.url}/job`);
      const persistent = await create('scd-persistent', `${destination.url}/job`);
      // The transient failure: the alert was sent while scd-transient failed, and its destination
      // came back before the notification was acted on.
      await every(transient, 'FAIL');
      healthy = true;
      await every(transient, 'SUCCESS');
      await every(persistent, 'FAIL');

      const first = await stack.notify(
        notification([
          alert({ alertname: ALERT, schedule_id: transient }),
          alert({ alertname: ALERT, schedule_id: persistent }),
        ]),
      );
      expect(first.status).toBe(200);
      expect(first.json.actions).toEqual([
        {
          action: 'pause_schedule',
          scheduleId: transient,
          region: 'eu-central-1',
          alertname: ALERT,
          result: 'not_failing',
        },
        {
          action: 'pause_schedule',
          scheduleId: persistent,
          region: 'eu-central-1',
          alertname: ALERT,
          result: 'paused',
        },
      ]);
      expect(await stack.isPaused(transient)).toBe(false);
      expect(await stack.isPaused(persistent)).toBe(true);

      // A person resumes the schedule; it keeps failing, the alert fires again: left running.
      await stack.sdk.schedules.resume({ schedule: persistent });
      await every(persistent, 'FAIL');
      const again = await stack.notify(notification([alert({ alertname: ALERT, schedule_id: persistent })]));
      expect(again.json.actions).toEqual([
        {
          action: 'pause_schedule',
          scheduleId: persistent,
          region: 'eu-central-1',
          alertname: ALERT,
          result: 'resumed_by_person',
        },
      ]);
      expect(await stack.isPaused(persistent)).toBe(false);

      // An alert Alertmanager still lists as firing but whose end time has passed has ended.
      const ended = await stack.notify(
        notification([
          alert({ alertname: ALERT, schedule_id: transient }, 'firing', new Date(Date.now() - 60_000).toISOString()),
        ]),
      );
      expect(ended.json).toMatchObject({ actions: [], ignored: 1 });

      const families = await stack.scrape();
      expect(actions(families, 'paused')).toBe(1);
      expect(actions(families, 'not_failing')).toBe(1);
      expect(actions(families, 'resumed_by_person')).toBe(1);
      expect(valueOf(families, 'upstash_remediation_alerts_ignored_total', { reason: 'resolved' })).toBe(1);
    } finally {
      await flaky.close();
    }
  });

  it('refuses payloads that are not version 4 notifications, without acting', async () => {
    const stack = await startStack();
    const id = await stack.schedule('scd-payloads');
    const good = notification([alert({ alertname: ALERT, schedule_id: id })]);
    for (const body of [
      'not json',
      { ...good, version: '3' },
      { ...good, alerts: [{ labels: { alertname: ALERT, schedule_id: id } }] },
      [],
    ]) {
      expect((await stack.notify(body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await stack.isPaused(id)).toBe(false);
    expect(valueOf(await stack.scrape(), 'upstash_remediation_webhooks_total', { result: 'invalid' })).toBe(4);
  });

  it('dry run: decides and counts, pauses nothing', async () => {
    const stack = await startStack(['--remediation-dry-run']);
    const id = await stack.schedule('scd-dry');
    const answer = await stack.notify(notification([alert({ alertname: ALERT, schedule_id: id })]));
    expect(answer.json).toMatchObject({ dryRun: true, actions: [{ scheduleId: id, result: 'dry_run' }] });
    expect(await stack.isPaused(id)).toBe(false);
    expect(actions(await stack.scrape(), 'dry_run')).toBe(1);
    expect(stack.log.text()).toContain(`would pause schedule ${id}`);
  });

  it('an upstream failure answers 503 (Alertmanager retries), and the retry pauses', async () => {
    const stack = await startStack(['--remediation-alert', 'CustomScheduleAlert']);
    const id = await stack.schedule('scd-retry');
    const body = notification([alert({ alertname: 'CustomScheduleAlert', schedule_id: id })]);
    stack.emulator.setKnobs({ faultScope: ['schedules'], failNext: 1 });
    const failed = await stack.notify(body);
    expect(failed.status).toBe(503);
    expect(failed.json.actions).toEqual([
      {
        action: 'pause_schedule',
        scheduleId: id,
        region: 'eu-central-1',
        alertname: 'CustomScheduleAlert',
        result: 'error',
      },
    ]);
    expect(await stack.isPaused(id)).toBe(false);
    expect((await stack.notify(body)).status).toBe(200);
    expect(await stack.isPaused(id)).toBe(true);
    const families = await stack.scrape();
    expect(actions(families, 'error')).toBe(1);
    expect(actions(families, 'paused')).toBe(1);
  });
});

describe('failure throttle', () => {
  it('lets FREE_FAILURES through, then doubles the wait up to 5 min; an hour of quiet clears it; follows a bounded number of addresses', () => {
    let now = 0;
    const throttle = new FailureThrottle(() => now, 3);
    for (let i = 0; i < FREE_FAILURES; i++) {
      expect(throttle.waitMs('a')).toBe(0);
      throttle.fail('a');
    }
    expect(throttle.waitMs('a')).toBe(0);
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      throttle.fail('a');
      waits.push(throttle.waitMs('a'));
      now += throttle.waitMs('a');
    }
    expect(waits.slice(0, 5)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    expect(Math.max(...waits)).toBe(300_000);

    for (let i = 0; i <= FREE_FAILURES; i++) throttle.fail('b');
    expect(throttle.waitMs('b')).toBe(1_000);
    now += 60 * 60_000 + 1;
    expect(throttle.waitMs('b')).toBe(0);

    for (const address of ['c', 'd', 'e', 'f']) throttle.fail(address);
    expect(throttle.size).toBe(3);
  });
});

describe('remediation families', () => {
  it('are the ones declared (docs/metrics.md lists them), and pass promtool check metrics', async (ctx) => {
    const stack = await startStack();
    const response = await fetch(new URL('/metrics', stack.exporter.url), {
      headers: {
        authorization: `Basic ${Buffer.from(`${SCRAPE_USER.user}:${SCRAPE_USER.password}`).toString('base64')}`,
      },
    });
    const text = await response.text();
    const served = [...parseExposition(text).keys()].filter((name) => name.startsWith('upstash_remediation_')).sort();
    // docs/metrics.md's table is written from these declarations (test/system/metrics-doc.test.ts).
    expect(served).toEqual(
      Object.values(REMEDIATION_FAMILIES)
        .map((family) => family.name)
        .sort(),
    );

    if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status !== 0) {
      if (process.env.CI === 'true') throw new Error('promtool is required under CI (apt-get install prometheus)');
      ctx.skip('promtool not installed');
    }
    const familyOf = (line: string): string => (line.startsWith('# ') ? (line.split(' ')[2] ?? '') : line);
    const ours = text
      .split('\n')
      .filter((line) => familyOf(line).startsWith('upstash_remediation_'))
      .join('\n');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, cwd: dir, timeout: 15_000 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        done({ status, stdout, stderr });
      },
    );
  });
}

describe('upstash-exporter pause-schedule', () => {
  let emulator: EmulatorHandle;
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
    emulator = await createEmulator({ token: TOKEN });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('pauses with one line and exit 0, also when already paused; unknown schedule exit 1; config errors exit 2', async () => {
    const sdk = new Client({ baseUrl: emulator.url, token: TOKEN, retry: false });
    await sdk.schedules.create({ scheduleId: 'scd-cli', destination: `${destination.url}/job`, cron: '0 0 1 1 *' });
    const env = { QSTASH_TOKEN: TOKEN, QSTASH_URL: emulator.url, STATE_FILE: 'none' };

    expect(await cli(['pause-schedule', 'scd-cli'], env)).toEqual({
      status: 0,
      stdout: 'paused schedule scd-cli\n',
      stderr: '',
    });
    expect((await sdk.schedules.get('scd-cli')).isPaused).toBe(true);
    expect(await cli(['pause-schedule', 'scd-cli', '--http-max-retries', '0'], env)).toEqual({
      status: 0,
      stdout: 'schedule scd-cli was already paused\n',
      stderr: '',
    });
    expect(await cli(['pause-schedule', 'scd-nope'], env)).toEqual({
      status: 1,
      stdout: '',
      stderr: 'schedule scd-nope not found\n',
    });

    const wrongToken = await cli(['pause-schedule', 'scd-cli', '--http-max-retries', '0'], {
      ...env,
      QSTASH_TOKEN: 'wrong-token-canary',
    });
    expect(wrongToken.status).toBe(1);
    expect(wrongToken.stderr).toMatch(/^cannot pause schedule scd-cli: ERR_API_AUTH: .*\n$/);
    expect(wrongToken.stderr).not.toContain('wrong-token-canary');

    for (const [args, pattern] of [
      [['pause-schedule'], /^pause-schedule needs the id of the schedule to pause/],
      [['pause-schedule', '--qstash-token', 'x'], /^pause-schedule needs the id/],
      [['pause-schedule', 'scd-cli', '--no-such-flag'], /unknown flag --no-such-flag/],
    ] as const) {
      const result = await cli([...args], env);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const noToken = await cli(['pause-schedule', 'scd-cli'], {
      UPSTASH_EMAIL: 'a@b.c',
      UPSTASH_API_KEY: 'k',
      STATE_FILE: 'none',
    });
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toMatch(/^pause-schedule needs the QStash token/);
  });
});

describe('remediation with two regions', () => {
  it("pauses the schedule in the region its alert's qstash_region names; refuses an alert without one", async () => {
    const multi = await startRegions(['eu-central-1', 'us-east-1']);
    const config = loadConfig(
      [
        ...['--listen-address', '127.0.0.1:0', '--state-file', 'none', '--disable-collector', 'logs,workflows'],
        ...['--remediation-enabled', '--remediation-bearer-token', BEARER],
      ],
      multi.migrationEnvironment('us-east-1'),
    );
    const exporter = await startExporter(config, captureLogger('info').logger);
    try {
      const sdkOf = (name: string): Client =>
        new Client({ baseUrl: multi.regions[name]!.url, token: multi.regions[name]!.token, retry: false });
      const create = async (name: string): Promise<string> =>
        (
          await sdkOf(name).schedules.create({
            scheduleId: 'scd-same-id',
            destination: `${destination.url}/job`,
            cron: '0 0 1 1 *',
          })
        ).scheduleId;
      const id = await create('eu-central-1');
      expect(await create('us-east-1')).toBe(id);
      const paused = async (name: string): Promise<boolean> => (await sdkOf(name).schedules.get(id)).isPaused === true;
      const notify = async (labels: Record<string, string>) =>
        (
          await fetch(new URL(WEBHOOK, exporter.url), {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${BEARER}` },
            body: JSON.stringify(notification([alert(labels)])),
          })
        ).json() as Promise<{ actions: unknown[]; ignored: number }>;

      // Without qstash_region the schedule of which region is meant is unknown: nothing paused.
      expect(await notify({ alertname: ALERT, schedule_id: id })).toMatchObject({ actions: [], ignored: 1 });
      expect([await paused('eu-central-1'), await paused('us-east-1')]).toEqual([false, false]);
      // Named: only that region's schedule is paused.
      const answer = await notify({ alertname: ALERT, schedule_id: id, qstash_region: 'us-east-1' });
      expect(answer.actions).toEqual([
        { action: 'pause_schedule', scheduleId: id, region: 'us-east-1', alertname: ALERT, result: 'paused' },
      ]);
      expect([await paused('eu-central-1'), await paused('us-east-1')]).toEqual([false, true]);
    } finally {
      await exporter.close();
      await multi.emulator.close();
    }
  });
});
