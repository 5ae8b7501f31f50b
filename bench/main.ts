// `npm run bench`: every figure of docs/performance.md measured side by side in one run, printed
// as a table of ratios and written to bench/results/latest.json.
//
//   npm run bench                      the full run (about 4-5 minutes on 2 cores)
//   npm run bench -- --only render,speed
//   npm run bench -- --steps 6 --interval 5s --delay 2s --overlap 2m    other logs settings for the
//                                                             sustained-rate search, the naive
//                                                             comparison and the cycles' third row
//   npm run bench -- --only sustained --share 1    the sustained-rate search with the exporter
//                                                             allowed the whole rate limit
//
// Parts: speed (counting pipeline vs JSON.parse), render (/metrics at 1k/10k/50k series vs bare
// prom-client), landing (the landing page's render time and size vs /metrics, its ring's bytes), memory (RSS after 1M events at the default logs settings, with a state file;
// child process), inflight (RSS with 100k messages in flight; child process), cycles (upstream
// requests per cycle vs the minimum), sustained (highest rate with zero gaps vs the limit of the
// upstream), live (the same at a 100 req/s limit with 50 ms, against the exporter's share, and
// its CPU beside a bare undici client's at its request rate; bench/throughput.ts,
// bench/bare-client.ts), catchup (an hour's outage at 1,000 events/s: time to zero lag; CPU
// beside the bare client's), regions (one exporter watching two regions' live logs against one
// region's, in one run: CPU and upstream requests; bench/regions.ts), naive
// (the exporter vs a script that re-reads the whole log every cycle), scrape-flood (/metrics vs
// /-/healthy at 1,000 connections with wrk, and the polls' lateness meanwhile; bench/http-flood.ts),
// password-flood (a legitimate scrape while 200 connections send wrong passwords), idle (every
// collector at its default interval with no traffic: CPU share and RSS beside a bare Node process
// with the same dependencies loaded; bench/idle.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDuration, parseDuration } from '../src/common/duration.js';
import { DEFAULT_POLL_INTERVALS, settingByKey } from '../src/config/settings.js';
import { NODE_FLAGS } from '../src/node-flags.js';
import { repoRoot } from './exporter-process.js';
import {
  measureCountingSpeed,
  measureMemoryAfterEvents,
  measureRequestsPerCycle,
  type CountingSpeed,
  type MemoryFigures,
} from './logs.js';
import {
  measurePasswordFlood,
  measureScrapeFlood,
  wrkAvailable,
  type PasswordFloodResult,
  type ScrapeFloodResult,
} from './http-flood.js';
import { measureIdle, type IdleFigures } from './idle.js';
import { hasGc, median, round } from './measure.js';
import type { BareClientResult } from './bare-client.js';
import { measureInFlightMemory } from './memory.js';
import { compareWithNaivePoller } from './naive.js';
import { measureLanding, type LandingPoint } from './landing.js';
import { measureRender, type RenderPoint } from './render.js';
import { DEFAULT_SUSTAINED, measureSustainedRate } from './sustained.js';
import { measureCatchUp, measureLiveSustained, type CatchUpResult, type LiveSustainedResult } from './throughput.js';
import { measureRegions, REGIONS_TARGETS, type RegionsResult } from './regions.js';

const PARTS = [
  'speed',
  'render',
  'landing',
  'memory',
  'inflight',
  'cycles',
  'sustained',
  'live',
  'catchup',
  'regions',
  'naive',
  'scrape-flood',
  'password-flood',
  'idle',
] as const;
type Part = (typeof PARTS)[number];
const CHILD_PARTS: ReadonlySet<Part> = new Set(['memory', 'inflight']);
const RESULT_PREFIX = 'BENCH_RESULT ';

interface Args {
  only: Part[];
  /** Run one part and print its result (used for the child-process parts). */
  part: Part | null;
  steps: number;
  /** Logs settings given on the command line (each part has its own defaults otherwise). */
  intervalMs?: number;
  delayMs?: number;
  overlapMs?: number;
  /** Outage of the catch-up part (default 1 hour). */
  outageMs?: number;
  /** The exporter's share of the rate limit in the sustained part (default: the exporter's). */
  share?: number;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { only: [...PARTS], part: null, steps: DEFAULT_SUSTAINED.steps };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--only') {
      const names = value()
        .split(',')
        .map((s) => s.trim());
      for (const name of names)
        if (!(PARTS as readonly string[]).includes(name))
          throw new Error(`unknown part ${name}; parts: ${PARTS.join(', ')}`);
      args.only = names as Part[];
    } else if (flag === '--part') {
      args.part = value() as Part;
    } else if (flag === '--steps') {
      args.steps = Number(value());
    } else if (flag === '--overlap') {
      args.overlapMs = parseDuration(value());
    } else if (flag === '--interval') {
      args.intervalMs = parseDuration(value());
    } else if (flag === '--delay') {
      args.delayMs = parseDuration(value());
    } else if (flag === '--outage') {
      args.outageMs = parseDuration(value());
    } else if (flag === '--share') {
      const share = Number(value());
      if (!(share > 0 && share <= 1)) throw new Error('--share takes a number above 0 and at most 1');
      args.share = share;
    } else {
      throw new Error(
        `unknown flag ${flag}; flags: --only <parts>, --steps <n>, --interval <duration>, --delay <duration>, --overlap <duration>, --outage <duration>, --share <0..1>`,
      );
    }
  }
  return args;
}

/** The logs settings given on the command line, as options of the sustained and naive parts. */
function logsOverrides(args: Args): { pollIntervalMs?: number; ingestionDelayMs?: number; overlapMs?: number } {
  return {
    ...(args.intervalMs === undefined ? {} : { pollIntervalMs: args.intervalMs }),
    ...(args.delayMs === undefined ? {} : { ingestionDelayMs: args.delayMs }),
    ...(args.overlapMs === undefined ? {} : { overlapMs: args.overlapMs }),
  };
}

/** Runs one part in a fresh process (memory figures must not carry what other parts left). */
async function inChild(part: Part): Promise<unknown> {
  const script = fileURLToPath(import.meta.url);
  // With the exporter's own V8 flags: the memory figures are those of the shipped process.
  const child = spawn(process.execPath, ['--expose-gc', ...NODE_FLAGS, script, '--part', part], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = output.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  if (code !== 0 || line === undefined)
    throw new Error(`bench part ${part} failed (exit ${code}): ${output.slice(-500)}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as unknown;
}

async function runPart(part: Part, args: Args, log: (line: string) => void): Promise<unknown> {
  switch (part) {
    case 'speed': {
      const runs: CountingSpeed[] = [];
      for (let i = 0; i < 5; i++) runs.push(measureCountingSpeed());
      const pick = (key: keyof CountingSpeed): number => median(runs.map((r) => r[key]));
      // The ratios from the median rates printed beside them (a median of each run's ratio could
      // disagree with those rates on a noisy machine).
      const jsonParse = pick('jsonParseEventsPerSecond');
      const pipeline = pick('pipelineEventsPerSecond');
      const generalPath = pick('generalPathEventsPerSecond');
      const count = pick('countEventsPerSecond');
      const toJsonParse = (rate: number): number => Number((rate / jsonParse).toFixed(3));
      return {
        events: runs[0]!.events,
        runs: runs.length,
        jsonParseEventsPerSecond: jsonParse,
        pipelineEventsPerSecond: pipeline,
        countEventsPerSecond: count,
        pipelineToJsonParse: toJsonParse(pipeline),
        generalPathEventsPerSecond: generalPath,
        generalPathToJsonParse: toJsonParse(generalPath),
        countToJsonParse: toJsonParse(count),
      };
    }
    case 'render':
      return measureRender(7);
    case 'landing':
      return measureLanding(100);
    case 'memory':
      return measureMemoryAfterEvents(1_000_000);
    case 'inflight':
      return measureInFlightMemory(100_000);
    case 'cycles': {
      // The exporter's defaults (read from the settings table), and the settings of the sustained-rate part.
      const setting = (key: string): string => settingByKey(key).defaultText;
      const interval = DEFAULT_POLL_INTERVALS.logs;
      const defaults = {
        ingestionDelayMs: parseDuration(setting('logs.ingestion_delay')),
        overlapMs: parseDuration(setting('logs.overlap')),
      };
      const defaultsLabel = `defaults (interval ${interval}, delay ${setting('logs.ingestion_delay')}, overlap ${setting('logs.overlap')})`;
      // The third row: the quick settings of earlier benches (interval 5 s, delay 2 s), or the flags'.
      const benchInterval = args.intervalMs ?? 5_000;
      const bench = { ingestionDelayMs: args.delayMs ?? 2_000, overlapMs: args.overlapMs ?? defaults.overlapMs };
      const benchLabel = `interval ${formatDuration(benchInterval)}, delay ${formatDuration(bench.ingestionDelayMs)}, overlap ${formatDuration(bench.overlapMs)}`;
      // Where the service holds 100 a page (the OpenAPI's cap), the minimum is counted in pages of 100.
      const openApi = { ...defaults, pageSize: 100 };
      return [
        { settings: defaultsLabel, ...(await measureRequestsPerCycle(10, defaults, 12, parseDuration(interval))) },
        { settings: defaultsLabel, ...(await measureRequestsPerCycle(100, defaults, 12, parseDuration(interval))) },
        { settings: benchLabel, ...(await measureRequestsPerCycle(100, bench, 12, benchInterval)) },
        {
          settings: `${defaultsLabel}, pages of 100`,
          ...(await measureRequestsPerCycle(10, openApi, 12, parseDuration(interval))),
        },
        {
          settings: `${defaultsLabel}, pages of 100`,
          ...(await measureRequestsPerCycle(100, openApi, 12, parseDuration(interval))),
        },
      ];
    }
    case 'sustained':
      return measureSustainedRate({
        steps: args.steps,
        ...logsOverrides(args),
        ...(args.share === undefined ? {} : { share: args.share }),
        log,
      });
    case 'live':
      return measureLiveSustained({ steps: args.steps, log });
    case 'catchup':
      return measureCatchUp({ ...(args.outageMs === undefined ? {} : { outageSeconds: args.outageMs / 1000 }), log });
    case 'regions':
      return measureRegions({ log });
    case 'naive':
      return compareWithNaivePoller(logsOverrides(args));
    case 'scrape-flood':
    case 'password-flood':
      if (!wrkAvailable()) {
        log(`  skipped: wrk is not installed (apt-get install wrk)`);
        return undefined;
      }
      return part === 'scrape-flood' ? measureScrapeFlood(log) : measurePasswordFlood(log);
    case 'idle':
      return measureIdle();
  }
}

// ---- the table ---------------------------------------------------------------------------------

interface Row {
  figure: string;
  exporter: string;
  baseline: string;
  ratio: string;
  target: string;
  met: string;
}

/**
 * The targets, each with its check: `npm run bench` prints every figure that has one with
 * `met` or `short` (docs/performance.md holds the latest figures).
 */
const TARGETS = {
  render10k: { text: '<= 1.5', met: (ratio: number) => ratio <= 1.5 },
  rssMiB: { text: '<= 120', met: (mib: number) => mib <= 120 },
  rssFlat: { text: '<= 1.1', met: (ratio: number) => ratio <= 1.1 },
  requestsPerCycle: { text: '<= 1.1', met: (ratio: number) => ratio <= 1.1 },
  sustained: { text: '>= 0.97', met: (ratio: number) => ratio >= 0.97 },
  liveSustained: { text: '>= 0.9', met: (ratio: number) => ratio >= 0.9 },
  scrapeFlood: { text: '>= 0.5', met: (ratio: number) => ratio >= 0.5 },
  pollLateness: { text: '<= 1 interval', met: (ratio: number) => ratio <= 1 },
  missedPolls: { text: '0', met: (count: number) => count === 0 },
  legitScrapeMs: { text: '< 500', met: (ms: number) => ms < 500 },
  // CPU per 1000 events against a bare undici client making the same requests in the same run
  // (bench/bare-client.ts): absolute CPU moves with the machine, the ratio much less
  // (docs/performance.md, "Cost per event").
  liveCpuToBareClient: { text: '<= 1.8', met: (ratio: number) => ratio <= 1.8 },
  catchUpCpuToBareClient: { text: '<= 1.8', met: (ratio: number) => ratio <= 1.8 },
  // Two regions against one in the same run (issue 35): CPU at most 2.1 times, requests 2 times within 5%.
  regionsCpu: { text: `<= ${REGIONS_TARGETS.cpuRatio}`, met: (ratio: number) => ratio <= REGIONS_TARGETS.cpuRatio },
  regionsRequests: {
    text: `<= 2 (+5%)`,
    met: (ratio: number) => ratio <= REGIONS_TARGETS.requestsRatio,
  },
} as const;

/** Printed instead of met/short beside a figure that could not be computed; the run then fails. */
const NOT_COMPUTED = 'NOT COMPUTED';

function verdict(target: { met: (value: number) => boolean }, value: number): string {
  if (!Number.isFinite(value)) return NOT_COMPUTED;
  return target.met(value) ? 'met' : 'short';
}

/**
 * A row whose figure could not be computed: a NaN or infinite value or ratio (a zero baseline
 * divides into one). Such a figure measures nothing, so it fails the run rather than reading as
 * "short" (the cycles part once printed 203 requests against a minimum of 0 for weeks).
 */
function uncomputable(row: Row): boolean {
  return (
    row.met === NOT_COMPUTED || [row.exporter, row.baseline, row.ratio].some((text) => /\b(NaN|Infinity)\b/.test(text))
  );
}

function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return String(value);
  return value >= 1000 ? Math.round(value).toLocaleString('en-US') : String(round(value, digits));
}

/**
 * The exporter's CPU per 1000 events beside a bare undici client's for the same requests in the
 * same run (bench/bare-client.ts), judged on their ratio. No bare client: not computed.
 */
function cpuRow(
  figure: string,
  exporterCpuMs: number,
  bare: BareClientResult | null,
  exporterToBare: number,
  target: { text: string; met: (value: number) => boolean },
): Row {
  return {
    figure: bare
      ? `${figure}; bare undici client + JSON.parse (${fmt(bare.requestsPerSecond)} req/s, ${fmt(bare.seconds)} s)`
      : figure,
    exporter: fmt(exporterCpuMs),
    baseline: `${bare ? fmt(bare.cpuMsPerThousandEntries, 2) : 'NaN'} bare client`,
    ratio: fmt(exporterToBare, 2),
    target: target.text,
    met: verdict(target, exporterToBare),
  };
}

function rowsOf(results: Partial<Record<Part, unknown>>): Row[] {
  const rows: Row[] = [];
  const speed = results.speed as
    | {
        pipelineEventsPerSecond: number;
        jsonParseEventsPerSecond: number;
        pipelineToJsonParse: number;
        generalPathEventsPerSecond: number;
        generalPathToJsonParse: number;
        countEventsPerSecond: number;
        countToJsonParse: number;
      }
    | undefined;
  if (speed) {
    // Reported, no target: a reader in JavaScript cannot beat V8's JSON.parse (docs/performance.md).
    rows.push({
      figure: 'counting pipeline (page bytes: single-pass read+check, count), events/s',
      exporter: fmt(speed.pipelineEventsPerSecond),
      baseline: `${fmt(speed.jsonParseEventsPerSecond)} JSON.parse`,
      ratio: fmt(speed.pipelineToJsonParse, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: 'general path (page bytes: skim, JSON.parse, check, count), events/s',
      exporter: fmt(speed.generalPathEventsPerSecond),
      baseline: `${fmt(speed.jsonParseEventsPerSecond)} JSON.parse`,
      ratio: fmt(speed.generalPathToJsonParse, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: 'counting alone (parsed pages), events/s',
      exporter: fmt(speed.countEventsPerSecond),
      baseline: `${fmt(speed.jsonParseEventsPerSecond)} JSON.parse`,
      ratio: fmt(speed.countToJsonParse, 2),
      target: '',
      met: '',
    });
  }
  const render = results.render as RenderPoint[] | undefined;
  for (const point of render ?? []) {
    const targeted = point.series === 10_000;
    rows.push({
      figure: `/metrics render, ${fmt(point.series)} series, ms`,
      exporter: fmt(point.exporterMs, 2),
      baseline: `${fmt(point.bareMs, 2)} prom-client`,
      ratio: fmt(point.ratio, 2),
      target: targeted ? TARGETS.render10k.text : '',
      met: targeted ? verdict(TARGETS.render10k, point.ratio) : '',
    });
    rows.push({
      figure: `event-loop delay during render, ${fmt(point.series)} series, ms`,
      exporter: fmt(point.exporterLoopDelayMaxMs, 1),
      baseline: `${fmt(point.bareLoopDelayMaxMs, 1)} prom-client`,
      ratio: fmt(point.exporterLoopDelayMaxMs / point.bareLoopDelayMaxMs, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: `/metrics render as OpenMetrics (with _created), ${fmt(point.series)} series, ms`,
      exporter: fmt(point.openMetricsMs, 2),
      baseline: `${fmt(point.exporterMs, 2)} text 0.0.4`,
      ratio: fmt(point.openMetricsToText, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: `OpenMetrics render, ${fmt(point.series)} series, ms: ours vs prom-client's (no _created)`,
      exporter: fmt(point.openMetricsMs, 2),
      baseline: `${fmt(point.bareOpenMetricsMs, 2)} prom-client OM`,
      ratio: fmt(point.openMetricsMs / point.bareOpenMetricsMs, 2),
      target: '',
      met: '',
    });
  }
  const landing = results.landing as LandingPoint[] | undefined;
  for (const point of landing ?? []) {
    rows.push({
      figure: `landing page render (overview, an hour of plots), ${fmt(point.series)} event series, ms (median of ${point.renders})`,
      exporter: fmt(point.pageMs, 2),
      baseline: `${fmt(point.metricsMs, 2)} /metrics`,
      ratio: fmt(point.ratio, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: `landing page size, ${fmt(point.series)} event series, bytes`,
      exporter: fmt(point.pageBytes),
      baseline: `${fmt(point.metricsBytes)} /metrics`,
      ratio: fmt(point.pageBytes / point.metricsBytes, 3),
      target: '',
      met: '',
    });
  }
  if (landing?.[0])
    rows.push({
      figure: `landing page history ring (${fmt(landing[0].ringSamples)} samples), bytes`,
      exporter: fmt(landing[0].ringBytes),
      baseline: '',
      ratio: '',
      target: '',
      met: 'fixed',
    });
  const memory = results.memory as MemoryFigures | undefined;
  if (memory) {
    rows.push({
      figure: `RSS after ${fmt(memory.events)} events (${fmt(memory.counted)} counted), MiB`,
      exporter: fmt(memory.rssAfterMiB),
      baseline: `${fmt(memory.rssBeforeMiB)} at start`,
      ratio: fmt(memory.rssAfterMiB / memory.rssBeforeMiB, 2),
      target: TARGETS.rssMiB.text,
      met: verdict(TARGETS.rssMiB, memory.rssAfterMiB),
    });
    const flat = memory.rssAfterMiB / memory.rssHalfMiB;
    rows.push({
      figure: `RSS flat: after all vs after half of the ${fmt(memory.events)} events, MiB`,
      exporter: fmt(memory.rssAfterMiB),
      baseline: `${fmt(memory.rssHalfMiB)} at half`,
      ratio: fmt(flat, 2),
      target: TARGETS.rssFlat.text,
      met: verdict(TARGETS.rssFlat, flat),
    });
    rows.push({
      figure: 'V8 heap used / committed after all, MiB (at half)',
      exporter: `${fmt(memory.heapUsedAfterMiB)} / ${fmt(memory.heapTotalAfterMiB)}`,
      baseline: `${fmt(memory.heapUsedHalfMiB)} / ${fmt(memory.heapTotalHalfMiB)} at half`,
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: 'RSS at its highest during the walk (VmHWM, between GCs), MiB',
      exporter: fmt(memory.rssPeakMiB),
      baseline: `${fmt(memory.rssAnonAfterMiB)} anon after all`,
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: "glibc's main heap ([heap]) after all, MiB; array buffers at their highest during the walk",
      exporter: fmt(memory.mallocHeapAfterMiB),
      baseline: `${fmt(memory.arrayBuffersPeakMiB)} array buffers peak`,
      ratio: '',
      target: '',
      met: '',
    });
  }
  const inflight = results.inflight as
    | {
        messages: number;
        rssAfterMiB: number;
        rssBeforeMiB: number;
        heapBytesPerMessage: number;
        inFlightReported: number;
      }
    | undefined;
  if (inflight) {
    rows.push({
      figure: `RSS with ${fmt(inflight.inFlightReported)} messages in flight, MiB`,
      exporter: fmt(inflight.rssAfterMiB),
      baseline: `${fmt(inflight.rssBeforeMiB)} before`,
      ratio: fmt(inflight.rssAfterMiB / inflight.rssBeforeMiB, 2),
      target: '',
      met: `${inflight.heapBytesPerMessage} B/msg heap`,
    });
  }
  const cycles = results.cycles as
    | Array<{
        settings: string;
        ratePerSecond: number;
        requestsPerCycle: number;
        minimumPerCycle: number;
        ratio: number;
      }>
    | undefined;
  for (const [i, cost] of (cycles ?? []).entries()) {
    // The target is on the defaults (the first two rows); the third row is for comparison.
    const targeted = i < 2;
    rows.push({
      figure: `requests per cycle at ${cost.ratePerSecond} events/s, ${cost.settings}`,
      exporter: fmt(cost.requestsPerCycle),
      baseline: `${fmt(cost.minimumPerCycle)} minimum`,
      ratio: fmt(cost.ratio, 2),
      target: targeted ? TARGETS.requestsPerCycle.text : '',
      met: targeted ? verdict(TARGETS.requestsPerCycle, cost.ratio) : '',
    });
  }
  const sustained = results.sustained as
    | {
        sustainedEventsPerSecond: number;
        limitEventsPerSecond: number;
        limitBy: string;
        ratio: number;
        settings: {
          overlapMs: number;
          pollIntervalMs: number;
          ingestionDelayMs: number;
          rateLimitPerSecond: number;
          share: number;
        };
      }
    | undefined;
  if (sustained) {
    const { pollIntervalMs, ingestionDelayMs, overlapMs, rateLimitPerSecond, share } = sustained.settings;
    rows.push({
      figure: `sustained rate, zero gaps (limit ${rateLimitPerSecond} req/s x share ${share}, interval ${formatDuration(pollIntervalMs)}, delay ${formatDuration(ingestionDelayMs)}, overlap ${formatDuration(overlapMs)}), events/s`,
      exporter: fmt(sustained.sustainedEventsPerSecond),
      baseline: `${fmt(sustained.limitEventsPerSecond)} limit (${sustained.limitBy})`,
      ratio: fmt(sustained.ratio, 2),
      target: TARGETS.sustained.text,
      met: verdict(TARGETS.sustained, sustained.ratio),
    });
  }
  const live = results.live as LiveSustainedResult | undefined;
  if (live) {
    rows.push({
      figure: `sustained rate, zero gaps, limit ${live.rateLimitPerSecond} req/s x share ${live.share}, 50 ms, pages of ${live.pageSize}, events/s`,
      exporter: fmt(live.sustainedEventsPerSecond),
      baseline: `${fmt(live.budgetEventsPerSecond)} budget`,
      ratio: fmt(live.ratio, 2),
      target: TARGETS.liveSustained.text,
      met: verdict(TARGETS.liveSustained, live.ratio),
    });
    rows.push(
      cpuRow(
        `CPU ms per 1000 events at that rate (exporter child, pages of ${live.pageSize}) vs the same requests per second`,
        live.cpuMsPerThousandEvents,
        live.bareClient,
        live.cpuToBareClient,
        TARGETS.liveCpuToBareClient,
      ),
    );
  }
  const catchup = results.catchup as CatchUpResult | undefined;
  if (catchup) {
    const exact = catchup.counted === catchup.truth && catchup.gaps === 0;
    rows.push({
      figure: `catch-up after ${formatDuration(catchup.outageSeconds * 1000)} down at ${fmt(catchup.ratePerSecond)} events/s (${fmt(catchup.backlogEvents)} events), s to zero lag`,
      exporter: catchup.secondsToZeroLag === null ? 'not reached' : fmt(catchup.secondsToZeroLag),
      baseline: `${fmt(catchup.counted)} of ${fmt(catchup.truth)} counted`,
      ratio: '',
      target: 'exact',
      met: exact ? 'met' : 'short',
    });
    rows.push(
      cpuRow(
        `CPU ms per 1000 events in the catch-up (exporter child, ${fmt(catchup.requests)} requests, ${catchup.rateLimited} 429) vs the same pages of 1000 at the share of the limit`,
        catchup.cpuMsPerThousandEvents,
        catchup.bareClient,
        catchup.cpuToBareClient,
        TARGETS.catchUpCpuToBareClient,
      ),
    );
  }
  const regions = results.regions as RegionsResult | undefined;
  if (regions) {
    const [before, after] = regions.one;
    const setting = `${fmt(regions.eventsPerSecond)} events/s a region, pages of ${regions.pageSize}`;
    rows.push({
      figure: `two regions vs one, exporter CPU ms per second (${setting}; one region before and after)`,
      exporter: fmt(regions.two.cpuMsPerSecond, 2),
      baseline: `${fmt(before.cpuMsPerSecond, 2)}, ${fmt(after.cpuMsPerSecond, 2)} one region`,
      ratio: fmt(regions.cpuRatio, 2),
      target: TARGETS.regionsCpu.text,
      met: verdict(TARGETS.regionsCpu, regions.cpuRatio),
    });
    rows.push({
      figure: `two regions vs one, upstream requests per second (${setting})`,
      exporter: fmt(regions.two.requestsPerSecond, 2),
      baseline: `${fmt(before.requestsPerSecond, 2)}, ${fmt(after.requestsPerSecond, 2)} one region`,
      ratio: fmt(regions.requestsRatio, 3),
      target: TARGETS.regionsRequests.text,
      met: verdict(TARGETS.regionsRequests, regions.requestsRatio),
    });
    const phases = [before, regions.two, after];
    rows.push({
      figure: 'two regions vs one: every event counted once per region, no gap (each phase)',
      exporter: `${fmt(sumBy(regions.two.perRegion, 'counted'))} of ${fmt(sumBy(regions.two.perRegion, 'truth'))}`,
      baseline: `${phases.filter((p) => p.exact).length} of 3 phases exact`,
      ratio: '',
      target: 'exact',
      met: regions.exact ? 'met' : 'short',
    });
  }
  const naive = results.naive as
    | {
        exporter: { requestsPerThousandEvents: number; cpuMsPerThousandEvents: number; reportedShare: number };
        naive: { requestsPerThousandEvents: number; cpuMsPerThousandEvents: number; reportedShare: number };
      }
    | undefined;
  if (naive) {
    rows.push({
      figure: 'requests per 1000 events: naive re-scan vs exporter',
      exporter: fmt(naive.exporter.requestsPerThousandEvents),
      baseline: `${fmt(naive.naive.requestsPerThousandEvents)} naive`,
      ratio: fmt(naive.naive.requestsPerThousandEvents / naive.exporter.requestsPerThousandEvents, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: 'CPU ms per 1000 events: naive re-scan vs exporter',
      exporter: fmt(naive.exporter.cpuMsPerThousandEvents),
      baseline: `${fmt(naive.naive.cpuMsPerThousandEvents)} naive`,
      ratio: fmt(naive.naive.cpuMsPerThousandEvents / naive.exporter.cpuMsPerThousandEvents, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: 'share of the ground truth reported at the end',
      exporter: fmt(naive.exporter.reportedShare, 3),
      baseline: `${fmt(naive.naive.reportedShare, 3)} naive`,
      ratio: '',
      target: '',
      met: '',
    });
  }
  const scrapeFlood = results['scrape-flood'] as ScrapeFloodResult | undefined;
  if (scrapeFlood) {
    const { metrics, healthy, connections, seconds, exposition } = scrapeFlood;
    rows.push({
      figure: `/metrics req/s at ${fmt(connections)} connections, wrk ${seconds} s (demo, ${fmt(exposition.series)} series, ${fmt(exposition.bytes / 1024)} KiB)`,
      exporter: fmt(metrics.requestsPerSecond),
      baseline: `${fmt(healthy.requestsPerSecond)} /-/healthy`,
      ratio: fmt(scrapeFlood.ratio, 3),
      target: TARGETS.scrapeFlood.text,
      met: verdict(TARGETS.scrapeFlood, scrapeFlood.ratio),
    });
    rows.push({
      figure: '/metrics average latency during that flood, ms',
      exporter: fmt(metrics.latencyAvgMs),
      baseline: `${fmt(healthy.latencyAvgMs)} /-/healthy`,
      ratio: '',
      target: '',
      met: `${metrics.timeouts} timeouts`,
    });
    rows.push({
      figure: `latest poll during the /metrics flood (${scrapeFlood.lateness.collector}), late by x its interval`,
      exporter: fmt(scrapeFlood.lateness.ratio, 2),
      baseline: `${fmt(scrapeFlood.lateness.lateMs)} ms`,
      ratio: '',
      target: TARGETS.pollLateness.text,
      met: verdict(TARGETS.pollLateness, scrapeFlood.lateness.ratio),
    });
    rows.push({
      figure: 'longest poll during the /metrics flood, ms',
      exporter: fmt(scrapeFlood.lateness.longestPollMs),
      baseline: '',
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: 'polls missed during the /metrics flood (event loop blocked)',
      exporter: String(scrapeFlood.missedPolls),
      baseline: '',
      ratio: '',
      target: TARGETS.missedPolls.text,
      met: verdict(TARGETS.missedPolls, scrapeFlood.missedPolls),
    });
    rows.push({
      figure: 'peak RSS of the demo during the /metrics flood, MiB',
      exporter: fmt(scrapeFlood.peakRssMiB),
      baseline: '',
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: '/-/healthy right after the /metrics flood, ms',
      exporter: fmt(scrapeFlood.healthyAfterMs),
      baseline: '',
      ratio: '',
      target: '',
      met: '',
    });
  }
  const passwordFlood = results['password-flood'] as PasswordFloodResult | undefined;
  for (const run of passwordFlood?.runs ?? []) {
    const where = `${passwordFlood!.connections} connections, ${run.kind}`;
    rows.push({
      figure: `legitimate scrape median during a password flood (${where}, bcrypt cost ${passwordFlood!.bcryptCost}), ms`,
      exporter: fmt(run.legit.medianMs),
      baseline: `${fmt(run.legit.maxMs)} max, ${run.legit.failed}/${run.legit.scrapes} failed`,
      ratio: '',
      target: TARGETS.legitScrapeMs.text,
      met: verdict(TARGETS.legitScrapeMs, run.legit.medianMs),
    });
    rows.push({
      figure: `wrong-password answers/s (${where})`,
      exporter: fmt(run.wrk.requestsPerSecond),
      baseline: `${fmt(run.wrk.non2xx)} non-2xx`,
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: `latest poll during that flood (${run.lateness.collector}), late by x its interval`,
      exporter: fmt(run.lateness.ratio, 2),
      baseline: `${fmt(run.lateness.lateMs)} ms`,
      ratio: '',
      target: TARGETS.pollLateness.text,
      met: verdict(TARGETS.pollLateness, run.lateness.ratio),
    });
    rows.push({
      figure: `longest poll during that flood (${run.kind}), ms`,
      exporter: fmt(run.lateness.longestPollMs),
      baseline: '',
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: `polls missed during that flood (${run.kind})`,
      exporter: String(run.missedPolls),
      baseline: '',
      ratio: '',
      target: TARGETS.missedPolls.text,
      met: verdict(TARGETS.missedPolls, run.missedPolls),
    });
  }
  const idle = results.idle as IdleFigures | undefined;
  if (idle) {
    rows.push({
      figure: `RSS idle, ${idle.collectors} collectors at their default intervals, no traffic, after ${idle.seconds} s, MiB`,
      exporter: fmt(idle.rssMiB),
      baseline: `${fmt(idle.bareRssMiB)} bare Node + deps`,
      ratio: fmt(idle.rssMiB / idle.bareRssMiB, 2),
      target: '',
      met: '',
    });
    rows.push({
      figure: 'idle RSS by kind: anonymous (heaps, malloc) / file-backed (node binary, libraries), MiB',
      exporter: `${fmt(idle.anonMiB)} / ${fmt(idle.fileMiB)}`,
      baseline: `${fmt(idle.bareAnonMiB)} / ${fmt(idle.bareFileMiB)} bare`,
      ratio: '',
      target: '',
      met: '',
    });
    rows.push({
      figure: `CPU idle, share of a core over those ${idle.seconds} s`,
      exporter: `${fmt(idle.cpuShare * 100, 2)}%`,
      baseline: '',
      ratio: '',
      target: '',
      met: '',
    });
  }
  return rows;
}

function sumBy<T>(items: readonly T[], key: { [K in keyof T]: T[K] extends number ? K : never }[keyof T]): number {
  return items.reduce((sum, item) => sum + (item[key] as number), 0);
}

function printTable(rows: readonly Row[]): void {
  const headers: Row = {
    figure: 'figure',
    exporter: 'exporter',
    baseline: 'baseline',
    ratio: 'ratio',
    target: 'target',
    met: '',
  };
  const keys = Object.keys(headers) as Array<keyof Row>;
  const widths = keys.map((key) => Math.max(headers[key].length, ...rows.map((row) => row[key].length)));
  const line = (row: Row): string =>
    keys.map((key, i) => (i === 0 ? row[key].padEnd(widths[i]!) : row[key].padStart(widths[i]!))).join('  ');
  console.log(line(headers));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.part !== null) {
    console.log(`${RESULT_PREFIX}${JSON.stringify(await runPart(args.part, args, () => undefined))}`);
    return;
  }
  if (!hasGc()) console.warn('warning: run with node --expose-gc (npm run bench does) for stable memory figures');
  const started = Date.now();
  const results: Partial<Record<Part, unknown>> = {};
  const timings: Partial<Record<Part, number>> = {};
  for (const part of PARTS) {
    if (!args.only.includes(part)) continue;
    const partStarted = Date.now();
    console.log(`bench: ${part}...`);
    results[part] = CHILD_PARTS.has(part)
      ? await inChild(part)
      : await runPart(part, args, (line) => console.log(line));
    timings[part] = round((Date.now() - partStarted) / 1000, 1);
  }
  const seconds = round((Date.now() - started) / 1000, 1);
  const rows = rowsOf(results);
  console.log('');
  printTable(rows);
  console.log(
    `\nbench took ${seconds} s (${Object.entries(timings)
      .map(([part, s]) => `${part} ${s} s`)
      .join(', ')})`,
  );

  const out = join(repoRoot(), 'bench', 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, 'latest.json');
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    seconds,
    timings,
    table: rows,
    results,
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`figures written to ${file}`);
  const broken = rows.filter(uncomputable);
  if (broken.length > 0) {
    for (const row of broken)
      console.error(
        `bench: FAILED, figure not computed: ${row.figure} (exporter ${row.exporter}, baseline ${row.baseline || '-'}, ratio ${row.ratio || '-'})`,
      );
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
