// The schedules collector: GET /v2/schedules into a fresh snapshot per poll, so the series of a
// deleted schedule vanish on the next poll. Labels carry no secrets and no full URLs: a
// schedule's destination is reduced to host[:port] (or kept as a URL Group name); headers and
// bodies are never read.

import type { Registry } from 'prom-client';
import type { DeliveryClient, Schedule } from '../api/delivery.js';
import type { Logger } from '../logging/index.js';
import type { PollContext } from './collector.js';
import type { CollectorFactory } from './collector.js';
import { flagValue, registerGauge, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { destinationLabel } from './destination.js';
import { polledIntervalMs } from './poll-schedule.js';
import { gaugeRows, type FamilyRow } from './families.js';

/** States of `lastScheduleStates` values (not log states), each pre-set to 0 per schedule. */
export const SCHEDULE_RUN_STATES = ['IN_PROGRESS', 'SUCCESS', 'FAIL'] as const;
export type ScheduleRunState = (typeof SCHEDULE_RUN_STATES)[number];

const SOURCE = 'GET /v2/schedules';

export const SCHEDULE_FAMILIES = {
  schedules: {
    name: 'upstash_qstash_schedules',
    meaning: 'Number of schedules by paused state; both states always present',
    source: `entries of ${SOURCE} counted by isPaused`,
    labelNames: ['paused'],
  },
  info: {
    name: 'upstash_qstash_schedule_info',
    meaning: 'One series per schedule, value 1; destination is the host[:port] of a URL or the URL Group name',
    source: `scheduleId, cron, destination, method of ${SOURCE}`,
    labelNames: ['schedule_id', 'cron', 'destination', 'method'],
  },
  paused: {
    name: 'upstash_qstash_schedule_paused',
    meaning: 'Whether the schedule is paused (1) or active (0)',
    source: `isPaused of ${SOURCE}`,
    labelNames: ['schedule_id'],
  },
  nextRun: {
    name: 'upstash_qstash_schedule_next_run_timestamp_seconds',
    meaning: 'When the schedule fires next, unix seconds',
    source: `nextScheduleTime of ${SOURCE}, unix milliseconds`,
    labelNames: ['schedule_id'],
  },
  lastRun: {
    name: 'upstash_qstash_schedule_last_run_timestamp_seconds',
    meaning: 'When the schedule last fired, unix seconds; absent before its first run',
    source: `lastScheduleTime of ${SOURCE}, unix milliseconds`,
    labelNames: ['schedule_id'],
  },
  created: {
    name: 'upstash_qstash_schedule_created_timestamp_seconds',
    meaning: 'When the schedule was created, unix seconds',
    source: `createdAt of ${SOURCE}, unix milliseconds`,
    labelNames: ['schedule_id'],
  },
  lastRunMessages: {
    name: 'upstash_qstash_schedule_last_run_messages',
    meaning: `Messages of the schedule's last run by state (${SCHEDULE_RUN_STATES.join(', ')}); every state present, 0 when none`,
    source: `the values of lastScheduleStates (message id to state) of ${SOURCE}`,
    labelNames: ['schedule_id', 'state'],
    keep: ['state'],
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const SCHEDULE_FAMILY_ROWS: readonly FamilyRow[] = gaugeRows(SCHEDULE_FAMILIES);

export interface SchedulesCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<DeliveryClient, 'listSchedules'>;
  /** The interval the collector is polled at, ms, as the poll schedule gives it (named in HELP). */
  intervalMs: number;
}

export class SchedulesCollector extends SnapshotCollector<'schedules', readonly Schedule[]> {
  readonly #client: Pick<DeliveryClient, 'listSchedules'>;
  /** lastScheduleStates values outside SCHEDULE_RUN_STATES already warned about. */
  readonly #unknownStatesWarned = new Set<string>();

  constructor(options: SchedulesCollectorOptions) {
    super('schedules', options.intervalMs, options.bounds);
    this.#client = options.client;
  }

  protected fetch(ctx: PollContext): Promise<Schedule[]> {
    return this.#client.listSchedules({ signal: ctx.signal });
  }

  protected fill(registry: Registry, schedules: readonly Schedule[], logger: Logger): void {
    const f = SCHEDULE_FAMILIES;
    const count = registerGauge(registry, f.schedules, this.families);
    const info = registerGauge(registry, f.info, this.families);
    const paused = registerGauge(registry, f.paused, this.families);
    const nextRun = registerGauge(registry, f.nextRun, this.families);
    const lastRun = registerGauge(registry, f.lastRun, this.families);
    const created = registerGauge(registry, f.created, this.families);
    const lastRunMessages = registerGauge(registry, f.lastRunMessages, this.families);

    const pausedCount = schedules.filter((s) => s.isPaused).length;
    count.set({ paused: 'true' }, pausedCount);
    count.set({ paused: 'false' }, schedules.length - pausedCount);

    for (const schedule of schedules) {
      const id = { schedule_id: schedule.scheduleId };
      info.set(
        {
          ...id,
          cron: schedule.cron,
          destination: destinationLabel(schedule.destination),
          method: schedule.method,
        },
        1,
      );
      paused.set(id, flagValue(schedule.isPaused));
      created.set(id, schedule.createdAt / 1000);
      // 0 or absent both mean "not known": a schedule that never ran has no last run time.
      if (schedule.nextScheduleTime !== undefined && schedule.nextScheduleTime > 0) {
        nextRun.set(id, schedule.nextScheduleTime / 1000);
      }
      if (schedule.lastScheduleTime !== undefined && schedule.lastScheduleTime > 0) {
        lastRun.set(id, schedule.lastScheduleTime / 1000);
      }
      for (const [state, messages] of Object.entries(this.#runStates(schedule, logger))) {
        lastRunMessages.set({ ...id, state }, messages);
      }
    }
  }

  /** Messages per state of the last run, every known state present. */
  #runStates(schedule: Schedule, logger: Logger): Record<ScheduleRunState, number> {
    const counts = Object.fromEntries(SCHEDULE_RUN_STATES.map((s) => [s, 0])) as Record<ScheduleRunState, number>;
    for (const state of Object.values(schedule.lastScheduleStates ?? {})) {
      if ((SCHEDULE_RUN_STATES as readonly string[]).includes(state)) {
        counts[state as ScheduleRunState] += 1;
      } else if (!this.#unknownStatesWarned.has(state)) {
        // A new state would need a new label value; say so once instead of exporting it blind.
        this.#unknownStatesWarned.add(state);
        logger.warn(
          { state: state.slice(0, 40), known: SCHEDULE_RUN_STATES },
          'schedule run state not known to the exporter; not counted in upstash_qstash_schedule_last_run_messages',
        );
      }
    }
    return counts;
  }
}

export const createSchedulesCollector: CollectorFactory = (config, deps) =>
  deps.delivery === null
    ? null
    : new SchedulesCollector({
        client: deps.delivery,
        intervalMs: polledIntervalMs('schedules', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
      });
