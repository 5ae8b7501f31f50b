// The HTTP surface over real HTTP on 127.0.0.1: /metrics (content type, gzip, HEAD), health,
// readiness, landing page, and no secret anywhere. Collectors are small in-test implementations
// of the real Collector interface, run by the real CollectorRunner.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Gauge, type Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Collector, CollectorName, PollContext } from '../src/collectors/collector.js';
import { CollectorRunner } from '../src/collectors/runner.js';
import { loadConfig } from '../src/config/index.js';
import { startExporter } from '../src/exporter.js';
import { SelfMetrics } from '../src/metrics/self.js';
import { SnapshotRegistry } from '../src/metrics/snapshot.js';
import { acceptsGzip } from '../src/server/metrics-endpoint.js';
import { escapeHtml } from '../src/server/landing.js';
import { exporterView, startServer, type ExporterServer } from '../src/server/index.js';
import { VERSION } from '../src/version.js';
import { captureLogger, type CapturedLogger } from './exporter-e2e-helpers.js';
import { collectorSettings } from './support/collector-settings.js';

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
      new Gauge({ name: `upstash_test_${this.name}_items`, help: 'items seen', labelNames: ['kind'] as const, registers: [registry] }).set({ kind: 'a' }, n);
    });
  }
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** node:http rather than fetch: fetch decompresses gzip silently and hides HEAD details. */
function get(url: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, url), { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
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
  const runner = new CollectorRunner({ collectors, settings: collectorSettings(intervalsMs, 'no UPSTASH_EMAIL + UPSTASH_API_KEY'), selfMetrics, logger: log.logger, secrets: options.secrets });
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
    const { server, runner } = await startStack([new ScriptedCollector('schedules'), new ScriptedCollector('account')], { schedules: 60_000, account: 60_000 }, { processMetrics: true });
    await runner.firstPolls();
    await runner.stop(); // no scheduled poll may change the values below
    const answer = await get(server.url, '/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.headers['content-encoding']).toBeUndefined();
    // The answer depends on Accept too (OpenMetrics when asked, test/exporter-openmetrics.test.ts).
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
    const zipped = await get(server.url, '/metrics', { headers: { 'Accept-Encoding': 'br;q=1.0, gzip;q=0.8, *;q=0.1' } });
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
    const { server, runner, log } = await startStack([broken, new ScriptedCollector('search')], { vector: 60_000, search: 60_000 });
    await runner.firstPolls();
    const answer = await get(server.url, '/metrics');
    expect(answer.status).toBe(200);
    const text = answer.body.toString('utf8');
    expect(text).toContain('upstash_test_search_items');
    expect(text).not.toContain('upstash_test_broken');
    expect(log.text()).toContain('a registry failed to render');
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
    for (const path of ['/METRICS', '/metrics/', '/Metrics', '/-/ready/']) expect((await get(server.url, path)).status, path).toBe(404);
    expect((await get(server.url, '/nope', { method: 'POST' })).status).toBe(404);
  });
});

describe('landing page', () => {
  it('shows version, each collector state, last success and an escaped last error, with links', async () => {
    const failing = new ScriptedCollector('schedules', () => {
      throw Object.assign(new Error('bad <b>html</b> & "quotes"'), { code: 'ERR_API_SCHEMA_DRIFT' });
    });
    const { server, runner } = await startStack([failing, new ScriptedCollector('account')], { schedules: 60_000, account: 60_000 });
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

  it('startExporter: configured credentials appear nowhere, and close() is quick', async () => {
    const token = 'canary-qstash-token-91b2';
    const apiKey = 'canary-api-key-44ce';
    const email = 'canary-owner@example.test';
    const config = loadConfig(
      [
        '--listen-address', '127.0.0.1:0',
        '--qstash-token', token,
        '--qstash-url', 'http://127.0.0.1:9',
        '--upstash-email', email,
        '--upstash-api-key', apiKey,
        '--management-url', 'http://127.0.0.1:9',
        '--state-file', 'none',
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
