// When each collector polls: its interval as a cron step (node-cron fires at multiples of the
// interval on the clock) and a fixed start offset after each tick (its phase). The phase spreads
// the polls of collectors and of exporter replicas like a random delay would, but it is drawn
// once per process, as Prometheus fixes each target's scrape offset: a collector then knows when
// its next poll starts (the logs walk stops its cycle there, docs/counting.md "Rate limits"),
// and consecutive polls are exactly one interval apart.
import type { CollectorConfig } from '../config/schema.js';
import type { CollectorName } from './catalogue.js';

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

/** Why an interval is rounded, as the runner's warning and check-config's output say it. */
export const CRON_STEP_RULE = 'a cron step must divide a minute, an hour or a day';

export interface CronPlan {
  /** Six-field node-cron expression (with seconds). */
  expression: string;
  /** The interval that expression really gives, ms. */
  intervalMs: number;
  /** False when the requested interval had to be rounded. */
  exact: boolean;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DIVISORS_OF_60 = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30];
const DIVISORS_OF_24 = [1, 2, 3, 4, 6, 8, 12, 24];

/**
 * Every interval a cron step can give evenly: `*\/n` on seconds or minutes with n dividing 60,
 * on hours with n dividing 24 (a step that does not divide its unit gives a short interval at
 * each wrap, e.g. `*\/7` seconds fires at :56 then :00).
 */
const CRON_INTERVALS: readonly { ms: number; expression: string }[] = [
  ...DIVISORS_OF_60.map((n) => ({ ms: n * SECOND, expression: n === 1 ? '* * * * * *' : `*/${n} * * * * *` })),
  ...DIVISORS_OF_60.map((n) => ({ ms: n * MINUTE, expression: n === 1 ? '0 * * * * *' : `0 */${n} * * * *` })),
  ...DIVISORS_OF_24.map((n) => ({
    ms: n * HOUR,
    expression: n === 24 ? '0 0 0 * * *' : n === 1 ? '0 0 * * * *' : `0 0 */${n} * * *`,
  })),
];

/**
 * The cron schedule of a poll interval: exact when the interval is one of CRON_INTERVALS,
 * otherwise the nearest one (absolute difference; on a tie the longer interval, which is
 * gentler on the rate-limited API). Below 1 s rounds up to 1 s, above 1 day down to 1 day.
 */
export function cronForInterval(intervalMs: number): CronPlan {
  let best = CRON_INTERVALS[0]!;
  for (const candidate of CRON_INTERVALS) {
    const d = Math.abs(candidate.ms - intervalMs);
    const bestD = Math.abs(best.ms - intervalMs);
    if (d < bestD || (d === bestD && candidate.ms > best.ms)) best = candidate;
  }
  return { expression: best.expression, intervalMs: best.ms, exact: best.ms === intervalMs };
}
