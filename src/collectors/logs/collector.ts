// The logs collector: one long-lived registry of counters fed by the incremental walk, and the
// checkpoint that makes them survive restarts. The checkpoint (src/state) holds the walk
// position, the de-duplication window and every counter from one moment between two pages; it
// is written after each completed slice, every few seconds of a long walk, at the end of each
// poll (failed ones included) and on close. It is read synchronously at construction, so the
// counters are restored before anything is served. /metrics shows the values as of the last
// checkpoint (published with it), never values a crash could take back.
import type { Counter } from 'prom-client';
import type { LogEntry } from '../../api/delivery.js';
import { CheckpointFile } from '../../state/index.js';
import { logsStateSchema, migrateLogsState, type LogsState } from './logs-state.js';
import type { PollContext } from '../collector.js';
import { LogCounter } from './counter.js';
import { PageTally } from '../walk/page-tally.js';
import type { OptInLabel } from './event-counters.js';
import { DEFAULT_LATENESS_HORIZON_MS, type ColdState } from '../walk/cold-identities.js';
import { LateAudit } from './late-audit.js';
import { initialNumbers, registerLogsSelfFamilies, type PublishedNumbers } from './self-families.js';
import type { CycleReport, GapReport, LogsSource, WalkPosition } from '../walk/walker.js';
import { restoredPosition, WalkCollector, type WalkCollectorOptions } from '../walk/walk-collector.js';
import { timeText } from '../../common/time-text.js';
import { errorCode, errorMessage } from '../../common/errors.js';

export interface LogsSettings {
  ingestionDelayMs: number;
  overlapMs: number;
  maxPagesPerCycle: number;
  /** Entries asked for per log page (default 1000); the service's cap is learnt. */
  pageSize?: number;
  labels: readonly OptInLabel[];
  seriesLimit: number;
  messageTrackerSize: number;
  /** Least time between two late-entry audits (default AUDIT_INTERVAL_MS; tests set 0). */
  auditIntervalMs?: number;
  /** Most the overlap grows to while late entries show (default 1 minute; tests lower it). */
  maxGrownOverlapMs?: number;
  /** Most time slices walked at once, each by its own cursor chain (default 4). */
  maxParallelSlices?: number;
  /** Entries visible up to this late are counted by the late-entry audit (default DEFAULT_LATENESS_HORIZON_MS). */
  latenessHorizonMs?: number;
}

export interface LogsCollectorOptions extends WalkCollectorOptions {
  source: LogsSource;
  settings: LogsSettings;
  /** Path of the state file; null disables persistence. */
  stateFile: string | null;
  /** upstreamIdentity() of the QStash URL and token. */
  upstream: string;
  /** The QStash region whose part of the state file is this collector's (absent: the file's top level). */
  stateRegion?: string | undefined;
  /** upstash_exporter_series_dropped_total of the self metrics. */
  dropped?: Counter<'metric'>;
  /** upstash_exporter_label_values_truncated_total of the self metrics. */
  truncated?: Counter<'metric'>;
}

export class LogsCollector extends WalkCollector<'logs', LogsState> {
  protected readonly store: CheckpointFile<LogsState> | null;
  protected readonly saveFailedMessage = 'cannot write the state file; counts survive only while the process runs';
  readonly #counter: LogCounter;
  /** upstash_exporter_log_missed_late_events_total of the checkpoint, for the audit made after the restore. */
  #restoredMissedLate = 0;
  /** The cold identities of the checkpoint (null: none, or an older format). */
  #restoredCold: ColdState | null = null;
  /** Set once the walk position is known (after the restore). */
  readonly #audit: LateAudit;
  readonly #source: LogsSource;
  readonly #configuredOverlapMs: number;
  /** What /metrics shows besides the counter families: copied at each checkpoint. */
  readonly #published: PublishedNumbers = initialNumbers();

  constructor(options: LogsCollectorOptions) {
    super('logs', options);
    const { settings } = options;
    this.#counter = new LogCounter({
      registry: this.registry,
      seriesLimit: settings.seriesLimit,
      optIn: settings.labels,
      trackerCapacity: settings.messageTrackerSize,
      // The in-flight age is measured on the upstream's clock, like the entry times it starts from.
      now: () => options.source.upstreamClock?.now() ?? this.now(),
      latenessHorizonMs: settings.latenessHorizonMs ?? DEFAULT_LATENESS_HORIZON_MS,
      ...(options.dropped ? { dropped: options.dropped } : {}),
      ...(options.truncated ? { truncated: options.truncated } : {}),
    });
    this.store =
      options.stateFile === null
        ? null
        : new CheckpointFile({
            path: options.stateFile,
            upstream: options.upstream,
            ...(options.stateRegion === undefined ? {} : { region: options.stateRegion }),
            schema: logsStateSchema,
            migrate: migrateLogsState,
            now: this.now,
          });
    this.startWalk({ source: options.source, counter: this.#counter, settings, position: this.#restore() });
    // The cold store knows every identity counted from where the window starts now (it holds all
    // from there on), or from the checkpoint's cold store on.
    const cold = this.#counter.dedup.cold!;
    if (this.#restoredCold !== null) cold.restore(this.#restoredCold);
    else cold.validFrom = this.walker.position.dedupFrom - 1;
    cold.prune(this.walker.position.watermark);
    this.#audit = new LateAudit(cold, settings.auditIntervalMs);
    this.#audit.missed = this.#restoredMissedLate;
    this.#source = options.source;
    this.#configuredOverlapMs = settings.overlapMs;
    registerLogsSelfFamilies(this.registry, this.#published, () => this.walker.upstreamNow());
    this.publish();
  }

  /** The overlap the walk re-reads now (grown while late entries show). */
  get overlapMs(): number {
    return this.walker.overlapMs;
  }

  async poll(ctx: PollContext): Promise<void> {
    let report: CycleReport | undefined;
    const deadline = this.deadline();
    try {
      report = await this.walker.cycle(ctx.signal, deadline);
    } catch (error) {
      // Why the walk stopped, by code (a grouped answer, a page too large, the daily limit...);
      // the watermark stays where the last complete slice put it.
      const code = errorCode(error);
      this.#published.errors.set(code, (this.#published.errors.get(code) ?? 0) + 1);
      this.dirty = true;
      throw error;
    } finally {
      await this.checkpoint();
    }
    const position = this.walker.position;
    ctx.logger.debug(
      {
        pages: report.pages,
        slices: report.slicesCompleted,
        late: report.late,
        stopped: report.stopped,
        chains: report.chains,
        requestMs: report.requestMs === null ? null : Math.ceil(report.requestMs),
        watermark: new Date(position.watermark).toISOString(),
      },
      'logs walked',
    );
    this.#counter.dedup.cold!.prune(position.watermark);
    if (report.stopped === null) await this.#auditLateEntries(ctx);
    if (report.stopped === 'time') {
      ctx.logger.debug(
        { pages: report.pages, lagSeconds: (this.now() - position.watermark) / 1000 },
        'the next poll is due: the walk continues then',
      );
    } else if (report.stopped === 'budget') {
      ctx.logger.info(
        { pages: report.pages, lagSeconds: (this.now() - position.watermark) / 1000 },
        'page budget of the cycle spent; the walk continues next cycle',
      );
    }
  }

  /**
   * At the frontier, while the service shows late entries (the overlap grew, or was not re-read
   * within the lateness horizon): looks behind the de-duplication window and counts what the
   * walk missed (late-audit.ts).
   */
  async #auditLateEntries(ctx: PollContext): Promise<void> {
    const position = this.walker.position;
    const now = this.now();
    const skippedAt = this.walker.overlapSkippedAt;
    const lateShowing =
      this.walker.overlapMs > this.#configuredOverlapMs || (skippedAt > 0 && now - skippedAt <= this.#audit.horizonMs);
    if (position.stateWalk || !this.#audit.due(now, lateShowing)) return;
    const range = this.#audit.range(position.watermark, position.dedupFrom);
    if (range === null) return;
    const counter = this.#counter;
    const tally = new PageTally();
    // Behind the window: one walk of its own (the cold store tells repeats within it), every
    // entry at or before the watermark, so each one counted is a late entry.
    counter.dedup.beginWalk();
    const stamp = counter.dedup.stamp;
    const count = (entries: readonly LogEntry[]): number => {
      tally.reset(Number.POSITIVE_INFINITY);
      counter.dedup.useWalk(stamp);
      counter.countPage(entries, -1, position.watermark, tally);
      this.late += tally.late;
      if (tally.counted > 0) this.dirty = true;
      return tally.counted;
    };
    try {
      if (
        (await this.#audit.run(this.#source, range, this.walker.pageSize, now, ctx.logger, count, ctx.signal)).missed >
        0
      )
        this.dirty = true;
    } catch (error) {
      // An audit is a check, not the count: a failure waits for the next one.
      ctx.logger.debug({ err: errorMessage(error) }, 'late-entry audit failed');
    } finally {
      await this.checkpoint();
    }
  }

  protected reportGap(gap: GapReport): void {
    this.logger.warn(
      { since: timeText(gap.since), until: timeText(gap.until), estimatedEvents: gap.estimatedEvents },
      'the service dropped log entries before they were read (retention overrun); counts miss about this many events',
    );
  }

  protected override savedAgain(path: string): void {
    this.logger.info({ path }, 'state file written again');
  }

  protected override watermarkReset(): void {
    this.#published.watermarkResets += 1;
    this.dirty = true;
  }

  protected publish(): void {
    const counter = this.#counter;
    counter.publish();
    const published = this.#published;
    published.pages = this.pages;
    published.duplicates = counter.duplicates;
    published.gaps = this.gaps;
    published.late = this.late;
    published.missedLate = this.#audit.missed;
    published.evictions = counter.tracker.evictions;
    published.checkpointsOk = this.checkpointsOk;
    published.checkpointsFailed = this.checkpointsFailed;
    published.watermark = this.walker.position.watermark;
    published.lastEventTime = counter.lastEventTime;
    published.inFlight = counter.tracker.inFlight;
    published.stateWalk = this.walker.position.stateWalk;
    published.pageSize = this.walker.pageSize;
    published.allowedRequestsPerSecond = this.#source.logsRateLimit?.()?.allowedPerSecond ?? null;
    published.daily = { day: counter.daily.day, count: counter.daily.count };
  }

  protected snapshot(): LogsState {
    const counter = this.#counter;
    // `stateWalk` keeps its place in the file, after `sliceMs`.
    const { gapSince, rateEwma, slices, dedup, ...head } = this.positionState(
      counter.lastEventTime,
      counter.dedup.export(),
    );
    return {
      ...head,
      stateWalk: this.walker.position.stateWalk,
      gapSince,
      rateEwma,
      slices,
      dedup,
      cold: counter.dedup.cold!.export(),
      counters: { events: counter.events.events.export(), errors: counter.events.errors.export() },
      histograms: { duration: counter.tracker.durations.export(), attempts: counter.tracker.attempts.export() },
      tracker: counter.tracker.export(),
      daily: { day: counter.daily.day, count: counter.daily.count },
      waiting: {
        queueWait: counter.waiting.queueWait.export(),
        lateness: counter.waiting.lateness.export(),
        messages: counter.tracker.exportWaiting(),
      },
      self: {
        pages: this.pages,
        duplicates: counter.duplicates,
        gaps: this.gaps,
        evictions: counter.tracker.evictions,
        checkpointsSuccess: this.checkpointsOk,
        checkpointsError: this.checkpointsFailed,
        late: this.late,
        missedLate: this.#audit.missed,
        walkErrors: Object.fromEntries(this.#published.errors),
        folded: { ...counter.events.foldedTotals(), ...counter.tracker.foldedTotals() },
      },
    };
  }

  /** Restores the last checkpoint, or reports why there is none; the walk position or undefined. */
  #restore(): WalkPosition | undefined {
    if (this.store === null) {
      this.logger.info('state file disabled: counting starts at now and restarts from 0 with the process');
      return undefined;
    }
    const result = this.store.loadSync();
    if (result.status === 'missing') {
      this.logger.info({ path: this.store.path }, 'no state file yet: counting starts at now');
      return undefined;
    }
    if (result.status === 'set-aside') {
      this.logger.warn(
        { path: this.store.path, reason: result.reason, detail: result.detail, movedTo: result.movedTo },
        'state file unusable: set aside, counting starts at now',
      );
      return undefined;
    }
    const state = result.payload;
    const counter = this.#counter;
    counter.dedup.restore(state.dedup, state.dedupFrom);
    const folded = state.self.folded;
    const restored = counter.events.restore(state.counters, folded);
    const durations = counter.tracker.durations.restore(state.histograms.duration);
    const attempts = counter.tracker.attempts.restore(state.histograms.attempts);
    counter.tracker.restoreGuards(folded);
    counter.tracker.restore(state.tracker);
    counter.tracker.evictions = state.self.evictions;
    counter.daily.restore(state.daily);
    const waiting = state.waiting === undefined || counter.waiting.restore(state.waiting);
    if (state.waiting !== undefined) counter.tracker.restoreWaiting(state.waiting.messages);
    counter.lastEventTime = state.lastEventTime;
    counter.duplicates = state.self.duplicates;
    this.pages = state.self.pages;
    this.gaps = state.self.gaps;
    this.checkpointsOk = state.self.checkpointsSuccess;
    this.checkpointsFailed = state.self.checkpointsError;
    this.late = state.self.late;
    this.#restoredMissedLate = state.self.missedLate;
    this.#restoredCold = state.cold;
    for (const [code, value] of Object.entries(state.self.walkErrors)) this.#published.errors.set(code, value);
    if (!restored.events || !restored.errors || !durations || !attempts || !waiting) {
      this.logger.warn(
        'label names or buckets changed since the state file was written: those metrics start again from 0',
      );
    }
    this.logger.info(
      {
        path: this.store.path,
        savedAt: new Date(result.savedAt).toISOString(),
        watermark: new Date(state.watermark).toISOString(),
      },
      'state restored: counting continues after the watermark',
    );
    return restoredPosition(state, state.stateWalk);
  }
}
