import { describe, expect, it } from 'vitest';
import { DurationError, formatDuration, parseDuration } from '../../src/common/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['1d1h30m', 91_800_000],
    ['2m30s500ms', 150_500],
    ['30m1h', 5_400_000], // order is free, as in the service's compound values
    ['1.5h', 5_400_000],
    ['0', 0],
    ['0s', 0],
    [' 15s ', 15_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['', 'it is empty'],
    ['15', 'a number needs a unit (ms, s, m, h or d)'],
    ['1h30', 'a number needs a unit (ms, s, m, h or d)'],
    ['-5s', 'it is negative'],
    ['5x', 'expected <number><unit> pairs with unit ms, s, m, h or d'],
    ['1h 30m', 'expected <number><unit> pairs with unit ms, s, m, h or d'],
    ['15S', 'expected <number><unit> pairs with unit ms, s, m, h or d'],
    ['s', 'expected <number><unit> pairs with unit ms, s, m, h or d'],
    ['1e3s', 'expected <number><unit> pairs with unit ms, s, m, h or d'],
    ['99999999999999999d', 'it is too large'],
  ])('rejects %j: %s', (text, reason) => {
    let caught: unknown;
    try {
      parseDuration(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DurationError);
    expect(caught).toMatchObject({ code: 'ERR_DURATION', input: text, reason });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [15_000, '15s'],
    [60_000, '1m'],
    [5_400_000, '1h30m'],
    [91_800_500, '1d1h30m500ms'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1_000, 61_001, 3_599_999, 86_400_000 * 3 + 7]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });

  it('refuses negative values', () => {
    expect(() => formatDuration(-1)).toThrow(RangeError);
  });
});
