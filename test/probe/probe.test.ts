// The canary probe against the emulator, over real HTTP: the emulator signs its deliveries, the
// exporter's receiver verifies them. Between the two sits an "ingress": a real loopback proxy in
// front of the exporter's receiver path, the public URL the service calls. It can fail, slow
// down, or alter bodies in flight, which is how a receiver fails in production.
//
// Two stacks: the probe as createProbe() builds it, on the exporter's own server (startServer
// with the receiver as an extra router), for runOnce() one probe at a time; and the whole
// exporter (startExporter) for the wiring: metrics on /metrics, the receiver outside basic auth.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { loadConfig, type ExporterConfig } from '../../src/config/index.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { signDelivery } from '../../src/emulator/delivery/signing.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { createProbe, type ProbeHandle } from '../../src/probe/index.js';
import { ProbeMetrics } from '../../src/probe/metrics.js';
import { PROBE_FAMILIES } from '../../src/probe/families.js';
import { startServer, type ExporterServer, type ExporterView } from '../../src/server/index.js';
import {
  captureLogger,
  eventually,
  exporterTestArgs,
  familiesOf,
  parseExposition,
  sleep,
  valueOf,
  type CapturedLogger,
  type Family,
} from '../support/exporter-e2e-helpers.js';

const TOKEN = 'probe-test-qstash-token-51c0';
const KEY_A = 'sig_ProbeKeyAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'sig_ProbeKeyBBBBBBBBBBBBBBBBBBBBB';
const KEY_C = 'sig_ProbeKeyCCCCCCCCCCCCCCCCCCCCC';
const RECEIVER_PATH = '/probe/receive';

// ---- the ingress: a real proxy in front of the exporter's receiver --------------------------

type IngressMode = 'forward' | 'fail' | 'tamper';

interface IngressRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the exporter answered (or the ingress itself when failing). */
  status: number;
}

interface Ingress {
  url: string;
  mode: IngressMode;
  delayMs: number;
  /** Where requests are forwarded to: the exporter's base URL. */
  target: string;
  requests: IngressRequest[];
  close(): Promise<void>;
}

async function startIngress(): Promise<Ingress> {
  const ingress: Omit<Ingress, 'url' | 'close'> = { mode: 'forward', delayMs: 0, target: '', requests: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        let body = Buffer.concat(chunks).toString('utf8');
        const record: IngressRequest = { url: req.url ?? '', headers: req.headers, body, status: 0 };
        ingress.requests.push(record);
        if (ingress.delayMs > 0) await sleep(ingress.delayMs);
        if (ingress.mode === 'fail') {
          record.status = 503;
          res.writeHead(503).end('ingress: upstream unavailable');
          return;
        }
        // A man in the middle: same signature, a body claiming an earlier send time.
        if (ingress.mode === 'tamper')
          body = body.replace(/"sentAt":(\d+)/, (_m, ms: string) => `"sentAt":${Number(ms) - 1}`);
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            ([name]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name),
          ),
        ) as Record<string, string>;
        const answer = await request(`${ingress.target}${req.url ?? '/'}`, { method: 'POST', headers, body });
        const text = await answer.body.text();
        record.status = answer.statusCode;
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
      })().catch((error: unknown) => {
        res.writeHead(502).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(ingress, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

// ---- stacks ----------------------------------------------------------------------------------

function configFor(emulator: EmulatorHandle, ingress: Ingress, extra: string[] = []): ExporterConfig {
  return loadConfig(
    [
      ...exporterTestArgs(emulator.url, TOKEN),
      '--probe-enabled',
      '--probe-interval',
      '1m',
      '--probe-timeout',
      '1500ms',
      '--probe-receiver-url',
      `${ingress.url}${RECEIVER_PATH}`,
      '--qstash-current-signing-key',
      KEY_A,
      '--qstash-next-signing-key',
      KEY_B,
      ...extra,
    ],
    {},
  );
}

interface ProbeStack {
  emulator: EmulatorHandle;
  ingress: Ingress;
  probe: ProbeHandle;
  server: ExporterServer;
  log: CapturedLogger;
  families(): Promise<Map<string, Family>>;
  close(): Promise<void>;
}

function viewOf(probe: ProbeHandle): ExporterView {
  return {
    version: 'test',
    registries: () => [{ name: 'probe', registry: probe.registry }],
    status: () => [],
    ready: () => true,
    waitingFor: () => [],
  };
}

const stacks: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

/** createProbe() on the exporter's server; probes run only when the test calls runOnce(). */
async function startProbeStack(
  options: { emulator?: Parameters<typeof createEmulator>[0]; args?: (ingressUrl: string) => string[] } = {},
): Promise<ProbeStack> {
  const emulator = await createEmulator({
    token: TOKEN,
    currentSigningKey: KEY_A,
    nextSigningKey: KEY_B,
    ...options.emulator,
  });
  const ingress = await startIngress();
  const config = configFor(emulator, ingress, options.args?.(ingress.url));
  const log = captureLogger('debug');
  const delivery = new DeliveryClient({ baseUrl: emulator.url, token: TOKEN, retry: { maxRetries: 0 } });
  const probe = createProbe(config, { delivery, region: config.qstash.regions[0]!, logger: log.logger });
  const server = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    webConfigFile: null,
    view: viewOf(probe),
    logger: log.logger,
    extraRouters: [probe.router],
  });
  ingress.target = server.url.replace(/\/$/, '');
  const stack: ProbeStack = {
    emulator,
    ingress,
    probe,
    server,
    log,
    families: () => familiesOf(probe.registry),
    close: async () => {
      await probe.close();
      await server.close();
      await delivery.close();
      await ingress.close();
      await emulator.close();
    },
  };
  stacks.push(stack);
  return stack;
}

/** A probe series carries its region (the one region of these tests, eu-central-1). */
const value = (families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined =>
  valueOf(families, name, name.startsWith('upstash_probe_') ? { ...labels, qstash_region: 'eu-central-1' } : labels);

// ---- tests -----------------------------------------------------------------------------------

describe('canary probe against the emulator', () => {
  it('a probe arrives signed and verified: success 1, accept and delivery durations, last success time', async () => {
    const stack = await startProbeStack();
    const before = Date.now() / 1000;
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'success' });
    const families = await stack.families();
    expect(value(families, 'upstash_probe_success', { kind: 'message' })).toBe(1);
    expect(value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'success' })).toBe(1);
    expect(value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'timeout' })).toBe(0);
    expect(value(families, 'upstash_probe_receipts_total', { result: 'accepted' })).toBe(1);
    const accept = value(families, 'upstash_probe_accept_duration_seconds', { kind: 'message' })!;
    const delivered = value(families, 'upstash_probe_delivery_duration_seconds', { kind: 'message' })!;
    expect(accept).toBeGreaterThan(0);
    expect(delivered).toBeGreaterThanOrEqual(accept - 0.002);
    expect(delivered).toBeLessThan(1.5);
    expect(value(families, 'upstash_probe_last_success_timestamp_seconds', { kind: 'message' })).toBeGreaterThanOrEqual(
      before,
    );

    // What the service was asked to deliver: a labelled, de-duplicated probe in the probe queue.
    const [delivery] = stack.ingress.requests;
    expect(delivery!.url).toBe(RECEIVER_PATH);
    expect(delivery!.headers['upstash-signature']).toMatch(/^ey/);
    const body = JSON.parse(delivery!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ probe: 'upstash-exporter-probe', kind: 'message' });
    const logs = (await (
      await fetch(`${stack.emulator.url}/v2/logs?queueName=upstash-exporter-probe`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as {
      logs: Array<Record<string, unknown>>;
    };
    expect(logs.logs.map((entry) => entry.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(logs.logs[0]).toMatchObject({ label: 'upstash-exporter-probe', maxRetries: 0 });
  });

  it('accept latency follows the emulator latency knob (0 ms, then 300 ms on the publish endpoints); delivery latency follows a slow ingress', async () => {
    const stack = await startProbeStack();
    const measure = async (): Promise<{ accept: number; delivered: number }> => {
      expect(await stack.probe.probe.runOnce()).toEqual({ message: 'success' });
      const families = await stack.families();
      return {
        accept: value(families, 'upstash_probe_accept_duration_seconds', { kind: 'message' })!,
        delivered: value(families, 'upstash_probe_delivery_duration_seconds', { kind: 'message' })!,
      };
    };
    stack.emulator.setKnobs({ faultScope: ['publish'], latencyMs: 0 });
    const fast = await measure();
    stack.emulator.setKnobs({ latencyMs: 300 });
    const slow = await measure();
    stack.emulator.setKnobs({ latencyMs: 0 });
    stack.ingress.delayMs = 250;
    const slowIngress = await measure();

    expect(fast.accept).toBeLessThan(0.2);
    expect(slow.accept).toBeGreaterThanOrEqual(0.3);
    expect(slow.accept).toBeLessThan(0.3 + 0.4);
    expect(slow.accept - fast.accept).toBeGreaterThan(0.25);
    // End to end includes the accept: it moves with the knob too.
    expect(slow.delivered).toBeGreaterThanOrEqual(slow.accept - 0.002);
    expect(slow.delivered - fast.delivered).toBeGreaterThan(0.25);
    // A slow ingress delays arrival, not acceptance.
    expect(slowIngress.accept).toBeLessThan(0.2);
    expect(slowIngress.delivered).toBeGreaterThanOrEqual(0.25);
    expect(slowIngress.delivered - fast.delivered).toBeGreaterThan(0.2);
  });

  it('success drops to 0 when the receiver fails, and comes back when it recovers', async () => {
    const stack = await startProbeStack();
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'success' });
    stack.ingress.mode = 'fail';
    const started = Date.now();
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'timeout' });
    // It waited for its timeout (1.5 s) before giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    let families = await stack.families();
    expect(value(families, 'upstash_probe_success', { kind: 'message' })).toBe(0);
    expect(value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'timeout' })).toBe(1);
    expect(stack.ingress.requests.at(-1)!.status).toBe(503);
    expect(stack.log.text()).toContain('did not arrive');

    stack.ingress.mode = 'forward';
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'success' });
    families = await stack.families();
    expect(value(families, 'upstash_probe_success', { kind: 'message' })).toBe(1);
    expect(value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'success' })).toBe(2);
  });

  it('an enqueue the service refuses is an enqueue_error, with success 0', async () => {
    const stack = await startProbeStack();
    stack.emulator.setKnobs({ faultScope: ['publish'], failNext: 1 });
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'enqueue_error' });
    const families = await stack.families();
    expect(value(families, 'upstash_probe_success', { kind: 'message' })).toBe(0);
    expect(value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'enqueue_error' })).toBe(1);
    expect(stack.ingress.requests).toHaveLength(0);
    expect(stack.log.text()).toContain('did not accept');
    expect(stack.log.text()).not.toContain(TOKEN);
  });

  it('a body altered in flight is refused (401) and counted; the probe fails', async () => {
    const stack = await startProbeStack();
    stack.ingress.mode = 'tamper';
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'timeout' });
    const families = await stack.families();
    expect(stack.ingress.requests[0]!.status).toBe(401);
    expect(value(families, 'upstash_probe_receipts_total', { result: 'invalid_signature' })).toBe(1);
    expect(value(families, 'upstash_probe_receipts_total', { result: 'accepted' })).toBe(0);
    expect(value(families, 'upstash_probe_success', { kind: 'message' })).toBe(0);
  });

  it('a service signing with unknown keys is refused; one signing with the next key (rotated) is accepted', async () => {
    const wrong = await startProbeStack({ emulator: { currentSigningKey: KEY_C, nextSigningKey: KEY_A } });
    expect(await wrong.probe.probe.runOnce()).toEqual({ message: 'timeout' });
    expect(value(await wrong.families(), 'upstash_probe_receipts_total', { result: 'invalid_signature' })).toBe(1);

    const rotated = await startProbeStack({ emulator: { currentSigningKey: KEY_B, nextSigningKey: KEY_C } });
    expect(await rotated.probe.probe.runOnce()).toEqual({ message: 'success' });
  });

  it('forged, unsigned and replayed requests posted straight to the receiver', async () => {
    const stack = await startProbeStack();
    const receiver = `${stack.server.url.replace(/\/$/, '')}${RECEIVER_PATH}`;
    const subject = `${stack.ingress.url}${RECEIVER_PATH}`;
    const post = async (
      body: string,
      signature?: string,
    ): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await fetch(receiver, {
        method: 'POST',
        body,
        headers: signature === undefined ? {} : { 'upstash-signature': signature },
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const probeBody = JSON.stringify({
      probe: 'upstash-exporter-probe',
      id: 'probe_message_1_abc',
      kind: 'message',
      sentAt: Date.now(),
    });
    const sign = (body: string, key = KEY_A, url = subject): string =>
      signDelivery({ url, body: Buffer.from(body), key, nowMs: Date.now() });

    expect((await post(probeBody)).status).toBe(401);
    expect((await post(probeBody, sign(probeBody, KEY_C))).status).toBe(401);
    expect((await post(probeBody, sign(probeBody, KEY_A, 'https://elsewhere.example/probe/receive'))).status).toBe(401);
    expect((await post(`${probeBody} `, sign(probeBody))).status).toBe(401);
    // Signed by the service, but not a probe this process sent: 200 so the service stops retrying.
    expect(await post(probeBody, sign(probeBody))).toEqual({ status: 200, json: { result: 'unknown' } });
    expect((await post('{"hello":"world"}', sign('{"hello":"world"}'))).status).toBe(400);
    expect(
      (
        await fetch(receiver, {
          method: 'POST',
          body: 'x'.repeat(64 * 1024),
          headers: { 'upstash-signature': sign('x') },
        })
      ).status,
    ).toBe(413);
    // Another method is 405 naming POST, not 404.
    const got = await fetch(receiver);
    expect(got.status).toBe(405);
    expect(got.headers.get('allow')).toBe('POST');

    const families = await stack.families();
    expect(value(families, 'upstash_probe_receipts_total', { result: 'invalid_signature' })).toBe(4);
    expect(value(families, 'upstash_probe_receipts_total', { result: 'unknown' })).toBe(1);
    expect(value(families, 'upstash_probe_receipts_total', { result: 'invalid_body' })).toBe(2);
    // Refusals warn once a minute at most, and never echo the token.
    const refusals = stack.log.lines().filter((line) => String(line.msg).startsWith('probe receiver refused'));
    expect(refusals.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(stack.log.text()).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
  });

  it('with --probe-workflow-url a workflow run is triggered too, with the probe id as run id', async () => {
    const stack = await startProbeStack({
      args: (ingressUrl) => ['--probe-workflow-url', `${ingressUrl}${RECEIVER_PATH}?run=workflow`],
    });
    expect(await stack.probe.probe.runOnce()).toEqual({ message: 'success', workflow: 'success' });
    const workflow = stack.ingress.requests.find((r) => r.url.endsWith('?run=workflow'))!;
    const body = JSON.parse(workflow.body) as { id: string; kind: string };
    expect(body.kind).toBe('workflow');
    expect(workflow.headers['upstash-workflow-runid']).toBe(body.id);
    const families = await stack.families();
    expect(value(families, 'upstash_probe_success', { kind: 'workflow' })).toBe(1);
    expect(value(families, 'upstash_probe_accept_duration_seconds', { kind: 'workflow' })).toBeGreaterThan(0);
  });
});

describe('the probe inside the exporter', () => {
  let dir = '';
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('runs on its interval, serves upstash_probe_* on /metrics behind basic auth, and its receiver without it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'probe-test-'));
    const webConfig = join(dir, 'web.yml');
    writeFileSync(webConfig, `basic_auth_users:\n  prometheus: ${bcrypt.hashSync('scrape-secret', 4)}\n`);
    const emulator = await createEmulator({ token: TOKEN, currentSigningKey: KEY_A, nextSigningKey: KEY_B });
    const ingress = await startIngress();
    const config = configFor(emulator, ingress, [
      '--probe-interval',
      '1s',
      '--web-config-file',
      webConfig,
      '--poll-interval',
      '1s',
    ]);
    const log = captureLogger('info');
    const closeUpstream = async (): Promise<void> => {
      await ingress.close();
      await emulator.close();
    };
    let exporter: ExporterHandle;
    try {
      exporter = await startExporter(config, log.logger);
    } catch (error) {
      await closeUpstream();
      throw error;
    }
    stacks.push({
      close: async () => {
        await exporter.close();
        await closeUpstream();
      },
    });
    ingress.target = exporter.url.replace(/\/$/, '');
    const auth = { authorization: `Basic ${Buffer.from('prometheus:scrape-secret').toString('base64')}` };
    expect((await fetch(new URL('/metrics', exporter.url))).status).toBe(401);

    await eventually(async () => {
      const families = parseExposition(
        await (await fetch(new URL('/metrics', exporter.url), { headers: auth })).text(),
      );
      const successes = value(families, 'upstash_probe_runs_total', { kind: 'message', result: 'success' }) ?? 0;
      return successes >= 2 && value(families, 'upstash_probe_success', { kind: 'message' }) === 1
        ? []
        : [`probe successes: ${successes}`];
    }, 8_000);
    // The deliveries went through the receiver without basic auth, and were accepted.
    expect(ingress.requests.length).toBeGreaterThanOrEqual(2);
    expect(ingress.requests.every((r) => r.status === 200 && r.headers.authorization === undefined)).toBe(true);
    // Other paths keep basic auth; a GET on the receiver path (public, like the receiver) is 405.
    expect((await fetch(new URL('/', exporter.url))).status).toBe(401);
    expect((await fetch(new URL(RECEIVER_PATH, exporter.url))).status).toBe(405);

    const families = parseExposition(await (await fetch(new URL('/metrics', exporter.url), { headers: auth })).text());
    const served = [...families.keys()].filter((name) => name.startsWith('upstash_probe_')).sort();
    expect(served).toEqual(
      Object.values(PROBE_FAMILIES)
        .map((family) => family.name)
        .sort(),
    );
    for (const secret of [TOKEN, KEY_A, KEY_B]) expect(log.text()).not.toContain(secret);
  });
});

describe('probe families', () => {
  it('pass promtool check metrics (naming, units, HELP)', async (ctx) => {
    if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status !== 0) {
      if (process.env.CI === 'true') throw new Error('promtool is required under CI (apt-get install prometheus)');
      ctx.skip('promtool not installed');
    }
    const metrics = new ProbeMetrics(['message', 'workflow']);
    metrics.acceptDuration.set({ kind: 'message' }, 0.05);
    metrics.deliveryDuration.set({ kind: 'message' }, 0.2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE upstash_probe_runs_total counter');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });
});
