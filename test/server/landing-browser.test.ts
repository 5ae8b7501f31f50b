// The landing page in a real browser: the demo (`node dist/cli.js demo`, emulator, traffic and
// exporter on free ports) opened in Debian's headless Chromium. The DOM Chromium builds must show
// every overview figure within 30 s of the demo's start, each equal to what /metrics says at the
// same moment; the page must render under its own Content-Security-Policy without a violation;
// and screenshots at phone and desktop widths must not be blank.
//
// LANDING_SCREENSHOTS_DIR=docs/img writes the screenshots the docs show (landing-phone.png,
// landing-desktop.png) instead of into a temporary directory.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MAX_AGE_MS } from '../../src/server/exposition.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';
import { parseExposition, type Family } from '../support/exporter-e2e-helpers.js';
import { cspViolations, runChromium } from '../support/chromium.js';
import { colourStats, decodePng } from '../support/png.js';
import { requireBinaries } from '../support/prometheus.js';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { CLI } from '../support/demo-helpers.js';
import { spawnExporter } from '../support/exporter-child.js';

const tools = requireBinaries('landing-browser.test.ts', ['chromium']);
const FIGURES_WITHIN_MS = 30_000;

/** Every figure the overview must show in the demo (the probe and region included). */
const REQUIRED = [
  'deliveries.delivered',
  'deliveries.failed',
  'deliveries.cancelled',
  'deliveries.failure_ratio',
  'logs.lag_seconds',
  'logs.late_events',
  'logs.missed_late_events',
  'daily.requests',
  'daily.soft_limit',
  'daily.hard_limit',
  'daily.region',
  'dlq.size',
  'dlq.oldest',
  'queues.backlog',
  'workflows.in_progress',
  // Not workflows.failed_total: in a demo minutes old the window since start holds every failed
  // run, and the page shows that number once.
  'workflows.failed_window',
  'probe.message.success',
  'probe.message.last_success',
  'probe.workflow.success',
] as const;

interface DomFigure {
  id: string;
  value: string | undefined;
  metric: string | undefined;
  queue: string | undefined;
  region: string | undefined;
  text: string;
}

/** The data-figure elements of a dumped DOM, with their attributes and text. */
function figuresOf(dom: string): DomFigure[] {
  const figures: DomFigure[] = [];
  for (const match of dom.matchAll(/<(dd|td|span)\s([^>]*data-figure="[^"]*"[^>]*)>([^<]*)</g)) {
    const attrs = match[2]!;
    const attr = (name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(attrs)?.[1];
    figures.push({
      id: attr('data-figure')!,
      value: attr('data-value'),
      metric: attr('data-metric'),
      queue: attr('data-queue'),
      region: attr('data-region'),
      text: match[3]!,
    });
  }
  return figures;
}

/** The families with only the series of one region (and those without a region). */
function inRegion(families: Map<string, Family>, region: string): Map<string, Family> {
  return new Map(
    [...families].map(([name, family]) => [
      name,
      { ...family, samples: family.samples.filter((s) => (s.labels.qstash_region ?? region) === region) },
    ]),
  );
}

function total(
  families: Map<string, Family>,
  name: string,
  match: (labels: Record<string, string>) => boolean = () => true,
): number | undefined {
  const family = families.get(name);
  if (family === undefined) return undefined;
  return family.samples.filter((s) => match(s.labels)).reduce((sum, s) => sum + s.value, 0);
}

/** What /metrics says each figure should be (undefined: no such series). */
function expected(all: Map<string, Family>, figure: DomFigure): number | undefined {
  const state = (s: string) => (l: Record<string, string>) => l.state === s;
  // The daily card is the first region's (the demo's eu-central-1); a queue row and a probe row
  // are the region they name (data-region); deliveries, DLQ and workflows add the regions up.
  const region = figure.region ?? (/^daily\./.test(figure.id) ? 'eu-central-1' : undefined);
  const families = region === undefined ? all : inRegion(all, region);
  const kind = /^probe\.(\w+)\./.exec(figure.id)?.[1];
  switch (figure.id) {
    case 'deliveries.delivered':
      return total(families, 'upstash_qstash_message_events_total', state('DELIVERED'));
    case 'deliveries.failed':
      return total(families, 'upstash_qstash_message_events_total', state('FAILED'));
    case 'deliveries.cancelled':
      return total(families, 'upstash_qstash_message_events_total', state('CANCELLED'));
    case 'logs.lag_seconds':
      // The largest lag of the regions (each region walks its own log).
      return Math.max(...(families.get('upstash_exporter_log_lag_seconds')?.samples.map((s) => s.value) ?? []));
    case 'logs.late_events':
      return total(families, 'upstash_exporter_log_late_events_total');
    case 'logs.missed_late_events':
      return total(families, 'upstash_exporter_log_missed_late_events_total');
    case 'daily.requests':
      return total(families, figure.metric!);
    case 'daily.soft_limit':
      return total(families, 'upstash_qstash_plan_max_requests_per_day');
    case 'daily.hard_limit':
      return total(families, 'upstash_qstash_plan_max_requests_per_day_hard');
    case 'dlq.size':
      return total(families, 'upstash_qstash_dlq_size');
    case 'dlq.oldest':
      return Math.min(
        ...(families.get('upstash_qstash_dlq_oldest_message_timestamp_seconds')?.samples.map((s) => s.value) ?? []),
      );
    case 'queues.backlog':
      return total(families, 'upstash_qstash_queue_lag', (l) => l.queue === figure.queue);
    case 'redis.databases':
      return new Set(families.get('upstash_redis_database_state')?.samples.map((s) => s.labels.database_id)).size;
    case 'redis.not_active':
      return total(families, 'upstash_redis_database_state', (l) => l.state !== 'active');
    case 'redis.monthly_billing':
      return total(families, 'upstash_redis_database_monthly_billing_usd');
    case 'workflows.in_progress':
      return total(families, 'upstash_workflow_runs_in_progress');
    case 'workflows.failed_total':
    case 'workflows.failed_window':
      return total(families, 'upstash_workflow_runs_total', state('failed'));
    default:
      if (kind !== undefined && figure.id.endsWith('.success'))
        return total(families, 'upstash_probe_success', (l) => l.kind === kind);
      if (kind !== undefined && figure.id.endsWith('.last_success'))
        return total(families, 'upstash_probe_last_success_timestamp_seconds', (l) => l.kind === kind);
      if (kind !== undefined && figure.id.endsWith('.delivery_seconds'))
        return total(families, 'upstash_probe_delivery_duration_seconds', (l) => l.kind === kind);
      return undefined;
  }
}

describe.skipIf(tools.skip)(`landing page in headless Chromium${tools.needs}`, () => {
  let demo: DemoProcess;
  let startedAt = 0;
  const chromium = (): string => tools.paths.chromium!;
  const pageUrl = (): string => `${demo.exporterUrl}/`;
  const scrape = async (): Promise<Map<string, Family>> => parseExposition(await (await fetch(demo.metricsUrl)).text());
  const dumpDom = async (): Promise<{ dom: string; stderr: string }> => {
    const run = await runChromium(chromium(), ['--dump-dom', pageUrl()]);
    return { dom: run.stdout, stderr: run.stderr };
  };

  beforeAll(async () => {
    tools.ensure();
    startedAt = Date.now();
    demo = await startDemoProcess();
  }, 30_000);
  afterAll(async () => {
    await demo?.stop();
  });

  it('shows every overview figure within 30 s of the demo start, each as /metrics has it', async () => {
    let dom = '';
    let missing: string[] = [...REQUIRED];
    while (missing.length > 0 && Date.now() - startedAt < FIGURES_WITHIN_MS) {
      ({ dom } = await dumpDom());
      const ids = new Set(figuresOf(dom).map((f) => f.id));
      missing = REQUIRED.filter((id) => !ids.has(id));
      if (missing.length > 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(missing, `figures missing ${Date.now() - startedAt} ms after the demo started`).toEqual([]);
    // Nothing said twice: the failed runs in all only beside a window that does not hold them all.
    const shown = figuresOf(dom);
    const total = shown.find((f) => f.id === 'workflows.failed_total');
    if (total !== undefined) expect(total.value).not.toBe(shown.find((f) => f.id === 'workflows.failed_window')?.value);
    // The page says it reloads itself, and does (a meta refresh: no script).
    expect(dom).toMatch(/<meta http-equiv="refresh" content="\d+">/);
    expect(dom).toMatch(/This page reloads itself every \d+ s; rendered at <time/);
    // The demo's limits are the emulator's plan, not "unlimited"; every collector succeeds.
    expect(dom).not.toContain('class="problems"');
    expect(dom).not.toContain('no data:');
    // Three plots, each drawn as a line and described in text.
    expect(dom.match(/<figure class="plot"/g)?.length).toBe(3);
    expect(dom.match(/<polyline class="s0"/g)?.length).toBe(3);
    expect(dom.match(/<desc id="plot-[a-z-]+-desc">/g)?.length).toBe(3);
    // The demo is minutes old: the windows reach back to its start, where every counter was 0.
    expect(dom).toContain('since the exporter started');

    // /metrics before and after the page: a counter shown must lie between the two readings, a
    // gauge must equal one of them (polls move the figures while Chromium renders).
    let mismatches: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await scrape();
      const run = await dumpDom();
      const after = await scrape();
      expect(cspViolations(run.stderr)).toEqual([]);
      const figures = figuresOf(run.dom);
      mismatches = [];
      for (const figure of figures) {
        if (figure.id === 'daily.region') {
          const region = before.get('upstash_qstash_account_info')?.samples[0]?.labels.region;
          if (figure.text !== region) mismatches.push(`daily.region: page ${figure.text}, /metrics ${region}`);
          continue;
        }
        if (figure.id === 'deliveries.failure_ratio') continue;
        if (figure.id === 'queues.backlog') {
          // One row per queue of each region: its value is one region's.
          const values = [before, after].flatMap(
            (families) =>
              families
                .get('upstash_qstash_queue_lag')
                ?.samples.filter((s) => s.labels.queue === figure.queue)
                .map((s) => s.value) ?? [],
          );
          if (!values.includes(Number(figure.value)))
            mismatches.push(`queues.backlog{${figure.queue}}: page ${figure.value}, /metrics ${values.join(', ')}`);
          continue;
        }
        const shown = Number(figure.value);
        const a = expected(before, figure);
        const b = expected(after, figure);
        if (a === undefined || b === undefined) {
          mismatches.push(`${figure.id}: not on /metrics`);
          continue;
        }
        // The log lag is computed from the clock when rendered; /metrics may serve a render up to
        // MAX_AGE_MS old (src/server/exposition.ts), the page is rendered now.
        const slack = figure.id === 'logs.lag_seconds' ? MAX_AGE_MS / 1000 : 0;
        if (shown < Math.min(a, b) - 1e-9 || shown > Math.max(a, b) + slack + 1e-9)
          mismatches.push(
            `${figure.id}${figure.queue === undefined ? '' : `{${figure.queue}}`}: page ${shown}, /metrics ${a} then ${b}`,
          );
      }
      const value = (id: string): number => Number(figures.find((f) => f.id === id)?.value);
      const ratio = value('deliveries.failed') / (value('deliveries.delivered') + value('deliveries.failed'));
      if (Math.abs(value('deliveries.failure_ratio') - ratio) > 1e-9)
        mismatches.push(`failure ratio ${value('deliveries.failure_ratio')}, expected ${ratio}`);
      if (mismatches.length === 0) break;
    }
    expect(mismatches).toEqual([]);
  }, 120_000);

  it('renders readable screenshots at phone and desktop widths', async () => {
    const target = process.env.LANDING_SCREENSHOTS_DIR;
    const dir = target === undefined ? mkdtempSync(join(tmpdir(), 'landing-shots-')) : resolve(target);
    mkdirSync(dir, { recursive: true });
    try {
      for (const [name, width, height] of [
        ['phone', 390, 844],
        ['desktop', 1280, 900],
      ] as const) {
        const file = join(dir, `landing-${name}.png`);
        const run = await runChromium(chromium(), [
          `--screenshot=${file}`,
          `--window-size=${width},${height}`,
          pageUrl(),
        ]);
        expect(cspViolations(run.stderr)).toEqual([]);
        const png = decodePng(readFileSync(file));
        expect([png.width, png.height]).toEqual([width, height]);
        const stats = colourStats(png);
        // A blank or unstyled page has a handful of colours; this one has text, coloured figures and plots.
        expect(stats.distinctColours, `${name}: distinct colours`).toBeGreaterThan(100);
        expect(stats.nonBackgroundShare, `${name}: share of non-background pixels`).toBeGreaterThan(0.05);
      }
    } finally {
      if (target === undefined) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(tools.skip)(`landing page in headless Chromium, every collector refused (401)${tools.needs}`, () => {
  let emulator: EmulatorHandle;
  const children: ChildProcessWithoutNullStreams[] = [];
  let exporterUrl = '';

  beforeAll(async () => {
    tools.ensure();
    emulator = await createEmulator({});
    // The wrong token and API key: every collector's first poll gets 401.
    const exporter = await spawnExporter(
      [
        CLI,
        'run',
        '--listen-address',
        '127.0.0.1:0',
        '--qstash-url',
        emulator.url,
        '--management-url',
        emulator.url,
        '--upstash-email',
        emulator.credentials.email,
        '--upstash-api-key',
        'not-the-api-key',
        '--state-file',
        'none',
        '--log-format',
        'json',
      ],
      'not-the-qstash-token',
      children,
    );
    exporterUrl = exporter.url;
  }, 30_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await emulator?.close();
  });

  it('shows no figure as a healthy zero: "no data: <why>" in grey, the failing collectors first with the fix', async () => {
    // Until every enabled collector has failed once (each polls once at start).
    let dom = '';
    const deadline = Date.now() + 30_000;
    const failingCount = (): number => dom.match(/<li data-problem="/g)?.length ?? 0;
    while (Date.now() < deadline) {
      dom = (await runChromium(tools.paths.chromium!, ['--dump-dom', exporterUrl])).stdout;
      if (failingCount() >= 9) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(failingCount(), dom).toBeGreaterThanOrEqual(9);
    // The failing collectors are the first thing on the page, above the overview.
    expect(dom.indexOf('class="problems"')).toBeGreaterThan(0);
    expect(dom.indexOf('class="problems"')).toBeLessThan(dom.indexOf('id="overview-heading"'));
    expect(dom).toMatch(
      /<li data-problem="logs"><strong>logs(?: \([a-z0-9-]+\))?<\/strong> has never succeeded: <code>ERR_API_AUTH: [^<]*\(401\)/,
    );
    expect(dom).toContain('Fix: the QStash token is wrong or lacks the right: set QSTASH_TOKEN');
    expect(dom).toContain('Fix: the management API email and API key is wrong or lacks the right');
    // Not one figure of the overview: each would be a zero nobody measured.
    expect(figuresOf(dom).map((f) => f.id)).toEqual([]);
    for (const card of ['logs', 'dlq', 'queues', 'workflows'])
      expect(dom, card).toMatch(
        new RegExp(`<p class="nodata" data-nodata="${card}">no data: the ${card} collector has never succeeded`),
      );
    expect(dom).not.toMatch(/>\s*0\s*</);
    // The secrets never reach the page.
    expect(dom).not.toContain('not-the-qstash-token');
    expect(dom).not.toContain('not-the-api-key');
  }, 60_000);
});
