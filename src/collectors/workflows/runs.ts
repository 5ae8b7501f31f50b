// Counting workflow runs and steps exactly once. A run is first met by the walk (runs ordered
// by creation time, the same walk as the delivery logs: src/collectors/walk/walker.ts), then
// followed, asked for again by id each cycle, until it ends. Each run counts once as `started`
// and once in the state it ends in (with its duration); each step once, in the first final
// state it is seen in, or, when its run ends, in the state it had then (with the time since the
// step before it). The walk's de-duplication window keeps a run read twice from counting twice.
import type { Registry } from 'prom-client';
import type { LogEntry, WorkflowRun, WorkflowStep } from '../../api/delivery.js';
import type { FollowedRunState } from './workflows-state.js';
import type { PageTally } from '../walk/page-tally.js';
import { DedupWindow } from '../walk/dedup.js';
import { CounterFamily, HistogramFamily } from '../walk/families.js';
import type { WalkCounter } from '../walk/walk-types.js';
import { metricOptions } from '../../metrics/families.js';
import { WORKFLOW_FAMILIES } from './families.js';

export const RUNS_METRIC = WORKFLOW_FAMILIES.runs.name;
export const STEPS_METRIC = WORKFLOW_FAMILIES.steps.name;
export const RUN_DURATION_METRIC = WORKFLOW_FAMILIES.runDuration.name;
export const STEP_DURATION_METRIC = WORKFLOW_FAMILIES.stepDuration.name;
export const RUN_DURATION_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 10_800, 43_200, 86_400, 604_800];
export const STEP_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 86_400];

/** Distinct names a label takes before further ones read `other` (states, step types). */
export const NAMES_PER_LABEL = 16;
/** Runs followed at once; beyond it the oldest is dropped (counted in its self metric). */
export const MAX_FOLLOWED_RUNS = 10_000;

const RUN_STARTED = 'RUN_STARTED';
const FINAL_STEP_STATES: ReadonlySet<string> = new Set(['STEP_SUCCESS', 'STEP_FAILED', 'STEP_CANCELED']);
const NAME_TEXT = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

/** A walk entry standing for one run: its creation time and id, the run itself alongside. */
export interface RunEntry extends LogEntry {
  run: WorkflowRun;
}

export function runEntry(run: WorkflowRun): RunEntry {
  return { time: run.workflowRunCreatedAt, messageId: run.workflowRunId, state: run.workflowState, run };
}

/** A label's values: each distinct well-formed name up to a bound, then `other`. */
export class BoundedNames {
  readonly #seen = new Set<string>();
  constructor(readonly bound: number) {}

  of(name: string): string {
    if (this.#seen.has(name)) return name;
    if (!NAME_TEXT.test(name) || this.#seen.size >= this.bound) return 'other';
    this.#seen.add(name);
    return name;
  }

  /** Names restored from a checkpoint keep their place. */
  admit(name: string): void {
    if (name !== 'other') this.#seen.add(name);
  }
}

/** `RUN_SUCCESS` -> `success`, `STEP_RETRY` -> `retry`; anything else lower-cased. */
export function stateLabel(raw: string): string {
  return raw.replace(/^(RUN|STEP)_/, '').toLowerCase();
}

interface Followed {
  id: string;
  createdAt: number;
  counted: Set<string>;
  /** Created time of the newest step counted (the start of the next step's duration). */
  lastStepAt: number;
}

export class RunCounter implements WalkCounter {
  /** Runs always carry a state: never walked per state. */
  readonly states = { indexOf: (): number => 0, walkFilters: [] };
  readonly dedup = new DedupWindow();
  readonly tracker = { finishSlice: (): number => 0 };
  readonly runs: CounterFamily<'state'>;
  readonly steps: CounterFamily<'state' | 'step_type'>;
  readonly runDuration: HistogramFamily<'state'>;
  readonly stepDuration: HistogramFamily<'step_type'>;
  readonly #states = new BoundedNames(NAMES_PER_LABEL);
  readonly #types = new BoundedNames(NAMES_PER_LABEL);
  /** Runs in progress by `id@created`, oldest first (insertion order). */
  readonly following = new Map<string, Followed>();
  lastEventTime = 0;
  evictions = 0;

  /**
   * @param probeWorkflowUrl the canary probe's workflow URL (null: no probe): its runs are walked
   *   but neither counted nor followed, so the probe's failures stay out of the users' workflow SLI
   *   (the probe reports itself in `upstash_probe_*`).
   */
  constructor(
    registry: Registry,
    readonly probeWorkflowUrl: string | null = null,
  ) {
    const F = WORKFLOW_FAMILIES;
    this.runs = new CounterFamily({ ...metricOptions(F.runs), registry });
    this.steps = new CounterFamily({ ...metricOptions(F.steps), registry });
    this.runDuration = new HistogramFamily({
      ...metricOptions(F.runDuration),
      buckets: RUN_DURATION_BUCKETS,
      registry,
    });
    this.stepDuration = new HistogramFamily({
      ...metricOptions(F.stepDuration),
      buckets: STEP_DURATION_BUCKETS,
      registry,
    });
  }

  countPage(entries: readonly LogEntry[], _filterState: number, basis: number, tally: PageTally): void {
    let lowest = tally.lowest;
    for (const entry of entries as readonly RunEntry[]) {
      const time = entry.time;
      if (time > lowest) tally.orderBroken = true;
      else lowest = time;
      if (time <= basis) tally.atOrBeforeBasis = true;
      tally.withState += 1;
      const key = runKey(entry.run);
      if (!this.dedup.observeEvent(time, 0, key, undefined, undefined)) {
        tally.duplicates += 1;
        // Read again while followed: the newer state is as good as the follow-up's.
        if (this.following.has(key)) this.apply(entry.run, false);
        continue;
      }
      tally.counted += 1;
      if (time <= basis) tally.late += 1;
      if (time > this.lastEventTime) this.lastEventTime = time;
      if (time < tally.oldestCounted) tally.oldestCounted = time;
      if (time > tally.newestCounted) tally.newestCounted = time;
      this.apply(entry.run, !this.following.has(key));
    }
    tally.lowest = lowest;
  }

  /** Counts what is new in a run: its start (first sight), steps, its end. */
  apply(run: WorkflowRun, firstSight: boolean): void {
    const key = runKey(run);
    if (this.probeWorkflowUrl !== null && run.workflowUrl === this.probeWorkflowUrl) {
      this.following.delete(key); // followed before the probe was configured
      return;
    }
    let followed = this.following.get(key);
    if (!firstSight && followed === undefined) return;
    if (firstSight) this.#count(this.runs.series({ state: this.#states.of(stateLabel(RUN_STARTED)) }));
    const record = followed ?? {
      id: run.workflowRunId,
      createdAt: run.workflowRunCreatedAt,
      counted: new Set<string>(),
      lastStepAt: run.workflowRunCreatedAt,
    };
    const ended = run.workflowState !== RUN_STARTED;
    for (const [index, step] of stepsOf(run).entries()) {
      const stepKey = `${step.stepId ?? index}|${step.messageId ?? ''}`;
      if (record.counted.has(stepKey)) continue;
      const state = step.state ?? 'STEP_PROGRESS';
      if (!ended && !FINAL_STEP_STATES.has(state)) break; // later steps wait for this one
      record.counted.add(stepKey);
      const type = this.#types.of(step.stepType ?? 'unknown');
      this.#count(this.steps.series({ state: this.#states.of(stateLabel(state)), step_type: type }));
      if (step.createdAt !== undefined) {
        this.stepDuration.observe(
          this.stepDuration.series({ step_type: type }),
          Math.max(0, step.createdAt - record.lastStepAt) / 1000,
        );
        record.lastStepAt = Math.max(record.lastStepAt, step.createdAt);
      }
    }
    if (ended) {
      const state = this.#states.of(stateLabel(run.workflowState));
      this.#count(this.runs.series({ state }));
      const end = run.workflowRunCompletedAt;
      if (end !== undefined)
        this.runDuration.observe(
          this.runDuration.series({ state }),
          Math.max(0, end - run.workflowRunCreatedAt) / 1000,
        );
      this.following.delete(key);
      return;
    }
    if (followed === undefined) {
      followed = record;
      this.following.set(key, followed);
      if (this.following.size > MAX_FOLLOWED_RUNS) {
        this.following.delete(this.following.keys().next().value!);
        this.evictions += 1;
      }
    }
  }

  /** A followed run the service no longer returns (aged out): dropped, counted as evicted. */
  drop(key: string): void {
    if (this.following.delete(key)) this.evictions += 1;
  }

  /** Oldest creation time of the runs followed (null: none). */
  oldestFollowed(): number | null {
    let oldest: number | null = null;
    for (const run of this.following.values()) if (oldest === null || run.createdAt < oldest) oldest = run.createdAt;
    return oldest;
  }

  publish(): void {
    this.runs.publish();
    this.steps.publish();
    this.runDuration.publish();
    this.stepDuration.publish();
  }

  exportFollowing(): FollowedRunState[] {
    return [...this.following.values()].map((run) => [run.id, run.createdAt, [...run.counted], run.lastStepAt]);
  }

  restoreFollowing(state: readonly FollowedRunState[]): void {
    for (const [id, createdAt, counted, lastStepAt] of state)
      this.following.set(`${id}@${createdAt}`, { id, createdAt, counted: new Set(counted), lastStepAt });
  }

  /** Label values restored with the counters keep their place in the bounded sets. */
  admitRestoredNames(): void {
    for (const series of this.runs.all()) this.#states.admit(series.labels.state);
    for (const series of this.steps.all()) {
      this.#states.admit(series.labels.state);
      this.#types.admit(series.labels.step_type);
    }
  }

  #count(series: { value: number }): void {
    series.value += 1;
  }
}

export function runKey(run: Pick<WorkflowRun, 'workflowRunId' | 'workflowRunCreatedAt'>): string {
  return `${run.workflowRunId}@${run.workflowRunCreatedAt}`;
}

function stepsOf(run: WorkflowRun): WorkflowStep[] {
  const steps: WorkflowStep[] = [];
  for (const group of run.steps ?? []) for (const step of group.steps ?? []) steps.push(step);
  return steps;
}
