// Clock jumps: the exporter as a real child process whose wall clock is moved by libfaketime
// (LD_PRELOAD; the monotonic clock left alone, as a clock set by hand or by NTP leaves it),
// against the emulator running on this process's real clock. The offset file is rewritten while
// traffic flows (+1 h, -1 h); a state file is restored with its watermark an hour ahead; the
// exporter starts ten minutes ahead. Counts are compared with the emulator's ground truth.
import { type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  differences,
  EVENTS,
  exportedEventSeries,
  mixedTraffic,
  publish,
  settle,
  startWorld,
  sumOf,
  truthEventSeries,
  type World,
} from '../support/logs-helpers.js';
import { parseExposition, regionValueOf, sleep, type Family } from '../support/exporter-e2e-helpers.js';
import { spawnExporter, type ExporterChild } from '../support/exporter-child.js';
import { faketimeEnvironment, requireFaketime, setOffset } from '../support/faketime.js';

const CLI = resolve('dist/cli.js');
const faketime = requireFaketime('clock-jumps.test.ts');

let world: World | undefined;
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await world?.close();
  world = undefined;
});

beforeAll(() => {
  faketime.ensure();
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const built = statSync(resolve('dist/collectors/walk/walker.js')).mtimeMs;
  for (const dir of ['src/collectors/logs', 'src/collectors/walk', 'src/api', 'src/collectors']) {
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
      if (statSync(join(dir, file)).mtimeMs > built)
        throw new Error(`dist is older than ${dir}/${file}: run \`npm run build\` first`);
    }
  }
});

/** The exporter under libfaketime, its offset read from `offsetFile` at every clock read. */
async function startChild(world: World, stateFile: string, offsetFile: string): Promise<ExporterChild> {
  const args = [
    CLI,
    'run',
    '--listen-address',
    '127.0.0.1:0',
    '--qstash-url',
    world.emu.url,
    '--state-file',
    stateFile,
    '--poll-interval',
    'logs=1s',
    '--disable-collector',
    'schedules',
    // The emulator runs in the test's process: on a loaded machine it records an entry a while
    // after the entry's time, and an ingestion delay shorter than that misses entries (as on the
    // real service; docs/counting.md). A second of each keeps the cases about the clocks.
    '--logs-ingestion-delay',
    '1s',
    '--logs-overlap',
    '1s',
    '--logs-page-size',
    '100',
    '--log-level',
    'info',
  ];
  return spawnExporter(args, world.emu.credentials.token, children, faketimeEnvironment(offsetFile));
}

async function scrape(child: ExporterChild): Promise<ReturnType<typeof parseExposition>> {
  const response = await fetch(`${child.url}/metrics`);
  return parseExposition(await response.text());
}

function readWatermark(path: string): number | null {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { payload: { watermark: number } }).payload.watermark;
  } catch {
    return null;
  }
}

async function firstCheckpoint(stateFile: string): Promise<void> {
  for (let i = 0; i < 400 && readWatermark(stateFile) === null; i++) await sleep(25);
  expect(readWatermark(stateFile)).not.toBeNull();
}

async function wave(world: World, messages: number): Promise<void> {
  const jobs: Array<Promise<void>> = [];
  for (let i = 0; i < messages; i++) jobs.push(publish(world.emu, `${world.ok.url}/wave`));
  await Promise.all(jobs);
}

/** Waves of messages for about `seconds`, calling `midway` after the first. */
async function trafficAround(world: World, seconds: number, midway: () => Promise<void>): Promise<void> {
  const mixed = mixedTraffic(world, 2);
  await wave(world, 40);
  await midway();
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    await wave(world, 20);
    await sleep(300);
  }
  await mixed;
}

/**
 * Scrapes until the exported event series equal the ground truth (a condition, not a time: on a
 * loaded machine a poll may take seconds), or `timeoutMs` passes; returns the last scrape.
 */
async function countsReach(
  child: ExporterChild,
  truth: Awaited<ReturnType<typeof settle>>,
  timeoutMs = 20_000,
): Promise<Map<string, Family>> {
  const deadline = Date.now() + timeoutMs;
  let families = await scrape(child);
  while (differences(exportedEventSeries(families), truthEventSeries(truth)).length > 0 && Date.now() < deadline) {
    await sleep(100);
    families = await scrape(child);
  }
  return families;
}

/**
 * Settles the traffic, waits until the exporter's watermark passes the moment it settled (on
 * the emulator's clock, the real one), and compares every event series with the ground truth.
 */
async function expectExactCounts(child: ExporterChild): Promise<Map<string, Family>> {
  const truth = await settle(world!.emu);
  const settledAt = Date.now();
  const deadline = Date.now() + 15_000;
  let families = await scrape(child);
  while ((regionValueOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') ?? 0) * 1000 < settledAt) {
    if (Date.now() > deadline) break;
    await sleep(200);
    families = await scrape(child);
  }
  // A watermark that never got there, or got there by passing entries it did not read, shows
  // here as counts that differ from the truth; one more poll after they match shows a count
  // that goes on past it.
  families = await countsReach(child, truth);
  const pages = regionValueOf(families, 'upstash_exporter_log_pages_total') ?? 0;
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
    families = await scrape(child);
    if ((regionValueOf(families, 'upstash_exporter_log_pages_total') ?? 0) > pages) break;
  }
  expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
  expect(sumOf(families, EVENTS)).toBe(truth.total);
  expect(regionValueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
  // The watermark is a time on the service's clock: never ahead of it.
  expect((regionValueOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') ?? 0) * 1000).toBeLessThanOrEqual(
    Date.now(),
  );
  const lag = regionValueOf(families, 'upstash_exporter_log_lag_seconds') ?? Number.NaN;
  expect(lag).toBeGreaterThan(0);
  expect(lag).toBeLessThan(10);
  return families;
}

function offsetOf(families: ReturnType<typeof parseExposition>): number | undefined {
  return regionValueOf(families, 'upstash_exporter_clock_offset_seconds', { api: 'qstash' });
}

/** The slots (unix ms) of the exporter's "scheduled poll missed" warnings. */
function missedSlots(stderr: string): number[] {
  return stderr
    .split('\n')
    .filter((line) => line.includes('scheduled poll missed'))
    .map((line) => Date.parse((JSON.parse(line) as { slot: string }).slot));
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe.skipIf(faketime.skip)(`the exporter's clock jumps while it runs${faketime.needs}`, () => {
  it('set forward an hour while traffic flows, the exporter counts every event exactly once and exports the offset', async () => {
    world = await startWorld();
    const stateFile = join(world.stateDir, 'state.json');
    const offsetFile = join(world.stateDir, 'faketime');
    await setOffset(offsetFile, '+0');
    const child = await startChild(world, stateFile, offsetFile);
    await firstCheckpoint(stateFile);
    const offsetBefore = offsetOf(await scrape(child));

    let jumpedAt = 0;
    await trafficAround(world, 4, async () => {
      jumpedAt = Date.now();
      await setOffset(offsetFile, '+1h');
    });
    const families = await expectExactCounts(child);
    // No entry was late: the exporter's clock was. (A walk that ran an hour ahead of the service
    // would find every new entry behind its watermark and count it as late.)
    expect(regionValueOf(families, 'upstash_exporter_log_late_events_total')).toBe(0);
    // The hour of cron slots the jump went over is not reported as missed runs. (A loaded
    // machine can still make a 1 s poll run past its next slot: a real missed run, outside the hour.)
    expect(
      missedSlots(child.stderr()).filter((slot) => slot > jumpedAt - 1_000 && slot < jumpedAt + 3_595_000),
    ).toEqual([]);
    expect(Math.abs(offsetBefore ?? Number.NaN)).toBeLessThan(1.5);
    expect(Math.abs((offsetOf(families) ?? Number.NaN) - 3600)).toBeLessThan(1.5);
    expect(regionValueOf(families, 'upstash_exporter_log_watermark_resets_total')).toBe(0);
    expect(child.stderr()).toContain('the wall clock jumped');
  }, 60_000);

  it('set back an hour while traffic flows, the exporter keeps polling and counts every event exactly once', async () => {
    world = await startWorld();
    const stateFile = join(world.stateDir, 'state.json');
    const offsetFile = join(world.stateDir, 'faketime');
    await setOffset(offsetFile, '+0');
    const child = await startChild(world, stateFile, offsetFile);
    await firstCheckpoint(stateFile);

    await trafficAround(world, 4, () => setOffset(offsetFile, '-1h'));
    const families = await expectExactCounts(child);
    expect(Math.abs((offsetOf(families) ?? Number.NaN) + 3600)).toBeLessThan(1.5);
    expect(regionValueOf(families, 'upstash_exporter_log_watermark_resets_total')).toBe(0);
    expect(child.stderr()).toContain('the wall clock jumped');
  }, 60_000);
});

describe.skipIf(faketime.skip)(`a clock that disagrees with the upstream's${faketime.needs}`, () => {
  it('a state file whose watermark is an hour ahead is detected at restore, logged once, and counting resumes exactly', async () => {
    world = await startWorld();
    const stateFile = join(world.stateDir, 'state.json');
    const offsetFile = join(world.stateDir, 'faketime');
    await setOffset(offsetFile, '+0');
    let child = await startChild(world, stateFile, offsetFile);
    await firstCheckpoint(stateFile);
    await wave(world, 60);
    // Stopped once its counters show the wave (checkpointed before they are published), not
    // after a fixed time: on a loaded machine it had not counted it yet.
    const truth = await settle(world.emu);
    const shown = await countsReach(child, truth);
    expect(differences(exportedEventSeries(shown), truthEventSeries(truth))).toEqual([]);
    const exited = new Promise<void>((done) => child.process.once('exit', () => done()));
    child.process.kill('SIGTERM');
    await exited;

    // The file as an exporter whose clock ran an hour ahead writes it: its walk passed the
    // upstream's now, and each completed slice kept the window from the newest entry counted
    // (the anchor) on, which the watermark then left behind.
    const file = JSON.parse(readFileSync(stateFile, 'utf8')) as {
      payload: { watermark: number; watermarkReadAt: number; dedupFrom: number; anchorTime: number; slices: unknown[] };
    };
    const payload = file.payload;
    expect(payload.anchorTime).toBeGreaterThan(0);
    payload.watermark += 3_600_000;
    payload.watermarkReadAt += 3_600_000;
    payload.dedupFrom = Math.max(payload.dedupFrom, payload.anchorTime);
    payload.slices = [];
    await writeFile(stateFile, JSON.stringify(file));

    // Entries written while the exporter is down, and after: all below the restored watermark.
    await wave(world, 30);
    child = await startChild(world, stateFile, offsetFile);
    await trafficAround(world, 3, async () => {});
    const families = await expectExactCounts(child);
    expect(child.stderr()).toContain('state restored');
    expect(occurrences(child.stderr(), "log watermark ahead of the upstream's now")).toBe(1);
    expect(regionValueOf(families, 'upstash_exporter_log_watermark_resets_total')).toBe(1);
  }, 60_000);

  it('started ten minutes ahead of the upstream, the exporter exports the offset within a second or two and counts every event exactly once', async () => {
    world = await startWorld();
    const stateFile = join(world.stateDir, 'state.json');
    const offsetFile = join(world.stateDir, 'faketime');
    await setOffset(offsetFile, '+10m');
    const child = await startChild(world, stateFile, offsetFile);
    const startedAt = Date.now();
    let offset: number | undefined;
    while (offset === undefined && Date.now() - startedAt < 5000) {
      offset = offsetOf(await scrape(child));
      if (offset === undefined) await sleep(100);
    }
    const offsetKnownAfterMs = Date.now() - startedAt;
    await firstCheckpoint(stateFile);

    await trafficAround(world, 3, async () => {});
    const families = await expectExactCounts(child);
    expect(offsetKnownAfterMs).toBeLessThan(2500);
    expect(Math.abs((offset ?? Number.NaN) - 600)).toBeLessThan(1.5);
    expect(Math.abs((offsetOf(families) ?? Number.NaN) - 600)).toBeLessThan(1.5);
    // A fresh start whose own clock is ahead is not a watermark to move back: nothing was counted.
    expect(regionValueOf(families, 'upstash_exporter_log_watermark_resets_total')).toBe(0);
  }, 60_000);
});
