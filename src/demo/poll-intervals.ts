// The demo's poll intervals, worked out from the collector catalogue: each collector polls
// DEMO_POLL_SPEEDUP times as often as by default, between 2 s and 30 s, on the nearest cron step
// (so the runner polls exactly that). A collector added to the catalogue is in the demo with no
// change here.
import { cronForInterval } from '../common/cron-step.js';
import { formatDuration, parseDuration } from '../common/duration.js';
import { DEFAULT_POLL_INTERVALS, type CollectorName } from '../config/index.js';

/** How many times more often than by default the demo polls: a minute becomes 10 seconds. */
export const DEMO_POLL_SPEEDUP = 6;
/** Bounds of a demo interval: every family has data within seconds, and the polls stay light. */
const SHORTEST_MS = 2_000;
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
