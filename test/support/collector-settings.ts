// The per-collector part of the configuration, for tests that run the real CollectorRunner:
// the collectors given an interval are enabled, every other one is off for `disabledReason`.
import { COLLECTOR_NAMES, type CollectorName } from '../../src/collectors/collector.js';
import type { CollectorConfig } from '../../src/config/index.js';

export function collectorSettings(
  intervalsMs: Partial<Record<CollectorName, number>>,
  disabledReason: string,
): Record<CollectorName, CollectorConfig> {
  return Object.fromEntries(
    COLLECTOR_NAMES.map((name) => {
      const interval = intervalsMs[name];
      return [
        name,
        {
          enabled: interval !== undefined,
          intervalMs: interval ?? 60_000,
          disabledReason: interval === undefined ? disabledReason : null,
        },
      ];
    }),
  ) as Record<CollectorName, CollectorConfig>;
}
