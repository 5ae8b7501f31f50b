// Which collectors run and how often: poll intervals (one for all, or by name) and the
// collectors the credentials enable, minus those switched off.
import { z } from 'zod';
import { cronForInterval, CRON_STEP_RULE } from '../common/cron-step.js';
import { formatDuration, parseDuration } from '../common/duration.js';
import { COLLECTOR_NAMES, COLLECTOR_NEEDS, DEFAULT_POLL_INTERVALS, type CollectorName } from './collector-catalogue.js';
import { ConfigError } from './errors.js';
import type { Kind } from './kinds.js';
import type { Sources } from './precedence.js';
import type { ExporterConfig } from './schema.js';
import { asDuration, asList, enumItem, MAX_TIMER_MS, parseDurationText } from './values.js';

/** Polling faster than this only burns the rate limit. */
export const MIN_POLL_INTERVAL_MS = 100;

const KEY = 'poll_interval';

function readPollIntervals(sources: Sources): Record<CollectorName, number> {
  const intervals = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => [name, parseDuration(DEFAULT_POLL_INTERVALS[name])]),
  ) as Record<CollectorName, number>;
  const bounds = { minMs: MIN_POLL_INTERVAL_MS, maxMs: MAX_TIMER_MS };
  const collectorName = (text: string, origin: string): CollectorName =>
    enumItem(KEY, text.trim(), origin, COLLECTOR_NAMES, 'collector');

  // Lowest precedence first: each source overrides the collectors it names.
  for (const raw of sources.all(KEY)) {
    if (typeof raw.value === 'object' && raw.value !== null && !Array.isArray(raw.value)) {
      for (const [name, value] of Object.entries(raw.value as Record<string, unknown>)) {
        const collector = collectorName(name, raw.origin);
        intervals[collector] = asDuration(
          `${KEY}.${collector}`,
          { ...raw, value, origin: raw.origin.replace(KEY, `${KEY}.${name}`) },
          bounds,
        );
      }
      continue;
    }
    const parts = asList(KEY, raw, 'a duration or name=duration pairs');
    if (parts.length === 0) {
      throw new ConfigError(
        KEY,
        `${raw.origin} is empty; write one duration (e.g. 30s) or name=duration pairs (e.g. logs=15s,account=5m)`,
      );
    }
    for (const part of parts) {
      const equals = part.indexOf('=');
      if (equals === -1) {
        const ms = parseDurationText(KEY, part, raw.origin, bounds);
        for (const name of COLLECTOR_NAMES) intervals[name] = ms;
      } else {
        const collector = collectorName(part.slice(0, equals), raw.origin);
        intervals[collector] = parseDurationText(
          `${KEY}.${collector}`,
          part.slice(equals + 1).trim(),
          raw.origin,
          bounds,
        );
      }
    }
  }
  return intervals;
}

/**
 * A collector's poll interval as the runner schedules it (rounded to a cron step, as the poll
 * schedule does), and when that is not the interval asked, the note saying so.
 */
export function scheduledInterval(requestedMs: number): { effective: string; note: string | null } {
  const plan = cronForInterval(requestedMs);
  const effective = formatDuration(plan.intervalMs);
  return {
    effective,
    note: plan.exact ? null : `${formatDuration(requestedMs)} asked, rounded to ${effective}: ${CRON_STEP_RULE}`,
  };
}

/** poll_interval: every collector's interval, ms; printed as the intervals the runner uses. */
export const pollIntervals: Kind<Record<CollectorName, number>> = {
  read: (_spec, sources) => readPollIntervals(sources),
  check: z.record(
    z.enum(COLLECTOR_NAMES as [CollectorName, ...CollectorName[]]),
    z.number().int().min(MIN_POLL_INTERVAL_MS).max(MAX_TIMER_MS),
  ),
  render: (_intervals, config) =>
    Object.fromEntries(
      COLLECTOR_NAMES.map((name) => [name, scheduledInterval(config.collectors[name].intervalMs).effective]),
    ),
};

const SWITCHED_OFF = 'switched off by';

/** disabled_collectors: the collectors switched off although their credentials are set. */
export const disabledCollectors: Kind<CollectorName[]> = {
  read: (spec, sources) => {
    const raw = sources.get(spec.key);
    return raw === undefined
      ? []
      : asList(spec.key, raw, 'a list of collector names').map((name) =>
          enumItem(spec.key, name, raw.origin, COLLECTOR_NAMES, 'collector'),
        );
  },
  check: z.array(z.enum(COLLECTOR_NAMES as [CollectorName, ...CollectorName[]])),
  render: (_names, config) =>
    COLLECTOR_NAMES.filter((name) => config.collectors[name].disabledReason?.startsWith(SWITCHED_OFF) === true),
};

export function readCollectors(
  sources: Sources,
  credentials: { token: string | null; management: boolean },
  intervals: Record<CollectorName, number>,
  switchedOff: readonly CollectorName[],
): ExporterConfig['collectors'] {
  const disabledRaw = sources.get('disabled_collectors');
  const disabled = new Set<CollectorName>(switchedOff);
  const collectors = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => {
      const needsToken = COLLECTOR_NEEDS[name] === 'qstash';
      const hasCredentials = needsToken ? credentials.token !== null : credentials.management;
      let disabledReason: string | null = null;
      if (!hasCredentials) disabledReason = needsToken ? 'no QSTASH_TOKEN' : 'no UPSTASH_EMAIL + UPSTASH_API_KEY';
      else if (disabled.has(name)) disabledReason = `${SWITCHED_OFF} ${disabledRaw?.origin ?? 'disabled_collectors'}`;
      return [name, { enabled: disabledReason === null, intervalMs: intervals[name], disabledReason }];
    }),
  ) as ExporterConfig['collectors'];

  if (!COLLECTOR_NAMES.some((name) => collectors[name].enabled)) {
    throw new ConfigError(
      'disabled_collectors',
      `${disabledRaw?.origin ?? 'disabled_collectors'} switches off every collector the credentials enable; leave at least one on`,
    );
  }
  return collectors;
}

/** "a, b and c" */
function listNames(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
}

/** No credentials at all: which credential enables which collectors (from the catalogue). */
export function noCredentialsError(): ConfigError {
  const enabledBy = (needs: 'qstash' | 'management'): string =>
    listNames(COLLECTOR_NAMES.filter((name) => COLLECTOR_NEEDS[name] === needs));
  return new ConfigError(
    'credentials',
    `no credentials: set QSTASH_TOKEN (${enabledBy('qstash')} collectors) or UPSTASH_EMAIL + UPSTASH_API_KEY (${enabledBy('management')} collectors), as variables, *_FILE variables or flags; to try the exporter without an account run: upstash-exporter demo`,
  );
}
