// The traffic model behind every number that moves: a pure function of the clock, so a poller
// sees values change between polls and a test can work out the expected value by hand.
//
// An index has a base rate per kind of request (queries, updates, reranks) in requests per
// minute. The rate of a given minute is base x DIURNAL_FACTORS[UTC hour of that minute].
// Counts are over completed minutes only: the request count between two instants is the sum of
// the rates of the whole minutes that elapsed between them, never counting minutes before the
// index existed.
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time-format.js';

/** Traffic multiplier per UTC hour: quiet nights, busy working hours. */
export const DIURNAL_FACTORS: readonly number[] = [
  1, 1, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1,
];

/** Sum of the factors: a day's count is base rate x 60 x DAILY_FACTOR_SUM. */
export const DAILY_FACTOR_SUM = DIURNAL_FACTORS.reduce((sum, factor) => sum + factor, 0);

/** Factor sums of the hours before hour h of a day (prefix sums), for the closed form below. */
const FACTOR_PREFIX: readonly number[] = DIURNAL_FACTORS.reduce<number[]>(
  (prefix, factor, hour) => {
    prefix.push((prefix[hour] ?? 0) + factor);
    return prefix;
  },
  [0],
);

export function diurnalFactor(ms: number): number {
  const hour = Math.floor((((ms % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS);
  return DIURNAL_FACTORS[hour] ?? 1;
}

/** Sum of the factors of every whole minute from the epoch up to `ms`. */
function factorMinutesSinceEpoch(ms: number): number {
  const minutes = Math.floor(ms / MINUTE_MS);
  const days = Math.floor(minutes / 1440);
  const minuteOfDay = minutes - days * 1440;
  const hour = Math.floor(minuteOfDay / 60);
  const minuteOfHour = minuteOfDay - hour * 60;
  return days * DAILY_FACTOR_SUM * 60 + (FACTOR_PREFIX[hour] ?? 0) * 60 + (DIURNAL_FACTORS[hour] ?? 1) * minuteOfHour;
}

/**
 * Requests of one kind between `fromMs` and `toMs` for an index created at `createdMs`,
 * at `perMinute` base rate: whole minutes only, none before creation, never negative.
 */
export function requestCount(perMinute: number, createdMs: number, fromMs: number, toMs: number): number {
  // The minute an index is created in is not a whole minute of its life: start at the next one.
  const start = Math.ceil(Math.max(fromMs, createdMs) / MINUTE_MS) * MINUTE_MS;
  if (toMs <= start) return 0;
  return perMinute * Math.max(0, factorMinutesSinceEpoch(toMs) - factorMinutesSinceEpoch(start));
}

/** Request rate (per minute) at instant `ms`, 0 before creation. */
export function requestRate(perMinute: number, createdMs: number, ms: number): number {
  return ms < createdMs ? 0 : perMinute * diurnalFactor(ms);
}

/**
 * A latency that wobbles from minute to minute around `baseMs` (two incommensurable waves,
 * +-35% at most), rounded to microseconds. The 99th percentile is 3x the mean plus the base.
 */
export function latencyMean(baseMs: number, ms: number): number {
  const minute = Math.floor(ms / MINUTE_MS);
  const wobble = 0.25 * Math.sin((2 * Math.PI * minute) / 47) + 0.1 * Math.sin((2 * Math.PI * minute) / 11);
  return Math.round(baseMs * (1 + wobble) * 1000) / 1000;
}

export function latencyP99(baseMs: number, ms: number): number {
  return Math.round((latencyMean(baseMs, ms) * 3 + baseMs) * 1000) / 1000;
}
