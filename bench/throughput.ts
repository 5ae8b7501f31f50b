// The log walk against the real service's burst limit (100 requests a second on the
// free and pay-as-you-go plans) with 50 ms a request, on a synthetic live log (bench/live-log.ts).
// The exporter runs as a child process with its defaults (interval, delay, overlap, the rate
// limit share of 0.5, 4 parallel slices), so the budget it may use is share x limit requests a
// second, and with pages of N entries it can follow at most share x limit x N events a second.
//
// 1. Sustained rate: the highest event rate read with zero gaps and every event counted once,
//    against that budget, judged as in bench/sustained.ts (lag within delay + 2 intervals + 1 s
//    for six intervals after a warm-up, caught up after the traffic, counts = ground truth), and
//    the exporter's CPU per 1000 events (/proc, over the judged window). Pages of 100 (the
//    OpenAPI's cap): one chain at 50 ms reads 20 pages a second, so the budget of 50 needs
//    parallel chains.
// 2. Catch-up: the exporter was down for an hour while 1,000 events a second arrived (its state
//    file says so: written by the collector's own code with the watermark an hour back) and
//    restarts; the time until its lag is back to what a walk that keeps up shows (delay + one
//    interval), the events counted against the ground truth, CPU per 1000 events.
//
// Beside each CPU figure, the floor under it: a bare undici client (bench/bare-client.ts) reading
// the same kind of log, in pages of the same size, at the exporter's request rate (the live part:
// as many requests a second as the exporter made in its judged window, for as long or at least
// 30 s; the catch-up: as many pages as the exporter read, at the share of the limit), run after
// the exporter has stopped so the two do not share the cores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseDuration } from '../src/common/duration.js';
import { DEFAULT_POLL_INTERVALS, settingByKey } from '../src/config/settings.js';
import { LogsCollector } from '../src/collectors/logs/index.js';
import { createLogger } from '../src/logging/index.js';
import { upstreamIdentity } from '../src/state/index.js';
import { DEFAULT_LOGS_PATH } from '../src/api/delivery.js';
import { measureBareClient, type BareClientResult } from './bare-client.js';
import { ExporterProcess, LOGS_ONLY_ARGS, sumOf } from './exporter-process.js';
import { startLiveLog, type LiveLog } from './live-log.js';
import { round, sleep } from './measure.js';

const TOKEN = 'bench-token';
/**
 * How often the live and catch-up parts scrape the exporter while they measure its CPU (the lag
 * they judge is read from /metrics). A real Prometheus scrapes every 15 to 60 s and the bare
 * client is not scraped at all; every 500 ms the scrape was 3.9% of the exporter's profile.
 */
const SCRAPE_EVERY_MS = 2_000;
const setting = (key: string): number => Number(settingByKey(key).defaultText);
const defaults = {
  pollIntervalMs: parseDuration(DEFAULT_POLL_INTERVALS.logs),
  ingestionDelayMs: parseDuration(settingByKey('logs.ingestion_delay').defaultText),
  overlapMs: parseDuration(settingByKey('logs.overlap').defaultText),
  share: setting('http.rate_limit_share'),
  pageSize: setting('logs.page_size'),
  parallelSlices: setting('logs.parallel_slices'),
};

export interface LiveSustainedOptions {
  rateLimitPerSecond: number;
  latencyMs: number;
  /** Entries a page holds at most (the service's cap). */
  maxPageSize: number;
  judgedCycles: number;
  steps: number;
  log: (line: string) => void;
}

export interface LiveStep {
  eventsPerSecond: number;
  fraction: number;
  passed: boolean;
  truth: number;
  counted: number;
  gaps: number;
  lagMaxSeconds: number;
  lagBoundSeconds: number;
  requests: number;
  rateLimited: number;
  requestsPerSecond: number;
  judgedSeconds: number;
  cpuMsPerThousandEvents: number;
  reason: string;
}

export interface LiveSustainedResult {
  rateLimitPerSecond: number;
  share: number;
  pageSize: number;
  budgetEventsPerSecond: number;
  sustainedEventsPerSecond: number;
  ratio: number;
  cpuMsPerThousandEvents: number;
  steps: LiveStep[];
  /** The bare client at the request rate of the step whose CPU is reported (of the last step if none passed). */
  bareClient: BareClientResult | null;
  /** The exporter's CPU per 1000 events / the bare client's per 1000 entries. */
  cpuToBareClient: number;
}

/**
 * The bare client's slices, in pages: about what one of the exporter's slices holds at these rates
 * (a quarter of a 15 s cycle at 4,500 events/s is 169 pages of 100), so it follows the cursor as
 * the exporter does; the half leaves a slice's last page half full rather than nearly empty.
 */
const BARE_PAGES_PER_SLICE = 100.5;
const BARE_WARMUP_SECONDS = 5;
const BARE_MIN_SECONDS = 30;

function exporterArgs(maxPages: number): string[] {
  return [...LOGS_ONLY_ARGS, '--logs-max-pages', String(maxPages)];
}

async function startExporter(log: LiveLog, stateFile: string | null, maxPages: number): Promise<ExporterProcess> {
  return ExporterProcess.start({ qstashUrl: log.url, token: TOKEN, stateFile, args: exporterArgs(maxPages) });
}

export async function measureLiveSustained(partial: Partial<LiveSustainedOptions> = {}): Promise<LiveSustainedResult> {
  const options: LiveSustainedOptions = {
    rateLimitPerSecond: 100,
    latencyMs: 50,
    maxPageSize: 100,
    judgedCycles: 6,
    steps: 3,
    log: () => undefined,
    ...partial,
  };
  const pageSize = Math.min(options.maxPageSize, defaults.pageSize);
  const budget = defaults.share * options.rateLimitPerSecond * pageSize;
  const steps: LiveStep[] = [];
  let low = 0;
  let high = 1.05;
  let fraction = 0.9;
  for (let i = 0; i < options.steps; i++) {
    const step = await liveStep(options, budget * fraction, fraction);
    steps.push(step);
    options.log(
      `  live sustained: ${Math.round(step.eventsPerSecond)} events/s (${Math.round(fraction * 100)}% of ${Math.round(budget)}): ${step.passed ? 'zero gaps, kept up' : `FAILED (${step.reason})`}; lag max ${step.lagMaxSeconds} s (bound ${step.lagBoundSeconds} s), ${step.requests} requests (${step.requestsPerSecond}/s), ${step.rateLimited} answered 429, ${step.cpuMsPerThousandEvents} CPU ms / 1000 events`,
    );
    if (step.passed) low = fraction;
    else high = fraction;
    if (step.passed && fraction >= 1) break;
    fraction = step.passed && i === 0 ? 1 : (low + high) / 2;
  }
  const passed = steps.filter((s) => s.passed);
  const best = passed.reduce((max, s) => Math.max(max, s.eventsPerSecond), 0);
  const bestStep = passed.find((s) => s.eventsPerSecond === best);
  const reference = bestStep ?? steps.at(-1);
  const bareClient = reference ? await liveBareClient(options, pageSize, reference) : null;
  const cpuMsPerThousandEvents = bestStep?.cpuMsPerThousandEvents ?? Number.NaN;
  const cpuToBareClient = bareClient
    ? round(cpuMsPerThousandEvents / bareClient.cpuMsPerThousandEntries, 2)
    : Number.NaN;
  if (bareClient)
    options.log(
      `  bare undici client + JSON.parse: ${bareClient.requestsPerSecond} req/s for ${bareClient.seconds} s, ${bareClient.entries} entries, ${bareClient.rateLimited} answered 429, ${bareClient.cpuMsPerThousandEntries} CPU ms / 1000 entries (exporter / bare client: ${cpuToBareClient})`,
    );
  return {
    rateLimitPerSecond: options.rateLimitPerSecond,
    share: defaults.share,
    pageSize,
    budgetEventsPerSecond: budget,
    sustainedEventsPerSecond: best,
    ratio: round(best / budget, 3),
    cpuMsPerThousandEvents,
    steps,
    bareClient,
    cpuToBareClient,
  };
}

/** The bare client against a log like the step's (same event rate, limit, latency, page cap) with ten minutes behind it. */
async function liveBareClient(
  options: LiveSustainedOptions,
  pageSize: number,
  step: LiveStep,
): Promise<BareClientResult> {
  const startAt = Date.now() - 600_000;
  const log = await startLiveLog({
    ratePerSecond: step.eventsPerSecond,
    startAt,
    endAt: null,
    rateLimitPerSecond: options.rateLimitPerSecond,
    latencyMs: options.latencyMs,
    maxPageSize: options.maxPageSize,
  });
  try {
    return await measureBareClient({
      url: log.url,
      token: TOKEN,
      path: DEFAULT_LOGS_PATH,
      pageSize,
      requestsPerSecond: step.requestsPerSecond,
      seconds: Math.max(BARE_MIN_SECONDS, step.judgedSeconds),
      maxPages: null,
      warmupSeconds: BARE_WARMUP_SECONDS,
      from: startAt,
      to: Date.now() - 1_000,
      sliceMs: Math.ceil((BARE_PAGES_PER_SLICE * pageSize * 1000) / step.eventsPerSecond),
      chains: defaults.parallelSlices,
    });
  } finally {
    log.stop();
  }
}

async function liveStep(options: LiveSustainedOptions, eventsPerSecond: number, fraction: number): Promise<LiveStep> {
  const { pollIntervalMs, ingestionDelayMs, overlapMs } = defaults;
  const warmupMs = overlapMs + pollIntervalMs;
  const trafficMs = warmupMs + options.judgedCycles * pollIntervalMs;
  // The traffic starts a little after the exporter (which starts at now - delay and counts after that).
  const startAt = Date.now() + 2_000;
  const endAt = startAt + trafficMs;
  const log = await startLiveLog({
    ratePerSecond: eventsPerSecond,
    startAt,
    endAt,
    rateLimitPerSecond: options.rateLimitPerSecond,
    latencyMs: options.latencyMs,
    maxPageSize: options.maxPageSize,
  });
  const exporter = await startExporter(log, null, setting('logs.max_pages'));
  try {
    await exporter.ready();
    let lagMax = 0;
    let cpuAtJudge: number | null = null;
    let countedAtJudge = 0;
    let requestsAtJudge = 0;
    let judgeStartedAt = 0;
    while (Date.now() < endAt) {
      await sleep(SCRAPE_EVERY_MS);
      const families = await exporter.scrape().catch(() => null);
      if (families === null) continue;
      if (Date.now() >= startAt + warmupMs) {
        if (cpuAtJudge === null) {
          cpuAtJudge = exporter.sample()?.cpuMs ?? Number.NaN;
          countedAtJudge = sumOf(families, 'upstash_qstash_message_events_total');
          requestsAtJudge = sumOf(families, 'upstash_exporter_api_requests_total');
          judgeStartedAt = Date.now();
        }
        lagMax = Math.max(lagMax, sumOf(families, 'upstash_exporter_log_lag_seconds'));
      }
    }
    const judgedFamilies = await exporter.scrape();
    const cpuEnd = exporter.sample()?.cpuMs ?? Number.NaN;
    const judgedEvents = sumOf(judgedFamilies, 'upstash_qstash_message_events_total') - countedAtJudge;
    const judgedRequests = sumOf(judgedFamilies, 'upstash_exporter_api_requests_total') - requestsAtJudge;
    const judgedSeconds = (Date.now() - judgeStartedAt) / 1000;
    const cpuMsPerThousand = judgedEvents > 0 ? ((cpuEnd - (cpuAtJudge ?? cpuEnd)) * 1000) / judgedEvents : Number.NaN;
    // Caught up: the watermark past the end of the traffic.
    const deadline = endAt + ingestionDelayMs + 2 * pollIntervalMs + 5_000;
    let families = judgedFamilies;
    let caughtUp = false;
    for (;;) {
      if (sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000 >= endAt) {
        caughtUp = true;
        break;
      }
      if (Date.now() > deadline) break;
      await sleep(500);
      families = await exporter.scrape();
    }
    const truth = log.times.countBetween(startAt, endAt);
    const counted = sumOf(families, 'upstash_qstash_message_events_total');
    const gaps = sumOf(families, 'upstash_exporter_log_gaps_total');
    const requests = sumOf(families, 'upstash_exporter_api_requests_total');
    const rateLimited = sumOf(families, 'upstash_exporter_api_requests_total', { code: '429' });
    const lagBound = (ingestionDelayMs + 2 * pollIntervalMs) / 1000 + 1;
    const reasons: string[] = [];
    if (!caughtUp) reasons.push(`had not read to the end of the traffic (${truth - counted} events not counted yet)`);
    if (caughtUp && counted !== truth) reasons.push(`counted ${counted} of ${truth}`);
    if (gaps > 0) reasons.push(`${gaps} events reported lost`);
    if (lagMax > lagBound) reasons.push(`lag reached ${round(lagMax, 1)} s (bound ${round(lagBound, 1)} s)`);
    return {
      eventsPerSecond: round(eventsPerSecond, 1),
      fraction: round(fraction, 3),
      passed: reasons.length === 0,
      truth,
      counted,
      gaps,
      lagMaxSeconds: round(lagMax, 2),
      lagBoundSeconds: round(lagBound, 2),
      requests,
      rateLimited,
      requestsPerSecond: round(judgedRequests / judgedSeconds, 1),
      judgedSeconds: round(judgedSeconds, 1),
      cpuMsPerThousandEvents: round(cpuMsPerThousand, 1),
      reason: reasons.join('; '),
    };
  } finally {
    await exporter.stop();
    log.stop();
  }
}

export interface CatchUpResult {
  outageSeconds: number;
  ratePerSecond: number;
  rateLimitPerSecond: number;
  latencyMs: number;
  backlogEvents: number;
  /** From the restart until the lag is what a walk that keeps up shows (delay + one interval). */
  secondsToZeroLag: number | null;
  counted: number;
  truth: number;
  gaps: number;
  requests: number;
  rateLimited: number;
  cpuMsPerThousandEvents: number;
  /** The bare client reading as many pages of 1000 as the exporter did, at the share of the limit. */
  bareClient: BareClientResult | null;
  /** The exporter's CPU per 1000 events / the bare client's per 1000 entries. */
  cpuToBareClient: number;
}

/** A state file of the collector's own making, with its watermark at `watermark` and nothing counted. */
async function writeStateAt(path: string, url: string, watermark: number): Promise<void> {
  const silent = createLogger({
    level: 'silent',
    format: 'json',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const delay = defaults.ingestionDelayMs;
  let now = watermark + delay - 1;
  const collector = new LogsCollector({
    source: { logsPage: () => Promise.resolve({ logs: [] }) },
    settings: {
      ingestionDelayMs: delay,
      overlapMs: defaults.overlapMs,
      maxPagesPerCycle: 10,
      labels: [],
      seriesLimit: 2000,
      messageTrackerSize: 100_000,
    },
    stateFile: path,
    upstream: upstreamIdentity(url, TOKEN),
    logger: silent,
    now: () => now,
  });
  // Fresh start at now - delay; one poll a millisecond later reads an empty slice and writes the file.
  now += 1;
  await collector.poll({ signal: new AbortController().signal, now: () => now, logger: silent });
  await collector.close();
}

export async function measureCatchUp(
  partial: {
    outageSeconds?: number;
    ratePerSecond?: number;
    rateLimitPerSecond?: number;
    latencyMs?: number;
    log?: (line: string) => void;
  } = {},
): Promise<CatchUpResult> {
  const outageSeconds = partial.outageSeconds ?? 3600;
  const ratePerSecond = partial.ratePerSecond ?? 1000;
  const rateLimitPerSecond = partial.rateLimitPerSecond ?? 100;
  const latencyMs = partial.latencyMs ?? 50;
  const { ingestionDelayMs } = defaults;
  const dir = mkdtempSync(join(tmpdir(), 'catch-up-'));
  const stateFile = join(dir, 'state.json');
  const watermark = Date.now() - outageSeconds * 1000 - ingestionDelayMs;
  const startAt = watermark + 1;
  // Pages of up to 1000, as the SDK documents and the walk asks at its defaults.
  const log = await startLiveLog({
    ratePerSecond,
    startAt,
    endAt: null,
    rateLimitPerSecond,
    latencyMs,
    maxPageSize: 1000,
  });
  try {
    const figures = await catchUpExporter(log, stateFile, startAt, watermark, outageSeconds, partial.log);
    const pageSize = Math.min(1000, defaults.pageSize);
    // The backlog's time range, walked again by the bare client for as many pages as the exporter read.
    const pages = figures.requests - figures.rateLimited;
    const bareClient =
      pages > 0
        ? await measureBareClient({
            url: log.url,
            token: TOKEN,
            path: DEFAULT_LOGS_PATH,
            pageSize,
            requestsPerSecond: defaults.share * rateLimitPerSecond,
            seconds: 3_600,
            maxPages: pages,
            warmupSeconds: BARE_WARMUP_SECONDS,
            from: startAt,
            to: watermark + outageSeconds * 1000,
            sliceMs: Math.ceil((BARE_PAGES_PER_SLICE * pageSize * 1000) / ratePerSecond),
            chains: defaults.parallelSlices,
          })
        : null;
    const cpuToBareClient = bareClient
      ? round(figures.cpuMsPerThousandEvents / bareClient.cpuMsPerThousandEntries, 2)
      : Number.NaN;
    if (bareClient)
      partial.log?.(
        `  bare undici client + JSON.parse: ${bareClient.pages} pages of ${pageSize} at ${bareClient.requestsPerSecond} req/s in ${bareClient.seconds} s, ${bareClient.rateLimited} answered 429, ${bareClient.cpuMsPerThousandEntries} CPU ms / 1000 entries (exporter / bare client: ${cpuToBareClient})`,
      );
    return { outageSeconds, ratePerSecond, rateLimitPerSecond, latencyMs, ...figures, bareClient, cpuToBareClient };
  } finally {
    log.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

type CatchUpExporterFigures = Omit<
  CatchUpResult,
  'outageSeconds' | 'ratePerSecond' | 'rateLimitPerSecond' | 'latencyMs' | 'bareClient' | 'cpuToBareClient'
>;

/** The exporter restarted on a state file `watermark` back, until its lag is what a walk that keeps up shows. */
async function catchUpExporter(
  log: LiveLog,
  stateFile: string,
  startAt: number,
  watermark: number,
  outageSeconds: number,
  report: ((line: string) => void) | undefined,
): Promise<CatchUpExporterFigures> {
  const { pollIntervalMs, ingestionDelayMs } = defaults;
  await writeStateAt(stateFile, log.url, watermark);
  const backlogEvents = log.times.countBetween(startAt, Date.now() - ingestionDelayMs);
  const started = Date.now();
  const exporter = await startExporter(log, stateFile, setting('logs.max_pages'));
  const cpuStart = exporter.sample()?.cpuMs ?? 0;
  try {
    const bound = (ingestionDelayMs + pollIntervalMs) / 1000;
    const deadline = started + Math.max(600_000, outageSeconds * 500);
    let secondsToZeroLag: number | null = null;
    let families = await exporter.scrape();
    let lastReport = Date.now();
    for (;;) {
      const lag = sumOf(families, 'upstash_exporter_log_lag_seconds');
      if (lag > 0 && lag <= bound) {
        secondsToZeroLag = round((Date.now() - started) / 1000, 1);
        break;
      }
      if (Date.now() > deadline) break;
      if (Date.now() - lastReport > 15_000) {
        report?.(
          `  catch-up: lag ${round(lag, 0)} s after ${round((Date.now() - started) / 1000, 0)} s, ${sumOf(families, 'upstash_qstash_message_events_total')} counted`,
        );
        lastReport = Date.now();
      }
      await sleep(SCRAPE_EVERY_MS);
      families = await exporter.scrape();
    }
    const cpuMs = (exporter.sample()?.cpuMs ?? Number.NaN) - cpuStart;
    const counted = sumOf(families, 'upstash_qstash_message_events_total');
    const watermarkNow = sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000;
    return {
      backlogEvents,
      secondsToZeroLag,
      counted,
      truth: log.times.countBetween(startAt, Math.round(watermarkNow)),
      gaps: sumOf(families, 'upstash_exporter_log_gaps_total'),
      requests: sumOf(families, 'upstash_exporter_api_requests_total'),
      rateLimited: sumOf(families, 'upstash_exporter_api_requests_total', { code: '429' }),
      cpuMsPerThousandEvents: round((cpuMs * 1000) / Math.max(1, counted), 1),
    };
  } finally {
    await exporter.stop();
  }
}
