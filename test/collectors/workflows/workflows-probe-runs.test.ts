// The canary probe's workflow runs stay out of the workflow SLI: a whole exporter (startExporter)
// against the emulator, with the probe's workflow URL configured, walks the runs the service holds
// for that URL but counts none of them (success or failure) in upstash_workflow_runs_total or
// _steps_total, while an application's runs count; without the probe, a run to the same URL is an
// ordinary run and counts. The probe reports its own runs in upstash_probe_* (test/probe).
import { afterEach, describe, expect, it } from 'vitest';
import { startDestination, type Destination, type RecordedRequest } from '../../support/emulator-helpers.js';
import {
  CANARY,
  eventually,
  regionValueOf,
  startStack,
  waitForPollAfter,
  type Stack,
} from '../../support/exporter-e2e-helpers.js';
import { trigger, workflowResponder } from '../../support/workflow-helpers.js';

const RUNS = 'upstash_workflow_runs_total';
const STEPS = 'upstash_workflow_steps_total';
/** The probe's workflow path: a run whose id says `fail` fails at its first step, any other ends after one. */
const PROBE_PATH = '/probe-workflow';

function responder(request: RecordedRequest) {
  if (!request.url.startsWith(PROBE_PATH)) return workflowResponder(request);
  const runId = String(request.headers['upstash-workflow-runid'] ?? '');
  if (runId.includes('fail')) return { status: 500, body: '{"error":"probe target down"}' };
  return workflowResponder({ ...request, url: '/wf/steps-1' });
}

interface RunsPage {
  runs?: { workflowRunId: string; workflowState: string }[];
}

async function runState(stack: Stack, runId: string): Promise<string | undefined> {
  const page = await stack.emulatorJson<RunsPage>(`/v2/workflows/logs?workflowRunId=${encodeURIComponent(runId)}`);
  return page.runs?.find((run) => run.workflowRunId === runId)?.workflowState;
}

describe('the workflows collector and the canary probe', () => {
  let stack: Stack | undefined;
  let destination: Destination | undefined;
  afterEach(async () => {
    await stack?.close();
    await destination?.close();
    stack = undefined;
    destination = undefined;
  });

  /**
   * Runs to the probe's URL (one ending well, one failing) first, then the application's (two
   * ending well, one failing); returns once the service has ended every run.
   */
  async function runWorkflows(probeUrl: string, app: string): Promise<void> {
    const { url } = destination!;
    const emulator = stack!.emulator.url;
    const ids = [
      (await trigger(emulator, CANARY.token, probeUrl, { 'Upstash-Workflow-RunId': 'wfr_probe_ok' })).workflowRunId,
      (
        await trigger(emulator, CANARY.token, probeUrl, {
          'Upstash-Workflow-RunId': 'wfr_probe_fail',
          'Upstash-Retries': '0',
        })
      ).workflowRunId,
      (await trigger(emulator, CANARY.token, `${url}/wf/steps-2/${app}`)).workflowRunId,
      (await trigger(emulator, CANARY.token, `${url}/wf/steps-2/${app}`)).workflowRunId,
      (
        await trigger(emulator, CANARY.token, `${url}/wf/fail-at-2/${app}`, {
          'Upstash-Retries': '0',
        })
      ).workflowRunId,
    ];
    await eventually(async () => {
      const states = await Promise.all(ids.map((id) => runState(stack!, id)));
      return states.every((state) => state === 'RUN_SUCCESS' || state === 'RUN_FAILED')
        ? []
        : [`run states: ${states.join(', ')}`];
    }, 20_000);
  }

  type Counts = Awaited<ReturnType<typeof counted>>;

  /**
   * Waits until the counts are `expected` (a condition: a poll that starts within the ingestion
   * delay of the last run does not reach it yet), then one more whole poll, after which they
   * must still be (the walk goes by creation time: the probe's runs, created first, are behind
   * it by then; a probe run counted late would show here).
   */
  async function expectCounts(expected: Counts): Promise<void> {
    await eventually(async () => {
      const now = await counted();
      const same = (Object.keys(expected) as (keyof Counts)[]).every((key) => now[key] === expected[key]);
      return same ? [] : [`counted ${JSON.stringify(now)}`];
    }, 20_000);
    await waitForPollAfter(stack!, 'workflows', Date.now(), 20_000);
    expect(await counted()).toEqual(expected);
  }

  async function counted(): Promise<{ started: number; success: number; failed: number; steps: number }> {
    const families = await stack!.scrape();
    const runs = (state: string): number => regionValueOf(families, RUNS, { state }) ?? 0;
    const steps = (families.get(STEPS)?.samples ?? []).reduce((sum, sample) => sum + sample.value, 0);
    return { started: runs('started'), success: runs('success'), failed: runs('failed'), steps };
  }

  it("with the probe's workflow URL configured, its runs (a failed one too) are not counted; the application's are", async () => {
    destination = await startDestination(responder);
    const probeUrl = `${destination.url}${PROBE_PATH}`;
    stack = await startStack({
      args: [
        '--logs-ingestion-delay',
        '200ms',
        '--logs-overlap',
        '500ms',
        '--probe-enabled',
        '--probe-interval',
        '1h',
        '--probe-timeout',
        '1s',
        '--probe-insecure-receiver',
        '--probe-receiver-url',
        `${destination.url}/probe-receiver`,
        '--probe-workflow-url',
        probeUrl,
      ],
    });
    await runWorkflows(probeUrl, 'app');
    // The probe itself triggered a run at start, to the same URL: not counted either.
    expect(destination.requests.some((request) => request.url.startsWith(PROBE_PATH))).toBe(true);
    // The application's runs only: three started, two ended well, one failed at its second step
    // (2 steps each).
    await expectCounts({ started: 3, success: 2, failed: 1, steps: 6 });
  }, 60_000);

  it('without the probe configured, a run to that URL is an ordinary run and counts', async () => {
    destination = await startDestination(responder);
    stack = await startStack({ args: ['--logs-ingestion-delay', '200ms', '--logs-overlap', '500ms'] });
    await runWorkflows(`${destination.url}${PROBE_PATH}`, 'app');
    // The probe URL's two runs (one step each) count with the application's.
    await expectCounts({ started: 5, success: 3, failed: 2, steps: 8 });
  }, 60_000);
});
