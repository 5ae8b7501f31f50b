// Poll intervals as node-cron steps: which intervals a cron step gives evenly, and the one a
// requested interval is rounded to. The poll schedule (collectors/poll-schedule.ts) plans with
// it and check-config prints it, so both show the interval the runner really uses.

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
