// The workflows collector's metric families as data (src/metrics/families.ts): what it registers
// (each family is created from its row here), what docs/metrics.md's "Workflow runs and steps"
// table is written from, and what the tests check the served families against.
import type { Family } from '../../metrics/families.js';

const RUNS = 'runs of GET /v2/workflows/events?groupBy=workflowRunId (or /v2/workflows/logs)';
const WALK = 'the walk of the workflow runs';

export const WORKFLOW_FAMILIES = {
  runs: {
    name: 'upstash_workflow_runs_total',
    type: 'counter',
    labelNames: ['state'],
    meaning:
      "Workflow runs by state: each run counts once as started and once in the state it ended in (success, failed, canceled; other names bounded). The canary probe's runs (to its workflow URL, while the probe is on) are left out: the probe reports them in upstash_probe_*.",
    source: `workflowState of the ${RUNS}`,
  },
  steps: {
    name: 'upstash_workflow_steps_total',
    type: 'counter',
    labelNames: ['state', 'step_type'],
    meaning:
      "Workflow steps by state and type, each once: in its first final state (success, failed, canceled), or in the state it had when its run ended. The canary probe's runs are left out, as in upstash_workflow_runs_total.",
    source: `state and stepType of the steps of the ${RUNS}`,
  },
  runDuration: {
    name: 'upstash_workflow_run_duration_seconds',
    type: 'histogram',
    labelNames: ['state'],
    meaning: "Time from a workflow run's creation to its end, by the state it ended in (not the canary probe's runs).",
    source: `workflowRunCreatedAt to workflowRunCompletedAt of the ${RUNS}`,
  },
  stepDuration: {
    name: 'upstash_workflow_step_duration_seconds',
    type: 'histogram',
    labelNames: ['step_type'],
    meaning:
      "Time from the step before (or the run's creation) to a workflow step's record: delivery, waiting and the step's own work.",
    source: `createdAt of the steps of the ${RUNS}`,
  },
  inProgress: {
    name: 'upstash_workflow_runs_in_progress',
    type: 'gauge',
    labelNames: [],
    meaning: "Workflow runs seen started and not yet ended (followed until they end; not the canary probe's)",
    source: WALK,
  },
  oldestRunAge: {
    name: 'upstash_workflow_oldest_run_age_seconds',
    type: 'gauge',
    labelNames: [],
    meaning: 'Age of the oldest workflow run still in progress (0: none); a run stuck in progress makes it grow',
    source: WALK,
  },
  pages: {
    name: 'upstash_exporter_workflow_pages_total',
    type: 'counter',
    labelNames: ['kind'],
    labelValues: { kind: ['walk', 'follow'] },
    meaning: 'Pages of workflow runs read: by the walk (walk) and asking for runs in progress again (follow)',
    source: WALK,
  },
  runsDropped: {
    name: 'upstash_exporter_workflow_runs_dropped_total',
    type: 'counter',
    labelNames: [],
    meaning: 'Runs in progress no longer followed (too many followed, or no longer served): their end is not counted',
    details: 'Too many: more than 10000 followed.',
    source: WALK,
  },
  watermark: {
    name: 'upstash_exporter_workflow_watermark_timestamp_seconds',
    type: 'gauge',
    labelNames: [],
    meaning: 'Creation time up to which every workflow run is counted',
    source: WALK,
  },
} as const satisfies Record<string, Family>;
