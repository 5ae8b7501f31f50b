// The demo's poll intervals come from the collector catalogue: every collector has one, shorter
// than its default, between 5 s and 30 s, and one the runner polls exactly (no rounding note).
import { describe, expect, it } from 'vitest';
import { scheduledInterval } from '../../src/config/read-collectors.js';
import { COLLECTOR_CATALOGUE } from '../../src/config/collector-catalogue.js';
import { loadConfig } from '../../src/config/index.js';
import { parseDuration } from '../../src/common/duration.js';
import { demoPollIntervalFlag, demoPollIntervalMs, demoPollIntervals } from '../../src/demo/poll-intervals.js';

describe("the demo's poll intervals", () => {
  it('cover every collector of the catalogue, each faster than its default, 5 s (10 s on the management API) to 30 s, on a cron step', () => {
    const intervals = demoPollIntervals();
    expect(Object.keys(intervals)).toEqual(COLLECTOR_CATALOGUE.map((entry) => entry.name));
    for (const entry of COLLECTOR_CATALOGUE) {
      const ms = intervals[entry.name];
      expect(ms, entry.name).toBeGreaterThanOrEqual(entry.needs === 'management' ? 10_000 : 5_000);
      expect(ms, entry.name).toBeLessThanOrEqual(30_000);
      expect(ms, entry.name).toBeLessThan(parseDuration(entry.defaultInterval));
      expect(scheduledInterval(ms).note, entry.name).toBeNull();
    }
  });

  it('a minute becomes 5 s, 30 s the 5 s floor, 5 minutes the 30 s ceiling', () => {
    expect(demoPollIntervalMs('60s')).toBe(5_000);
    expect(demoPollIntervalMs('30s')).toBe(5_000);
    expect(demoPollIntervalMs('15s')).toBe(5_000);
    expect(demoPollIntervalMs('5m')).toBe(30_000);
    // 2 minutes / 12 = 10 s, a cron step; 3 minutes / 12 = 15 s, one too.
    expect(demoPollIntervalMs('2m')).toBe(10_000);
    expect(demoPollIntervalMs('3m')).toBe(15_000);
    // The management API's collectors share one rate-limited client: 10 s at the shortest.
    expect(demoPollIntervalMs('60s', 'management')).toBe(10_000);
    expect(demoPollIntervalMs('5m', 'management')).toBe(30_000);
  });

  it('is a --poll-interval the configuration takes as is', () => {
    const config = loadConfig(['--poll-interval', demoPollIntervalFlag()], { QSTASH_TOKEN: 'demo-token' });
    for (const [name, ms] of Object.entries(demoPollIntervals())) {
      expect(config.collectors[name as keyof typeof config.collectors].intervalMs, name).toBe(ms);
    }
  });
});
