// The landing page's overview: the ring buffer behind its history, the overview read from
// registries holding the real families (the collectors' own are tested elsewhere; here the
// registries are filled by the test so each window and edge case is set exactly), and the page
// served over real HTTP with its Content-Security-Policy and the web config's basic auth.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { Counter, Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { setRegistryLabels } from '../../src/metrics/default-labels.js';
import { SampleRing } from '../../src/metrics/ring-buffer.js';
import { startServer, type ExporterView } from '../../src/server/index.js';
import { LANDING_CSP, renderLanding } from '../../src/server/landing.js';
import { OverviewHistory, readOverview, type Overview } from '../../src/server/overview.js';
import type { CollectorName } from '../../src/collectors/collector.js';
import type { CollectorStatus } from '../../src/collectors/runner.js';
import { captureLogger } from '../support/exporter-e2e-helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Registries holding the families the overview reads, as the collectors name and label them. */
function fakeExporterRegistries() {
  const logs = new Registry();
  const events = new Counter({
    name: 'upstash_qstash_message_events_total',
    help: 'h',
    labelNames: ['state', 'queue'] as const,
    registers: [logs],
  });
  const lag = new Gauge({ name: 'upstash_exporter_log_lag_seconds', help: 'h', registers: [logs] });
  new Gauge({ name: 'upstash_exporter_log_late_events_total', help: 'h', registers: [logs] }).set(3);
  new Gauge({ name: 'upstash_exporter_log_missed_late_events_total', help: 'h', registers: [logs] }).set(1);
  const daily = new Gauge({ name: 'upstash_qstash_daily_messages', help: 'h', registers: [logs] });
  const inventory = new Registry();
  new Gauge({ name: 'upstash_qstash_dlq_size', help: 'h', registers: [inventory] }).set(7);
  const oldest = new Gauge({
    name: 'upstash_qstash_dlq_oldest_message_timestamp_seconds',
    help: 'h',
    labelNames: ['queue', 'url_group'] as const,
    registers: [inventory],
  });
  oldest.set({ queue: 'a', url_group: '' }, 1_000);
  oldest.set({ queue: '', url_group: 'g' }, 900);
  const queueLag = new Gauge({
    name: 'upstash_qstash_queue_lag',
    help: 'h',
    labelNames: ['queue'] as const,
    registers: [inventory],
  });
  for (const [queue, backlog] of [
    ['q1', 5],
    ['q2', 50],
    ['q3', 0],
    ['q4', 9],
    ['q5', 1],
    ['q6', 2],
    ['q7', 3],
  ] as const)
    queueLag.set({ queue }, backlog);
  new Gauge({
    name: 'upstash_qstash_queue_paused',
    help: 'h',
    labelNames: ['queue'] as const,
    registers: [inventory],
  }).set({ queue: 'q2' }, 1);
  const account = new Registry();
  new Gauge({
    name: 'upstash_qstash_account_info',
    help: 'h',
    labelNames: ['region'] as const,
    registers: [account],
  }).set({ region: 'us-east-1' }, 1);
  new Gauge({ name: 'upstash_qstash_plan_max_requests_per_day', help: 'h', registers: [account] }).set(1_000);
  new Gauge({ name: 'upstash_qstash_plan_max_requests_per_day_hard', help: 'h', registers: [account] }).set(
    Number.POSITIVE_INFINITY,
  );
  return {
    sources: [
      { name: 'logs', registry: logs },
      { name: 'inventory', registry: inventory },
      { name: 'account', registry: account },
    ],
    events,
    lag,
    daily,
  };
}

describe('SampleRing', () => {
  it('keeps the newest samples in a memory fixed at construction', () => {
    const ring = new SampleRing(3, ['a', 'b'] as const);
    const bytes = ring.bytes;
    expect(bytes).toBe(3 * 3 * 8);
    for (let i = 1; i <= 5; i++) ring.push(i * 10, { a: i });
    expect(ring.size).toBe(3);
    expect(ring.bytes).toBe(bytes);
    expect([0, 1, 2].map((i) => [ring.timeAt(i), ring.valueAt(i, 'a')])).toEqual([
      [30, 3],
      [40, 4],
      [50, 5],
    ]);
    expect(ring.valueAt(0, 'b')).toBeNaN();
    expect(ring.indexAtOrBefore(45)).toBe(1);
    expect(ring.indexAtOrBefore(29)).toBe(-1);
  });
});

describe('readOverview', () => {
  it('counts deliveries over the last 5 minutes from the history, and says when the history is shorter', async () => {
    const { sources, events, daily } = fakeExporterRegistries();
    let now = 1_000_000;
    const history = new OverviewHistory(() => sources, { now: () => now });
    events.inc({ state: 'DELIVERED', queue: '' }, 100); // counted before the exporter's history began
    await history.sample();
    events.inc({ state: 'DELIVERED', queue: '' }, 8);
    events.inc({ state: 'FAILED', queue: 'q' }, 2);
    now += 60_000;
    const young = await readOverview(sources, history, now);
    expect(young.deliveries).toMatchObject({
      delivered: { value: 8, sinceStart: true, windowMs: 60_000 },
      failed: { value: 2 },
      failureRatio: 0.2,
    });

    for (let minute = 1; minute <= 9; minute++) {
      await history.sample();
      events.inc({ state: 'DELIVERED', queue: '' }, 10);
      now += 60_000;
    }
    // Ten minutes in: the window starts at the sample taken five minutes ago.
    const later = await readOverview(sources, history, now);
    expect(later.deliveries).toMatchObject({
      delivered: { value: 50, sinceStart: false, windowMs: 300_000 },
      failed: { value: 0 },
      failureRatio: 0,
    });
    const plot = later.plots.find((p) => p.id === 'deliveries')!;
    expect(plot.series[0]!.points.at(-1)!.v).toBeCloseTo(10);

    daily.set(42);
    const withDaily = await readOverview(sources, history, now);
    expect(withDaily.daily).toEqual({
      requests: 42,
      metric: 'upstash_qstash_daily_messages',
      softLimit: 1_000,
      hardLimit: Number.POSITIVE_INFINITY,
      region: 'us-east-1',
    });
  });

  it('lists the largest backlogs, the oldest DLQ message and leaves absent collectors out', async () => {
    const { sources } = fakeExporterRegistries();
    const o = await readOverview(sources, null, 2_000_000);
    expect(o.queues).toEqual({
      count: 7,
      regions: 1,
      largest: [
        { queue: 'q2', region: null, backlog: 50, paused: true },
        { queue: 'q4', region: null, backlog: 9, paused: false },
        { queue: 'q1', region: null, backlog: 5, paused: false },
        { queue: 'q7', region: null, backlog: 3, paused: false },
        { queue: 'q6', region: null, backlog: 2, paused: false },
      ],
    });
    expect(o.dlq).toEqual({ size: 7, oldestTimestampSeconds: 900 });
    expect(o.logWalk).toEqual({ lagSeconds: 0, lateEvents: 3, missedLateEvents: 1 });
    expect(o.workflows).toBeNull();
    expect(o.probe).toBeNull();
    const html = renderLanding({ version: '1', statuses: [], ready: true, now: 2_000_000, overview: o });
    expect(html).toContain('no data: the workflows collector has not reported these figures');
    expect(html).not.toContain('Canary probe');
    expect(html).toMatch(/data-figure="queues.backlog" data-queue="q2" data-value="50"/);
    expect(html).toContain('paused');
  });
});

describe('the overview with two QStash regions', () => {
  /** One region's queues and probe, in that region's registries as the exporter labels them. */
  function region(name: string, queues: Record<string, [backlog: number, paused: boolean]>, lastProbe: number) {
    const registry = new Registry();
    setRegistryLabels(registry, { qstash_region: name });
    const lag = new Gauge({
      name: 'upstash_qstash_queue_lag',
      help: 'h',
      labelNames: ['queue'],
      registers: [registry],
    });
    const paused = new Gauge({
      name: 'upstash_qstash_queue_paused',
      help: 'h',
      labelNames: ['queue'],
      registers: [registry],
    });
    for (const [queue, [backlog, isPaused]] of Object.entries(queues)) {
      lag.set({ queue }, backlog);
      paused.set({ queue }, isPaused ? 1 : 0);
    }
    const probe = new Registry();
    setRegistryLabels(probe, { qstash_region: name });
    const labelNames = ['kind'] as const;
    new Gauge({ name: 'upstash_probe_success', help: 'h', labelNames, registers: [probe] }).set({ kind: 'message' }, 1);
    new Gauge({ name: 'upstash_probe_last_success_timestamp_seconds', help: 'h', labelNames, registers: [probe] }).set(
      { kind: 'message' },
      lastProbe,
    );
    return [{ registry }, { registry: probe }];
  }

  it('names each queue and probe row by its region, and a queue paused in one region only there', async () => {
    const sources = [
      ...region('eu-central-1', { invoices: [12, true], orders: [2, false] }, 1_990),
      ...region('us-east-1', { invoices: [6, false] }, 1_500),
    ];
    const o = await readOverview(sources, null, 2_000_000);
    expect(o.queues).toEqual({
      count: 3,
      regions: 2,
      largest: [
        { queue: 'invoices', region: 'eu-central-1', backlog: 12, paused: true },
        { queue: 'invoices', region: 'us-east-1', backlog: 6, paused: false },
        { queue: 'orders', region: 'eu-central-1', backlog: 2, paused: false },
      ],
    });
    // Each probe row reads its own region's last success, not the first one found.
    expect(o.probe?.map((p) => [p.region, p.lastSuccessSeconds])).toEqual([
      ['eu-central-1', 1_990],
      ['us-east-1', 1_500],
    ]);
    const html = renderLanding({ version: '1', statuses: [], ready: true, now: 2_000_000, overview: o });
    expect(html).toContain('invoices <span class="muted">us-east-1</span></td>');
    expect(html).toMatch(/data-queue="invoices" data-region="us-east-1" data-value="6"/);
    expect(html).toMatch(/data-figure="probe.message.last_success" data-region="us-east-1" data-value="1500"/);
  });
});

/** A collector's status as the runner reports it; by default enabled, its last poll a success. */
function status(name: CollectorName, state: Partial<CollectorStatus> = {}): CollectorStatus {
  return {
    name,
    region: null,
    enabled: true,
    disabledReason: null,
    running: false,
    overdue: false,
    intervalMs: 15_000,
    schedule: '*/15 * * * * *',
    summary: null,
    lastOutcome: 'success',
    lastSuccess: NOW - 5_000,
    lastError: null,
    lastErrorAt: null,
    lastDuration: 0.1,
    everSucceeded: true,
    ...state,
  };
}

const NOW = Date.UTC(2026, 10, 28, 6, 0, 0);
const WINDOW = { windowMs: 60_000, sinceStart: true };

/** An overview as readOverview builds it from families at their initial zeros. */
function zeroOverview(): Overview {
  const zero = { value: 0, ...WINDOW };
  return {
    now: NOW,
    deliveries: { delivered: zero, failed: zero, cancelled: zero, failureRatio: null },
    logWalk: { lagSeconds: 0, lateEvents: 0, missedLateEvents: 0 },
    daily: {
      requests: 0,
      metric: 'upstash_qstash_usage_daily_requests',
      softLimit: 0,
      hardLimit: 0,
      region: null,
    },
    dlq: { size: 0, oldestTimestampSeconds: null },
    queues: { count: 0, regions: 0, largest: [] },
    workflows: { inProgress: 0, oldestRunAgeSeconds: null, failedTotal: 0, failed: zero },
    probe: null,
    redis: null,
    plots: [],
  };
}

describe('the landing page when collectors fail', () => {
  const unauthorized = 'ERR_API_AUTH: qstash GET /v2/events: authentication failed (401): invalid token';
  const failing = (name: CollectorName, error = unauthorized): CollectorStatus =>
    status(name, {
      lastOutcome: 'failure',
      lastSuccess: null,
      everSucceeded: false,
      lastError: error,
      lastErrorAt: NOW - 1_000,
    });

  it('shows figures never measured as "no data: <why>", not as healthy zeros, and the failing collectors first with the fix', () => {
    const statuses = [
      ...(['logs', 'dlq', 'queues', 'workflows'] as const).map((name) => failing(name)),
      failing('usage', 'ERR_API_AUTH: management GET /v2/qstash/stats: authentication failed (401)'),
      failing('account', 'ERR_API_AUTH: management GET /v2/qstash/user: authentication failed (401)'),
    ];
    const html = renderLanding({ version: '1', statuses, ready: false, now: NOW, overview: zeroOverview() });
    // Not a single figure: every one of them would be a zero nobody measured.
    expect(html).not.toMatch(/data-figure="/);
    for (const name of ['logs', 'usage', 'dlq', 'queues', 'workflows'])
      expect(html, name).toMatch(
        new RegExp(`<p class="nodata" data-nodata="${name}">no data: the ${name} collector has never succeeded`),
      );
    // The failing collectors come first, above the overview, each with its reason and the fix.
    const problems = html.indexOf('<section class="problems"');
    expect(problems).toBeGreaterThan(0);
    expect(problems).toBeLessThan(html.indexOf('id="overview-heading"'));
    expect(html).toContain('6 collectors are failing');
    expect(html).toMatch(
      /<li data-problem="logs"><strong>logs<\/strong> has never succeeded: <code>ERR_API_AUTH: qstash GET \/v2\/events: authentication failed \(401\): invalid token<\/code>/,
    );
    expect(html).toContain(
      'Fix: the QStash token is wrong or lacks the right: set QSTASH_TOKEN (or per region EU_CENTRAL_1_QSTASH_TOKEN, US_EAST_1_QSTASH_TOKEN) to the values of the Upstash console',
    );
    expect(html).toContain(
      'Fix: the management API email and API key is wrong or lacks the right: set UPSTASH_EMAIL and UPSTASH_API_KEY',
    );
  });

  it('keeps measured figures of a collector that succeeded before, and says it fails now', () => {
    const statuses = [
      status('logs', {
        lastOutcome: 'failure',
        lastError: 'ERR_API_NETWORK: qstash GET /v2/events: network error (ECONNREFUSED)',
        lastErrorAt: NOW - 1_000,
        lastSuccess: NOW - 120_000,
      }),
    ];
    const html = renderLanding({ version: '1', statuses, ready: true, now: NOW, overview: zeroOverview() });
    expect(html).toContain('data-figure="deliveries.failed"');
    expect(html).toContain('A collector is failing');
    expect(html).toContain('<strong>logs</strong> failing; last success 2 min ago');
    expect(html).toContain('Fix: the service does not answer in time from here');
  });

  it('says nothing about problems when every collector is fine', () => {
    const html = renderLanding({ version: '1', statuses: [status('logs')], ready: true, now: NOW, overview: null });
    expect(html).not.toContain('class="problems"');
  });
});

describe('the landing page figures', () => {
  it('shows a daily limit of 2,147,483,647, +Inf or -1 as unlimited, without a share', () => {
    const statuses = [status('usage'), status('account')];
    for (const limit of [2_147_483_647, Number.POSITIVE_INFINITY, -1]) {
      const overview = zeroOverview();
      overview.daily = { ...overview.daily!, requests: 120, softLimit: limit, hardLimit: limit };
      const html = renderLanding({ version: '1', statuses, ready: true, now: NOW, overview });
      expect(html, String(limit)).toMatch(/data-figure="daily.soft_limit"[^>]*>unlimited</);
      expect(html, String(limit)).toMatch(/data-figure="daily.hard_limit"[^>]*>unlimited</);
      expect(html).not.toContain('2,147,483,647');
      expect(html).not.toContain('(0%)');
    }
    const limited = zeroOverview();
    limited.daily = { ...limited.daily!, requests: 120, softLimit: 1_000, hardLimit: 2_000 };
    const html = renderLanding({ version: '1', statuses, ready: true, now: NOW, overview: limited });
    expect(html).toMatch(/data-figure="daily.soft_limit"[^>]*>1,000 \(12%\)</);
  });

  it('shows the failed workflow runs once when the window since start holds them all', () => {
    const statuses = [status('workflows')];
    const overview = zeroOverview();
    overview.workflows = {
      inProgress: 1,
      oldestRunAgeSeconds: null,
      failedTotal: 16,
      failed: { value: 16, ...WINDOW },
    };
    const html = renderLanding({ version: '1', statuses, ready: true, now: NOW, overview });
    expect(html).toMatch(/data-figure="workflows.failed_window"[^>]*>16</);
    expect(html).not.toContain('data-figure="workflows.failed_total"');
    // Counts restored from the state file: the total says more than the window, both shown.
    overview.workflows = { ...overview.workflows, failedTotal: 40 };
    const restored = renderLanding({ version: '1', statuses, ready: true, now: NOW, overview });
    expect(restored).toMatch(/data-figure="workflows.failed_total"[^>]*>40</);
    expect(restored).toMatch(/data-figure="workflows.failed_window"[^>]*>16</);
  });

  it('reloads itself and says so on the page', () => {
    const html = renderLanding({ version: '1', statuses: [], ready: true, now: NOW, overview: null });
    expect(html).toContain('<meta http-equiv="refresh" content="30">');
    expect(html).toContain(
      'This page reloads itself every 30 s; rendered at <time datetime="2026-11-28T06:00:00.000Z">06:00:00 UTC</time>.',
    );
  });
});

describe('GET /', () => {
  function viewOf(sources: ExporterView['registries'], history?: OverviewHistory): ExporterView {
    return {
      version: '9.9.9',
      registries: sources,
      status: () => [],
      ready: () => true,
      waitingFor: () => [],
      history,
    };
  }

  it('serves the overview and plots under a policy that allows nothing external', async () => {
    const { sources, events, lag } = fakeExporterRegistries();
    const history = new OverviewHistory(() => sources);
    await history.sample();
    events.inc({ state: 'DELIVERED', queue: '' }, 4);
    lag.set(12.5);
    await history.sample();
    const server = await startServer({
      listen: { host: '127.0.0.1', port: 0 },
      webConfigFile: null,
      view: viewOf(() => sources, history),
      logger: captureLogger().logger,
    });
    cleanups.push(() => server.close());
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(LANDING_CSP);
    expect(LANDING_CSP).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    const html = await res.text();
    expect(html).toContain('data-figure="deliveries.delivered" data-value="4"');
    expect(html).toContain('data-figure="logs.lag_seconds" data-value="12.5"');
    expect(html).toMatch(/<svg [^>]*role="img"[^>]*>.*<polyline class="s0"/s);
    expect(html).toContain('<desc id="plot-log-lag-desc">lag now 12.5 s');
    // Nothing to load: no script, no external reference, no inline style attribute.
    expect(html).not.toMatch(/<script|<link|<img|src=|style="|https?:\/\//);
  });

  it('asks for the same basic auth as /metrics, and keeps a configured policy next to its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'landing-auth-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'web.yml');
    writeFileSync(
      file,
      [
        'http_server_config:',
        '  headers:',
        '    Content-Security-Policy: "frame-ancestors \'self\'"',
        'basic_auth_users:',
        `  alice: '${bcrypt.hashSync('s3cret', 4)}'`,
      ].join('\n'),
    );
    const { sources } = fakeExporterRegistries();
    const server = await startServer({
      listen: { host: '127.0.0.1', port: 0 },
      webConfigFile: file,
      view: viewOf(() => sources),
      logger: captureLogger().logger,
    });
    cleanups.push(() => server.close());
    const refused = await fetch(server.url);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain('Overview');
    const page = await fetch(server.url, {
      headers: { authorization: `Basic ${Buffer.from('alice:s3cret').toString('base64')}` },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(`frame-ancestors 'self', ${LANDING_CSP}`);
    expect(await page.text()).toContain('data-figure="dlq.size" data-value="7"');
  });
});
