// Units of the emulator that need no server: the retry-delay expression parser, the default
// backoff and destination retry hints, the raw destination split, and the scaled timer queue.
import { describe, expect, it } from 'vitest';
import { ScaledClock, TimerQueue } from '../../src/emulator/clock.js';
import { isLoopbackUrl, parseDestination, splitRawTarget } from '../../src/emulator/delivery/destination.js';
import { LogStore, urlParts, type MessageFacts } from '../../src/emulator/delivery/log-store.js';
import { RetryDelayExpression } from '../../src/emulator/delivery/retry-delay.js';
import { defaultBackoffMs, nextRetryDelayMs, parseRetryHintMs } from '../../src/emulator/delivery/retry-policy.js';

describe('retry-delay expressions', () => {
  it.each([
    ['1000', 0, 1000],
    ['1000 * (1 + retried)', 2, 3000],
    ['pow(2, retried) * 1000', 3, 8000],
    ['max(1000, pow(2, retried) * 100)', 1, 1000],
    ['min(5, 3) + abs(-2) + floor(1.7) + ceil(1.2) + round(2.5) + sqrt(16)', 0, 3 + 2 + 1 + 2 + 3 + 4],
    ['exp(0) * 10 % 4', 0, 2],
    ['-retried + 10 / 4', 2, 0.5],
    ['1e3', 0, 1000],
  ])('%s with retried=%i is %d', (source, retried, expected) => {
    expect(RetryDelayExpression.parse(source).evaluate(retried)).toBeCloseTo(expected);
  });

  it.each([
    '',
    'retried +',
    'pow(2)',
    'max(1, 2, 3)',
    'eval(1)',
    'process.exit(1)',
    'constructor',
    '(1',
    '1)',
    '1 ^ 2',
    '"1"',
    `${'('.repeat(100)}1${')'.repeat(100)}`,
  ])('rejects %j', (source) => {
    expect(() => RetryDelayExpression.parse(source)).toThrow();
  });

  it('falls back to the default backoff on a non-finite result and clamps to a day', () => {
    expect(nextRetryDelayMs(0, RetryDelayExpression.parse('1 / 0'), undefined)).toBe(defaultBackoffMs(0));
    expect(nextRetryDelayMs(0, RetryDelayExpression.parse('-5'), undefined)).toBe(0);
    expect(nextRetryDelayMs(0, RetryDelayExpression.parse('pow(10, 12)'), undefined)).toBe(86_400_000);
    expect(nextRetryDelayMs(0, RetryDelayExpression.parse('5'), 2000)).toBe(2000);
  });
});

describe('retry policy', () => {
  it('follows the documented default backoff table', () => {
    expect(defaultBackoffMs(0)).toBe(Math.round(Math.exp(2.5) * 1000)); // 12 s
    expect(defaultBackoffMs(1)).toBe(Math.round(Math.exp(5) * 1000)); // 2m28s
    expect(defaultBackoffMs(4)).toBe(86_400_000);
  });

  it('parses Retry-After as seconds, HTTP dates, Go durations and reset timestamps', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryHintMs('5', now)).toBe(5000);
    expect(parseRetryHintMs('6m5s', now)).toBe(365_000);
    expect(parseRetryHintMs('250ms', now)).toBe(250);
    expect(parseRetryHintMs('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryHintMs(String(now / 1000 + 10), now)).toBe(10_000);
    expect(parseRetryHintMs('999999', now)).toBe(86_400_000);
    expect(parseRetryHintMs('soon', now)).toBeUndefined();
  });
});

describe('raw destinations', () => {
  it('keeps the destination raw and re-attaches its query, without the token and config keys', () => {
    const target = splitRawTarget(
      '/v2/enqueue/q/https://127.0.0.1:4000/a//b?x=1&qstash_token=t&upstash-retries=2&Upstash-Keep=1&y',
      '/v2/enqueue/q/',
      'Upstash-',
    );
    expect(target.destination).toBe('https://127.0.0.1:4000/a//b?x=1&Upstash-Keep=1&y');
    expect([...target.queryConfig]).toEqual([['upstash-retries', '2']]);
    expect(splitRawTarget('/v2/publish/https:/h/a', '/v2/publish/', 'Upstash-').destination).toBe('https://h/a');
  });

  it('classifies URLs and URL Group names', () => {
    expect(parseDestination('http://127.0.0.1:1/x')).toEqual({ kind: 'url', url: 'http://127.0.0.1:1/x' });
    expect(parseDestination('my-group.v2')).toEqual({ kind: 'group', name: 'my-group.v2' });
    expect(() => parseDestination('ftp://x')).toThrow(/invalid scheme/);
    expect(() => parseDestination('a/b')).toThrow(/invalid scheme/);
  });

  it('allows only loopback hosts by default', () => {
    for (const url of [
      'http://127.0.0.1:1/',
      'http://127.5.6.7/',
      'http://localhost:3000/',
      'http://[::1]:80/',
      'http://api.localhost/',
    ])
      expect(isLoopbackUrl(url), url).toBe(true);
    for (const url of ['http://10.0.0.1/', 'https://example.com/', 'http://128.0.0.1/', 'http://[::2]/', 'not a url'])
      expect(isLoopbackUrl(url), url).toBe(false);
  });
});

describe('timer queue', () => {
  it('runs timers in due order on one setTimeout, and faster under a time scale', async () => {
    const clock = new ScaledClock(10);
    const timers = new TimerQueue(clock);
    const order: number[] = [];
    const started = Date.now();
    timers.after(300, () => order.push(3));
    timers.after(100, () => order.push(1));
    timers.after(200, () => order.push(2));
    const cancelled = timers.after(150, () => order.push(99));
    cancelled.cancel();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(order).toEqual([1, 2, 3]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(30);
    timers.close();
  });

  it('re-arms when the time scale changes', async () => {
    const clock = new ScaledClock(1);
    const timers = new TimerQueue(clock);
    let fired = false;
    timers.after(10_000, () => (fired = true));
    clock.setScale(1000);
    timers.rearm();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toBe(true);
    timers.close();
  });
});

describe('log store', () => {
  function facts(id: string): MessageFacts {
    return {
      messageId: id,
      url: 'http://127.0.0.1:1/x',
      method: 'POST',
      header: {},
      body: '',
      maxRetries: 0,
      timeout: 1000,
      labels: [],
      ...urlParts('http://127.0.0.1:1/x'),
    };
  }

  it('pages strictly below the cursor, also when new entries arrive or retention dropped the rest', () => {
    let now = 1000;
    const store = new LogStore(5, () => now);
    for (let i = 0; i < 8; i++) {
      store.append('CREATED', facts(`m${i}`));
      if (i % 3 === 0) now++;
    }
    const first = store.page({ filter: {}, count: 2, visibleUntil: Number.POSITIVE_INFINITY });
    expect(first.entries.map((entry) => entry.message.messageId)).toEqual(['m7', 'm6']);
    store.append('CREATED', facts('m8'));
    const second = store.page({
      filter: {},
      count: 2,
      beforeSeq: first.nextBeforeSeq,
      visibleUntil: Number.POSITIVE_INFINITY,
    });
    // m3 was dropped by retention (5 kept) when m8 arrived: m5 and m4 are the last page.
    expect(second.entries.map((entry) => entry.message.messageId)).toEqual(['m5', 'm4']);
    expect(second.nextBeforeSeq).toBeUndefined();
    expect(store.groundTruth()).toMatchObject({ total: 9, retained: 5, dropped: 4 });

    const fresh = store.page({ filter: {}, count: 2, visibleUntil: Number.POSITIVE_INFINITY });
    for (let i = 9; i < 15; i++) store.append('CREATED', facts(`m${i}`));
    // Everything below the cursor is gone now: an empty last page, not a restart from the top.
    const gone = store.page({
      filter: {},
      count: 2,
      beforeSeq: fresh.nextBeforeSeq,
      visibleUntil: Number.POSITIVE_INFINITY,
    });
    expect(gone).toEqual({ entries: [] });
  });
});
