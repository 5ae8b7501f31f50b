// Workflow runs (Upstash Workflow on top of the delivery service). A run is a chain of step
// messages delivered to the workflow URL over real HTTP; the workflow server's answer to each
// delivery says what happened (a deliberately small protocol, not the SDK's):
//   200 {"step": {"name": "...", "type": "Run"}}  the step ran: recorded STEP_SUCCESS, the next
//                                                  delivery is published at once;
//   any other 2xx                                  the run is done: RUN_SUCCESS;
//   a failed attempt with retries left             the step is STEP_RETRY (nextDeliveryTime);
//   a failed attempt without                       the step is STEP_FAILED, the run RUN_FAILED.
// DELETE /v2/workflows/runs/{id} cancels: RUN_CANCELED (a step in progress STEP_CANCELED).
// GET /v2/workflows/logs serves the runs newest first (routes/workflows.ts); groundTruth() is
// what the exporter's workflow counters must equal.

export const RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const STEP_STATES = ['STEP_SUCCESS', 'STEP_RETRY', 'STEP_FAILED', 'STEP_PROGRESS', 'STEP_CANCELED'] as const;
export type StepState = (typeof STEP_STATES)[number];
/** Step states a step does not leave. */
export const FINAL_STEP_STATES: ReadonlySet<string> = new Set(['STEP_SUCCESS', 'STEP_FAILED', 'STEP_CANCELED']);

/** A run that reports more steps than this fails (a workflow server that never ends). */
export const MAX_STEPS_PER_RUN = 1_000;
/** Runs kept for the logs endpoint (oldest dropped first). */
export const WORKFLOW_RUN_RETENTION = 10_000;

export interface StepRecord {
  stepId: number;
  stepName: string;
  stepType: string;
  callType: string;
  messageId: string;
  state: StepState;
  createdAt: number;
  nextDeliveryTime?: number;
}

export interface RunRecord {
  workflowRunId: string;
  workflowUrl: string;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  workflowState: RunState;
  workflowRunResponse?: string;
  label?: string;
  steps: StepRecord[];
  /** Order of creation, the tie-break of equal creation times (newest first). */
  seq: number;
}

export interface WorkflowGroundTruth {
  /** Runs by state; RUN_STARTED counts every run (each one started). */
  runs: Record<string, number>;
  /** Steps in a final state, or in the state they had when their run ended, by `state|stepType`. */
  steps: Record<string, number>;
  inProgress: number;
}

export interface RunPage {
  runs: RunRecord[];
  /** Sequence of the last run served when more follow. */
  nextBeforeSeq?: number;
}

export interface RunQuery {
  beforeSeq?: number;
  count: number;
  fromDate?: number;
  toDate?: number;
  state?: string;
  workflowUrl?: string;
  workflowRunId?: string;
  /** `workflowRuns=ID@TS,...`: these runs only (other filters ignored). */
  runs?: Array<{ id: string; createdAt: number }>;
}

/** What the workflow server answered to a step delivery. */
export interface StepAnswer {
  ok: boolean;
  status?: number;
  body: Buffer;
  final: boolean;
  nextDeliveryTime?: number;
}

export class WorkflowStore {
  private readonly runs = new Map<string, RunRecord>();
  private seq = 0;

  constructor(private readonly now: () => number) {}

  start(workflowRunId: string, workflowUrl: string, createdAt: number, label?: string): RunRecord {
    const run: RunRecord = {
      workflowRunId,
      workflowUrl,
      workflowRunCreatedAt: createdAt,
      workflowState: 'RUN_STARTED',
      steps: [],
      seq: ++this.seq,
    };
    if (label !== undefined) run.label = label;
    this.runs.set(runKey(workflowRunId, createdAt), run);
    if (this.runs.size > WORKFLOW_RUN_RETENTION) this.runs.delete(this.runs.keys().next().value!);
    return run;
  }

  /**
   * One delivery of the run's current step is done. Returns true when the next step is to be
   * delivered (the server reported a step), false when the run is over or waits for a retry.
   */
  answer(run: RunRecord, messageId: string, attempt: StepAnswer): boolean {
    if (run.workflowState !== 'RUN_STARTED') return false;
    const now = this.now();
    const stepId = this.currentStepId(run, messageId);
    if (attempt.ok) {
      const reported = parseStep(attempt.body);
      if (reported === null) {
        if (run.steps.at(-1)?.messageId === messageId && run.steps.at(-1)!.state !== 'STEP_SUCCESS') run.steps.pop();
        this.finish(run, 'RUN_SUCCESS', now);
        run.workflowRunResponse = attempt.body.toString('utf8').slice(0, 1024);
        return false;
      }
      const step = this.stepFor(run, stepId, messageId);
      step.stepName = reported.name;
      step.stepType = reported.type;
      step.state = 'STEP_SUCCESS';
      step.createdAt = now;
      delete step.nextDeliveryTime;
      if (run.steps.length < MAX_STEPS_PER_RUN) return true;
      this.finish(run, 'RUN_FAILED', now);
      return false;
    }
    const step = this.stepFor(run, stepId, messageId);
    step.createdAt = now;
    if (attempt.final) {
      step.state = 'STEP_FAILED';
      delete step.nextDeliveryTime;
      this.finish(run, 'RUN_FAILED', now);
    } else {
      step.state = 'STEP_RETRY';
      if (attempt.nextDeliveryTime !== undefined) step.nextDeliveryTime = attempt.nextDeliveryTime;
    }
    return false;
  }

  /** Cancels every run of this id still in progress; the number canceled. */
  cancel(workflowRunId: string): number {
    let canceled = 0;
    const now = this.now();
    for (const run of this.runs.values()) {
      if (run.workflowRunId !== workflowRunId || run.workflowState !== 'RUN_STARTED') continue;
      for (const step of run.steps) if (!FINAL_STEP_STATES.has(step.state)) step.state = 'STEP_CANCELED';
      this.finish(run, 'RUN_CANCELED', now);
      canceled += 1;
    }
    return canceled;
  }

  page(query: RunQuery): RunPage {
    const wanted = query.runs ? new Set(query.runs.map((run) => runKey(run.id, run.createdAt))) : null;
    const matching = [...this.runs.values()]
      .filter((run) => {
        if (wanted) return wanted.has(runKey(run.workflowRunId, run.workflowRunCreatedAt));
        if (query.fromDate !== undefined && run.workflowRunCreatedAt < query.fromDate) return false;
        if (query.toDate !== undefined && run.workflowRunCreatedAt > query.toDate) return false;
        if (query.workflowUrl !== undefined && run.workflowUrl !== query.workflowUrl) return false;
        if (query.workflowRunId !== undefined && run.workflowRunId !== query.workflowRunId) return false;
        if (
          query.state !== undefined &&
          run.workflowState !== query.state &&
          !run.steps.some((step) => step.state === query.state)
        )
          return false;
        return true;
      })
      .sort((a, b) => b.workflowRunCreatedAt - a.workflowRunCreatedAt || b.seq - a.seq);
    const start = query.beforeSeq === undefined ? 0 : matching.findIndex((run) => run.seq === query.beforeSeq) + 1;
    if (query.beforeSeq !== undefined && start === 0) return { runs: [] };
    const runs = matching.slice(start, start + query.count);
    const page: RunPage = { runs };
    if (start + query.count < matching.length) page.nextBeforeSeq = runs.at(-1)!.seq;
    return page;
  }

  groundTruth(): WorkflowGroundTruth {
    const truth: WorkflowGroundTruth = {
      runs: Object.fromEntries(RUN_STATES.map((state) => [state, 0])),
      steps: {},
      inProgress: 0,
    };
    for (const run of this.runs.values()) {
      truth.runs.RUN_STARTED! += 1;
      const ended = run.workflowState !== 'RUN_STARTED';
      if (ended) truth.runs[run.workflowState]! += 1;
      else truth.inProgress += 1;
      for (const step of run.steps) {
        if (!ended && !FINAL_STEP_STATES.has(step.state)) continue;
        const key = `${step.state}|${step.stepType}`;
        truth.steps[key] = (truth.steps[key] ?? 0) + 1;
      }
    }
    return truth;
  }

  clear(): void {
    this.runs.clear();
  }

  private finish(run: RunRecord, state: RunState, now: number): void {
    run.workflowState = state;
    run.workflowRunCompletedAt = now;
  }

  private currentStepId(run: RunRecord, messageId: string): number {
    const last = run.steps.at(-1);
    if (last && last.messageId === messageId) return last.stepId;
    return run.steps.length + 1;
  }

  private stepFor(run: RunRecord, stepId: number, messageId: string): StepRecord {
    const last = run.steps.at(-1);
    if (last && last.stepId === stepId) return last;
    const step: StepRecord = {
      stepId,
      stepName: `step-${stepId}`,
      stepType: 'Run',
      callType: 'step',
      messageId,
      state: 'STEP_PROGRESS',
      createdAt: this.now(),
    };
    run.steps.push(step);
    return step;
  }
}

export function runKey(id: string, createdAt: number): string {
  return `${id}@${createdAt}`;
}

const STEP_TEXT = /^[\x20-\x7e]{1,100}$/;

/** The step a workflow server reported, or null (the run is done). */
function parseStep(body: Buffer): { name: string; type: string } | null {
  if (body.length === 0 || body.length > 64 * 1024) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const step = typeof parsed === 'object' && parsed !== null ? (parsed as { step?: unknown }).step : undefined;
  if (typeof step !== 'object' || step === null) return null;
  const { name, type } = step as { name?: unknown; type?: unknown };
  return {
    name: typeof name === 'string' && STEP_TEXT.test(name) ? name : 'step',
    type: typeof type === 'string' && STEP_TEXT.test(type) ? type : 'Run',
  };
}

/** The JSON of a run as GET /v2/workflows/logs serves it: one group per step, in order. */
export function toRunJson(run: RunRecord): Record<string, unknown> {
  const json: Record<string, unknown> = {
    workflowRunId: run.workflowRunId,
    workflowUrl: run.workflowUrl,
    workflowState: run.workflowState,
    workflowRunCreatedAt: run.workflowRunCreatedAt,
    steps: run.steps.map((step) => ({ type: 'sequential', steps: [{ ...step }] })),
  };
  if (run.workflowRunCompletedAt !== undefined) json.workflowRunCompletedAt = run.workflowRunCompletedAt;
  if (run.workflowRunResponse !== undefined) json.workflowRunResponse = run.workflowRunResponse;
  if (run.label !== undefined) json.label = run.label;
  if (run.workflowState === 'RUN_FAILED') json.dlqId = `${run.workflowRunCompletedAt}-0`;
  return json;
}
