// A poll that hangs does not read as healthy (issue 39, item 2). The upstream is a real HTTP
// server on 127.0.0.1 that answers 200 and then sends its body one byte every 50 ms, forever: the
// idle timeout never fires. The request core (src/api/http.ts) reads it through the real
// HttpClient; the runner, SelfMetrics and the HTTP server are the exporter's own.
// - one request: its body has a total deadline (http.body_timeout) as well as the idle one;
// - one poll: past its deadline it is a failure while it still runs: /metrics says success 0,
//   the error counted once, poll_overdue 1; readiness and the landing page say so.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, type Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/api/http.js';
import type { Collector, CollectorName, PollContext } from '../../src/collectors/collector.js';
import { CollectorRunner } from '../../src/collectors/runner.js';
import { SelfMetrics } from '../../src/metrics/self.js';
import { SnapshotRegistry } from '../../src/metrics/snapshot.js';
import { exporterView } from '../../src/server/app.js';
import { startServer } from '../../src/server/index.js';
import { captureLogger } from '../support/exporter-e2e-helpers.js';
import { collectorSettings } from '../support/collector-settings.js';

const TRICKLE_EVERY_MS = 50;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `/fast` answers `{}` at once; `/trickle` answers 200 and then one byte every TRICKLE_EVERY_MS. */
async function startTrickleServer(): Promise<{ url: string; bytesSent: () => number }> {
  let sent = 0;
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/fast')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"pad":"');
    open.add(res);
    const timer = setInterval(() => {
      res.write('x');
      sent += 1;
    }, TRICKLE_EVERY_MS);
    res.on('close', () => {
      clearInterval(timer);
      open.delete(res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(async () => {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytesSent: () => sent };
}

function client(url: string, bodyTimeoutMs: number): HttpClient {
  return new HttpClient({
    api: 'qstash',
    baseUrl: url,
    credentials: { scheme: 'bearer', token: 'poll-deadline-token' },
    retry: { maxRetries: 0 },
    timeouts: { connectTimeoutMs: 1000, headersTimeoutMs: 1000, bodyTimeoutMs },
  });
}

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

describe('a response body trickled one byte every 50 ms', () => {
  it.each([
    ['read whole', {}],
    [
      'skimmed as it streams (a log page)',
      { skim: { skipKeys: ['body'], maxKeptBytes: 1 << 20, maxTotalBytes: 1 << 20 } },
    ],
  ])('%s: given up at the total deadline, though no gap between bytes reaches the idle one', async (_name, extra) => {
    const upstream = await startTrickleServer();
    const http = client(upstream.url, 1_000);
    const started = performance.now();
    const failure = await http
      .request({ method: 'GET', endpoint: '/trickle', path: '/trickle', response: 'json', ...extra })
      .catch((error: unknown) => error);
    const tookMs = performance.now() - started;
    expect(failure).toMatchObject({ code: 'ERR_API_TIMEOUT' });
    expect(String((failure as Error).message)).toContain('response body not read within 1000 ms');
    // Bytes kept coming (about 20 in the second): only the total deadline can have ended it.
    expect(upstream.bytesSent()).toBeGreaterThan(5);
    expect(tookMs).toBeGreaterThanOrEqual(950);
    expect(tookMs).toBeLessThan(5_000);
  });
});

/** A collector whose first poll asks /fast and every later one /trickle (through the real client). */
class UpstreamCollector implements Collector {
  readonly snapshot = new SnapshotRegistry();
  polls = 0;
  finished = 0;
  constructor(
    readonly name: CollectorName,
    private readonly http: HttpClient,
  ) {}
  get registry(): Registry {
    return this.snapshot.current;
  }
  async poll(ctx: PollContext): Promise<void> {
    const n = ++this.polls;
    try {
      const path = n === 1 ? '/fast' : '/trickle';
      await this.http.request({ method: 'GET', endpoint: path, path, response: 'json', signal: ctx.signal });
      await this.snapshot.build((registry) => {
        new Gauge({ name: 'upstash_test_polls', help: 'polls', registers: [registry] }).set(n);
      });
    } finally {
      this.finished += 1;
    }
  }
}

describe('a poll that runs past its deadline', () => {
  it('is a failure on /metrics, in readiness and on the landing page while it still runs', async () => {
    const upstream = await startTrickleServer();
    // The body's own deadline is far away: the poll's deadline (1.5 s) must be what tells.
    const collector = new UpstreamCollector('account', client(upstream.url, 60_000));
    const log = captureLogger();
    const selfMetrics = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const runner = new CollectorRunner({
      collectors: [collector],
      settings: collectorSettings({ account: 1_000 }, 'off in this test'),
      selfMetrics,
      logger: log.logger,
      pollDeadlineMs: 1_500,
    });
    const server = await startServer({
      listen: { host: '127.0.0.1', port: 0 },
      webConfigFile: null,
      view: exporterView('1.0.0', selfMetrics, runner),
      logger: log.logger,
    });
    cleanups.push(async () => {
      await runner.stop(200);
      await server.close();
    });
    runner.start();
    await runner.firstPolls();
    expect(runner.ready()).toBe(true);

    const metric = async (name: string): Promise<number> => {
      const text = await (await fetch(new URL('/metrics', server.url))).text();
      return Number(new RegExp(`^${name}\\{collector="account"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    };
    await waitFor('poll 2 to start', () => collector.polls >= 2);
    expect(await metric('upstash_exporter_collector_success')).toBe(1);
    await waitFor(
      'the poll to be overdue on /metrics',
      async () => (await metric('upstash_exporter_collector_poll_overdue')) === 1,
    );
    // Still running: the trickle goes on and the poll has not ended.
    expect(collector.finished).toBe(1);
    const sentThen = upstream.bytesSent();
    await waitFor('more bytes', () => upstream.bytesSent() > sentThen);
    expect(await metric('upstash_exporter_collector_success')).toBe(0);
    expect(await metric('upstash_exporter_collector_errors_total')).toBe(1);

    const status = runner.status().find((s) => s.name === 'account');
    expect(status).toMatchObject({ running: true, overdue: true, lastOutcome: 'failure' });
    expect(status?.lastError).toMatch(/^ERR_POLL_OVERDUE: the poll has run for \d+ s, past its deadline of 1\.5 s/);

    // Readiness stays 200 once ready (a later failure shows in the metrics), and says it.
    const ready = await fetch(new URL('/-/ready', server.url));
    expect(ready.status).toBe(200);
    expect(await ready.text()).toMatch(/^Ready\.\naccount: ERR_POLL_OVERDUE: /);
    const landing = await (await fetch(new URL('/', server.url))).text();
    expect(landing).toContain('failing: the poll runs past its deadline, still polling');
    expect(landing).toContain('ERR_POLL_OVERDUE');
    expect(log.lines().filter((line) => String(line.msg).includes('poll overdue'))).toHaveLength(1);
  }, 30_000);
});
