// The exporter as a real child process with the logs and workflows collectors on one state file,
// killed with SIGKILL while workflow runs are in progress and started again: every run and step
// is counted exactly once (the emulator's ground truth), the delivery events too, and no counter
// goes down across a restart (both parts of the shared state file survive every write).
import { type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDestination, type Destination } from '../../support/emulator-helpers.js';
import { parseExposition, sleep, valueOf as valueWithLabels, type Family } from '../../support/exporter-e2e-helpers.js';

/** The walks' series carry their region: the exporter's one region here (its URL names none, so eu-central-1). */
const valueOf = (
  families: Parameters<typeof valueWithLabels>[0],
  name: string,
  labels: Record<string, string> = {},
): number | undefined => valueWithLabels(families, name, { ...labels, qstash_region: 'eu-central-1' });
import {
  differences,
  EVENTS,
  exportedEventSeries,
  settle,
  startWorld,
  sumOf,
  truthEventSeries,
  type World,
} from '../../support/logs-helpers.js';
import { trigger, workflowResponder } from '../../support/workflow-helpers.js';
import { spawnExporter } from '../../support/exporter-child.js';

const CLI = resolve('dist/cli.js');
let world: World | undefined;
let server: Destination | undefined;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(() => {
  if (!existsSync(resolve('dist/collectors/workflows/collector.js')))
    throw new Error('dist has no workflows collector: run `npm run build` first');
});

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await server?.close();
  await world?.close();
  world = undefined;
});

async function startChild(
  stateFile: string,
): Promise<{ url: string; process: ChildProcessWithoutNullStreams; stderr: () => string }> {
  const args = [
    CLI,
    'run',
    '--listen-address',
    '127.0.0.1:0',
    '--qstash-url',
    world!.emu.url,
    '--state-file',
    stateFile,
    '--poll-interval',
    'logs=1s,workflows=1s',
    '--disable-collector',
    'schedules',
    '--logs-ingestion-delay',
    '150ms',
    '--logs-overlap',
    '200ms',
    '--logs-page-size',
    '5',
    '--log-level',
    'info',
  ];
  return spawnExporter(args, world!.emu.credentials.token, children);
}

async function scrape(url: string): Promise<Map<string, Family>> {
  return parseExposition(await (await fetch(`${url}/metrics`)).text());
}

async function killHard(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGKILL');
  await exited;
}

function runsOf(families: Map<string, Family>): Record<string, number> {
  return Object.fromEntries(
    (families.get('upstash_workflow_runs_total')?.samples ?? [])
      .filter((s) => s.value > 0)
      .map((s) => [`RUN_${s.labels.state!.toUpperCase()}`, s.value]),
  );
}

function stepsOf(families: Map<string, Family>): Record<string, number> {
  return Object.fromEntries(
    (families.get('upstash_workflow_steps_total')?.samples ?? [])
      .filter((s) => s.value > 0)
      .map((s) => [`STEP_${s.labels.state!.toUpperCase()}|${s.labels.step_type}`, s.value]),
  );
}

async function workflows(count: number): Promise<void> {
  const paths = ['/wf/slow-200/steps-4', '/wf/steps-2', '/wf/fail-at-2', '/wf/slow-100/steps-3'];
  for (let i = 0; i < count; i++) {
    const path = paths[i % paths.length]!;
    await trigger(
      world!.emu.url,
      world!.emu.credentials.token,
      `${server!.url}${path}`,
      path.includes('fail') ? { 'Upstash-Retries': '1', 'Upstash-Retry-Delay': '2000' } : {},
    );
  }
}

describe('workflows collector across restarts', () => {
  it('killed with SIGKILL while runs are in progress, counts every run and step exactly once; logs and workflows share the state file', async () => {
    world = await startWorld();
    server = await startDestination(workflowResponder);
    const stateFile = join(world.stateDir, 'state.json');
    let child = await startChild(stateFile);
    // Without state both start at now: wait until both parts are in the file.
    const both = (): boolean => {
      try {
        const payload = (JSON.parse(readFileSync(stateFile, 'utf8')) as { payload: Record<string, unknown> }).payload;
        return payload.watermark !== undefined && payload.workflows !== undefined;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 200 && !both(); i++) await sleep(25);
    expect(both()).toBe(true);

    let killedWithRunsInProgress = 0;
    for (let round = 0; round < 3; round++) {
      await workflows(8);
      // Kill once the exporter follows runs in progress (a fixed pause missed them on a loaded
      // machine), a random moment later so the kill lands anywhere in a poll.
      let before = await scrape(child.url);
      for (let i = 0; i < 100 && (valueOf(before, 'upstash_workflow_runs_in_progress') ?? 0) === 0; i++) {
        await sleep(50);
        before = await scrape(child.url);
      }
      await sleep(Math.floor(Math.random() * 300));
      before = await scrape(child.url);
      if ((valueOf(before, 'upstash_workflow_runs_in_progress') ?? 0) > 0) killedWithRunsInProgress += 1;
      await killHard(child.process);
      child = await startChild(stateFile);
      const after = await scrape(child.url);
      // Restored from the checkpoint: no counter goes down.
      expect(sumOf(after, 'upstash_workflow_runs_total')).toBeGreaterThanOrEqual(
        sumOf(before, 'upstash_workflow_runs_total'),
      );
      expect(sumOf(after, EVENTS)).toBeGreaterThanOrEqual(sumOf(before, EVENTS));
    }
    const logsTruth = await settle(world.emu, 15_000);
    const settledAt = Date.now();
    const truth = world.emu.workflowGroundTruth();
    expect(truth.inProgress).toBe(0);
    const expectedRuns = Object.fromEntries(Object.entries(truth.runs).filter(([, n]) => n > 0));
    const deadline = Date.now() + 15_000;
    let families = await scrape(child.url);
    const caughtUp = (): boolean =>
      (valueOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') ?? 0) * 1000 >= settledAt &&
      (valueOf(families, 'upstash_exporter_workflow_watermark_timestamp_seconds') ?? 0) * 1000 >= settledAt &&
      valueOf(families, 'upstash_workflow_runs_in_progress') === 0;
    while (!caughtUp()) {
      if (Date.now() > deadline)
        throw new Error(`the restarted exporter did not catch up: ${JSON.stringify(runsOf(families))}`);
      await sleep(200);
      families = await scrape(child.url);
    }
    expect(killedWithRunsInProgress).toBeGreaterThanOrEqual(1);
    expect(runsOf(families)).toEqual(expectedRuns);
    expect(runsOf(families).RUN_STARTED).toBe(24);
    expect(stepsOf(families)).toEqual(truth.steps);
    expect(differences(exportedEventSeries(families), truthEventSeries(logsTruth))).toEqual([]);
    expect(child.stderr()).toContain('workflows state restored');
  }, 90_000);
});
