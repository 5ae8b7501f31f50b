// The highest event rate the exporter sustains with zero gaps against an upstream that limits
// it: the emulator with added latency, a burst rate limit on the log reads and a bounded log
// retention. The exporter runs as a child process (as users run it); a publisher writes
// messages at a set rate; each step starts from a reset log and a fresh exporter, so steps do
// not contaminate each other.
//
// The limit those settings impose on any poller (docs/performance.md):
//   limit = min( (rateLimitPerSecond x share - otherRequestsPerSecond) x 100,
//                retention / (pollInterval + ingestionDelay) )
// The first term: the exporter uses its share of the limit (http.rate_limit_share, 0.5 by
// default), and each log request returns at most 100 entries (the emulator is set to the
// OpenAPI's cap). The second: an entry must
// still be retained when the poll that reads it comes, up to interval + delay after it was
// written (the issue's retention / interval is the case of no ingestion delay).
//
// A step at rate R passes when, after the traffic stops and the exporter has read up to its
// end: no gap was reported, the counters equal the ground truth (nothing missing, nothing
// doubled), and the exporter kept up while the traffic ran: after a warm-up (one overlap and
// one interval, so every cycle re-reads a full overlap as it does in a long run) its lag stayed
// within ingestion delay + 2 intervals + 1 s for `judgedCycles` intervals. An exporter that
// keeps up trails by at most the delay, one interval and one poll (shorter than an interval);
// one whose polls overrun the interval skips ticks and passes that bound within a cycle or two,
// and one that stops its polls in time but reads slower than the entries arrive trails a little
// more every cycle (hence six judged cycles: about 1 s more per cycle at the limit itself).
// Rates are searched by bisection, starting at 97% of the limit (the target).
//
// By default the exporter runs with its own defaults (interval, ingestion delay, overlap, read
// from the settings table), against a retention of 100,000 entries: today's plans keep days of
// logs, so the rate limit is what binds (the retention term would only bind below
// 100,000 / (interval + delay) events per second).
import { parseDuration } from '../src/common/duration.js';
import { DEFAULT_POLL_INTERVALS, settingByKey } from '../src/config/settings.js';
import { createEmulator, type EmulatorHandle } from '../src/emulator/index.js';
import { ExporterProcess, LOGS_ONLY_ARGS, sumOf } from './exporter-process.js';
import { round, seededRandom, sleep } from './measure.js';
import { Publisher, startDestinations, type Destinations } from './traffic.js';

export interface SustainedOptions {
  latencyMs: number;
  rateLimitPerSecond: number;
  retention: number;
  pollIntervalMs: number;
  ingestionDelayMs: number;
  /** The exporter's re-read window before its watermark (default: the exporter's default). */
  overlapMs: number;
  /** Intervals of traffic judged per step, after the warm-up. */
  judgedCycles: number;
  /** Steps of the bisection. */
  steps: number;
  /** The exporter's share of the rate limit (`--rate-limit-share`; default: the exporter's default). */
  share: number;
  /** Further exporter flags (e.g. `--logs-overlap=10s`). */
  exporterArgs: readonly string[];
  log: (line: string) => void;
}

export const DEFAULT_SUSTAINED: SustainedOptions = {
  latencyMs: 50,
  rateLimitPerSecond: 5,
  retention: 100_000,
  pollIntervalMs: parseDuration(DEFAULT_POLL_INTERVALS.logs),
  ingestionDelayMs: parseDuration(settingByKey('logs.ingestion_delay').defaultText),
  overlapMs: parseDuration(settingByKey('logs.overlap').defaultText),
  judgedCycles: 6,
  steps: 3,
  share: Number(settingByKey('http.rate_limit_share').defaultText),
  exporterArgs: [],
  log: () => undefined,
};

export interface StepResult {
  eventsPerSecond: number;
  fractionOfLimit: number;
  passed: boolean;
  groundTruth: number;
  counted: number;
  missing: number;
  doubled: number;
  gapsReported: number;
  /** Highest lag after the warm-up, and the bound it must stay within. */
  lagMaxSeconds: number;
  lagBoundSeconds: number;
  caughtUp: boolean;
  requests: number;
  rateLimited: number;
  reason: string;
}

export interface SustainedResult {
  settings: Omit<SustainedOptions, 'log'>;
  limitEventsPerSecond: number;
  limitBy: 'rate limit' | 'retention';
  otherRequestsPerSecond: number;
  sustainedEventsPerSecond: number;
  ratio: number;
  steps: StepResult[];
}

/** The limit of the module comment, events per second. */
export function imposedLimit(
  options: Pick<SustainedOptions, 'rateLimitPerSecond' | 'retention' | 'pollIntervalMs' | 'ingestionDelayMs'>,
  otherRequestsPerSecond = 0,
  share = 1,
): { limit: number; by: 'rate limit' | 'retention' } {
  const byRate = Math.max(0, options.rateLimitPerSecond * share - otherRequestsPerSecond) * 100;
  const byRetention = options.retention / ((options.pollIntervalMs + options.ingestionDelayMs) / 1000);
  return byRate <= byRetention ? { limit: byRate, by: 'rate limit' } : { limit: byRetention, by: 'retention' };
}

const LOGS_ENDPOINT = '/v2/events';
/** The first step's share of the limit: the target of the figure, so one run says whether it is met. */
const FIRST_FRACTION = 0.97;

export async function measureSustainedRate(partial: Partial<SustainedOptions> = {}): Promise<SustainedResult> {
  const options = { ...DEFAULT_SUSTAINED, ...partial };
  // The exporter here polls only the logs (no management credentials, the other QStash collectors off), and the
  // emulator limits each endpoint group on its own: no other request shares the logs budget.
  const otherRequestsPerSecond = 0;
  // The exporter uses its share of the limit (http.rate_limit_share, its default unless --share says otherwise).
  const { limit, by } = imposedLimit(options, otherRequestsPerSecond, options.share);
  const destinations = await startDestinations();
  const emulator = await createEmulator({
    // Pages of 100 (the OpenAPI's cap), so each request reads at most 100 entries, as the limit formula says.
    knobs: {
      latencyMs: options.latencyMs,
      rateLimitPerSecond: options.rateLimitPerSecond,
      logRetention: options.retention,
      faultScope: ['logs'],
      maxPageSize: 100,
    },
  });
  const steps: StepResult[] = [];
  try {
    // The first step is the target (FIRST_FRACTION): then the limit itself if it passed, 90% if
    // not, then bisection between the highest pass and the lowest failure.
    let low = 0;
    let high = 1.05;
    let fraction = FIRST_FRACTION;
    for (let i = 0; i < options.steps; i++) {
      const step = await runStep(emulator, destinations, options, limit * fraction, fraction);
      steps.push(step);
      options.log(
        `  sustained: ${Math.round(step.eventsPerSecond)} events/s (${Math.round(fraction * 100)}% of ${Math.round(limit)}): ${step.passed ? 'zero gaps, kept up' : `FAILED (${step.reason})`}; lag max ${step.lagMaxSeconds} s (bound ${step.lagBoundSeconds} s), ${step.requests} log requests, ${step.rateLimited} answered 429`,
      );
      if (step.passed) low = fraction;
      else high = fraction;
      if (step.passed && fraction >= 1) break;
      fraction = i === 0 ? (step.passed ? 1 : 0.9) : (low + high) / 2;
    }
  } finally {
    await emulator.close();
    await destinations.close();
  }
  const best = steps.filter((s) => s.passed).reduce((max, s) => Math.max(max, s.eventsPerSecond), 0);
  const { log: _log, ...settings } = options;
  return {
    settings,
    limitEventsPerSecond: round(limit, 1),
    limitBy: by,
    otherRequestsPerSecond,
    sustainedEventsPerSecond: round(best, 1),
    ratio: round(best / limit, 3),
    steps,
  };
}

async function runStep(
  emulator: EmulatorHandle,
  destinations: Destinations,
  options: SustainedOptions,
  eventsPerSecond: number,
  fraction: number,
): Promise<StepResult> {
  emulator.reset();
  const exporter = await startLogsExporter(emulator, options, [
    '--rate-limit-share',
    String(options.share),
    ...options.exporterArgs,
  ]);
  const publisher = new Publisher({
    emulatorUrl: emulator.url,
    token: emulator.credentials.token,
    // Delivered at once: CREATED, ACTIVE, DELIVERED.
    kinds: [{ path: `/v2/publish/${destinations.ok}/sustained`, weight: 1 }],
    random: seededRandom(7),
    maxInFlight: 128,
  });
  const lags: Array<{ at: number; lag: number }> = [];
  try {
    await exporter.ready();
    const started = Date.now();
    publisher.start(eventsPerSecond / 3);
    const warmupMs = options.overlapMs + options.pollIntervalMs;
    const stepMs = warmupMs + options.judgedCycles * options.pollIntervalMs;
    while (Date.now() - started < stepMs) {
      await sleep(500);
      try {
        const families = await exporter.scrape();
        lags.push({ at: Date.now() - started, lag: sumOf(families, 'upstash_exporter_log_lag_seconds') });
      } catch {
        // A slow scrape is not the measurement; the next one will do.
      }
    }
    await publisher.stop();
    // Deliveries finish within milliseconds on loopback; then the log is complete.
    await waitForQuiet(emulator);
    const ended = Date.now();
    const truth = emulator.groundTruth().total;

    // Catch-up: the exporter reads up to now - delay on its schedule; give it a few cycles.
    const catchUpDeadline = ended + options.ingestionDelayMs + 2 * options.pollIntervalMs + 3_000;
    let counted = 0;
    let gaps = 0;
    let caughtUp = false;
    let requests = 0;
    let rateLimited = 0;
    for (;;) {
      const families = await exporter.scrape();
      counted = sumOf(families, 'upstash_qstash_message_events_total');
      gaps = sumOf(families, 'upstash_exporter_log_gaps_total');
      requests = sumOf(families, 'upstash_exporter_api_requests_total', { endpoint: LOGS_ENDPOINT });
      rateLimited = sumOf(families, 'upstash_exporter_api_requests_total', { endpoint: LOGS_ENDPOINT, code: '429' });
      const watermarkMs = sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000;
      if (watermarkMs >= ended) {
        caughtUp = true;
        break;
      }
      if (Date.now() > catchUpDeadline) break;
      await sleep(500);
    }

    const judged = lags.filter((l) => l.at >= warmupMs).map((l) => l.lag);
    const lagMax = judged.length > 0 ? Math.max(...judged) : Number.POSITIVE_INFINITY;
    const lagBound = (options.ingestionDelayMs + 2 * options.pollIntervalMs) / 1000 + 1;
    const keptUp = lagMax <= lagBound;
    const missing = Math.max(0, truth - counted);
    const doubled = Math.max(0, counted - truth);
    const reasons: string[] = [];
    if (!caughtUp)
      reasons.push(
        `had not read up to the end of the traffic ${round((catchUpDeadline - ended) / 1000, 0)} s after it (${missing} events not counted yet)`,
      );
    if (gaps > 0) reasons.push(`${gaps} events reported lost`);
    if (caughtUp && missing > 0) reasons.push(`${missing} missing`);
    if (doubled > 0) reasons.push(`${doubled} doubled`);
    if (!keptUp) reasons.push(`lag reached ${round(lagMax, 1)} s (bound ${round(lagBound, 1)} s)`);
    return {
      eventsPerSecond: round(eventsPerSecond, 1),
      fractionOfLimit: round(fraction, 3),
      passed: reasons.length === 0,
      groundTruth: truth,
      counted,
      missing,
      doubled,
      gapsReported: gaps,
      lagMaxSeconds: round(lagMax, 2),
      lagBoundSeconds: round(lagBound, 2),
      caughtUp,
      requests,
      rateLimited,
      reason: reasons.join('; '),
    };
  } finally {
    await publisher.close();
    await exporter.stop();
  }
}

/**
 * The exporter as a child process reading only the delivery logs of `emulator` (no management
 * credentials, the other QStash collectors off, no state file) with the given logs settings, then `extraArgs`.
 */
export function startLogsExporter(
  emulator: EmulatorHandle,
  settings: Pick<SustainedOptions, 'pollIntervalMs' | 'ingestionDelayMs' | 'overlapMs'>,
  extraArgs: readonly string[] = [],
): Promise<ExporterProcess> {
  return ExporterProcess.start({
    qstashUrl: emulator.url,
    token: emulator.credentials.token,
    stateFile: null,
    args: [
      ...LOGS_ONLY_ARGS,
      '--poll-interval',
      `logs=${settings.pollIntervalMs / 1000}s`,
      '--logs-ingestion-delay',
      `${settings.ingestionDelayMs}ms`,
      '--logs-overlap',
      `${settings.overlapMs}ms`,
      ...extraArgs,
    ],
  });
}

/** Waits until the ground truth stops moving (no delivery in flight). */
export async function waitForQuiet(emulator: EmulatorHandle, quietMs = 300, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = emulator.groundTruth().total;
  let since = Date.now();
  while (Date.now() < deadline) {
    await sleep(50);
    const now = emulator.groundTruth().total;
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return;
    }
  }
}
