// The demo's poll intervals, worked out from the collector catalogue: each collector polls
// DEMO_POLL_SPEEDUP times as often as by default, between 5 s (10 s for the management API's
// collectors) and 30 s, on the nearest cron step (so the runner polls exactly that). A collector
// added to the catalogue is in the demo with no change here.
import { cronForInterval } from '../common/cron-step.js';
import { formatDuration, parseDuration } from '../common/duration.js';
import {
  COLLECTOR_NEEDS,
  DEFAULT_POLL_INTERVALS,
  type CollectorName,
  type CollectorNeeds,
} from '../config/collector-catalogue.js';

/** How many times more often than by default the demo polls: a minute becomes 5 seconds. */
export const DEMO_POLL_SPEEDUP = 12;
/**
 * Bounds of a demo interval: every family has data within seconds (a schedule's runs are seen
 * twice within 10 s), and a poll of both regions has time to finish on a loaded machine.
 */
const SHORTEST_MS = 5_000;
/**
 * The management API's collectors (both regions' account and usage, search, vector, redis) share
 * one rate-limited client and make several calls a poll: at 5 s a loaded machine had a poll still
 * running at the next tick (a warning the demo must not print).
 */
const SHORTEST_MANAGEMENT_MS = 10_000;
const LONGEST_MS = 30_000;

/** The demo's interval of one collector, ms, from its default interval and the API it reads. */
export function demoPollIntervalMs(defaultInterval: string, needs: CollectorNeeds = 'qstash'): number {
  const wanted = parseDuration(defaultInterval) / DEMO_POLL_SPEEDUP;
  const shortest = needs === 'management' ? SHORTEST_MANAGEMENT_MS : SHORTEST_MS;
  return cronForInterval(Math.min(LONGEST_MS, Math.max(shortest, wanted))).intervalMs;
}

/** Every collector's demo interval, by name, in the catalogue's order (its default intervals). */
export function demoPollIntervals(): Record<CollectorName, number> {
  return Object.fromEntries(
    Object.entries(DEFAULT_POLL_INTERVALS).map(([name, interval]) => [
      name,
      demoPollIntervalMs(interval, COLLECTOR_NEEDS[name as CollectorName]),
    ]),
  ) as Record<CollectorName, number>;
}

/** The demo exporter's --poll-interval value: `logs=2s,schedules=5s,...`. */
export function demoPollIntervalFlag(): string {
  return Object.entries(demoPollIntervals())
    .map(([name, ms]) => `${name}=${formatDuration(ms)}`)
    .join(',');
}
