// Runs the collectors in the background: one poll of each at start, then one node-cron task per
// collector, each poll started at the collector's fixed phase after its tick (poll-schedule.ts). A
// poll due while the previous one still runs is skipped and counted, except for a collector
// that walks a backlog (Collector.deferOverlappingTick): its next poll starts as soon as the
// running one ends. Records each poll in SelfMetrics and in a status the landing page and the
// readiness probe read. A failing collector never affects another: each poll is isolated, and
// its error ends up as a short sanitized text, never a thrown exception.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTask, type ScheduledTask } from 'node-cron';
import { cronLogger } from './cron-logger.js';
import type { Logger } from '../logging/index.js';
import type { CollectorConfig } from '../config/schema.js';
import type { SelfMetrics } from '../metrics/self.js';
import { COLLECTOR_NAMES, type Collector, type CollectorName } from './collector.js';
import { describeError, instanceKey, instanceName, loggedByClient } from './collector-status.js';
import { NO_POLL_YET, type CollectorStatus } from './collector-status.js';
import { CRON_STEP_RULE, PollSchedule, pollDeadlineMs } from './poll-schedule.js';
import { WallClockWatch } from '../common/wall-clock-watch.js';
import { settleWithin } from '../common/settle-within.js';

export { describeError, instanceName } from './collector-status.js';
export type { CollectorStatus } from './collector-status.js';

/** Time the polls in flight get to finish on stop() before they are aborted. */
export const DEFAULT_STOP_DEADLINE_MS = 8_000;
/** After the abort, how long stop() still waits for a poll to honour it. */
const ABORT_GRACE_MS = 1_000;
/** How often the wall clock is checked for jumps. */
const WALL_CLOCK_CHECK_MS = 1_000;

export interface CollectorRunnerOptions {
  /** The enabled collectors (buildCollectors' result). */
  collectors: readonly Collector[];
  /** Per-collector settings of the configuration: interval, and why a collector is off. */
  settings: Readonly<Record<CollectorName, CollectorConfig>>;
  selfMetrics: SelfMetrics;
  logger: Logger;
  /** Default deadline of stop(), ms. */
  stopDeadlineMs?: number;
  /** Strings that must never appear in an error text (tokens, keys). */
  secrets?: readonly string[];
  now?: () => number;
  /** When each collector polls (default: a schedule of `settings` with phases drawn now). */
  schedule?: PollSchedule;
  /** Poll deadline of every collector, ms (default: pollDeadlineMs of its interval). */
  pollDeadlineMs?: number;
}

interface InFlight {
  promise: Promise<void>;
  controller: AbortController;
  /** Fires at the poll's deadline. */
  deadlineTimer: NodeJS.Timeout;
  /** The poll ran past its deadline and was recorded as failed then. */
  overdue: boolean;
}

interface Slot {
  collector: Collector;
  logger: Logger;
  intervalMs: number;
  schedule: string;
  /** Delay of each scheduled poll after its tick, ms. */
  phaseMs: number;
  /** How long a poll may run before it is a failure (pollDeadlineMs). */
  deadlineMs: number;
  task?: ScheduledTask;
  inFlight?: InFlight;
  /** A poll came due during the poll in flight and waits for that one to end. */
  deferredTick: boolean;
  overlapWarned: boolean;
  status: CollectorStatus;
}

export class CollectorRunner {
  /** By instanceKey: one slot per collector and region. */
  readonly #slots = new Map<string, Slot>();
  readonly #settings: Readonly<Record<CollectorName, CollectorConfig>>;
  readonly #self: SelfMetrics;
  readonly #logger: Logger;
  readonly #stopDeadlineMs: number;
  readonly #secrets: readonly string[];
  readonly #now: () => number;
  #started = false;
  #stopping: Promise<void> | undefined;
  #firstPolls: Promise<void> = Promise.resolve();
  /** Jumps of the wall clock: node-cron arms its timer for a wall-clock time (set back an hour, it would wait an hour). */
  readonly #wallClock = new WallClockWatch();
  #wallClockTimer: NodeJS.Timeout | undefined;

  constructor(options: CollectorRunnerOptions) {
    this.#settings = options.settings;
    this.#self = options.selfMetrics;
    this.#logger = options.logger;
    this.#stopDeadlineMs = options.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS;
    this.#secrets = (options.secrets ?? []).filter((s) => s.length > 0);
    this.#now = options.now ?? Date.now;
    const schedule = options.schedule ?? new PollSchedule(options.settings);

    for (const collector of options.collectors) {
      const region = collector.region ?? null;
      const key = instanceKey(collector.name, region);
      if (this.#slots.has(key)) throw new Error(`collector ${instanceName(collector.name, region)} given twice`);
      const wanted = options.settings[collector.name].intervalMs;
      const plan = schedule.plan(collector.name);
      options.selfMetrics.addCollector(collector.name, region);
      options.selfMetrics.setPollInterval(collector.name, plan.intervalMs, region);
      const logger = options.logger.child({
        collector: collector.name,
        ...(region === null ? {} : { qstash_region: region }),
      });
      if (!plan.exact) {
        logger.warn(
          { requestedMs: wanted, effectiveMs: plan.intervalMs, schedule: plan.expression },
          `poll interval ${wanted} ms cannot be scheduled exactly (${CRON_STEP_RULE}); using ${plan.intervalMs} ms`,
        );
      }
      this.#slots.set(key, {
        collector,
        logger,
        intervalMs: plan.intervalMs,
        schedule: plan.expression,
        phaseMs: plan.phaseMs,
        deadlineMs: options.pollDeadlineMs ?? pollDeadlineMs(plan.intervalMs),
        deferredTick: false,
        overlapWarned: false,
        status: {
          ...NO_POLL_YET,
          name: collector.name,
          region,
          enabled: true,
          disabledReason: null,
          intervalMs: plan.intervalMs,
          schedule: plan.expression,
        },
      });
    }
  }

  /** The collectors this runner polls, a region-scoped one as `name (region)`. */
  get enabled(): string[] {
    return [...this.#slots.values()].map((slot) => instanceName(slot.collector.name, slot.status.region));
  }

  /** The registries /metrics renders, one per enabled collector and region. */
  registries(): { name: string; registry: Collector['registry'] }[] {
    return [...this.#slots.values()].map((slot) => ({
      name: instanceName(slot.collector.name, slot.status.region),
      registry: slot.collector.registry,
    }));
  }

  /** Starts the first poll of every collector and the schedules; returns at once. */
  start(): void {
    if (this.#started) throw new Error('CollectorRunner already started');
    this.#started = true;
    const first: Promise<void>[] = [];
    for (const slot of this.#slots.values()) {
      first.push(this.#poll(slot));
      // No noOverlap: node-cron would judge an overlap at the tick, before the phase; #poll judges
      // it when the poll is due.
      const task = createTask(slot.schedule, () => void this.#pollAfterPhase(slot), {
        name: `upstash-exporter:${instanceName(slot.collector.name, slot.status.region)}`,
        logger: cronLogger(slot.logger, this.#secrets),
      });
      task.on('execution:missed', (ctx) => {
        // Slots a forward jump of the wall clock went over were not missed: nothing was blocked.
        this.#checkWallClock();
        if (this.#wallClock.skipped(ctx.date.getTime())) return;
        this.#self.countMissedRun(slot.collector.name, slot.status.region);
        slot.logger.warn({ slot: ctx.date.toISOString() }, 'scheduled poll missed: the event loop was blocked');
      });
      slot.task = task;
      void task.start();
    }
    this.#firstPolls = Promise.all(first).then(() => undefined);
    this.#wallClockTimer = setInterval(() => this.#checkWallClock(), WALL_CLOCK_CHECK_MS);
    this.#wallClockTimer.unref();
  }

  /** After a jump of the wall clock, every schedule is armed again for the next tick on the new time. */
  #checkWallClock(): void {
    const jumpMs = this.#wallClock.check();
    if (jumpMs === 0) return;
    this.#logger.warn(
      { jumpSeconds: Math.round(jumpMs) / 1000 },
      'the wall clock jumped: polls rescheduled on the new time',
    );
    // After the scheduler's own handling of the tick in progress (a missed-run report comes from inside it).
    queueMicrotask(() => {
      if (this.#stopping !== undefined) return;
      for (const slot of this.#slots.values()) {
        void slot.task?.stop();
        void slot.task?.start();
      }
    });
  }

  /** Settles when the first poll of every collector has ended (success or failure). */
  firstPolls(): Promise<void> {
    return this.#firstPolls;
  }

  /** Every collector, enabled or not, in the canonical order; an enabled one once per region. */
  status(): CollectorStatus[] {
    return COLLECTOR_NAMES.flatMap((name): CollectorStatus[] => {
      const slots = [...this.#slots.values()].filter((slot) => slot.collector.name === name);
      if (slots.length > 0)
        return slots.map((slot) => ({
          ...slot.status,
          running: slot.inFlight !== undefined,
          overdue: slot.inFlight?.overdue === true,
          summary: slot.collector.summary?.() ?? null,
        }));
      return [
        {
          ...NO_POLL_YET,
          name,
          region: null,
          enabled: false,
          disabledReason: this.#settings[name].disabledReason ?? 'not part of this build',
          intervalMs: null,
          schedule: null,
        },
      ];
    });
  }

  /** Every enabled collector has succeeded at least once (readiness). */
  ready(): boolean {
    return [...this.#slots.values()].every((slot) => slot.status.everSucceeded);
  }

  /** Enabled collectors that have not succeeded yet, a region-scoped one as `name (region)`. */
  waitingFor(): string[] {
    return [...this.#slots.values()]
      .filter((s) => !s.status.everSucceeded)
      .map((s) => instanceName(s.collector.name, s.status.region));
  }

  /**
   * Stops scheduling, lets polls in flight finish up to `deadlineMs` (then aborts them and
   * waits a short grace), then closes every collector. Idempotent.
   */
  stop(deadlineMs: number = this.#stopDeadlineMs): Promise<void> {
    this.#stopping ??= this.#stop(deadlineMs);
    return this.#stopping;
  }

  async #stop(deadlineMs: number): Promise<void> {
    clearInterval(this.#wallClockTimer);
    for (const slot of this.#slots.values()) {
      void slot.task?.destroy();
      slot.task = undefined;
    }
    const inFlight = (): InFlight[] =>
      [...this.#slots.values()].flatMap((slot) => (slot.inFlight === undefined ? [] : [slot.inFlight]));
    const settled = (ms: number): Promise<boolean> =>
      settleWithin(
        inFlight().map((f) => f.promise),
        ms,
      );

    if (!(await settled(deadlineMs))) {
      const late = [...this.#slots.values()]
        .filter((s) => s.inFlight !== undefined)
        .map((s) => instanceName(s.collector.name, s.status.region));
      this.#logger.warn({ collectors: late, deadlineMs }, 'polls still running at the stop deadline: aborting them');
      for (const flight of inFlight()) flight.controller.abort(new Error('exporter is stopping'));
      if (!(await settled(ABORT_GRACE_MS))) {
        this.#logger.warn({ collectors: late }, 'polls ignored the abort; closing the collectors anyway');
      }
    }

    await Promise.all(
      [...this.#slots.values()].map(async (slot) => {
        if (slot.collector.close === undefined) return;
        try {
          await slot.collector.close();
        } catch (error) {
          slot.logger.error({ err: describeError(error, this.#secrets) }, 'collector close failed');
        }
      }),
    );
  }

  async #pollAfterPhase(slot: Slot): Promise<void> {
    // Unref'd: a phase in progress never keeps a stopping process alive.
    if (slot.phaseMs > 0) await sleep(slot.phaseMs, undefined, { ref: false });
    return this.#poll(slot);
  }

  #poll(slot: Slot): Promise<void> {
    if (this.#stopping !== undefined) return Promise.resolve();
    if (slot.inFlight !== undefined) {
      this.#onPollDueDuringPoll(slot);
      return Promise.resolve();
    }
    const controller = new AbortController();
    const startedAtMs = this.#now();
    const flight: InFlight = {
      promise: Promise.resolve(),
      controller,
      deadlineTimer: setTimeout(() => this.#onOverdue(slot, flight, startedAtMs), slot.deadlineMs).unref(),
      overdue: false,
    };
    slot.inFlight = flight;
    flight.promise = this.#runPoll(slot, flight).finally(() => {
      clearTimeout(flight.deadlineTimer);
      slot.inFlight = undefined;
      if (slot.deferredTick) {
        slot.deferredTick = false;
        void this.#poll(slot);
      }
    });
    return flight.promise;
  }

  /**
   * A poll still running at its deadline is a failure from now on, on /metrics (success 0, the
   * error counted, poll_overdue 1), on the landing page and in readiness, not only when it ends.
   */
  #onOverdue(slot: Slot, flight: InFlight, startedAtMs: number): void {
    if (slot.inFlight !== flight) return;
    flight.overdue = true;
    const runningSeconds = Math.round((this.#now() - startedAtMs) / 1000);
    const text = `ERR_POLL_OVERDUE: the poll has run for ${runningSeconds} s, past its deadline of ${slot.deadlineMs / 1000} s (the upstream answers too slowly or not at all); it goes on`;
    this.#self.recordOverdue(slot.collector.name, slot.status.region);
    slot.status.lastOutcome = 'failure';
    slot.status.lastError = text;
    slot.status.lastErrorAt = this.#now();
    slot.logger.warn({ err: text, deadlineMs: slot.deadlineMs }, 'poll overdue: counted as failed while it runs');
  }

  /** A poll due while the previous one runs: deferred for a collector that asks for it, else skipped. */
  #onPollDueDuringPoll(slot: Slot): void {
    if (slot.collector.deferOverlappingTick === true) {
      if (!slot.deferredTick) slot.logger.debug('the previous poll is still running: the next one starts when it ends');
      slot.deferredTick = true;
      return;
    }
    this.#onOverlap(slot);
  }

  async #runPoll(slot: Slot, flight: InFlight): Promise<void> {
    const { signal } = flight.controller;
    const name = slot.collector.name;
    const started = performance.now();
    let failure: unknown;
    let ok = true;
    try {
      // Through a promise chain so a poll that throws synchronously is caught the same way.
      await Promise.resolve().then(() => slot.collector.poll({ signal, now: this.#now, logger: slot.logger }));
    } catch (error) {
      ok = false;
      failure = error;
    }
    const durationSeconds = (performance.now() - started) / 1000;
    const finishedAtMs = this.#now();
    this.#self.recordPoll({
      collector: name,
      region: slot.status.region,
      ok,
      durationSeconds,
      finishedAtMs,
      countedOverdue: flight.overdue,
    });

    const status = slot.status;
    status.lastDuration = durationSeconds;
    if (ok) {
      if (status.lastOutcome === 'failure') slot.logger.info({ durationSeconds }, 'collector recovered');
      else slot.logger.debug({ durationSeconds }, 'poll succeeded');
      status.lastOutcome = 'success';
      status.lastSuccess = finishedAtMs;
      status.everSucceeded = true;
    } else {
      const text = describeError(failure, this.#secrets);
      status.lastOutcome = 'failure';
      status.lastError = text;
      status.lastErrorAt = finishedAtMs;
      // A wait the service asked for is logged once by the API client, not by every poll it fails.
      const level = loggedByClient(failure) ? 'debug' : 'warn';
      slot.logger[level]({ err: text, durationSeconds }, 'poll failed; serving the previous snapshot');
    }
  }

  #onOverlap(slot: Slot): void {
    this.#self.countOverlap(slot.collector.name, slot.status.region);
    const message = 'scheduled poll skipped: the previous poll is still running (interval shorter than a poll?)';
    if (slot.overlapWarned) {
      slot.logger.debug(message);
    } else {
      slot.overlapWarned = true;
      slot.logger.warn({ intervalMs: slot.intervalMs }, message);
    }
  }
}
