// Tolerant parser for the timestamp texts of the management API's time series.
//
// The service prints Go's time.Time.String() layout:
//   2025-10-19 18:33:05.244068975 +0000 UTC      (fraction of 0 to 9 digits)
//   2025-10-23 17:34:00 +0000 UTC
//   2025-10-23 17:34:00.000 +0200 CEST m=+0.001  (monotonic suffix of time.Now values)
// ISO-8601 is accepted as well (`2025-10-23T17:34:00.123456Z`, `...+02:00`). A text without
// any offset is read as UTC: the service runs in UTC and says so everywhere it does say.

const TIMESTAMP_PATTERN = new RegExp(
  '^(\\d{4})-(\\d{2})-(\\d{2})' + // date
    '[T ](\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d{0,9}))?)?' + // time, optional seconds/fraction
    '\\s*(Z|[+-]\\d{2}(?::?\\d{2})?)?' + // offset: Z, +hh, +hhmm, +hh:mm
    '(?:\\s+[A-Za-z]{1,6}|\\s+[+-]\\d{2,4})?' + // Go zone abbreviation (UTC, CEST) or numeric zone
    '(?:\\s+m=[+-]\\d+(?:\\.\\d+)?)?$', // Go monotonic clock reading
);

/**
 * Epoch milliseconds (sub-millisecond digits truncated) of a series timestamp text, or
 * undefined when the text is not a valid timestamp in one of the accepted layouts.
 */
export function parseSeriesTimestamp(text: string): number | undefined {
  const match = TIMESTAMP_PATTERN.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined; // 60: leap second, as ISO allows
  const millis = fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0;

  const utc = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), millis);
  // Date.UTC rolls 2025-02-30 over into March: reject days that do not exist.
  if (new Date(utc).getUTCDate() !== day) return undefined;
  const offsetMs = parseOffsetMs(offset);
  if (offsetMs === undefined) return undefined;
  return utc - offsetMs + (second === 60 ? 1000 : 0);
}

function parseOffsetMs(offset: string | undefined): number | undefined {
  if (offset === undefined || offset === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes) * 60_000;
}
