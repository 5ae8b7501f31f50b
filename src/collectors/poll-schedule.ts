// When each collector polls: its interval as a cron step (node-cron fires at multiples of the
// interval on the clock) and a fixed start offset after each tick (its phase). The phase spreads
// the polls of collectors and of exporter replicas like a random delay would, but it is drawn
// once per process, as Prometheus fixes each target's scrape offset: a collector then knows when
// its next poll starts (the logs walk stops its cycle there, docs/counting.md "Rate limits"),
// and consecutive polls are exactly one interval apart.
import { cronForInterval, type CronPlan } from '../common/cron-step.js';
import type { CollectorConfig, ExporterConfig } from '../config/schema.js';
import type { CollectorName } from '../config/collector-catalogue.js';

/** Upper bound of a collector's phase. */
const MAX_PHASE_MS = 5_000;
/** A phase is at most this share of the interval. */
const MAX_PHASE_SHARE = 0.1;

export interface PollPlan extends CronPlan {
  /** Fixed delay of each poll after its cron tick, ms, in [0, min(10% of the interval, 5 s)). */
  phaseMs: number;
}

/** The plan of every configured collector, phases drawn once (`random`: [0, 1), default Math.random). */
export class PollSchedule {
  readonly #plans = new Map<CollectorName, PollPlan>();

  constructor(settings: Readonly<Record<CollectorName, CollectorConfig>>, random: () => number = Math.random) {
    for (const [name, config] of Object.entries(settings) as Array<[CollectorName, CollectorConfig]>) {
      const cron = cronForInterval(config.intervalMs);
      const phaseMs = Math.floor(random() * Math.min(cron.intervalMs * MAX_PHASE_SHARE, MAX_PHASE_MS));
      this.#plans.set(name, { ...cron, phaseMs });
    }
  }

  plan(name: CollectorName): PollPlan {
    const plan = this.#plans.get(name);
    if (plan === undefined) throw new Error(`no poll plan for collector ${name}`);
    return plan;
  }

  /**
   * When the next scheduled poll of `name` after `now` starts, unix ms: the next tick plus the
   * phase. Ticks fall on multiples of the interval (time zones are whole minutes off UTC; a
   * step of minutes that does not divide a zone's offset would make this early or late, never
   * wrong for the count: a cycle stopped early continues in the next poll).
   */
  nextPollAt(name: CollectorName, now: number): number {
    const { intervalMs, phaseMs } = this.plan(name);
    return (Math.floor((now - phaseMs) / intervalMs) + 1) * intervalMs + phaseMs;
  }
}

/**
 * The interval the runner polls `name` at, read from the exporter's schedule (a collector built
 * without one, as in tests, plans its own from the configuration). What a collector says about
 * its cadence (HELP texts) comes from here, so it is the interval really polled.
 */
export function polledIntervalMs(
  name: CollectorName,
  config: Pick<ExporterConfig, 'collectors'>,
  schedule?: PollSchedule,
): number {
  return (
    schedule ?? new PollSchedule({ [name]: config.collectors[name] } as Record<CollectorName, CollectorConfig>)
  ).plan(name).intervalMs;
}

export { cronForInterval, CRON_STEP_RULE, type CronPlan } from '../common/cron-step.js';

/** The shortest poll deadline: room for one request's timeouts and a retry (docs/http.md). */
export const MIN_POLL_DEADLINE_MS = 60_000;

/**
 * How long a poll may run before it counts as failed while it still runs: twice the interval,
 * at least MIN_POLL_DEADLINE_MS. A poll stuck on an upstream that answers and then trickles (one
 * byte every few seconds) read as healthy for minutes: only its frozen last success showed it.
 */
export function pollDeadlineMs(intervalMs: number): number {
  return Math.max(2 * intervalMs, MIN_POLL_DEADLINE_MS);
}
