// Exact counts while the exporter is starved of CPU. The exporter (a child process, as users run
// it) runs under a real CPU quota (a cgroup's CFS bandwidth limit, as a container's CPU limit;
// CPU_STARVED_SHARE of a core, 0.3 by default, over a 1 s period: it runs 0.3 s, then stands still
// for 0.7 s, as a container whose CPU limit is spent early in each period), or, where no cgroup can be made, shares one core
// with two busy loops (taskset; CPU_STARVED_MODE=taskset asks for that), while the emulator
// answers with 1 MiB bodies in a third of the messages, announces a generous rate limit it never
// enforces (CPU_STARVED_LIMIT requests a second, 100 by default), and shows each
// entry up to 6 s after its time in random order (logVisibilityLagMaxMs) with a 3 s ingestion
// delay. Pages of 10 entries (CPU_STARVED_PAGE_SIZE) make each cycle a dozen requests paced at the
// rate-limit share, so a stall lands inside the pacing waits and in the cycle's time. A busy CPU makes every wait and request long; it must not pass for the rate limit (the
// walk would stop re-reading the overlap), and what the walk passes must be counted within the
// lateness horizon. After the traffic the counters must equal the ground truth per state and
// label set, in every run. npm test runs it once; CPU_STARVED_RUNS=10 (npm run test:cpu-starved)
// runs it ten times.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExporterProcess, sumOf } from '../../../bench/exporter-process.js';
import { seededRandom, sleep } from '../../../bench/measure.js';
import { compare } from '../../../bench/soak.js';
import { waitForQuiet } from '../../../bench/sustained.js';
import { Publisher, startDestinations, type Destinations } from '../../../bench/traffic.js';
import { createEmulator, type EmulatorHandle } from '../../../src/emulator/index.js';
import type { Family } from '../../support/exporter-e2e-helpers.js';
import { cpuQuota } from '../../support/cpu-quota.js';
import { requireBinaries } from '../../support/prometheus.js';

const binaries = requireBinaries('logs-cpu-starved', ['taskset']);
const RUNS = Number(process.env.CPU_STARVED_RUNS ?? 1);
const TRAFFIC_MS = Number(process.env.CPU_STARVED_TRAFFIC_MS ?? 15_000);
const MESSAGES_PER_SECOND = Number(process.env.CPU_STARVED_RATE ?? 8);
const SHARE = Number(process.env.CPU_STARVED_SHARE ?? 0.3);
/** The quota's period: the longer, the longer the exporter stands still once its share is spent. */
const PERIOD_US = Number(process.env.CPU_STARVED_PERIOD_US ?? 1_000_000);
const MODE = process.env.CPU_STARVED_MODE ?? 'quota';
/** Requests a second the emulator announces (Burst-RateLimit-Limit); the exporter paces itself to half of it. */
const RATE_LIMIT = Number(process.env.CPU_STARVED_LIMIT ?? 100);
/** Entries a log page holds (--logs-page-size): small pages make a cycle many paced requests. */
const PAGE_SIZE = Number(process.env.CPU_STARVED_PAGE_SIZE ?? 10);
const EVENTS = 'upstash_qstash_message_events_total';
/** The core the exporter and the busy loops share. */
const CORE = '0';

interface Cleanup {
  (): Promise<void> | void;
}
const cleanups: Cleanup[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function busyLoop(): ChildProcess {
  const child = spawn(binaries.paths.taskset!, ['-c', CORE, process.execPath, '-e', 'for(;;){}'], { stdio: 'ignore' });
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return child;
}

async function pin(pid: number): Promise<void> {
  const child = spawn(binaries.paths.taskset!, ['-p', '-c', CORE, String(pid)], { stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`taskset -p -c ${CORE} ${pid} failed (${code})`);
}

async function scrapeOrNull(exporter: ExporterProcess): Promise<Map<string, Family> | null> {
  try {
    return await exporter.scrape();
  } catch {
    return null;
  }
}

interface RunResult {
  truth: number;
  counted: number;
  missing: number;
  doubled: number;
  missedLate: number;
  late: number;
  overlapDropped: boolean;
  /** The exporter's lines before it first judged the walk rate-limit bound ('' when it never did). */
  dropContext: string;
}

function dropContext(output: readonly string[]): string {
  const at = output.findIndex((line) => line.includes('the rate limit bounds the log walk'));
  return at < 0 ? '' : output.slice(Math.max(0, at - 4), at + 1).join('\n');
}

async function starvedRun(seed: number): Promise<RunResult> {
  const destinations: Destinations = await startDestinations();
  cleanups.push(() => destinations.close());
  // A rate limit announced (Burst-RateLimit-*) and far from reached: the walk is never limited.
  const emulator: EmulatorHandle = await createEmulator({
    seed,
    knobs: {
      timeScale: 60,
      rateLimitPerSecond: RATE_LIMIT,
      faultScope: ['logs'],
      logVisibilityLagMaxMs: 6_000,
      largeBodyRatio: 1 / 3,
      largeBodyBytes: 1_048_576,
    },
  });
  cleanups.push(() => emulator.close());
  const stateDir = await mkdtemp(join(tmpdir(), 'upstash-starved-'));
  cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
  const output: string[] = [];
  const exporter = await ExporterProcess.start({
    qstashUrl: emulator.url,
    token: emulator.credentials.token,
    stateFile: join(stateDir, 'state.json'),
    args: ['--poll-interval', '1s', '--logs-ingestion-delay', '3s', '--logs-page-size', String(PAGE_SIZE)],
    onLine: (line) => output.push(line),
  });
  cleanups.push(() => exporter.kill());
  await exporter.ready();
  const quota = MODE === 'quota' ? await cpuQuota(SHARE, PERIOD_US) : null;
  if (quota !== null) {
    cleanups.push(() => quota.remove());
    await quota.add(exporter.pid);
  } else {
    if (MODE === 'quota')
      console.log(
        'no cgroup CPU quota can be made on this machine: the exporter shares a core with two busy loops instead',
      );
    await pin(exporter.pid);
    busyLoop();
    busyLoop();
  }

  const random = seededRandom(seed);
  const publisher = new Publisher({
    emulatorUrl: emulator.url,
    token: emulator.credentials.token,
    kinds: [
      { path: `/v2/publish/${destinations.ok}/starved`, weight: 5 },
      { path: `/v2/enqueue/starved-queue/${destinations.ok}/queued`, weight: 2 },
      {
        path: `/v2/publish/${destinations.flaky}/flaky`,
        headers: { 'Upstash-Retry-Delay': '200', 'Upstash-Retries': '2' },
        weight: 2,
      },
      {
        path: `/v2/publish/${destinations.broken}/broken`,
        headers: { 'Upstash-Retry-Delay': '200', 'Upstash-Retries': '1' },
        weight: 1,
      },
    ],
    random,
    maxInFlight: 32,
  });
  cleanups.push(() => publisher.close());
  publisher.start(MESSAGES_PER_SECOND);
  await sleep(TRAFFIC_MS);
  await publisher.stop();
  await waitForQuiet(emulator, 1_000);
  const ended = Date.now();
  const truth = emulator.groundTruth();

  // Every entry is visible 6 s after its time; the exporter reads up to 3 s behind now. On a busy
  // machine a starved exporter catches up slowly: wait while it still makes progress (its
  // watermark or its count moves within 30 s), so a slow catch-up is not mistaken for a loss,
  // and a stalled one is.
  const stallLimitMs = 30_000;
  const hardDeadline = ended + 240_000;
  let progressAt = Date.now();
  let lastProgress = '';
  let families = await scrapeOrNull(exporter);
  while (Date.now() < hardDeadline && Date.now() - progressAt < stallLimitMs) {
    if (
      families &&
      sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000 >= ended + 6_000 &&
      sumOf(families, EVENTS) >= truth.total
    )
      break;
    const progress = families
      ? `${sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds')}/${sumOf(families, EVENTS)}`
      : '';
    if (progress !== lastProgress) [lastProgress, progressAt] = [progress, Date.now()];
    await sleep(500);
    families = await scrapeOrNull(exporter);
  }
  // One more cycle: a late double would show now.
  await sleep(2_000);
  families = await scrapeOrNull(exporter);
  if (!families)
    throw new Error(`the exporter does not answer /metrics; its last output:\n${output.slice(-20).join('\n')}`);
  const series = compare(truth.series, families.get(EVENTS)?.samples ?? []);
  return {
    truth: truth.total,
    counted: sumOf(families, EVENTS),
    missing: series.reduce((sum, s) => sum + s.missing, 0),
    doubled: series.reduce((sum, s) => sum + s.doubled, 0),
    missedLate: sumOf(families, 'upstash_exporter_log_missed_late_events_total'),
    late: sumOf(families, 'upstash_exporter_log_late_events_total'),
    overlapDropped: output.some((line) => line.includes('the rate limit bounds the log walk')),
    dropContext: dropContext(output),
  };
}

describe.skipIf(binaries.skip)(`logs with the CPU starved${binaries.needs}`, () => {
  beforeAll(() => binaries.ensure());

  const starvation =
    MODE === 'quota'
      ? `the exporter held to ${SHARE} of a core by a CPU quota`
      : 'the exporter sharing a core with two busy loops';
  it(
    `counts exactly in ${RUNS} runs out of ${RUNS}: 1 MiB bodies, entries up to 6 s late in random order, ${starvation}`,
    async () => {
      const results: RunResult[] = [];
      for (let run = 0; run < RUNS; run++) {
        results.push(await starvedRun(run + 1));
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        const r = results.at(-1)!;
        if (r.dropContext) console.log(`run ${run + 1}: the walk was judged rate-limit bound:\n${r.dropContext}`);
        console.log(
          `run ${run + 1}/${RUNS}: ground truth ${r.truth}, counted ${r.counted}, missing ${r.missing}, doubled ${r.doubled}, missed late ${r.missedLate}, late ${r.late}, overlap dropped: ${r.overlapDropped}`,
        );
      }
      const failed = results.filter((r) => r.missing > 0 || r.doubled > 0);
      console.log(`${failed.length} of ${RUNS} runs inexact`);
      for (const r of results) {
        expect(r.truth).toBeGreaterThan(100);
        // Exactness is the promise. The walk may still drop its overlap here, rightly: entries keep
        // arriving 3 s past the ingestion delay, the adaptive overlap grows to its 60 s cap, and
        // re-reading 60 s in pages of 10 every second would need more requests than the share
        // allows; the late-entry audit then counts them from the cold store. Printed above.
        expect({ missing: r.missing, doubled: r.doubled, missedLate: r.missedLate }).toEqual({
          missing: 0,
          doubled: 0,
          missedLate: 0,
        });
      }
    },
    RUNS * 330_000,
  );
});
