// Durations written as `<value><unit>` pairs, the grammar the service uses for Upstash-Timeout
// and Upstash-Delay: "15s", "5m", "1h30m", "1d", "500ms". Pure: shared by exporter and emulator.

export const DURATION_UNITS_MS = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
} as const;

export type DurationUnit = keyof typeof DURATION_UNITS_MS;

export class DurationError extends Error {
  readonly code = 'ERR_DURATION';
  /** The text that failed to parse, as given. */
  readonly input: string;
  /** What is wrong with it, without the input itself (callers decide whether to echo it). */
  readonly reason: string;

  constructor(input: string, reason: string) {
    super(`invalid duration ${JSON.stringify(input)}: ${reason}`);
    this.name = 'DurationError';
    this.input = input;
    this.reason = reason;
  }
}

// One pair: a non-negative decimal value followed by a unit. `ms` precedes `m` in the
// alternation so "500ms" is not read as 500 minutes followed by a stray "s".
const PAIR = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * Parses a duration into milliseconds. Compound values join pairs in any order ("1h30m",
 * "1d1h30m"); a bare "0" is zero. Fractions are allowed ("1.5h") and the result is rounded to
 * whole milliseconds. Throws DurationError on anything else, including negative values.
 */
export function parseDuration(text: string): number {
  const input = text.trim();
  if (input === '') throw new DurationError(text, 'it is empty');
  if (input === '0') return 0;
  if (input.startsWith('-')) throw new DurationError(text, 'it is negative');

  let total = 0;
  PAIR.lastIndex = 0;
  while (PAIR.lastIndex < input.length) {
    const at = PAIR.lastIndex;
    const match = PAIR.exec(input);
    if (match === null) {
      const reason = /^\d+(?:\.\d+)?$/.test(input.slice(at))
        ? 'a number needs a unit (ms, s, m, h or d)'
        : 'expected <number><unit> pairs with unit ms, s, m, h or d';
      throw new DurationError(text, reason);
    }
    total += Number(match[1]) * DURATION_UNITS_MS[match[2] as DurationUnit];
  }
  const ms = Math.round(total);
  if (!Number.isSafeInteger(ms)) throw new DurationError(text, 'it is too large');
  return ms;
}

/** Formats milliseconds back into the same grammar, largest units first: 5_400_000 → "1h30m". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot format duration ${ms}`);
  let rest = Math.round(ms);
  if (rest === 0) return '0s';
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = DURATION_UNITS_MS[unit];
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
