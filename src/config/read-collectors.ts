// Which collectors run and how often: poll intervals (one for all, or by name) and the
// collectors the credentials enable, minus those switched off.
import { parseDuration } from '../common/duration.js';
import { ConfigError } from './errors.js';
import type { Sources } from './precedence.js';
import { MAX_TIMER_MS, type ExporterConfig } from './schema.js';
import { COLLECTOR_NAMES, COLLECTOR_NEEDS, DEFAULT_POLL_INTERVALS, type CollectorName } from './settings.js';
import { asDuration, asList, enumItem, parseDurationText } from './values.js';

/** Polling faster than this only burns the rate limit. */
export const MIN_POLL_INTERVAL_MS = 100;

export function readPollIntervals(sources: Sources): Record<CollectorName, number> {
  const key = 'poll_interval';
  const intervals = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => [name, parseDuration(DEFAULT_POLL_INTERVALS[name])]),
  ) as Record<CollectorName, number>;
  const bounds = { minMs: MIN_POLL_INTERVAL_MS, maxMs: MAX_TIMER_MS };
  const collectorName = (text: string, origin: string): CollectorName =>
    enumItem(key, text.trim(), origin, COLLECTOR_NAMES, 'collector');

  // Lowest precedence first: each source overrides the collectors it names.
  for (const raw of sources.all(key)) {
    if (typeof raw.value === 'object' && raw.value !== null && !Array.isArray(raw.value)) {
      for (const [name, value] of Object.entries(raw.value as Record<string, unknown>)) {
        const collector = collectorName(name, raw.origin);
        intervals[collector] = asDuration(`${key}.${collector}`, { ...raw, value, origin: raw.origin.replace(key, `${key}.${name}`) }, bounds);
      }
      continue;
    }
    const parts = asList(key, raw, 'a duration or name=duration pairs');
    if (parts.length === 0) {
      throw new ConfigError(key, `${raw.origin} is empty; write one duration (e.g. 30s) or name=duration pairs (e.g. logs=15s,account=5m)`);
    }
    for (const part of parts) {
      const equals = part.indexOf('=');
      if (equals === -1) {
        const ms = parseDurationText(key, part, raw.origin, bounds);
        for (const name of COLLECTOR_NAMES) intervals[name] = ms;
      } else {
        const collector = collectorName(part.slice(0, equals), raw.origin);
        intervals[collector] = parseDurationText(`${key}.${collector}`, part.slice(equals + 1).trim(), raw.origin, bounds);
      }
    }
  }
  return intervals;
}

export function readCollectors(
  sources: Sources,
  credentials: { token: string | null; management: boolean },
  intervals: Record<CollectorName, number>,
): ExporterConfig['collectors'] {
  const disabledRaw = sources.get('disabled_collectors');
  const disabled = new Set<CollectorName>(
    disabledRaw === undefined
      ? []
      : asList('disabled_collectors', disabledRaw, 'a list of collector names').map((name) =>
          enumItem('disabled_collectors', name, disabledRaw.origin, COLLECTOR_NAMES, 'collector'),
        ),
  );
  const collectors = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => {
      const needsToken = COLLECTOR_NEEDS[name] === 'qstash';
      const hasCredentials = needsToken ? credentials.token !== null : credentials.management;
      let disabledReason: string | null = null;
      if (!hasCredentials) disabledReason = needsToken ? 'no QSTASH_TOKEN' : 'no UPSTASH_EMAIL + UPSTASH_API_KEY';
      else if (disabled.has(name)) disabledReason = `switched off by ${disabledRaw?.origin ?? 'disabled_collectors'}`;
      return [name, { enabled: disabledReason === null, intervalMs: intervals[name], disabledReason }];
    }),
  ) as ExporterConfig['collectors'];

  if (!COLLECTOR_NAMES.some((name) => collectors[name].enabled)) {
    throw new ConfigError('disabled_collectors', `${disabledRaw?.origin ?? 'disabled_collectors'} switches off every collector the credentials enable; leave at least one on`);
  }
  return collectors;
}

/** "a, b and c" */
function listNames(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
}

/** No credentials at all: which credential enables which collectors (from the catalogue). */
export function noCredentialsError(): ConfigError {
  const enabledBy = (needs: 'qstash' | 'management'): string => listNames(COLLECTOR_NAMES.filter((name) => COLLECTOR_NEEDS[name] === needs));
  return new ConfigError(
    'credentials',
    `no credentials: set QSTASH_TOKEN (${enabledBy('qstash')} collectors) or UPSTASH_EMAIL + UPSTASH_API_KEY (${enabledBy('management')} collectors), as variables, *_FILE variables or flags; to try the exporter without an account run: upstash-exporter demo`,
  );
}
