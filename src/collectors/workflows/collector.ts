// The workflows collector: Upstash Workflow runs and steps from GET /v2/workflows/events
// (groupBy=workflowRunId, the workflow SDK's) or GET /v2/workflows/logs (the OpenAPI's), counted
// exactly once with the walk of the delivery logs (src/collectors/walk/walker.ts: watermark,
// slices, cursor chains, overlap, de-duplication window, retention gaps, restarts), fed with
// runs ordered by creation time (runs.ts). Runs still in progress are followed: asked for again
// by id (`workflowRuns=ID@TS,...`) each cycle until they end. Its position, the runs it follows
// and its counters live in the `workflows` section of the checkpoint file, published (shown on
// /metrics) only once written, like the logs collector's. A service without workflow runs (404 on
// both paths) makes the collector unsupported, not failing (optional-endpoint.ts).
import type { LogsPage, LogsQuery, WorkflowLogsPage, WorkflowLogsQuery } from '../../api/delivery.js';
import { CheckpointSection } from '../../state/index.js';
import { workflowsStateSchema, type WorkflowsState } from './workflows-state.js';
import type { PollContext } from '../collector.js';
import { computedCounter, computedGauge } from '../walk/families.js';
import { metricOptions } from '../../metrics/families.js';
import { WORKFLOW_FAMILIES } from './families.js';
import type { GapReport, LogsSource, WalkPosition, WalkSettings } from '../walk/walker.js';
import { restoredPosition, WalkCollector, type WalkCollectorOptions } from '../walk/walk-collector.js';
import { RunCounter, runEntry, runKey } from './runs.js';
import { timeText } from '../../common/time-text.js';
import { ApiEndpointAbsentError } from '../../api/errors.js';
import { OptionalEndpoint, unsupportedSummary, type EndpointAvailabilityGauge } from '../optional-endpoint.js';

/** Runs asked for in one follow-up request (the OpenAPI's cap of run-mode pages). */
export const FOLLOW_BATCH = 10;
/** Follow-up requests per cycle at most; the next cycle goes on where this one stopped. */
export const MAX_FOLLOW_REQUESTS = 20;
/** A followed run missing from this many follow-up answers in a row is dropped (aged out). */
export const FOLLOW_MISSES = 3;

export interface WorkflowRunsClient {
  workflowLogsPage(query: WorkflowLogsQuery, call?: { signal?: AbortSignal }): Promise<WorkflowLogsPage>;
  pendingWorkflowLogsWaitMs?(): number;
  workflowLogsRateLimitHeld?(): number;
  /** The service's clock (the walk's frontier is its now minus the ingestion delay). */
  readonly upstreamClock?: { readonly known: boolean; now(): number };
}

export interface WorkflowsCollectorOptions extends WalkCollectorOptions {
  client: WorkflowRunsClient;
  settings: WalkSettings;
  /** Path of the state file; null disables persistence. */
  stateFile: string | null;
  upstream: string;
  /** The QStash region whose part of the state file is this collector's (absent: the file's top level). */
  stateRegion?: string | undefined;
  availability?: EndpointAvailabilityGauge;
  /** The canary probe's workflow URL as it triggers it (null/absent: no probe): its runs are not counted. */
  probeWorkflowUrl?: string | null;
}

/** The walk's source: pages of runs, each run an entry at its creation time. */
function runsSource(client: WorkflowRunsClient): LogsSource {
  return {
    async logsPage(query: LogsQuery, call?: { signal?: AbortSignal }): Promise<LogsPage> {
      const asked: WorkflowLogsQuery = {};
      if (query.fromDate !== undefined) asked.fromDate = epochMsOf(query.fromDate);
      if (query.toDate !== undefined) asked.toDate = epochMsOf(query.toDate);
      if (query.count !== undefined) asked.count = query.count;
      if (query.cursor !== undefined) asked.cursor = query.cursor;
      const page = await client.workflowLogsPage(asked, call);
      return { ...(page.cursor === undefined ? {} : { cursor: page.cursor }), logs: page.runs.map(runEntry) };
    },
    pendingLogsWaitMs: () => client.pendingWorkflowLogsWaitMs?.() ?? 0,
    logsRateLimitHeld: () => client.workflowLogsRateLimitHeld?.() ?? 0,
    ...(client.upstreamClock === undefined ? {} : { upstreamClock: client.upstreamClock }),
  };
}

function epochMsOf(value: number | Date): number {
  return typeof value === 'number' ? value : value.getTime();
}

interface Published {
  pages: number;
  followPages: number;
  evictions: number;
  watermark: number;
  inProgress: number;
  oldestCreated: number | null;
}

export class WorkflowsCollector extends WalkCollector<'workflows', WorkflowsState> {
  protected readonly store: CheckpointSection<WorkflowsState> | null;
  protected readonly saveFailedMessage =
    'cannot write the state file; workflow counts survive only while the process runs';
  readonly #client: WorkflowRunsClient;
  readonly #counter: RunCounter;
  readonly #misses = new Map<string, number>();
  /** Both paths of the runs; a 404 on one that answered before is a refused cursor, not absence. */
  readonly #runs: OptionalEndpoint;
  #followPages = 0;
  /** Where the next follow-up round starts in the list of followed runs. */
  #followFrom = 0;
  readonly #published: Published = {
    pages: 0,
    followPages: 0,
    evictions: 0,
    watermark: 0,
    inProgress: 0,
    oldestCreated: null,
  };

  constructor(options: WorkflowsCollectorOptions) {
    super('workflows', options);
    this.#client = options.client;
    this.#counter = new RunCounter(this.registry, options.probeWorkflowUrl ?? null);
    this.#runs = new OptionalEndpoint({
      collector: 'workflows',
      endpoint: 'GET /v2/workflows/events|logs',
      gauge: options.availability,
      isAbsence: (error) => error instanceof ApiEndpointAbsentError,
    });
    this.store =
      options.stateFile === null
        ? null
        : new CheckpointSection({
            path: options.stateFile,
            upstream: options.upstream,
            ...(options.stateRegion === undefined ? {} : { region: options.stateRegion }),
            name: 'workflows',
            schema: workflowsStateSchema,
            now: this.now,
          });
    this.startWalk({
      source: runsSource(options.client),
      counter: this.#counter,
      settings: options.settings,
      position: this.#restore(),
    });
    this.#registerSelf();
    this.publish();
  }

  async poll(ctx: PollContext): Promise<void> {
    const deadline = this.deadline();
    try {
      await this.#runs.read(ctx, async () => {
        await this.walker.cycle(ctx.signal, deadline);
        await this.#follow(ctx.signal);
      });
    } finally {
      await this.checkpoint();
    }
  }

  /** Unsupported when the service has no workflow runs. */
  summary(): string | undefined {
    return unsupportedSummary([this.#runs]);
  }

  /** Asks for the runs in progress again (a bounded round per cycle, in turn) and counts what changed. */
  async #follow(signal: AbortSignal): Promise<void> {
    const counter = this.#counter;
    const followed = [...counter.following.values()];
    if (followed.length === 0) return;
    if (this.#followFrom >= followed.length) this.#followFrom = 0;
    const round = [...followed.slice(this.#followFrom), ...followed.slice(0, this.#followFrom)].slice(
      0,
      FOLLOW_BATCH * MAX_FOLLOW_REQUESTS,
    );
    for (let i = 0; i < round.length; i += FOLLOW_BATCH) {
      const batch = round.slice(i, i + FOLLOW_BATCH).map((run) => ({ id: run.id, createdAt: run.createdAt }));
      const page = await this.#client.workflowLogsPage({ runs: batch, count: batch.length }, { signal });
      this.#followPages += 1;
      this.dirty = true;
      const answered = new Set<string>();
      for (const run of page.runs) {
        const key = runKey(run);
        answered.add(key);
        counter.apply(run, false);
      }
      for (const run of batch) {
        const key = `${run.id}@${run.createdAt}`;
        if (answered.has(key)) {
          this.#misses.delete(key);
          continue;
        }
        const misses = (this.#misses.get(key) ?? 0) + 1;
        if (misses < FOLLOW_MISSES) this.#misses.set(key, misses);
        else {
          this.#misses.delete(key);
          counter.drop(key);
          this.logger.debug({ workflowRunId: run.id }, 'a followed workflow run is no longer served; dropped');
        }
      }
    }
    this.#followFrom += round.length;
  }

  protected reportGap(gap: GapReport): void {
    this.logger.warn(
      { since: timeText(gap.since), until: timeText(gap.until), estimatedRuns: gap.estimatedEvents },
      'workflow runs aged out before they were read; counts miss about this many runs',
    );
  }

  protected publish(): void {
    const counter = this.#counter;
    counter.publish();
    const published = this.#published;
    published.pages = this.pages;
    published.followPages = this.#followPages;
    published.evictions = counter.evictions;
    published.watermark = this.walker.position.watermark;
    published.inProgress = counter.following.size;
    published.oldestCreated = counter.oldestFollowed();
  }

  #registerSelf(): void {
    const p = this.#published;
    computedGauge(this.registry, metricOptions(WORKFLOW_FAMILIES.inProgress), () => p.inProgress);
    computedGauge(this.registry, metricOptions(WORKFLOW_FAMILIES.oldestRunAge), () =>
      p.oldestCreated === null ? 0 : Math.max(0, this.now() - p.oldestCreated) / 1000,
    );
    computedCounter(this.registry, metricOptions(WORKFLOW_FAMILIES.pages), () => [
      { labels: { kind: 'walk' }, value: p.pages },
      { labels: { kind: 'follow' }, value: p.followPages },
    ]);
    computedCounter(this.registry, metricOptions(WORKFLOW_FAMILIES.runsDropped), () => [
      { labels: {}, value: p.evictions },
    ]);
    computedGauge(this.registry, metricOptions(WORKFLOW_FAMILIES.watermark), () => p.watermark / 1000);
  }

  protected snapshot(): WorkflowsState {
    const counter = this.#counter;
    return {
      ...this.positionState(counter.lastEventTime, counter.dedup.export()),
      counters: { runs: counter.runs.export(), steps: counter.steps.export() },
      histograms: { runDuration: counter.runDuration.export(), stepDuration: counter.stepDuration.export() },
      following: counter.exportFollowing(),
      self: {
        pages: this.pages,
        followPages: this.#followPages,
        gaps: this.gaps,
        late: this.late,
        evictions: counter.evictions,
      },
    };
  }

  #restore(): WalkPosition | undefined {
    if (this.store === null) return undefined;
    const result = this.store.loadSync();
    if (result.status === 'missing') {
      this.logger.info(
        { path: this.store.path },
        'no workflows section in the state file yet: counting runs created from now on',
      );
      return undefined;
    }
    if (result.status === 'ignored') {
      this.logger.warn(
        { path: this.store.path, detail: result.detail },
        'workflows section of the state file unusable: counting runs created from now on',
      );
      return undefined;
    }
    const state = result.value;
    const counter = this.#counter;
    counter.dedup.restore(state.dedup);
    const restored = [
      counter.runs.restore(state.counters.runs),
      counter.steps.restore(state.counters.steps),
      counter.runDuration.restore(state.histograms.runDuration),
      counter.stepDuration.restore(state.histograms.stepDuration),
    ];
    if (restored.includes(false))
      this.logger.warn(
        'workflow label names or buckets changed since the state file was written: those metrics start again from 0',
      );
    counter.admitRestoredNames();
    counter.restoreFollowing(state.following);
    counter.lastEventTime = state.lastEventTime;
    counter.evictions = state.self.evictions;
    this.pages = state.self.pages;
    this.#followPages = state.self.followPages;
    this.gaps = state.self.gaps;
    this.late = state.self.late;
    this.logger.info(
      { path: this.store.path, watermark: new Date(state.watermark).toISOString(), following: state.following.length },
      'workflows state restored',
    );
    return restoredPosition(state, false);
  }
}
