// Timestamps in the shape the real management API prints them: Go's `time.Time.String()`,
// `YYYY-MM-DD HH:MM:SS[.fraction] +0000 UTC`. The real service mixes fraction lengths inside one
// response (9 digits on the daily series, 3 on the minute series, none where Go's default
// formatter drops a zero fraction), so clients must parse all three; the emulator serves all three.

export type FractionStyle = 'nanos' | 'millis' | 'none';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * Sub-millisecond digits for the 9-digit style. The clock has millisecond resolution; the real
 * service prints nanoseconds, so the last six digits are made up, deterministically from `ms`.
 */
function subMillisecondDigits(ms: number): number {
  return (Math.abs(ms) * 7919 + 104_729) % 1_000_000;
}

export function formatServiceTime(ms: number, fraction: FractionStyle): string {
  const date = new Date(ms);
  const base =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)} ` +
    `${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
  const millis = date.getUTCMilliseconds();
  switch (fraction) {
    case 'nanos':
      return `${base}.${pad(millis, 3)}${pad(subMillisecondDigits(ms), 6)} +0000 UTC`;
    case 'millis':
      return `${base}.${pad(millis, 3)} +0000 UTC`;
    case 'none':
      return `${base} +0000 UTC`;
  }
}

export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function startOfUtcMonth(ms: number): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

export function weekdayName(ms: number): string {
  return WEEKDAY_NAMES[new Date(ms).getUTCDay()] ?? 'Sunday';
}

/** Unix seconds, the unit of every `creation_time` the management API serves. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
