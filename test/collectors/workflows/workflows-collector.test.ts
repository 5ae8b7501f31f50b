// The workflows collector against the emulator over real HTTP: workflow runs (a real workflow
// server answering each step) counted exactly once, runs and steps by state and type, against
// the emulator's ground truth: with pages of 2 runs (page edges), runs still in progress across
// polls (followed until they end), a failing workflow, a restart on the same state file, and a
// state file shared with the logs collector (older files without the section still load).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../../src/api/delivery.js';
import { LogsCollector } from '../../../src/collectors/logs/index.js';
import { WorkflowsCollector } from '../../../src/collectors/workflows/index.js';
import { FAMILY_CATALOGUE } from '../../../src/collectors/family-catalogue.js';
import { createEmulator, type EmulatorHandle, type WorkflowGroundTruth } from '../../../src/emulator/index.js';
import { upstreamIdentity } from '../../../src/state/index.js';
import { startDestination, type Destination } from '../../support/emulator-helpers.js';
import {
  captureLogger,
  declaredFamilies,
  familiesDeclaredAs,
  familiesOf,
  pollContext,
  sleep,
  type Family,
} from '../../support/exporter-e2e-helpers.js';
import { TEST_SETTINGS } from '../../support/logs-helpers.js';
import { trigger, workflowResponder } from '../../support/workflow-helpers.js';

let emu: EmulatorHandle;
let server: Destination;
let stateDir: string;
const clients: DeliveryClient[] = [];
/** Status code (or error) of every request the clients made. */
const codes: string[] = [];
/** `endpoint code` of every request the clients made. */
const requests: string[] = [];

beforeAll(async () => {
  emu = await createEmulator({ knobs: { timeScale: 100 } });
  server = await startDestination(workflowResponder);
});

afterEach(async () => {
  emu.reset();
  await Promise.all(clients.splice(0).map((client) => client.close()));
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

afterAll(async () => {
  await server.close();
  await emu.close();
});

function client(): DeliveryClient {
  const made = new DeliveryClient({
    baseUrl: emu.url,
    token: emu.credentials.token,
    retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 100, maxRateLimitWaitMs: 1000 },
    onRequest: (report) => {
      codes.push(report.code);
      requests.push(`${report.endpoint} ${report.code}`);
    },
    timeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 5000, bodyTimeoutMs: 5000 },
  });
  clients.push(made);
  return made;
}

function collector(
  stateFile: string | null,
  pageSize = 2,
): { collector: WorkflowsCollector; log: ReturnType<typeof captureLogger> } {
  const log = captureLogger('debug');
  const made = new WorkflowsCollector({
    client: client(),
    settings: { ingestionDelayMs: 150, overlapMs: 200, maxPagesPerCycle: 200, pageSize },
    stateFile,
    upstream: upstreamIdentity(emu.url, emu.credentials.token),
    logger: log.logger,
  });
  return { collector: made, log };
}

/** What the collector's families say, in the ground truth's shape. */
function countsOf(families: Map<string, Family>): WorkflowGroundTruth {
  const runs: Record<string, number> = {};
  for (const sample of families.get('upstash_workflow_runs_total')?.samples ?? []) {
    if (sample.value > 0) runs[`RUN_${sample.labels.state!.toUpperCase()}`] = sample.value;
  }
  const steps: Record<string, number> = {};
  for (const sample of families.get('upstash_workflow_steps_total')?.samples ?? []) {
    if (sample.value > 0) steps[`STEP_${sample.labels.state!.toUpperCase()}|${sample.labels.step_type}`] = sample.value;
  }
  const inProgress = families.get('upstash_workflow_runs_in_progress')?.samples[0]?.value ?? -1;
  return { runs, steps, inProgress };
}

function truth(): WorkflowGroundTruth {
  const raw = emu.workflowGroundTruth();
  return {
    runs: Object.fromEntries(Object.entries(raw.runs).filter(([, n]) => n > 0)),
    steps: raw.steps,
    inProgress: raw.inProgress,
  };
}

/** Polls until the collector's counts equal the ground truth (after every run ended). */
async function pollUntilExact(under: WorkflowsCollector, timeoutMs = 15_000): Promise<WorkflowGroundTruth> {
  const deadline = Date.now() + timeoutMs;
  let last: WorkflowGroundTruth | undefined;
  for (;;) {
    await under.poll(pollContext(captureLogger().logger));
    last = countsOf(await familiesOf(under.registry));
    const expected = truth();
    if (expected.inProgress === 0 && JSON.stringify(sorted(last)) === JSON.stringify(sorted(expected))) return last;
    if (Date.now() > deadline) {
      expect(last).toEqual(expected);
      return last;
    }
    await sleep(100);
  }
}

function sorted(value: WorkflowGroundTruth): unknown {
  const sort = (record: Record<string, number>): Array<[string, number]> =>
    Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
  return { runs: sort(value.runs), steps: sort(value.steps), inProgress: value.inProgress };
}

async function mixedRuns(count: number): Promise<void> {
  const paths = ['/wf/steps-3', '/wf/fail-at-2', '/wf/steps-1', '/wf/slow-150/steps-4'];
  for (let i = 0; i < count; i++) {
    const path = paths[i % paths.length]!;
    await trigger(
      emu.url,
      emu.credentials.token,
      `${server.url}${path}`,
      path.includes('fail') ? { 'Upstash-Retries': '1', 'Upstash-Retry-Delay': '500' } : {},
    );
  }
}

describe('workflows collector', () => {
  it('counts runs and steps exactly once, pages of 2, runs followed while in progress, a failing workflow', async () => {
    const { collector: under } = collector(null);
    await sleep(200); // runs created after the fresh start's frontier
    await mixedRuns(12);
    // Poll while runs are still in progress: the slow ones are followed across polls.
    await sleep(200);
    await under.poll(pollContext(captureLogger().logger));
    expect(countsOf(await familiesOf(under.registry)).inProgress).toBeGreaterThan(0);
    await sleep(300);
    await under.poll(pollContext(captureLogger().logger));
    const counts = await pollUntilExact(under);
    expect(counts.runs).toMatchObject({ RUN_STARTED: 12, RUN_SUCCESS: 9, RUN_FAILED: 3 });
    expect(counts.steps['STEP_FAILED|Run']).toBe(3);
    const families = await familiesOf(under.registry);
    const durations = families
      .get('upstash_workflow_run_duration_seconds')!
      .samples.filter((sample) => sample.labels.le === '+Inf');
    expect(Object.fromEntries(durations.map((sample) => [sample.labels.state, sample.value]))).toEqual({
      success: 9,
      failed: 3,
    });
    const stepCounts = families
      .get('upstash_workflow_step_duration_seconds')!
      .samples.filter((sample) => sample.labels.le === '+Inf');
    expect(stepCounts.reduce((sum, sample) => sum + sample.value, 0)).toBe(
      Object.values(counts.steps).reduce((a, b) => a + b, 0),
    );
    // More polls count nothing again.
    await under.poll(pollContext(captureLogger().logger));
    await sleep(400);
    await under.poll(pollContext(captureLogger().logger));
    expect(sorted(countsOf(await familiesOf(under.registry)))).toEqual(sorted(truth()));
  });

  it('stays exact through 5xx answers, malformed and truncated pages and a repeated cursor on the workflow logs', async () => {
    const { collector: under } = collector(null);
    await sleep(200);
    await mixedRuns(10);
    codes.length = 0;
    emu.setKnobs({
      faultScope: ['workflows'],
      errorRatio: 0.25,
      malformedRatio: 0.1,
      truncatedRatio: 0.1,
      repeatCursorNext: 2,
    });
    let failures = 0;
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        try {
          await under.poll(pollContext(captureLogger().logger));
        } catch {
          failures += 1;
        }
        const expected = truth();
        if (
          expected.inProgress === 0 &&
          JSON.stringify(sorted(countsOf(await familiesOf(under.registry)))) === JSON.stringify(sorted(expected))
        )
          break;
        if (Date.now() > deadline) break;
        await sleep(50);
      }
    } finally {
      emu.setKnobs({
        faultScope: ['logs', 'schedules', 'management'],
        errorRatio: 0,
        malformedRatio: 0,
        truncatedRatio: 0,
        repeatCursorNext: 0,
      });
    }
    // Faults were served (most are retried by the client; what is not fails the poll and is read again).
    expect(codes.filter((code) => code !== '200').length, `polls failed: ${failures}`).toBeGreaterThan(3);
    expect(sorted(countsOf(await familiesOf(under.registry)))).toEqual(sorted(truth()));
  });

  it('continues exactly after a restart on the same state file, runs in progress included', async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'upstash-workflows-'));
    const stateFile = join(stateDir, 'state.json');
    const first = collector(stateFile);
    await sleep(200);
    await mixedRuns(8);
    await sleep(200);
    await first.collector.poll(pollContext(captureLogger().logger));
    // Stopped with runs in progress: the next process follows them from the state file.
    expect(countsOf(await familiesOf(first.collector.registry)).inProgress).toBeGreaterThan(0);
    await first.collector.close();
    // While it is down: runs end, and more start.
    await mixedRuns(6);
    const second = collector(stateFile);
    expect(second.log.text()).toContain('workflows state restored');
    const counts = await pollUntilExact(second.collector);
    expect(counts.runs.RUN_STARTED).toBe(14);
  });

  it('shares the state file with the logs collector: each restores its own part; a file without the section loads', async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'upstash-workflows-'));
    const stateFile = join(stateDir, 'state.json');
    const upstream = upstreamIdentity(emu.url, emu.credentials.token);
    const logsCollector = (): LogsCollector =>
      new LogsCollector({
        source: client(),
        settings: TEST_SETTINGS,
        stateFile,
        upstream,
        logger: captureLogger().logger,
      });
    // A file written before the workflows section existed: the logs part only.
    const logsOnly = logsCollector();
    await logsOnly.poll(pollContext(captureLogger().logger));
    await logsOnly.close();
    expect(JSON.parse(await readFile(stateFile, 'utf8')).payload.workflows).toBeUndefined();

    const logs = logsCollector();
    const { collector: workflows, log } = collector(stateFile);
    expect(log.text()).toContain('no workflows section in the state file yet');
    await sleep(200);
    await mixedRuns(4);
    await pollUntilExact(workflows);
    await logs.poll(pollContext(captureLogger().logger));
    await workflows.close();
    await logs.close();
    const saved = JSON.parse(await readFile(stateFile, 'utf8')) as { payload: Record<string, unknown> };
    expect(saved.payload.workflows).toBeDefined();
    expect(saved.payload.watermark).toBeDefined();

    const logsAgain = captureLogger();
    new LogsCollector({ source: client(), settings: TEST_SETTINGS, stateFile, upstream, logger: logsAgain.logger });
    expect(logsAgain.text()).toContain('state restored');
    const again = collector(stateFile);
    expect(again.log.text()).toContain('workflows state restored');
    expect(countsOf(await familiesOf(again.collector.registry)).runs.RUN_STARTED).toBe(4);

    // A broken section is ignored (the collector starts afresh); the logs part still loads.
    saved.payload.workflows = { watermark: 'x' };
    await writeFile(stateFile, JSON.stringify(saved));
    const broken = collector(stateFile);
    expect(broken.log.text()).toContain('workflows section of the state file unusable');
    const logsAfter = captureLogger();
    new LogsCollector({ source: client(), settings: TEST_SETTINGS, stateFile, upstream, logger: logsAfter.logger });
    expect(logsAfter.text()).toContain('state restored');
  });
});

describe('the workflows families (docs/metrics.md is written from them)', () => {
  it('the collector registers exactly the families it declares, with their types and labels', () => {
    const registry = new WorkflowsCollector({
      client: { workflowLogsPage: () => Promise.reject(new Error('unused')) },
      settings: { ingestionDelayMs: 1000, overlapMs: 1000, maxPagesPerCycle: 1 },
      stateFile: null,
      upstream: 'docs',
      logger: captureLogger().logger,
    }).registry;
    expect(FAMILY_CATALOGUE.workflows.length).toBe(9);
    expect(declaredFamilies(registry)).toEqual(familiesDeclaredAs(FAMILY_CATALOGUE.workflows));
  });
});

describe('the two paths of the workflow runs (emulator knob workflowRunsPaths)', () => {
  it.each([
    [
      'events',
      ['/v2/workflows/events 200'],
      'only the SDK path (as the official workflow SDK and the MCP server read it)',
    ],
    [
      'logs',
      ['/v2/workflows/events 404', '/v2/workflows/logs 200'],
      "only the OpenAPI's path: one 404, then that path kept",
    ],
  ] as const)('counts exactly where the service has %s: %j (%s)', async (paths, firstTwo, _what) => {
    emu.setKnobs({ workflowRunsPaths: paths });
    requests.length = 0;
    try {
      const { collector: under } = collector(null);
      await sleep(200);
      await mixedRuns(6);
      const counts = await pollUntilExact(under);
      expect(counts.runs).toMatchObject({ RUN_STARTED: 6 });
      const asked = requests.filter((request) => request.startsWith('/v2/workflows/'));
      expect(asked.slice(0, firstTwo.length)).toEqual(firstTwo);
      // After the choice, every request goes to the path that answered.
      expect(new Set(asked.slice(firstTwo.length))).toEqual(new Set([firstTwo.at(-1)]));
    } finally {
      emu.setKnobs({ workflowRunsPaths: 'both' });
    }
  });
});
