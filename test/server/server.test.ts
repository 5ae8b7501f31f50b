// The HTTP surface over real HTTP on 127.0.0.1: /metrics (content type, gzip, HEAD), health,
// readiness, landing page, and no secret anywhere. Collectors are small in-test implementations
// of the real Collector interface, run by the real CollectorRunner.

import { createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Gauge, type Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Collector, CollectorName, PollContext } from '../../src/collectors/collector.js';
import { CollectorRunner } from '../../src/collectors/runner.js';
import { loadConfig } from '../../src/config/index.js';
import { startExporter } from '../../src/exporter.js';
import { SelfMetrics } from '../../src/metrics/self.js';
import { SnapshotRegistry } from '../../src/metrics/snapshot.js';
import { acceptsGzip } from '../../src/server/metrics-endpoint.js';
import { escapeHtml } from '../../src/server/landing.js';
import {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_SERVER_TIMEOUTS,
  exporterView,
  startServer,
  type ExporterServer,
  type ServerOptions,
} from '../../src/server/index.js';
import { VERSION } from '../../src/version.js';
import { captureLogger, type CapturedLogger } from '../support/exporter-e2e-helpers.js';
import { collectorSettings } from '../support/collector-settings.js';

class ScriptedCollector implements Collector {
  readonly snapshot = new SnapshotRegistry();
  polls = 0;
  constructor(
    readonly name: CollectorName,
    private readonly behaviour: (poll: number, ctx: PollContext) => void | Promise<void> = () => undefined,
  ) {}
  get registry(): Registry {
    return this.snapshot.current;
  }
  async poll(ctx: PollContext): Promise<void> {
    const n = ++this.polls;
    await this.behaviour(n, ctx);
    await this.snapshot.build((registry) => {
      new Gauge({
        name: `upstash_test_${this.name}_items`,
        help: 'items seen',
        labelNames: ['kind'] as const,
        registers: [registry],
      }).set({ kind: 'a' }, n);
    });
  }
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** node:http rather than fetch: fetch decompresses gzip silently and hides HEAD details. */
function get(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, url),
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startStack(
  collectors: Collector[],
  intervalsMs: Partial<Record<CollectorName, number>>,
  options: { secrets?: string[]; processMetrics?: boolean } = {},
): Promise<{ server: ExporterServer; runner: CollectorRunner; log: CapturedLogger }> {
  const log = captureLogger();
  const selfMetrics = new SelfMetrics({ version: '7.7.7', processMetrics: options.processMetrics ?? false });
  const runner = new CollectorRunner({
    collectors,
    settings: collectorSettings(intervalsMs, 'no UPSTASH_EMAIL + UPSTASH_API_KEY'),
    selfMetrics,
    logger: log.logger,
    secrets: options.secrets,
  });
  const server = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    webConfigFile: null,
    view: exporterView('7.7.7', selfMetrics, runner),
    logger: log.logger,
  });
  runner.start();
  cleanups.push(async () => {
    await runner.stop(500);
    await server.close();
  });
  return { server, runner, log };
}

describe('/metrics', () => {
  it('serves the self registry and every collector snapshot with the explicit content type', async () => {
    const { server, runner } = await startStack(
      [new ScriptedCollector('schedules'), new ScriptedCollector('account')],
      { schedules: 60_000, account: 60_000 },
      { processMetrics: true },
    );
    await runner.firstPolls();
    await runner.stop(); // no scheduled poll may change the values below
    const answer = await get(server.url, '/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.headers['content-encoding']).toBeUndefined();
    // The answer depends on Accept too (OpenMetrics when asked, test/metrics/exporter-openmetrics.test.ts).
    expect(answer.headers.vary).toBe('Accept, Accept-Encoding');
    const text = answer.body.toString('utf8');
    expect(text).toContain('upstash_exporter_build_info{version="7.7.7"');
    expect(text).toContain('upstash_exporter_collector_success{collector="schedules"} 1');
    expect(text).toContain('upstash_test_schedules_items{kind="a"} 1');
    expect(text).toContain('upstash_test_account_items{kind="a"} 1');
    expect(text).toContain('process_cpu_seconds_total');
    expect(text.endsWith('\n')).toBe(true);
    // Each family once: the registries do not overlap.
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
  });

  it('gzips when Accept-Encoding allows it, and the content is the same', async () => {
    const { server, runner } = await startStack([new ScriptedCollector('logs')], { logs: 60_000 });
    await runner.firstPolls();
    await runner.stop(); // the two scrapes below must see the same values
    const plain = await get(server.url, '/metrics');
    const zipped = await get(server.url, '/metrics', {
      headers: { 'Accept-Encoding': 'br;q=1.0, gzip;q=0.8, *;q=0.1' },
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    const refused = await get(server.url, '/metrics', { headers: { 'Accept-Encoding': 'gzip;q=0, identity' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.toString('utf8')).toBe(plain.body.toString('utf8'));
  });

  it('answers HEAD with the headers and no body', async () => {
    const { server, runner } = await startStack([new ScriptedCollector('logs')], { logs: 60_000 });
    await runner.firstPolls();
    await runner.stop(); // both requests must see the same body length
    const full = await get(server.url, '/metrics');
    const head = await get(server.url, '/metrics', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Number(head.headers['content-length'])).toBe(full.body.length);
    expect(head.body.length).toBe(0);
  });

  it('leaves out a registry that fails to render instead of failing the scrape', async () => {
    const broken: Collector = {
      name: 'vector',
      registry: (() => {
        const snapshot = new SnapshotRegistry();
        new Gauge({
          name: 'upstash_test_broken',
          help: 'throws on collect',
          registers: [snapshot.current],
          collect() {
            throw new Error('render failure');
          },
        });
        return snapshot.current;
      })(),
      poll: () => Promise.resolve(),
    };
    const { server, runner, log } = await startStack([broken, new ScriptedCollector('search')], {
      vector: 60_000,
      search: 60_000,
    });
    await runner.firstPolls();
    const answer = await get(server.url, '/metrics');
    expect(answer.status).toBe(200);
    const text = answer.body.toString('utf8');
    expect(text).toContain('upstash_test_search_items');
    expect(text).not.toContain('upstash_test_broken');
    expect(log.text()).toContain('a registry failed to render');
  });

  it('renders once between two poll ends, whatever the format and encoding, and serves the next poll at once', async () => {
    let renders = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Poll 2 waits for the test: nothing ends a poll while the scrapes below run.
    const collector = new ScriptedCollector('logs', (poll) => (poll === 2 ? held : undefined));
    const counted: Collector = {
      name: 'logs',
      get registry() {
        const registry = collector.registry;
        if (registry.getSingleMetric('upstash_test_renders') === undefined) {
          new Gauge({
            name: 'upstash_test_renders',
            help: 'incremented whenever the registry is rendered',
            registers: [registry],
            collect() {
              renders += 1;
              this.set(renders);
            },
          });
        }
        return registry;
      },
      poll: (ctx) => collector.poll(ctx),
    };
    const { server, runner } = await startStack([counted], { logs: 1_000 });
    cleanups.push(() => Promise.resolve(release()));
    await runner.firstPolls();
    await waitFor(() => collector.polls === 2);
    const first = await get(server.url, '/metrics');
    const second = await get(server.url, '/metrics');
    const zipped = await get(server.url, '/metrics', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(renders).toBe(1);
    expect(second.body.equals(first.body)).toBe(true);
    expect(gunzipSync(zipped.body).equals(first.body)).toBe(true);
    expect(first.body.toString('utf8')).toContain('upstash_test_logs_items{kind="a"} 1');
    const om = await get(server.url, '/metrics', { headers: { Accept: 'application/openmetrics-text;version=1.0.0' } });
    const omAgain = await get(server.url, '/metrics', {
      headers: { Accept: 'application/openmetrics-text;version=1.0.0', 'Accept-Encoding': 'gzip' },
    });
    expect(renders).toBe(2);
    expect(gunzipSync(omAgain.body).equals(om.body)).toBe(true);
    expect(om.body.toString('utf8').endsWith('# EOF\n')).toBe(true);

    // The end of poll 2 is what changes the answer: the next scrape renders and shows it.
    release();
    await waitFor(() => collector.snapshot.swaps === 2);
    const after = (await get(server.url, '/metrics')).body.toString('utf8');
    expect(after).toContain('upstash_test_logs_items{kind="a"} 2');
    expect(renders).toBe(3);
  });

  it('renders the process metrics on every scrape, a second apart', async () => {
    const { server, runner } = await startStack(
      [new ScriptedCollector('schedules')],
      { schedules: 60_000 },
      { processMetrics: true },
    );
    await runner.firstPolls();
    await runner.stop();
    const cpu = (text: string): string => /^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? '';
    const before = (await get(server.url, '/metrics')).body.toString('utf8');
    const start = Date.now();
    while (Date.now() - start < 1_100) Math.sqrt(Math.random()); // a second of CPU
    const after = (await get(server.url, '/metrics')).body.toString('utf8');
    expect(Number(cpu(after))).toBeGreaterThan(Number(cpu(before)));
  });

  it('reads gzip preferences correctly', () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('deflate, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('GZIP')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
  });
});

/** A raw TCP client: what it received, and whether the server closed it. */
class RawClient {
  readonly socket: Socket;
  received = '';
  closedAt: number | null = null;
  readonly openedAt = Date.now();
  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => (this.received += chunk.toString('utf8')));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closedAt = Date.now()));
    cleanups.push(() => Promise.resolve(void this.socket.destroy()));
  }
  connected(): Promise<void> {
    return new Promise((resolve) =>
      this.socket.readyState === 'open' ? resolve() : this.socket.once('connect', () => resolve()),
    );
  }
  send(path: string): void {
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  }
  answers(): number {
    return this.received.split('HTTP/1.1 200 OK').length - 1;
  }
}

async function startBareServer(options: Pick<ServerOptions, 'maxConnections' | 'timeouts'>): Promise<ExporterServer> {
  const log = captureLogger();
  const selfMetrics = new SelfMetrics({ version: '7.7.7', processMetrics: false });
  const runner = new CollectorRunner({
    collectors: [],
    settings: collectorSettings({}, 'off'),
    selfMetrics,
    logger: log.logger,
  });
  const server = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    webConfigFile: null,
    view: exporterView('7.7.7', selfMetrics, runner),
    logger: log.logger,
    ...options,
  });
  cleanups.push(() => server.close());
  return server;
}

describe('connections', () => {
  it('serves at most --web-max-connections at once: the next ones wait their turn, beyond as many again they are closed', async () => {
    const server = await startBareServer({ maxConnections: 2, timeouts: { keepAliveMs: 30_000 } });
    // Two keep-alive connections, answered and held open.
    const holders = [new RawClient(server.port), new RawClient(server.port)];
    for (const holder of holders) holder.send('/-/healthy');
    await waitFor(() => holders.every((holder) => holder.answers() === 1));
    expect(server.connections.active).toBe(2);

    // Two more are accepted but not served: their requests wait, unread.
    const waiting = [new RawClient(server.port), new RawClient(server.port)];
    for (const client of waiting) {
      await client.connected();
      client.send('/-/healthy');
    }
    await waitFor(() => server.connections.waiting === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(waiting.map((client) => client.answers())).toEqual([0, 0]);

    // One more than the cap and the waiting room: closed at once.
    const extra = new RawClient(server.port);
    await waitFor(() => extra.closedAt !== null);
    expect(extra.received).toBe('');
    expect(server.connections.dropped).toBe(1);

    // A slot frees up: the first waiting connection is served, in arrival order.
    holders[0]!.socket.destroy();
    await waitFor(() => waiting[0]!.answers() === 1);
    expect(waiting[1]!.answers()).toBe(0);
    holders[1]!.socket.destroy();
    await waitFor(() => waiting[1]!.answers() === 1);
  });

  it('closes a connection that sends no request headers after the headers timeout', async () => {
    const server = await startBareServer({ timeouts: { headersMs: 1_000 } });
    const idle = new RawClient(server.port);
    const partial = new RawClient(server.port);
    await partial.connected();
    partial.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // never finished
    await waitFor(() => idle.closedAt !== null && partial.closedAt !== null, 4_000);
    // Node checks the timeouts every second here (every 30 s by default).
    expect(idle.closedAt! - idle.openedAt).toBeLessThan(3_000);
    expect(partial.closedAt! - partial.openedAt).toBeLessThan(3_000);
  });

  it('answers a 100 KB URL with 414 and 200 KB of headers with 431, not a reset connection', async () => {
    const server = await startBareServer({});
    // Through node:http, as a client sees it: a status to read, not ECONNRESET.
    const longUrl = await get(server.url, `/metrics?${'a'.repeat(100 * 1024)}`);
    expect(longUrl.status).toBe(414);
    expect(longUrl.body.toString()).toContain('URI Too Long');
    const headers: Record<string, string> = {};
    for (let i = 0; i < 25; i++) headers[`x-filler-${i}`] = 'b'.repeat(8 * 1024);
    const bigHeaders = await get(server.url, '/metrics', { headers });
    expect(bigHeaders.status).toBe(431);
    expect(bigHeaders.body.toString()).toContain('Request Header Fields Too Large');
    // A request line that is not HTTP at all: 400, and the server serves the next client.
    const garbage = new RawClient(server.port);
    await garbage.connected();
    garbage.socket.write('NOT HTTP\r\n\r\n');
    await waitFor(() => garbage.closedAt !== null);
    expect(garbage.received).toMatch(/^HTTP\/1\.1 400 /);
    expect((await get(server.url, '/-/healthy')).status).toBe(200);
  });

  it('defaults: 512 connections, 10 s for headers and for a TLS handshake', () => {
    expect(DEFAULT_MAX_CONNECTIONS).toBe(512);
    expect(DEFAULT_SERVER_TIMEOUTS).toMatchObject({ headersMs: 10_000, tlsHandshakeMs: 10_000 });
  });
});

describe('health and readiness', () => {
  it('is live always, ready (503 + Retry-After before) once every collector succeeded', async () => {
    // Fails until the test lets it succeed, so the 503 phase does not race the 1 s schedule.
    let upstreamUp = false;
    const flaky = new ScriptedCollector('search', () => {
      if (!upstreamUp) throw Object.assign(new Error('upstream down'), { code: 'ERR_API_UPSTREAM' });
    });
    const steady = new ScriptedCollector('account');
    const { server, runner } = await startStack([flaky, steady], { search: 1_000, account: 60_000 });
    await runner.firstPolls();

    for (const path of ['/-/ready', '/readyz']) {
      const notReady = await get(server.url, path);
      expect(notReady.status).toBe(503);
      expect(notReady.headers['retry-after']).toBe('1');
      expect(notReady.body.toString()).toContain('search');
      expect(notReady.body.toString()).not.toContain('account');
    }
    for (const path of ['/-/healthy', '/healthz']) expect((await get(server.url, path)).status).toBe(200);

    upstreamUp = true;
    await waitFor(() => runner.ready(), 3_000);
    expect(flaky.polls).toBeGreaterThanOrEqual(2);
    for (const path of ['/-/ready', '/readyz']) {
      const ready = await get(server.url, path);
      expect(ready.status).toBe(200);
      expect(ready.headers['retry-after']).toBeUndefined();
    }
    for (const path of ['/-/healthy', '/healthz']) expect((await get(server.url, path)).status).toBe(200);
  });

  it('stays live while every collector fails', async () => {
    const down = new ScriptedCollector('logs', () => {
      throw new Error('down');
    });
    const { server, runner } = await startStack([down], { logs: 60_000 });
    await runner.firstPolls();
    expect((await get(server.url, '/-/healthy')).status).toBe(200);
    expect((await get(server.url, '/-/ready')).status).toBe(503);
    expect((await get(server.url, '/nope')).status).toBe(404);
  });
});

describe('methods and exact paths', () => {
  it('answers another method on its own paths with 405 and Allow; paths match exactly (case, trailing slash)', async () => {
    const { server } = await startStack([], {});
    for (const path of ['/', '/metrics', '/-/healthy', '/healthz', '/-/ready', '/readyz']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const answer = await get(server.url, path, { method });
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.headers.allow).toBe('GET, HEAD');
      }
    }
    for (const path of ['/METRICS', '/metrics/', '/Metrics', '/-/ready/'])
      expect((await get(server.url, path)).status, path).toBe(404);
    expect((await get(server.url, '/nope', { method: 'POST' })).status).toBe(404);
  });
});

describe('landing page', () => {
  it('shows version, each collector state, last success and an escaped last error, with links', async () => {
    const failing = new ScriptedCollector('schedules', () => {
      throw Object.assign(new Error('bad <b>html</b> & "quotes"'), { code: 'ERR_API_SCHEMA_DRIFT' });
    });
    const { server, runner } = await startStack([failing, new ScriptedCollector('account')], {
      schedules: 60_000,
      account: 60_000,
    });
    await runner.firstPolls();
    await runner.stop(); // the status below must be that of the first polls
    const page = await get(server.url, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const html = page.body.toString('utf8');
    expect(html).toContain('Version 7.7.7');
    expect(html).toContain('href="metrics"');
    expect(html).toContain('href="-/healthy"');
    expect(html).toContain('href="-/ready"');
    expect(html).toContain(escapeHtml('ERR_API_SCHEMA_DRIFT: bad <b>html</b> & "quotes"'));
    expect(html).not.toContain('<b>html</b>');
    expect(html).toMatch(/<td>account<\/td><td>ok<\/td>/);
    expect(html).toMatch(/<td>schedules<\/td><td>failing<\/td>/);
    expect(html).toContain('disabled: no UPSTASH_EMAIL + UPSTASH_API_KEY');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
  });
});

describe('secrets', () => {
  it('keeps a secret from a collector error out of /, /metrics and the logs', async () => {
    const canary = 'canary-token-5d1e0c';
    const leaky = new ScriptedCollector('logs', () => {
      throw new Error(`401 for token ${canary}`);
    });
    const { server, runner, log } = await startStack([leaky], { logs: 60_000 }, { secrets: [canary] });
    await runner.firstPolls();
    const landing = (await get(server.url, '/')).body.toString('utf8');
    const metrics = (await get(server.url, '/metrics')).body.toString('utf8');
    expect(landing).toContain('401 for token ***');
    for (const text of [landing, metrics, log.text()]) expect(text).not.toContain(canary);
  });

  it('startExporter: credentials an upstream echoes back encoded (base64, base64url, hex, upper case) appear nowhere', async () => {
    const token = 'canary-qstash-token-7e3a9f0b';
    const apiKey = 'canary-api-key-5c81d2aa';
    const email = 'canary-owner@example.test';
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const forms = [
      b64(token),
      Buffer.from(token).toString('base64url').replace(/=+$/, ''),
      Buffer.from(token).toString('hex').toUpperCase(),
      Buffer.from(apiKey).toString('hex'),
      token.toUpperCase(),
      apiKey.toUpperCase(),
      b64(`x:${token}`),
      b64(`xy:${apiKey}`),
      b64(`${email}:${apiKey}`).toLowerCase() === b64(`${email}:${apiKey}`) ? '' : b64(`${email}:${apiKey}`),
    ].filter((form) => form !== '');
    // An upstream double that answers every request 400 with one of the forms, in turn.
    let served = 0;
    const echo = createHttpServer((_req, res) => {
      const form = forms[served++ % forms.length]!;
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `you sent ${form}` }));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => echo.close(() => resolve())));
    const upstream = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    const config = loadConfig(
      [
        '--listen-address',
        '127.0.0.1:0',
        '--qstash-token',
        token,
        '--qstash-url',
        upstream,
        '--upstash-email',
        email,
        '--upstash-api-key',
        apiKey,
        '--management-url',
        upstream,
        '--state-file',
        'none',
        '--http-max-retries',
        '0',
        '--poll-interval',
        '1s',
      ],
      {},
    );
    const log = captureLogger('debug');
    const exporter = await startExporter(config, log.logger);
    cleanups.push(() => exporter.close());
    await waitFor(() => served >= 2 * forms.length, 10_000);
    const landing = (await get(exporter.url, '/')).body.toString('utf8');
    const metrics = (await get(exporter.url, '/metrics')).body.toString('utf8');
    await exporter.close();
    expect(landing).toContain('you sent ***');
    const texts = { landing, metrics, logs: log.text() };
    for (const [where, text] of Object.entries(texts)) {
      for (const form of forms) expect(text, `${where}: ${form}`).not.toContain(form);
      for (const secret of [token, apiKey]) expect(text.toLowerCase(), where).not.toContain(secret.toLowerCase());
    }
  });

  it('startExporter: configured credentials appear nowhere, and close() is quick', async () => {
    const token = 'canary-qstash-token-91b2';
    const apiKey = 'canary-api-key-44ce';
    const email = 'canary-owner@example.test';
    const config = loadConfig(
      [
        '--listen-address',
        '127.0.0.1:0',
        '--qstash-token',
        token,
        '--qstash-url',
        'http://127.0.0.1:9',
        '--upstash-email',
        email,
        '--upstash-api-key',
        apiKey,
        '--management-url',
        'http://127.0.0.1:9',
        '--state-file',
        'none',
      ],
      {},
    );
    const log = captureLogger();
    const exporter = await startExporter(config, log.logger);
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await exporter.close();
    });
    const landing = await get(exporter.url, '/');
    const metrics = await get(exporter.url, '/metrics');
    expect(landing.status).toBe(200);
    expect(landing.body.toString()).toContain(`Version ${VERSION}`);
    expect(metrics.body.toString()).toContain(`upstash_exporter_build_info{version="${VERSION}"`);
    const started = Date.now();
    await exporter.close();
    closed = true;
    expect(Date.now() - started).toBeLessThan(10_000);

    const logText = log.text();
    expect(logText).toContain(`listening on ${exporter.url}`);
    const basic = Buffer.from(`${email}:${apiKey}`).toString('base64');
    for (const text of [landing.body.toString(), metrics.body.toString(), logText]) {
      for (const secret of [token, apiKey, basic]) expect(text).not.toContain(secret);
    }
  });
});
