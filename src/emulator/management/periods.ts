// The `?period=` of the statistics endpoints (QStash usage, vector and search indexes) and the
// points a period's series have: 60 (240 for 30d) at fixed steps, the last one at the current
// minute. Shared by the account's usage and the index resources.
import { ManagementError } from './errors.js';
import { HOUR_MS, MINUTE_MS } from './time-format.js';

/** One point of a served series. */
export interface Point {
  x: string;
  y: number;
}

export const STATS_PERIODS = ['1h', '3h', '12h', '1d', '3d', '7d', '30d'] as const;
export type StatsPeriod = (typeof STATS_PERIODS)[number];

export interface PeriodShape {
  points: number;
  stepMs: number;
}

export const PERIOD_SHAPES: Record<StatsPeriod, PeriodShape> = {
  '1h': { points: 60, stepMs: MINUTE_MS },
  '3h': { points: 60, stepMs: 3 * MINUTE_MS },
  '12h': { points: 60, stepMs: 12 * MINUTE_MS },
  '1d': { points: 60, stepMs: 24 * MINUTE_MS },
  '3d': { points: 60, stepMs: 72 * MINUTE_MS },
  '7d': { points: 60, stepMs: 168 * MINUTE_MS },
  '30d': { points: 240, stepMs: 3 * HOUR_MS },
};

/** Point times of a period, oldest first, the last one at the current minute. */
export function periodTimes(nowMs: number, period: StatsPeriod): number[] {
  const { points, stepMs } = PERIOD_SHAPES[period];
  const last = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  return Array.from({ length: points }, (_, i) => last - (points - 1 - i) * stepMs);
}

export function parsePeriod(value: unknown): StatsPeriod {
  if (value === undefined) return '1h';
  if (typeof value === 'string' && (STATS_PERIODS as readonly string[]).includes(value)) {
    return value as StatsPeriod;
  }
  throw new ManagementError('ERR_EMULATOR_INPUT', `invalid period: expected one of ${STATS_PERIODS.join(', ')}`);
}
