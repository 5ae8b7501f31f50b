// Two QStash regions against one (issue 35, "How we will know"): one exporter child watching two
// live logs (bench/live-log.ts), each a region with its own URL, token and burst limit and the
// same traffic, against one exporter child watching one such log, in the same run. Each phase
// runs the exporter with its defaults (logs alone, as the live part), waits an overlap and an
// interval, then judges a window of whole cycles: the exporter's CPU (/proc) and its upstream
// requests (upstash_exporter_api_requests_total), each per second of the window. The figures are
// two regions' over one region's: at most 2.1 the CPU and 2 the requests (within 5%). Each phase
// must also count every event once per region, with no gap, once the traffic ends: a cheaper
// walk that loses events is no figure.
//
// The phases run one after the other, one region first, then two, then one again: the ratio is
// taken over the mean of the two one-region phases, so a machine whose load drifts over the run
// moves both sides alike.
import { parseDuration } from '../src/common/duration.js';
import { DEFAULT_POLL_INTERVALS, settingByKey } from '../src/config/settings.js';
import { ExporterProcess, LOGS_ONLY_ARGS, sumOf, type ExporterRegion } from './exporter-process.js';
import { startLiveLog, type LiveLog } from './live-log.js';
import { round, sleep } from './measure.js';

const REGION_NAMES = ['eu-central-1', 'us-east-1'] as const;
const pollIntervalMs = parseDuration(DEFAULT_POLL_INTERVALS.logs);
const ingestionDelayMs = parseDuration(settingByKey('logs.ingestion_delay').defaultText);
const overlapMs = parseDuration(settingByKey('logs.overlap').defaultText);

export interface RegionsOptions {
  /** Events a second in each region's log. */
  eventsPerSecond: number;
  rateLimitPerSecond: number;
  latencyMs: number;
  /** Entries a page holds at most (the service's cap). */
  maxPageSize: number;
  /** Poll cycles judged in each phase, after the warm-up (an overlap and an interval). */
  judgedCycles: number;
  log: (line: string) => void;
}

export interface RegionsPhase {
  regions: number;
  judgedSeconds: number;
  cpuMs: number;
  requests: number;
  cpuMsPerSecond: number;
  requestsPerSecond: number;
  /** Per region: events counted, the log's ground truth, gaps reported, the highest lag in the judged window. */
  perRegion: Array<{ region: string; counted: number; truth: number; gaps: number; lagMaxSeconds: number }>;
  exact: boolean;
}

export interface RegionsResult {
  eventsPerSecond: number;
  pageSize: number;
  /** One region, before and after the two-region phase. */
  one: [RegionsPhase, RegionsPhase];
  two: RegionsPhase;
  /** Two regions' CPU per second of the window / one region's (the mean of its two phases). */
  cpuRatio: number;
  /** Two regions' upstream requests per second / one region's. */
  requestsRatio: number;
  exact: boolean;
}

/** Targets of issue 35: two regions cost at most 2.1 the CPU and 2 the requests (within 5%) of one. */
export const REGIONS_TARGETS = { cpuRatio: 2.1, requestsRatio: 2 * 1.05 } as const;

export async function measureRegions(partial: Partial<RegionsOptions> = {}): Promise<RegionsResult> {
  const options: RegionsOptions = {
    eventsPerSecond: 2_000,
    rateLimitPerSecond: 100,
    latencyMs: 50,
    maxPageSize: 100,
    judgedCycles: 6,
    log: () => undefined,
    ...partial,
  };
  const report = (phase: RegionsPhase): void =>
    options.log(
      `  ${phase.regions} region${phase.regions === 1 ? '' : 's'}: ${phase.cpuMsPerSecond} CPU ms/s, ${phase.requestsPerSecond} requests/s over ${phase.judgedSeconds} s; ` +
        phase.perRegion
          .map((r) => `${r.region} ${r.counted} of ${r.truth} counted, ${r.gaps} gaps, lag max ${r.lagMaxSeconds} s`)
          .join('; ') +
        (phase.exact ? '' : ' (NOT EXACT)'),
    );
  const oneBefore = await runPhase(options, 1);
  report(oneBefore);
  const two = await runPhase(options, 2);
  report(two);
  const oneAfter = await runPhase(options, 1);
  report(oneAfter);
  const oneCpu = (oneBefore.cpuMsPerSecond + oneAfter.cpuMsPerSecond) / 2;
  const oneRequests = (oneBefore.requestsPerSecond + oneAfter.requestsPerSecond) / 2;
  return {
    eventsPerSecond: options.eventsPerSecond,
    pageSize: options.maxPageSize,
    one: [oneBefore, oneAfter],
    two,
    // A zero baseline gives Infinity or NaN: the bench fails on it rather than print a verdict.
    cpuRatio: round(two.cpuMsPerSecond / oneCpu, 3),
    requestsRatio: round(two.requestsPerSecond / oneRequests, 3),
    exact: oneBefore.exact && two.exact && oneAfter.exact,
  };
}

/** One exporter watching `count` regions, each its own live log with the same traffic. */
async function runPhase(options: RegionsOptions, count: number): Promise<RegionsPhase> {
  const warmupMs = overlapMs + pollIntervalMs;
  const judgedMs = options.judgedCycles * pollIntervalMs;
  const startAt = Date.now() + 2_000;
  const endAt = startAt + warmupMs + judgedMs;
  const logs: LiveLog[] = [];
  let exporter: ExporterProcess | null = null;
  try {
    for (let i = 0; i < count; i++) {
      logs.push(
        await startLiveLog({
          ratePerSecond: options.eventsPerSecond,
          startAt,
          endAt,
          rateLimitPerSecond: options.rateLimitPerSecond,
          latencyMs: options.latencyMs,
          maxPageSize: options.maxPageSize,
        }),
      );
    }
    const regions: ExporterRegion[] = logs.map((log, i) => ({
      name: REGION_NAMES[i]!,
      url: log.url,
      token: `bench-token-${REGION_NAMES[i]!}`,
    }));
    exporter = await ExporterProcess.start({
      qstashUrl: '',
      token: '',
      regions,
      stateFile: null,
      args: [...LOGS_ONLY_ARGS, '--logs-max-pages', settingByKey('logs.max_pages').defaultText],
    });
    await exporter.ready();
    const lagMax = new Map<string, number>(regions.map((r) => [r.name, 0]));
    let cpuAtJudge: number | null = null;
    let requestsAtJudge = 0;
    let judgeStartedAt = 0;
    while (Date.now() < endAt) {
      await sleep(500);
      const families = await exporter.scrape().catch(() => null);
      if (families === null) continue;
      if (Date.now() < startAt + warmupMs) continue;
      if (cpuAtJudge === null) {
        cpuAtJudge = exporter.sample()?.cpuMs ?? Number.NaN;
        requestsAtJudge = sumOf(families, 'upstash_exporter_api_requests_total');
        judgeStartedAt = Date.now();
      }
      for (const { name } of regions) {
        const lag = sumOf(families, 'upstash_exporter_log_lag_seconds', { qstash_region: name });
        lagMax.set(name, Math.max(lagMax.get(name)!, lag));
      }
    }
    const judged = await exporter.scrape();
    const cpuMs = (exporter.sample()?.cpuMs ?? Number.NaN) - (cpuAtJudge ?? Number.NaN);
    const requests = sumOf(judged, 'upstash_exporter_api_requests_total') - requestsAtJudge;
    const judgedSeconds = (Date.now() - judgeStartedAt) / 1000;
    // Every region read past the end of its traffic, then its counts against the ground truth.
    const deadline = endAt + ingestionDelayMs + 3 * pollIntervalMs + 10_000;
    let families = judged;
    const caughtUp = (): boolean =>
      regions.every(
        ({ name }) =>
          sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds', { qstash_region: name }) * 1000 >= endAt,
      );
    while (!caughtUp() && Date.now() < deadline) {
      await sleep(500);
      families = await exporter.scrape();
    }
    const perRegion = regions.map(({ name }, i) => ({
      region: name,
      counted: sumOf(families, 'upstash_qstash_message_events_total', { qstash_region: name }),
      truth: logs[i]!.times.countBetween(startAt, endAt),
      gaps: sumOf(families, 'upstash_exporter_log_gaps_total', { qstash_region: name }),
      lagMaxSeconds: round(lagMax.get(name)!, 1),
    }));
    return {
      regions: count,
      judgedSeconds: round(judgedSeconds, 1),
      cpuMs: round(cpuMs, 0),
      requests,
      cpuMsPerSecond: round(cpuMs / judgedSeconds, 2),
      requestsPerSecond: round(requests / judgedSeconds, 2),
      perRegion,
      exact: perRegion.every((r) => r.counted === r.truth && r.gaps === 0),
    };
  } finally {
    await exporter?.stop();
    for (const log of logs) log.stop();
  }
}
