// `npm run soak -- --minutes N [--seed S] [--output FILE]`: steady traffic into the emulator (in this process)
// while the exporter (a child process with a state file) is killed with SIGKILL at random
// moments and restarted, and the upstream misbehaves in turns: outages (every read answers 5xx),
// 429 storms (one request a second), malformed and truncated pages, repeated cursors, and logs
// that become visible late (after the exporter's ingestion delay). At the end the traffic stops,
// the exporter catches up, and its counters are compared with the emulator's ground truth per
// state and label set: nothing doubled, nothing missing beyond the gaps it reported. The
// exporter's resident memory is sampled all along and must stay flat. Exit status 1 on a
// mismatch. The chaos schedule comes from a seeded PRNG: the same seed replays it.
import { appendFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmulator, type GroundTruthSeries, type Knobs } from '../src/emulator/index.js';
import type { Family } from '../test/support/exporter-e2e-helpers.js';
import { ExporterProcess, sumOf } from './exporter-process.js';
import { mb, median, round, seededRandom, sleep } from './measure.js';
import { waitForQuiet } from './sustained.js';
import { Publisher, startDestinations, type Destinations } from './traffic.js';

export interface SoakOptions {
  minutes: number;
  seed: number;
  /** Messages published per second (each makes 3 to 10 log entries). */
  messagesPerSecond: number;
  /** Samples taken within this long after a (re)start are warm-up, not judged for flatness. */
  warmupMs: number;
  /** Flat: median RSS of the last third within this factor of the first third's. */
  rssTolerance: number;
  log: (line: string) => void;
  /** Every line the exporter prints, across restarts, appended here (absent: only the last 50 are kept, for errors). */
  outputFile?: string;
}

export const DEFAULT_SOAK: SoakOptions = {
  minutes: 2,
  seed: 1,
  messagesPerSecond: 10,
  warmupMs: 5_000,
  rssTolerance: 1.2,
  log: (line) => console.log(line),
};

export interface SeriesComparison {
  state: string;
  queue: string;
  urlGroup: string;
  endpoint: string;
  destination: string;
  truth: number;
  counted: number;
  missing: number;
  doubled: number;
}

export interface RssSample {
  /** Seconds since the soak started. */
  at: number;
  pid: number;
  rssMiB: number;
  /** Within the warm-up after a (re)start. */
  warmup: boolean;
}

export interface SoakResult {
  ok: boolean;
  problems: string[];
  seed: number;
  seconds: number;
  groundTruthTotal: number;
  countedTotal: number;
  missingTotal: number;
  doubledTotal: number;
  gapsReported: number;
  restarts: number;
  chaos: Array<{ at: number; what: string }>;
  series: SeriesComparison[];
  rss: { samples: RssSample[]; firstThirdMiB: number; lastThirdMiB: number; ratio: number; flat: boolean };
  published: number;
  publishFailures: number;
}

const CALM: Partial<Knobs> = {
  errorRatio: 0,
  rateLimitPerSecond: 0,
  malformedRatio: 0,
  truncatedRatio: 0,
  repeatCursorNext: 0,
  logVisibilityDelayMs: 0,
};
const FAULTS: ReadonlyArray<{ name: string; knobs: Partial<Knobs> }> = [
  { name: 'upstream outage (every read answers 5xx)', knobs: { errorRatio: 1 } },
  { name: '429 storm (1 request per second)', knobs: { rateLimitPerSecond: 1 } },
  { name: 'malformed and truncated pages', knobs: { malformedRatio: 0.3, truncatedRatio: 0.2 } },
  { name: 'repeated cursors', knobs: { repeatCursorNext: 20 } },
  // Longer than the exporter's ingestion delay: entries appear after the frontier passed them.
  { name: 'logs visible late (6 s)', knobs: { logVisibilityDelayMs: 6_000 } },
];
const INGESTION_DELAY = '3s';
const EVENTS = 'upstash_qstash_message_events_total';

const uniform = (random: () => number, low: number, high: number): number => low + random() * (high - low);

export async function runSoak(partial: Partial<SoakOptions> = {}): Promise<SoakResult> {
  const options = { ...DEFAULT_SOAK, ...partial };
  const log = options.log;
  const random = seededRandom(options.seed);
  const durationMs = Math.round(options.minutes * 60_000);
  const stateDir = await mkdtemp(join(tmpdir(), 'upstash-soak-'));
  const stateFile = join(stateDir, 'state.json');
  const destinations = await startDestinations();
  const emulator = await createEmulator({ seed: options.seed, knobs: { timeScale: 60 } });
  const chaos: Array<{ at: number; what: string }> = [];
  const samples: RssSample[] = [];
  const soakStart = Date.now();
  const since = (): number => round((Date.now() - soakStart) / 1000, 1);
  const note = (what: string): void => {
    chaos.push({ at: since(), what });
    log(`  [${since().toFixed(1).padStart(6)} s] ${what}`);
  };
  const outputTail: string[] = [];
  const startExporter = (): Promise<ExporterProcess> =>
    ExporterProcess.start({
      qstashUrl: emulator.url,
      token: emulator.credentials.token,
      stateFile,
      args: ['--poll-interval', 'logs=2s,schedules=10s', '--logs-ingestion-delay', INGESTION_DELAY],
      onLine: (line) => {
        outputTail.push(line);
        if (outputTail.length > 50) outputTail.shift();
        if (options.outputFile !== undefined) appendFileSync(options.outputFile, `${line}\n`);
      },
    });

  let exporter = await startExporter();
  let startedAt = Date.now();
  let restarts = 0;
  const publisher = new Publisher({
    emulatorUrl: emulator.url,
    token: emulator.credentials.token,
    kinds: kindsOf(destinations),
    random,
    maxInFlight: 64,
  });
  try {
    await exporter.ready();
    log(
      `soak: ${options.minutes} min, seed ${options.seed}, ${options.messagesPerSecond} messages/s; exporter pid ${exporter.pid}`,
    );
    publisher.start(options.messagesPerSecond);
    const end = soakStart + durationMs;

    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const sample = exporter.sample();
        if (sample)
          samples.push({
            at: since(),
            pid: exporter.pid,
            rssMiB: mb(sample.rss),
            warmup: Date.now() - startedAt < options.warmupMs,
          });
        await sleep(1_000);
      }
    })();

    const kills = (async () => {
      for (;;) {
        const wait = uniform(random, 8_000, 8_000 + durationMs / 4);
        if (Date.now() + wait > end - 5_000) return;
        await sleep(wait);
        note(`SIGKILL exporter pid ${exporter.pid}`);
        await exporter.kill();
        await sleep(uniform(random, 0, 1_500));
        exporter = await startExporter();
        startedAt = Date.now();
        restarts += 1;
        note(`restarted exporter, pid ${exporter.pid}`);
      }
    })();

    const faults = (async () => {
      const order = shuffle(random, [...FAULTS]);
      for (let i = 0; ; i++) {
        const calm = uniform(random, 1_000, 3_000);
        const length = uniform(random, 3_000, 5_000);
        if (Date.now() + calm + length > end - 3_000) return;
        await sleep(calm);
        const fault = order[i % order.length]!;
        emulator.setKnobs({ ...CALM, ...fault.knobs });
        note(`fault: ${fault.name}`);
        await sleep(length);
        emulator.setKnobs(CALM);
        note('fault over');
      }
    })();

    await Promise.all([kills, faults]);
    await sleep(Math.max(0, end - Date.now()));
    await publisher.stop();
    emulator.setKnobs(CALM);
    await waitForQuiet(emulator, 1_000);
    const ended = Date.now();
    note(`traffic stopped after ${publisher.sent} messages; waiting for the exporter to catch up`);

    const truth = emulator.groundTruth();
    const deadline = ended + 90_000;
    let families = await scrapeOrNull(exporter);
    for (;;) {
      if (families) {
        const watermarkMs = sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000;
        const counted = sumOf(families, EVENTS);
        if (watermarkMs >= ended && counted >= truth.total) break;
      }
      if (Date.now() > deadline) break;
      await sleep(500);
      families = await scrapeOrNull(exporter);
    }
    // One more cycle: a late double would show now.
    await sleep(2_500);
    families = await scrapeOrNull(exporter);
    sampling = false;
    await sampler;
    if (!families)
      throw new Error(`the exporter does not answer /metrics at the end; its last output:\n${outputTail.join('\n')}`);

    const series = compare(truth.series, families.get(EVENTS)?.samples ?? []);
    const missingTotal = series.reduce((sum, s) => sum + s.missing, 0);
    const doubledTotal = series.reduce((sum, s) => sum + s.doubled, 0);
    const countedTotal = sumOf(families, EVENTS);
    const gapsReported = sumOf(families, 'upstash_exporter_log_gaps_total');
    const rss = judgeRss(samples, options.rssTolerance);
    const problems: string[] = [];
    if (doubledTotal > 0) problems.push(`${doubledTotal} events counted twice`);
    if (missingTotal > gapsReported)
      problems.push(`${missingTotal} events missing, ${gapsReported} reported lost in gaps`);
    if (!rss.flat)
      problems.push(
        `memory not flat: last-third median ${rss.lastThirdMiB} MiB vs first-third ${rss.firstThirdMiB} MiB`,
      );
    if (truth.total === 0) problems.push('no traffic reached the log');
    return {
      ok: problems.length === 0,
      problems,
      seed: options.seed,
      seconds: since(),
      groundTruthTotal: truth.total,
      countedTotal,
      missingTotal,
      doubledTotal,
      gapsReported,
      restarts,
      chaos,
      series,
      rss,
      published: publisher.sent,
      publishFailures: publisher.failed,
    };
  } finally {
    await publisher.close();
    await exporter.kill();
    await emulator.close();
    await destinations.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

function kindsOf(
  destinations: Destinations,
): Array<{ path: string; headers?: Record<string, string>; weight: number }> {
  const fast = { 'Upstash-Retry-Delay': '200' };
  return [
    { path: `/v2/publish/${destinations.ok}/soak`, weight: 5 },
    { path: `/v2/enqueue/soak-queue/${destinations.ok}/queued`, weight: 2 },
    { path: `/v2/publish/${destinations.flaky}/flaky`, headers: { ...fast, 'Upstash-Retries': '2' }, weight: 2 },
    { path: `/v2/publish/${destinations.broken}/broken`, headers: { ...fast, 'Upstash-Retries': '1' }, weight: 1 },
  ];
}

async function scrapeOrNull(exporter: ExporterProcess): Promise<Map<string, Family> | null> {
  try {
    return await exporter.scrape();
  } catch {
    return null;
  }
}

/** Per state and label set: the ground truth against the exporter's counter. */
export function compare(
  truth: readonly GroundTruthSeries[],
  samples: ReadonlyArray<{ labels: Record<string, string>; value: number }>,
): SeriesComparison[] {
  type SeriesLabels = Pick<SeriesComparison, 'state' | 'queue' | 'urlGroup' | 'endpoint' | 'destination'>;
  const keyOf = (s: SeriesLabels): string => [s.state, s.queue, s.urlGroup, s.endpoint, s.destination].join('\u0000');
  const rows = new Map<string, SeriesComparison>();
  const row = (labels: SeriesLabels): SeriesComparison => {
    const key = keyOf(labels);
    let found = rows.get(key);
    if (!found) {
      const { state, queue, urlGroup, endpoint, destination } = labels;
      found = { state, queue, urlGroup, endpoint, destination, truth: 0, counted: 0, missing: 0, doubled: 0 };
      rows.set(key, found);
    }
    return found;
  };
  for (const series of truth) row(series).truth += series.count;
  for (const sample of samples) {
    const l = sample.labels;
    const labels = {
      state: l.state ?? '',
      queue: l.queue ?? '',
      urlGroup: l.url_group ?? '',
      endpoint: l.endpoint ?? '',
      destination: l.destination ?? '',
    };
    if (sample.value === 0 && !rows.has(keyOf(labels))) continue;
    row(labels).counted += sample.value;
  }
  for (const r of rows.values()) {
    r.missing = Math.max(0, r.truth - r.counted);
    r.doubled = Math.max(0, r.counted - r.truth);
  }
  return [...rows.values()].sort((a, b) => b.truth - a.truth);
}

/** Flat: the median of the last third of the judged samples within `tolerance` of the first third's. */
export function judgeRss(samples: readonly RssSample[], tolerance: number): SoakResult['rss'] {
  const judged = samples.filter((s) => !s.warmup).map((s) => s.rssMiB);
  const third = Math.max(1, Math.floor(judged.length / 3));
  const first = median(judged.slice(0, third));
  const last = median(judged.slice(-third));
  const ratio = round(last / first, 3);
  return {
    samples: [...samples],
    firstThirdMiB: first,
    lastThirdMiB: last,
    ratio,
    flat: judged.length < 3 || ratio <= tolerance,
  };
}

function shuffle<T>(random: () => number, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

export function printSoak(result: SoakResult, log: (line: string) => void = (line) => console.log(line)): void {
  log('\nper series (state, queue, url_group, endpoint, destination): ground truth / counted');
  for (const s of result.series) {
    const flag = s.missing > 0 ? `  MISSING ${s.missing}` : s.doubled > 0 ? `  DOUBLED ${s.doubled}` : '';
    log(
      `  ${[s.state, s.queue || '-', s.urlGroup || '-', s.endpoint || '-', s.destination || '-'].join(' ').padEnd(64)} ${String(s.truth).padStart(7)} / ${String(s.counted).padEnd(7)}${flag}`,
    );
  }
  log(`\nRSS of the exporter (MiB, every second; * = warm-up after a start):`);
  log(`  ${result.rss.samples.map((s) => `${s.rssMiB}${s.warmup ? '*' : ''}`).join(' ')}`);
  log(
    `  first-third median ${result.rss.firstThirdMiB} MiB, last-third median ${result.rss.lastThirdMiB} MiB, ratio ${result.rss.ratio}: ${result.rss.flat ? 'flat' : 'NOT FLAT'}`,
  );
  log(
    `\nsoak ${result.ok ? 'passed' : 'FAILED'} in ${result.seconds} s (seed ${result.seed}): ground truth ${result.groundTruthTotal}, counted ${result.countedTotal}, ` +
      `missing ${result.missingTotal}, doubled ${result.doubledTotal}, gaps reported ${result.gapsReported}, ${result.restarts} SIGKILL restarts, ` +
      `${result.published} messages published (${result.publishFailures} refused)`,
  );
  for (const problem of result.problems) log(`  problem: ${problem}`);
}

const USAGE = `usage: npm run soak -- [--minutes <n>] [--seed <n>] [--rate <messages/s>] [--output <file>]

  --minutes <n>         how long the traffic and the chaos run (default ${DEFAULT_SOAK.minutes})
  --seed <n>            the chaos schedule's seed: the same seed replays it (default ${DEFAULT_SOAK.seed})
  --rate <messages/s>   messages published per second, each 3 to 10 log entries (default ${DEFAULT_SOAK.messagesPerSecond})
  --output <file>       append every line the exporter prints, across restarts, to this file

Exit status 0 when every event is counted once and memory is flat, 1 otherwise, 2 on a bad flag.`;

/** A flag the soak cannot take: one line, exit status 2. */
class UsageError extends Error {}

const NUMBER_FLAGS = { '--minutes': 'minutes', '--seed': 'seed', '--rate': 'messagesPerSecond' } as const;

/** The options of the command line; null when --help asked for the usage. */
export function parseSoakArgs(argv: readonly string[]): Partial<SoakOptions> | null {
  const options: Partial<SoakOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') return null;
    const next = (): string => {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      return value;
    };
    if (flag === '--output') {
      options.outputFile = next();
      continue;
    }
    if (!Object.hasOwn(NUMBER_FLAGS, flag))
      throw new UsageError(
        `unknown flag ${flag}; flags: --minutes <n>, --seed <n>, --rate <messages/s>, --output <file>, --help`,
      );
    const text = next();
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0)
      throw new UsageError(`${flag} needs a positive number, got ${JSON.stringify(text)}`);
    options[NUMBER_FLAGS[flag as keyof typeof NUMBER_FLAGS]] = value;
  }
  return options;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const options = parseSoakArgs(process.argv.slice(2));
    if (options === null) {
      console.log(USAGE);
    } else {
      const result = await runSoak(options);
      printSoak(result);
      process.exitCode = result.ok ? 0 : 1;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`soak: ${error.message}`);
      process.exitCode = 2;
    } else {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = 1;
    }
  }
}
