// The demo's poll intervals, worked out from the collector catalogue: each collector polls
// DEMO_POLL_SPEEDUP times as often as by default, between 5 s and 30 s, on the nearest cron step
// (so the runner polls exactly that). A collector added to the catalogue is in the demo with no
// change here.
import { cronForInterval } from '../common/cron-step.js';
import { formatDuration, parseDuration } from '../common/duration.js';
import { DEFAULT_POLL_INTERVALS, type CollectorName } from '../config/index.js';

/** How many times more often than by default the demo polls: a minute becomes 5 seconds. */
export const DEMO_POLL_SPEEDUP = 12;
/**
 * Bounds of a demo interval: every family has data within seconds (a schedule's runs are seen
 * twice within 10 s), and a poll of both regions has time to finish on a loaded machine.
 */
const SHORTEST_MS = 5_000;
const LONGEST_MS = 30_000;

/** The demo's interval of one collector, ms, from its default interval. */
export function demoPollIntervalMs(defaultInterval: string): number {
  const wanted = parseDuration(defaultInterval) / DEMO_POLL_SPEEDUP;
  return cronForInterval(Math.min(LONGEST_MS, Math.max(SHORTEST_MS, wanted))).intervalMs;
}

/** Every collector's demo interval, by name, in the catalogue's order (its default intervals). */
export function demoPollIntervals(): Record<CollectorName, number> {
  return Object.fromEntries(
    Object.entries(DEFAULT_POLL_INTERVALS).map(([name, interval]) => [name, demoPollIntervalMs(interval)]),
  ) as Record<CollectorName, number>;
}

/** The demo exporter's --poll-interval value: `logs=2s,schedules=5s,...`. */
export function demoPollIntervalFlag(): string {
  return Object.entries(demoPollIntervals())
    .map(([name, ms]) => `${name}=${formatDuration(ms)}`)
    .join(',');
}
