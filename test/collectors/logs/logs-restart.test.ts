// Restarts: the exporter as a real child process killed with SIGKILL in the middle of walks and
// started again on the same state file; an in-process stop and restart; retention overrun while
// the exporter is down. Counts stay exact (or, when the service dropped entries before they were
// read, the loss is estimated in upstash_exporter_log_gaps_total and nothing is counted twice).
import { type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  differences,
  EVENTS,
  exportedEventSeries,
  familiesOfCollector,
  mixedTraffic,
  pollInBackground,
  pollUntil,
  publish,
  settle,
  startCollector,
  startWorld,
  sumOf,
  truthEventSeries,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';
import { parseExposition, pollContext, sleep, valueOf as valueWithLabels } from '../../support/exporter-e2e-helpers.js';

/**
 * The walks' series carry their region when served by the exporter (its one region here: its URL
 * names none, so eu-central-1); a collector's own registry, read in process, has none.
 */
const valueOf = (
  families: Parameters<typeof valueWithLabels>[0],
  name: string,
  labels: Record<string, string> = {},
): number | undefined =>
  valueWithLabels(families, name, { ...labels, qstash_region: 'eu-central-1' }) ??
  valueWithLabels(families, name, labels);
import { spawnExporter } from '../../support/exporter-child.js';

const CLI = resolve('dist/cli.js');

let world: World | undefined;
const collectors: CollectorUnderTest[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const under of collectors.splice(0)) await under.close();
  await world?.close();
  world = undefined;
});

// ---- the exporter as a child process -----------------------------------------------------------

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  // The child runs the built code: refuse to test a build older than the logs collector source.
  const built = statSync(resolve('dist/collectors/walk/walker.js')).mtimeMs;
  for (const dir of ['src/collectors/logs', 'src/collectors/walk', 'src/state']) {
    for (const file of readdirSyncTs(dir)) {
      if (statSync(join(dir, file)).mtimeMs > built)
        throw new Error(`dist is older than ${dir}/${file}: run \`npm run build\` first`);
    }
  }
});

function readdirSyncTs(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.ts'));
}

interface Child {
  process: ChildProcessWithoutNullStreams;
  url: string;
  stderr: () => string;
}

async function startChild(world: World, stateFile: string, extraArgs: readonly string[] = []): Promise<Child> {
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
    '--logs-ingestion-delay',
    '150ms',
    '--logs-overlap',
    '200ms',
    // A few small pages per cycle: walks span several cycles, so kills land inside them.
    '--logs-max-pages',
    '4',
    '--logs-page-size',
    '100',
    '--log-level',
    'info',
    // A flag given twice keeps its last value.
    ...extraArgs,
  ];
  return spawnExporter(args, world.emu.credentials.token, children);
}

async function scrape(child: Child): Promise<ReturnType<typeof parseExposition>> {
  const response = await fetch(`${child.url}/metrics`);
  return parseExposition(await response.text());
}

async function killHard(child: Child): Promise<void> {
  const exited = new Promise<void>((done) => child.process.once('exit', () => done()));
  child.process.kill('SIGKILL');
  await exited;
}

interface SavedState {
  slices: Array<{ basis: number; pages: number; walks: Array<{ cursor: string | null; done: boolean }> }>;
  watermark: number;
}

function readState(path: string): SavedState | null {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { payload: SavedState }).payload;
  } catch {
    return null;
  }
}

async function waitForMidWalkCheckpoint(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readState(path);
    if (state?.slices.some((slice) => slice.pages > 0)) return;
    if (Date.now() > deadline) throw new Error('no checkpoint in the middle of a walk');
    await sleep(15);
  }
}

/** Waits for a checkpoint holding at least two slices with pages read (chains walked side by side). */
async function waitForParallelCheckpoint(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readState(path);
    if ((state?.slices.filter((slice) => slice.pages > 0).length ?? 0) >= 2) return;
    if (Date.now() > deadline) throw new Error('no checkpoint with parallel slices in progress');
    await sleep(10);
  }
}

async function wave(world: World, messages: number): Promise<void> {
  const jobs: Array<Promise<void>> = [];
  for (let i = 0; i < messages; i++) jobs.push(publish(world.emu, `${world.ok.url}/wave`));
  await Promise.all(jobs);
}

describe('logs collector across restarts', () => {
  it('killed with SIGKILL in the middle of walks and restarted, the exporter counts every event exactly once and never goes down', async () => {
    // Slow log pages make each walk last long enough to be killed inside it.
    world = await startWorld({ latencyMs: 80, faultScope: ['logs'] });
    const stateFile = join(world.stateDir, 'state.json');
    // Pages of 25 (4 a cycle): a walk spans cycles as soon as 100 new entries are visible at a
    // poll. With pages of 100 it took 400, and on a loaded machine the in-process emulator
    // delivers a wave slowly enough that no poll found that many: no walk was ever in the middle.
    const smallPages = ['--logs-page-size', '25'];
    let child = await startChild(world, stateFile, smallPages);
    // Without state it starts at now: wait for its first checkpoint before any traffic.
    for (let i = 0; i < 200 && readState(stateFile) === null; i++) await sleep(25);
    expect(readState(stateFile)).not.toBeNull();

    const traffic = mixedTraffic(world, 2);
    let killedMidWalk = 0;
    for (let round = 0; round < 3; round++) {
      await wave(world, 150);
      const before = sumOf(await scrape(child), EVENTS);
      await waitForMidWalkCheckpoint(stateFile, 8000);
      await sleep(Math.floor(Math.random() * 300));
      await killHard(child);
      if ((readState(stateFile)?.slices.length ?? 0) > 0) killedMidWalk += 1;
      child = await startChild(world, stateFile, smallPages);
      // Restored from the checkpoint: no counter goes down, so Prometheus sees no reset.
      expect(sumOf(await scrape(child), EVENTS)).toBeGreaterThanOrEqual(before);
    }
    await traffic;
    const truth = await settle(world.emu);
    const settledAt = Date.now();
    const deadline = Date.now() + 15_000;
    let families = await scrape(child);
    while ((valueOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') ?? 0) * 1000 < settledAt) {
      if (Date.now() > deadline) throw new Error('the restarted exporter did not catch up');
      await sleep(200);
      families = await scrape(child);
    }
    expect(killedMidWalk).toBeGreaterThanOrEqual(2);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(sumOf(families, 'upstash_qstash_delivery_errors_total')).toBe(truth.byState.ERROR);
    expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
    expect(valueOf(families, 'upstash_exporter_state_checkpoints_total', { result: 'success' })).toBeGreaterThan(3);
    expect(child.stderr()).toContain('state restored');
  }, 60_000);

  it('killed with SIGKILL in the middle of parallel slices and restarted, the exporter counts every event exactly once', async () => {
    // Slow, small log pages and an outage before each kill: the restarted exporter is behind by
    // more than two polls, so it walks the backlog in up to 4 slices at once.
    world = await startWorld({ latencyMs: 40, faultScope: ['logs'] });
    const stateFile = join(world.stateDir, 'state.json');
    const parallel = ['--logs-page-size', '4', '--logs-max-pages', '60', '--logs-parallel-slices', '4'];
    let child = await startChild(world, stateFile, parallel);
    for (let i = 0; i < 200 && readState(stateFile) === null; i++) await sleep(25);
    expect(readState(stateFile)).not.toBeNull();

    let killedMidParallel = 0;
    for (let round = 0; round < 3; round++) {
      const before = sumOf(await scrape(child), EVENTS);
      await killHard(child);
      // The outage: traffic the restarted exporter finds as a backlog.
      await wave(world, 120);
      await sleep(1200);
      child = await startChild(world, stateFile, parallel);
      expect(sumOf(await scrape(child), EVENTS)).toBeGreaterThanOrEqual(before);
      await waitForParallelCheckpoint(stateFile, 10_000);
      await sleep(Math.floor(Math.random() * 100));
      await killHard(child);
      const saved = readState(stateFile);
      // Several slices between the watermark and the walk's front, at least one of them unfinished.
      if (
        saved !== null &&
        saved.slices.filter((slice) => slice.pages > 0).length >= 2 &&
        saved.slices.some((slice) => slice.walks.some((walk) => !walk.done))
      )
        killedMidParallel += 1;
      child = await startChild(world, stateFile, parallel);
    }
    const truth = await settle(world.emu);
    const settledAt = Date.now();
    const deadline = Date.now() + 30_000;
    let families = await scrape(child);
    while ((valueOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') ?? 0) * 1000 < settledAt) {
      if (Date.now() > deadline) throw new Error('the restarted exporter did not catch up');
      await sleep(200);
      families = await scrape(child);
    }
    expect(killedMidParallel).toBeGreaterThanOrEqual(2);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
    // The backlog's slices are all complete: any slice left in the file is a new cycle's, above the
    // watermark (the exporter keeps polling, so one may be in progress at the frontier).
    const saved = readState(stateFile);
    expect(saved?.watermark).toBeGreaterThanOrEqual(settledAt);
    expect(saved?.slices.filter((slice) => slice.basis < saved.watermark)).toEqual([]);
  }, 90_000);

  it('stopped and restarted in process, it continues every counter and histogram from the checkpoint', async () => {
    world = await startWorld();
    const first = startCollector(world);
    collectors.push(first);
    await first.collector.poll(pollContext(first.log.logger));
    const background = pollInBackground(first);
    const traffic = mixedTraffic(world, 2);
    await sleep(700);
    await background.stop();
    await first.close();
    const stopped = await familiesOfCollector(first.collector);

    const second = startCollector(world);
    collectors.push(second);
    // Restored before any poll: what was served before the stop is served again.
    const restored = await familiesOfCollector(second.collector);
    for (const name of [
      EVENTS,
      'upstash_qstash_delivery_errors_total',
      'upstash_qstash_message_duration_seconds',
      'upstash_qstash_message_attempts',
      'upstash_exporter_log_pages_total',
      'upstash_exporter_log_late_events_total',
    ]) {
      expect(restored.get(name)?.samples, name).toEqual(stopped.get(name)?.samples);
    }
    await traffic;
    const truth = await settle(world.emu);
    await pollUntil(second, Date.now());
    const families = await familiesOfCollector(second.collector);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    // Every message finished after the first start: each has one duration observation.
    const finished = truth.byState.DELIVERED + truth.byState.FAILED;
    expect(sumOf(families, 'upstash_qstash_message_duration_seconds', (l) => l.le === '+Inf')).toBe(finished);
    expect(valueOf(families, 'upstash_qstash_messages_in_flight')).toBe(0);
  });

  it('reports a retention overrun while it was down in log_gaps_total, and counts nothing twice', async () => {
    world = await startWorld();
    const w = world;
    let running = true;
    // A steady stream of messages, 3 log entries each, before, during and after the downtime,
    // paced at one every 15 ms and never in bursts (a late one moves the schedule on instead of
    // catching up): the estimate reads the rate of the entries left after the gap, so the rate
    // must not depend on whether a collector shares this process's CPU at that moment.
    const PERIOD_MS = 15;
    const stream = (async () => {
      let next = Date.now();
      while (running) {
        await publish(w.emu, `${w.ok.url}/steady`);
        next += PERIOD_MS;
        const now = Date.now();
        if (next < now) next = now;
        else await sleep(next - now);
      }
    })();
    const first = startCollector(world);
    collectors.push(first);
    const background = pollInBackground(first);
    await sleep(800);
    await background.stop();
    await first.close();
    const countedBefore = sumOf(await familiesOfCollector(first.collector), EVENTS);

    // While it is down the service keeps only the newest 150 entries.
    w.emu.setKnobs({ logRetention: 150 });
    // Down until the service has dropped well over 100 entries: waiting on the ground truth
    // rather than a fixed time keeps the overrun the same size on a loaded machine.
    const downSince = Date.now();
    while (w.emu.groundTruth().dropped < 300 && Date.now() - downSince < 15_000) await sleep(50);
    // Back up, the service keeps entries as before: a restarted collector that a loaded machine
    // slows would otherwise fall behind 150 entries again and see a second, real overrun.
    w.emu.setKnobs({ logRetention: 10_000 });
    const second = startCollector(world);
    collectors.push(second);
    await second.collector.poll(pollContext(second.log.logger));
    running = false;
    await stream;
    const truth = await settle(w.emu);
    await pollUntil(second, Date.now());

    const families = await familiesOfCollector(second.collector);
    const exported = exportedEventSeries(families);
    const truthSeries = truthEventSeries(truth);
    // Nothing counted twice: no series above the truth.
    for (const [key, value] of exported) expect(value, key).toBeLessThanOrEqual(truthSeries.get(key) ?? 0);
    const counted = sumOf(families, EVENTS);
    expect(counted).toBeGreaterThan(countedBefore);
    const lost = truth.total - counted;
    expect(lost).toBeGreaterThan(100);
    expect(truth.dropped).toBeGreaterThanOrEqual(lost);
    const estimated = valueOf(families, 'upstash_exporter_log_gaps_total')!;
    // A best estimate from the event rate around the gap; close to the real loss.
    expect(Math.abs(estimated - lost), `estimated ${estimated}, lost ${lost}`).toBeLessThanOrEqual(lost * 0.35);
    const warnings = second.log.lines().filter((line) => String(line.msg).includes('retention overrun'));
    expect(warnings).toHaveLength(1);
  });

  it('sets a corrupt or foreign state file aside with one warning and starts at now', async () => {
    world = await startWorld();
    const stateFile = join(world.stateDir, 'state.json');
    await writeFile(
      stateFile,
      '{"format":"upstash-exporter-state","version":1,"upstream":"sha256:0000","savedAt":1,"payload":{}}',
    );
    const foreign = startCollector(world, {}, stateFile);
    collectors.push(foreign);
    await writeFile(stateFile, '{ half a checkpoint');
    const corrupt = startCollector(world, {}, stateFile);
    collectors.push(corrupt);
    const names = await readdir(world.stateDir);
    expect(names.filter((name) => name.startsWith('state.json.foreign-'))).toHaveLength(1);
    expect(names.filter((name) => name.startsWith('state.json.corrupt-'))).toHaveLength(1);
    for (const under of [foreign, corrupt]) {
      const warnings = under.log.lines().filter((line) => line.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0]!.msg)).toContain('set aside');
      expect(Math.abs(under.collector.position.watermark - (Date.now() - 150))).toBeLessThan(2000);
    }
    // And it works from there.
    await corrupt.collector.poll(pollContext(corrupt.log.logger));
    await mixedTraffic(world);
    const truth = await settle(world.emu);
    await pollUntil(corrupt, Date.now());
    expect(
      differences(exportedEventSeries(await familiesOfCollector(corrupt.collector)), truthEventSeries(truth)),
    ).toEqual([]);
  });
});
