// Every upstream request through a real egress proxy: Debian's tinyproxy in front of the
// emulator served over TLS with a certificate of a CA made here with openssl. The exporter
// (startExporter, as `run` builds it from flags and an environment) counts exactly through the
// proxy; each connection the upstream gets is a CONNECT in the proxy's own log and each request
// it gets is one the exporter counted; NO_PROXY keeps the proxy out; a proxy with basic auth
// works with the credentials of the proxy URL, which reach no log line; 407, 403, a proxy that
// is down, and an upstream certificate nothing trusts are each logged once, with their cause, and
// counted as errors; the exporter recovers when the proxy comes back.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryClient } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/index.js';
import { pauseScheduleCommand } from '../../src/remediation/command.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import {
  CANARY,
  captureLogger,
  parseExposition,
  type CapturedLogger,
  type Family,
} from '../support/exporter-e2e-helpers.js';
import { differences, exportedEventSeries, settle, truthEventSeries } from '../support/logs-helpers.js';
import { freePort, requireBinaries } from '../support/prometheus.js';
import { makeTestCa, startTinyproxy, type TestCa, type Tinyproxy } from '../support/tinyproxy.js';

const tools = requireBinaries('api-proxy.test.ts', ['tinyproxy', 'openssl']);
const PROXY_PASSWORD = 'CANARY-proxy-pw-5d1e';

/** The emulator over TLS, counting the connections and requests it gets. */
interface TlsUpstream {
  emu: EmulatorHandle;
  port: number;
  /** host:port as a CONNECT names it. */
  target: string;
  connections: number;
  requests: number;
}

async function startTlsUpstream(cert: { key: string; cert: string }): Promise<TlsUpstream> {
  const counts = { connections: 0, requests: 0 };
  const emu = await createEmulator(
    { ...CANARY },
    {
      tls: cert,
      onServer: (server: Server) => {
        server.on('secureConnection', () => counts.connections++);
        server.on('request', () => counts.requests++);
      },
    },
  );
  const port = Number(new URL(emu.url).port);
  return {
    emu,
    port,
    target: `127.0.0.1:${port}`,
    get connections() {
      return counts.connections;
    },
    set connections(value: number) {
      counts.connections = value;
    },
    get requests() {
      return counts.requests;
    },
    set requests(value: number) {
      counts.requests = value;
    },
  };
}

interface Running {
  exporter: ExporterHandle;
  log: CapturedLogger;
  scrape(): Promise<Map<string, Family>>;
  close(): Promise<void>;
}

const running: Running[] = [];

/** The exporter as `run` builds it from these flags and this environment, every collector each second. */
async function startWith(upstream: TlsUpstream, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Running> {
  const config = loadConfig(
    [
      '--listen-address',
      '127.0.0.1:0',
      '--qstash-url',
      upstream.emu.url,
      '--management-url',
      upstream.emu.url,
      '--qstash-token',
      CANARY.token,
      '--upstash-email',
      CANARY.email,
      '--upstash-api-key',
      CANARY.apiKey,
      '--state-file',
      'none',
      '--poll-interval',
      '1s',
      '--logs-ingestion-delay',
      '0s',
      '--http-max-retries',
      '0',
      ...args,
    ],
    env,
  );
  const log = captureLogger('trace');
  const exporter = await startExporter(config, log.logger);
  let closed: Promise<void> | undefined;
  const handle: Running = {
    exporter,
    log,
    scrape: async () => {
      const response = await fetch(new URL('/metrics', exporter.url));
      return parseExposition(await response.text());
    },
    close: () => (closed ??= exporter.close()),
  };
  running.push(handle);
  return handle;
}

function sample(families: Map<string, Family>, name: string, labels: Record<string, string>): number | undefined {
  return families
    .get(name)
    ?.samples.find((s) => Object.entries(labels).every(([key, value]) => s.labels[key] === value))?.value;
}

function sumOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  return (families.get(name)?.samples ?? [])
    .filter((s) => Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Requests the exporter reported making (its onRequest hook logs each at trace or debug). */
function requestsMade(log: CapturedLogger): number {
  return log.lines().filter((line) => line.msg === 'upstream request' || line.msg === 'upstream request failed').length;
}

function warnings(log: CapturedLogger, pattern: RegExp): Array<Record<string, unknown>> {
  return log.lines().filter((line) => line.level === 'warn' && pattern.test(String(line.msg)));
}

async function collectorSucceeds(run: Running, collector = 'schedules'): Promise<void> {
  await waitFor(
    async () => sample(await run.scrape(), 'upstash_exporter_collector_success', { collector }) === 1,
    20_000,
    `collector ${collector} to succeed`,
  );
}

describe.skipIf(tools.skip)(`the exporter behind an egress proxy${tools.needs}`, () => {
  let ca: TestCa;
  let upstream: TlsUpstream;
  let destination: Destination;
  const proxies: Tinyproxy[] = [];

  beforeAll(async () => {
    tools.ensure();
    ca = makeTestCa();
    upstream = await startTlsUpstream(ca.server);
    destination = await startDestination();
  }, 60_000);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((run) => run.close()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
  });

  afterAll(async () => {
    await upstream?.emu.close();
    await destination?.close();
    ca?.remove();
  });

  /** Messages published straight to the emulator (trusting the test CA); the connections and requests that took. */
  async function publish(count: number): Promise<{ connections: number; requests: number }> {
    const agent = new Agent({ connect: { ca: readFileSync(ca.caFile) } });
    let connections = 0;
    agent.on('connect', () => connections++);
    for (let i = 0; i < count; i++) {
      const answer = await request(`${upstream.emu.url}/v2/publish/${destination.url}/item-${i}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${CANARY.token}`, 'content-type': 'text/plain', 'upstash-retries': '0' },
        body: 'hello',
      });
      await answer.body.text();
      expect(answer.statusCode).toBe(200);
    }
    await agent.close();
    await settle(upstream.emu);
    return { connections, requests: count };
  }

  async function proxy(options: Parameters<typeof startTinyproxy>[1]): Promise<Tinyproxy> {
    const started = await startTinyproxy(tools.paths.tinyproxy!, options);
    proxies.push(started);
    return started;
  }

  it('counts exactly through HTTPS_PROXY; every upstream connection is a CONNECT, every upstream request one the exporter made', async () => {
    const tinyproxy = await proxy({ connectPorts: [upstream.port] });
    upstream.connections = 0;
    upstream.requests = 0;
    const run = await startWith(upstream, { HTTPS_PROXY: tinyproxy.url }, ['--http-ca-file', ca.caFile]);
    // Counting starts at the first poll: the traffic comes after it.
    await collectorSucceeds(run, 'logs');
    const ours = await publish(12);
    const truth = truthEventSeries(upstream.emu.groundTruth());
    await waitFor(
      async () => differences(exportedEventSeries(await run.scrape()), truth).length === 0,
      30_000,
      'the exported log events to equal the ground truth',
    );
    await collectorSucceeds(run, 'account');
    // Between polls, nothing is in flight: the counts on both sides meet.
    const tunnels = (): number => tinyproxy.connects().filter((target) => target === upstream.target).length;
    // The emulator's counts without the test's own publishing (straight to it).
    const received = (): { connections: number; requests: number } => ({
      connections: upstream.connections - ours.connections,
      requests: upstream.requests - ours.requests,
    });
    await waitFor(
      () => received().connections === tunnels() && received().requests === requestsMade(run.log),
      10_000,
      () =>
        `upstream connections ${received().connections} = CONNECTs ${tunnels()}, upstream requests ${received().requests} = made ${requestsMade(run.log)}`,
    );
    const families = await run.scrape();
    const counted = sumOf(families, 'upstash_exporter_api_requests_total');
    console.log(
      `through tinyproxy: ${received().requests} requests received by the upstream over ${received().connections} connections, ` +
        `${tunnels()} CONNECTs in the proxy log; the exporter made ${requestsMade(run.log)} (api_requests_total ${counted} at the last scrape)`,
    );
    expect(received().requests).toBeGreaterThan(0);
    expect(counted).toBeLessThanOrEqual(requestsMade(run.log));
    expect(counted).toBeGreaterThan(0);
    // The keep-alive pool holds through the proxy: far fewer tunnels than requests.
    expect(tunnels()).toBeLessThan(received().requests / 2);
    expect(sumOf(families, 'upstash_exporter_api_requests_total', { code: 'error' })).toBe(0);
  }, 60_000);

  it('goes direct to a host NO_PROXY names: no CONNECT in the proxy log', async () => {
    const tinyproxy = await proxy({ connectPorts: [upstream.port] });
    const run = await startWith(upstream, { HTTPS_PROXY: tinyproxy.url, NO_PROXY: 'example.com, 127.0.0.1' }, [
      '--http-ca-file',
      ca.caFile,
    ]);
    await collectorSucceeds(run);
    await collectorSucceeds(run, 'account');
    expect(tinyproxy.connects()).toEqual([]);
  }, 30_000);

  it('http.proxy_url with credentials through a proxy that asks for them; the password reaches no log line', async () => {
    const tinyproxy = await proxy({
      connectPorts: [upstream.port],
      basicAuth: { user: 'exporter', password: PROXY_PASSWORD },
    });
    const withCredentials = `http://exporter:${PROXY_PASSWORD}@127.0.0.1:${tinyproxy.port}`;
    const run = await startWith(upstream, {}, ['--http-proxy-url', withCredentials, '--http-ca-file', ca.caFile]);
    await collectorSucceeds(run);
    await collectorSucceeds(run, 'account');
    expect(tinyproxy.connects().length).toBeGreaterThan(0);
    // The captured logger has no scrubber: nothing the exporter logs may hold the password.
    expect(run.log.text()).toContain(`http://exporter:***@127.0.0.1:${tinyproxy.port}`);
    expect(run.log.text()).not.toContain(PROXY_PASSWORD);
    expect(run.log.text()).not.toContain(Buffer.from(`exporter:${PROXY_PASSWORD}`).toString('base64'));
  }, 30_000);

  it('a 407 (no credentials) is logged once per API with its status and counted as errors', async () => {
    const tinyproxy = await proxy({
      connectPorts: [upstream.port],
      basicAuth: { user: 'exporter', password: PROXY_PASSWORD },
    });
    const run = await startWith(upstream, { HTTPS_PROXY: tinyproxy.url }, ['--http-ca-file', ca.caFile]);
    // Several polls of every collector fail.
    await waitFor(
      async () =>
        sample(await run.scrape(), 'upstash_exporter_collector_errors_total', { collector: 'schedules' })! >= 3,
      20_000,
      'three failed polls',
    );
    const refused = warnings(run.log, /refused the CONNECT/);
    expect(refused.map((line) => [line.api, line.status])).toEqual(
      expect.arrayContaining([
        ['qstash', 407],
        ['management', 407],
      ]),
    );
    expect(refused).toHaveLength(2);
    const families = await run.scrape();
    expect(sumOf(families, 'upstash_exporter_api_requests_total', { code: 'error' })).toBeGreaterThanOrEqual(3);
    expect(sample(families, 'upstash_exporter_collector_success', { collector: 'schedules' })).toBe(0);
  }, 30_000);

  it('a 403 (a port the proxy does not allow) is logged once with its status', async () => {
    const tinyproxy = await proxy({ connectPorts: [443] });
    const run = await startWith(upstream, { https_proxy: tinyproxy.url }, ['--http-ca-file', ca.caFile]);
    await waitFor(
      async () =>
        sample(await run.scrape(), 'upstash_exporter_collector_errors_total', { collector: 'schedules' })! >= 3,
      20_000,
      'three failed polls',
    );
    const refused = warnings(run.log, /refused the CONNECT/).filter((line) => line.api === 'qstash');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ status: 403, host: upstream.target });
  }, 30_000);

  it('a proxy that is down is logged once; the exporter recovers when it comes back', async () => {
    const port = await freePort();
    const run = await startWith(upstream, { HTTPS_PROXY: `http://127.0.0.1:${port}` }, ['--http-ca-file', ca.caFile]);
    await waitFor(
      async () =>
        sample(await run.scrape(), 'upstash_exporter_collector_errors_total', { collector: 'schedules' })! >= 3,
      20_000,
      'three failed polls',
    );
    const down = warnings(run.log, /cannot be reached/).filter((line) => line.api === 'qstash');
    expect(down).toHaveLength(1);
    expect(down[0]).toMatchObject({ code: 'ECONNREFUSED', proxy: `http://127.0.0.1:${port}` });
    expect(sumOf(await run.scrape(), 'upstash_exporter_api_requests_total', { code: 'error' })).toBeGreaterThanOrEqual(
      3,
    );

    const tinyproxy = await proxy({ connectPorts: [upstream.port], port });
    await collectorSucceeds(run);
    expect(run.log.lines().some((line) => line.msg === 'qstash API reachable again')).toBe(true);
    expect(tinyproxy.connects().length).toBeGreaterThan(0);
  }, 40_000);

  it('the remediation PATCH (pause-schedule) and the probe enqueue go through the proxy too', async () => {
    const tinyproxy = await proxy({
      connectPorts: [upstream.port],
      basicAuth: { user: 'exporter', password: PROXY_PASSWORD },
    });
    const agent = new Agent({ connect: { ca: readFileSync(ca.caFile) } });
    const created = await request(`${upstream.emu.url}/v2/schedules/${destination.url}/cron`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${CANARY.token}`, 'upstash-cron': '0 0 1 1 *', 'content-type': 'text/plain' },
      body: 'tick',
    });
    const { scheduleId } = (await created.body.json()) as { scheduleId: string };
    await agent.close();
    const flags = ['--qstash-url', upstream.emu.url, '--qstash-token', CANARY.token, '--http-ca-file', ca.caFile];
    const env = { HTTPS_PROXY: `http://exporter:${PROXY_PASSWORD}@127.0.0.1:${tinyproxy.port}` };

    const paused = await pauseScheduleCommand([scheduleId, ...flags], env);
    expect(paused).toMatchObject({ status: 0, line: `paused schedule ${scheduleId}` });
    const afterPause = tinyproxy.connects();
    expect(afterPause.length).toBeGreaterThan(0);
    expect(new Set(afterPause)).toEqual(new Set([upstream.target]));

    // The probe's publishing: the same client createApiClients builds for it.
    const config = loadConfig(flags, env);
    const delivery = createDeliveryClient(config, config.qstash.regions[0]!);
    try {
      const results = await delivery.enqueue({
        queueName: 'probe',
        destination: `${destination.url}/probe`,
        body: '{}',
      });
      expect(results).toHaveLength(1);
    } finally {
      await delivery.close();
    }
    expect(tinyproxy.connects()).toEqual([...afterPause, upstream.target]);

    // Refused by the proxy (wrong password; tinyproxy answers 401 to wrong credentials): one line, no password in it.
    const refused = await pauseScheduleCommand([scheduleId, ...flags], {
      HTTPS_PROXY: `http://exporter:wrong-${PROXY_PASSWORD}@127.0.0.1:${tinyproxy.port}`,
    });
    expect(refused.status).toBe(1);
    expect(refused.line).toMatch(/network error \(ERR_PROXY_CONNECT_40[17]\)$/);
    expect(refused.line).not.toContain(PROXY_PASSWORD);
  }, 30_000);

  for (const via of ['direct', 'through the proxy'] as const) {
    it(`an upstream certificate nothing trusts (${via}): one line naming the TLS error and the host, errors on the self metrics`, async () => {
      // Without http.ca_file, the test CA is unknown.
      const env = via === 'direct' ? {} : { HTTPS_PROXY: (await proxy({ connectPorts: [upstream.port] })).url };
      const run = await startWith(upstream, env);
      await waitFor(
        async () =>
          sample(await run.scrape(), 'upstash_exporter_collector_errors_total', { collector: 'schedules' })! >= 3,
        20_000,
        'three failed polls',
      );
      const tls = warnings(run.log, /TLS with/).filter((line) => line.api === 'qstash');
      expect(tls).toHaveLength(1);
      expect(tls[0]).toMatchObject({ host: upstream.target, code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
      expect(String(tls[0]!.msg)).toContain('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      const families = await run.scrape();
      expect(
        sumOf(families, 'upstash_exporter_api_requests_total', { api: 'qstash', code: 'error' }),
      ).toBeGreaterThanOrEqual(3);
      expect(sample(families, 'upstash_exporter_collector_success', { collector: 'schedules' })).toBe(0);
    }, 30_000);
  }
});
