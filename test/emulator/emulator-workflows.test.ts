// Workflow runs in the emulator: a run is a chain of step deliveries to a real workflow server
// over HTTP; GET /v2/workflows/logs and GET /v2/workflows/events?groupBy=workflowRunId serve the
// runs newest first with their steps, paged by cursor (the latter read by the official workflow
// SDK's client.logs()); the ground truth counts runs and steps as the exporter must.
import { Client as WorkflowClient } from '@upstash/workflow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import { trigger, workflowResponder } from '../support/workflow-helpers.js';

let emulator: EmulatorHandle;
let server: Destination;

interface RunJson {
  workflowRunId: string;
  workflowState: string;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  steps: Array<{
    type: string;
    steps: Array<{
      stepId: number;
      stepName: string;
      stepType: string;
      state: string;
      createdAt: number;
      nextDeliveryTime?: number;
    }>;
  }>;
}

async function logs(query: Record<string, string> = {}): Promise<{ status: number; cursor?: string; runs: RunJson[] }> {
  const response = await fetch(`${emulator.url}/v2/workflows/logs?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${emulator.credentials.token}` },
  });
  const body = (await response.json()) as { cursor?: string; runs: RunJson[] };
  return { status: response.status, ...body };
}

beforeAll(async () => {
  emulator = await createEmulator({ knobs: { timeScale: 100 } });
  server = await startDestination(workflowResponder);
});

afterEach(() => emulator.reset());

afterAll(async () => {
  await server.close();
  await emulator.close();
});

describe('workflow runs', () => {
  it('runs the steps over HTTP and ends RUN_SUCCESS; a failing step retries, then RUN_FAILED', async () => {
    const { token } = emulator.credentials;
    const ok = await trigger(emulator.url, token, `${server.url}/wf/steps-3`);
    const failing = await trigger(emulator.url, token, `${server.url}/wf/fail-at-2`, {
      'Upstash-Retries': '2',
      'Upstash-Retry-Delay': '1000',
    });
    await waitFor(() => emulator.workflowGroundTruth().inProgress === 0, 10_000, 'runs to end');

    const { runs } = await logs();
    expect(runs.map((run) => run.workflowRunId)).toEqual([failing.workflowRunId, ok.workflowRunId]);
    const [failed, succeeded] = runs as [RunJson, RunJson];
    expect(succeeded.workflowState).toBe('RUN_SUCCESS');
    expect(succeeded.steps.map((group) => group.steps[0]!.stepType)).toEqual(['Run', 'Call', 'Sleep']);
    expect(succeeded.steps.every((group) => group.steps[0]!.state === 'STEP_SUCCESS')).toBe(true);
    expect(succeeded.workflowRunCompletedAt).toBeGreaterThanOrEqual(succeeded.workflowRunCreatedAt);
    expect(failed.workflowState).toBe('RUN_FAILED');
    expect(failed.steps.map((group) => group.steps[0]!.state)).toEqual(['STEP_SUCCESS', 'STEP_FAILED']);
    // Step 2 was delivered 3 times (1 + 2 retries), step 1 once; the run id header on each.
    const failedRequests = server.requests.filter(
      (request) => request.headers['upstash-workflow-runid'] === failing.workflowRunId,
    );
    expect(failedRequests.map((request) => request.headers['upstash-workflow-step'])).toEqual(['1', '2', '2', '2']);

    expect(emulator.workflowGroundTruth()).toEqual({
      runs: { RUN_STARTED: 2, RUN_SUCCESS: 1, RUN_FAILED: 1, RUN_CANCELED: 0 },
      steps: { 'STEP_SUCCESS|Run': 2, 'STEP_SUCCESS|Call': 1, 'STEP_SUCCESS|Sleep': 1, 'STEP_FAILED|Run': 1 }, // a step that never answered has no type of its own: Run
      inProgress: 0,
    });
  });

  it('shows a retrying step with its next delivery time, and cancels a run', async () => {
    const { token } = emulator.credentials;
    const run = await trigger(emulator.url, token, `${server.url}/wf/fail-at-1`, {
      'Upstash-Retries': '3',
      'Upstash-Retry-Delay': '100000',
    });
    await waitFor(async () => (await logs()).runs[0]?.steps[0]?.steps[0]?.state === 'STEP_RETRY', 5000, 'a retry');
    const retrying = (await logs()).runs[0]!.steps[0]!.steps[0]!;
    expect(retrying.nextDeliveryTime).toBeGreaterThan(Date.now());
    const cancel = await fetch(`${emulator.url}/v2/workflows/runs/${run.workflowRunId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancel.status).toBe(200);
    const [canceled] = (await logs({ state: 'RUN_CANCELED' })).runs;
    expect(canceled).toMatchObject({ workflowRunId: run.workflowRunId, workflowState: 'RUN_CANCELED' });
    expect(canceled!.steps[0]!.steps[0]!.state).toBe('STEP_CANCELED');
    expect(emulator.workflowGroundTruth().steps).toEqual({ 'STEP_CANCELED|Run': 1 });
  });

  it('pages newest first by cursor, with fromDate/toDate, workflowRuns and a 1000 cap', async () => {
    const { token } = emulator.credentials;
    const started: Array<{ workflowRunId: string; workflowCreatedAt: number }> = [];
    for (let i = 0; i < 7; i++) started.push(await trigger(emulator.url, token, `${server.url}/wf/steps-1`));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await logs({ count: '3', ...(cursor ? { cursor } : {}) });
      seen.push(...page.runs.map((run) => run.workflowRunId));
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(started.map((run) => run.workflowRunId).reverse());

    const third = started[2]!;
    const only = await logs({ workflowRuns: `${third.workflowRunId}@${third.workflowCreatedAt}` });
    expect(only.runs.map((run) => run.workflowRunId)).toEqual([third.workflowRunId]);
    const window = await logs({
      fromDate: String(started[1]!.workflowCreatedAt),
      toDate: String(started[3]!.workflowCreatedAt),
    });
    expect(
      window.runs.every(
        (run) =>
          run.workflowRunCreatedAt >= started[1]!.workflowCreatedAt &&
          run.workflowRunCreatedAt <= started[3]!.workflowCreatedAt,
      ),
    ).toBe(true);
    expect((await logs({ count: '5000' })).runs).toHaveLength(7);
    expect((await logs({ cursor: 'nonsense' })).status).toBe(400);
    const unauthorized = await fetch(`${emulator.url}/v2/workflows/logs`);
    expect(unauthorized.status).toBe(401);
  });
});

describe('the official workflow SDK (@upstash/workflow client.logs()) reads the emulator', () => {
  it('at /v2/workflows/events?groupBy=workflowRunId: the same runs, states and steps, paged by its cursor', async () => {
    const { token } = emulator.credentials;
    const started = [];
    for (const path of ['/wf/steps-2', '/wf/fail-at-2', '/wf/steps-3'])
      started.push(await trigger(emulator.url, token, `${server.url}${path}`, { 'Upstash-Retries': '0' }));
    await waitFor(() => emulator.workflowGroundTruth().inProgress === 0, 10_000, 'runs to end');
    // Only the SDK's path: the OpenAPI's answers 404, so what the SDK reads cannot come from it.
    emulator.setKnobs({ workflowRunsPaths: 'events' });
    const sdk = new WorkflowClient({ baseUrl: emulator.url, token });

    const all = await sdk.logs();
    expect(all.runs.map((run) => run.workflowRunId)).toEqual(started.map((run) => run.workflowRunId).reverse());
    expect(all.runs.map((run) => run.workflowState)).toEqual(['RUN_SUCCESS', 'RUN_FAILED', 'RUN_SUCCESS']);
    const fromHttp = await fetch(`${emulator.url}/v2/workflows/events?groupBy=workflowRunId`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(all).toEqual(await fromHttp.json());
    const newest = all.runs[0]!;
    expect(newest.steps.map((group) => (group.steps[0] as { stepType?: string }).stepType)).toEqual([
      'Run',
      'Call',
      'Sleep',
    ]);

    // Pages of 2 by the SDK's cursor: the 3 runs once each, in order.
    const first = await sdk.logs({ count: 2 });
    expect(first.runs).toHaveLength(2);
    expect(first.cursor).toBeTruthy();
    const second = await sdk.logs({ count: 2, cursor: first.cursor });
    expect([...first.runs, ...second.runs].map((run) => run.workflowRunId)).toEqual(
      all.runs.map((run) => run.workflowRunId),
    );
    expect(second.cursor ?? '').toBe('');

    // Its filters: one run by id, runs by state.
    expect(
      (await sdk.logs({ filter: { workflowRunId: started[1]!.workflowRunId } })).runs.map((run) => run.workflowState),
    ).toEqual(['RUN_FAILED']);
    expect((await sdk.logs({ filter: { state: 'RUN_SUCCESS' } })).runs).toHaveLength(2);

    // The OpenAPI's path is the other side of the knob; the events path serves only the runs mode.
    expect(
      (await fetch(`${emulator.url}/v2/workflows/logs`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(404);
    expect(
      (await fetch(`${emulator.url}/v2/workflows/events`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(400);
    emulator.setKnobs({ workflowRunsPaths: 'logs' });
    await expect(sdk.logs()).rejects.toThrow();
    emulator.setKnobs({ workflowRunsPaths: 'both' });
  });
});
