// Parts of the logs collector on their own, and the collector against peers for cases the
// emulator cannot produce: the `CANCELED` spelling, unknown states, two identical entries,
// a service that serves the same page under a new cursor or empty pages with a cursor, and a
// quiet log whose entries age out. Those use a small scripted log server on 127.0.0.1 (a real
// HTTP peer with the documented paging rules); series caps and opt-in labels use the emulator.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../../src/api/delivery.js';
import { LogsCollector } from '../../../src/collectors/logs/index.js';
import { DailyMessages } from '../../../src/collectors/logs/daily.js';
import { DedupWindow, eventKey } from '../../../src/collectors/walk/dedup.js';
import { CycleClock } from '../../../src/collectors/walk/cycle-clock.js';
import { HistogramFamily } from '../../../src/collectors/walk/families.js';
import { AdaptiveOverlap, CLEAN_SLICES_TO_SHRINK, MAX_GROWN_OVERLAP_MS } from '../../../src/collectors/walk/overlap.js';
import { errorReasonOf, safeUrlOf } from '../../../src/collectors/logs/labels.js';
import { FAMILY_CATALOGUE } from '../../../src/collectors/family-catalogue.js';
import { MessageTracker } from '../../../src/collectors/logs/tracker.js';
import { SelfMetrics } from '../../../src/metrics/self.js';
import { upstreamIdentity } from '../../../src/state/index.js';
import { startDestination } from '../../support/emulator-helpers.js';
import {
  captureLogger,
  declaredFamilies,
  familiesDeclaredAs,
  parseExposition,
  pollContext,
  sleep,
  valueOf,
  type Family,
} from '../../support/exporter-e2e-helpers.js';
import {
  addUrlGroup,
  differences,
  EVENTS,
  exportedEventSeries,
  familiesOfCollector,
  mixedTraffic,
  pollInBackground,
  publish,
  settle,
  startCollector,
  startWorld,
  sumOf,
  TEST_SETTINGS,
  truthEventSeries,
  pollUntil,
  type World,
} from '../../support/logs-helpers.js';

describe('de-duplication window', () => {
  it('counts identical entries of one walk each, and none of them again in a later walk', () => {
    const window = new DedupWindow();
    const twin = eventKey(1000, 1, 'msg_a', undefined, undefined);
    const other = eventKey(1000, 3, 'msg_a', 500, undefined);
    window.beginWalk();
    expect([window.observe(twin), window.observe(twin), window.observe(other)]).toEqual([true, true, true]);
    window.beginWalk();
    expect([window.observe(other), window.observe(twin), window.observe(twin)]).toEqual([false, false, false]);
    // A third twin appearing later (late write) is new.
    window.beginWalk();
    expect([window.observe(twin), window.observe(twin), window.observe(twin)]).toEqual([false, false, true]);
    expect(window.countedTimes(twin)).toBe(3);

    const restored = new DedupWindow();
    restored.restore(window.export());
    restored.beginWalk();
    expect([restored.observe(twin), restored.observe(twin), restored.observe(twin), restored.observe(other)]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    restored.prune(1001);
    expect(restored.size).toBe(0);
  });

  it('gives entries and their text keys the same identities, also for a message with many entries, through pruning and a checkpoint', () => {
    const window = new DedupWindow();
    type Fields = [number, number, string, number | undefined, number | undefined];
    // 40 transitions of one message (more than a message keeps in its flat array) and a few of others.
    const busy: Fields[] = Array.from({ length: 40 }, (_, i) => [
      1000 + i,
      i % 8,
      'busy',
      i % 3 === 0 ? 500 : undefined,
      i % 5 === 0 ? 9000 + i : undefined,
    ]);
    const others: Fields[] = [
      [1000, 0, 'calm', undefined, undefined],
      [1001, 4, 'calm', 200, undefined],
      [1039, 2, 'late', undefined, 5000],
    ];
    const all = [...busy, ...others];
    window.beginWalk();
    expect(all.map((fields) => window.observeEvent(...fields))).toEqual(all.map(() => true));
    expect(window.size).toBe(43);
    // A twin of the 40th transition in the same walk (beyond the flat array) is counted too.
    expect(window.observeEvent(...busy[39]!)).toBe(true);
    window.beginWalk();
    expect(all.map((fields) => window.observeEvent(...fields))).toEqual(all.map(() => false));
    window.beginWalk();
    expect([window.observe(eventKey(...busy[7]!)), window.observe(eventKey(...others[1]!))]).toEqual([false, false]);
    expect(window.countedTimes(eventKey(...busy[39]!))).toBe(2);
    expect(window.countedTimes(eventKey(1003, 3, 'busy', 500, undefined))).toBe(1);
    expect(window.countedTimes(eventKey(1003, 3, 'busy', undefined, undefined))).toBe(0);

    const restored = new DedupWindow();
    restored.restore(window.export());
    expect(restored.size).toBe(43);
    restored.beginWalk();
    expect(all.map((fields) => restored.observeEvent(...fields))).toEqual(all.map(() => false));
    // Counted twice before: its second occurrence is known, a third one is a new twin.
    expect([restored.observeEvent(...busy[39]!), restored.observeEvent(...busy[39]!)]).toEqual([false, true]);
    restored.prune(1030);
    expect(restored.size).toBe(11);
    restored.beginWalk();
    expect(restored.observeEvent(...busy[35]!)).toBe(false);
    expect(restored.observeEvent(...busy[20]!)).toBe(true);
    restored.prune(2000);
    expect(restored.size).toBe(0);
  });

  it('tells transitions of one message apart by status and next delivery time', () => {
    expect(eventKey(5, 3, 'm', 500, undefined)).not.toBe(eventKey(5, 3, 'm', 502, undefined));
    expect(eventKey(5, 2, 'm', undefined, 100)).not.toBe(eventKey(5, 2, 'm', undefined, 200));
    expect(eventKey(5, 2, 'm', undefined, undefined)).not.toBe(eventKey(6, 2, 'm', undefined, undefined));
  });
});

describe('labels, tracker, daily count, histograms', () => {
  it('classifies delivery errors and strips secrets from the opt-in URL', () => {
    expect(errorReasonOf(404, 'destination answered HTTP 404')).toBe(0);
    expect(errorReasonOf(503, undefined)).toBe(1);
    expect(errorReasonOf(undefined, 'timeout: no response within 1000ms')).toBe(2);
    expect(errorReasonOf(undefined, 'connection failed: ECONNREFUSED')).toBe(3);
    expect(errorReasonOf(undefined, 'request failed: something odd')).toBe(4);
    expect(errorReasonOf(302, undefined)).toBe(4);
    expect(safeUrlOf('https://user:pass@api.example.com:8443/hook/a?token=secret#frag')).toBe(
      'https://api.example.com:8443/hook/a',
    );
    expect(safeUrlOf('not a url')).toBe('');
  });

  it('tracks messages to their final state, observes only whole lives, evicts the oldest beyond capacity', async () => {
    const registry = new Registry();
    const tracker = new MessageTracker({ registry, capacity: 3, seriesLimit: 100 });
    // Newest first, as a walk reads them: the final state comes before the older entries.
    tracker.observe('m1', 4, 3000, 'q', 'h:1'); // DELIVERED
    tracker.observe('m1', 1, 2000, 'q', 'h:1'); // ACTIVE
    tracker.observe('m1', 3, 1500, 'q', 'h:1'); // ERROR
    tracker.observe('m1', 1, 1200, 'q', 'h:1'); // ACTIVE
    tracker.observe('m1', 0, 1000, 'q', 'h:1'); // CREATED
    tracker.observe('m2', 5, 3000, 'q', 'h:1'); // FAILED, CREATED never seen
    expect(tracker.inFlight).toBe(0);
    expect(tracker.finishSlice()).toBe(1);
    tracker.observe('m1', 1, 3500, 'q', 'h:1'); // a late entry of a finished message
    for (const id of ['a', 'b', 'c', 'd']) tracker.observe(id, 0, 4000, 'q', 'h:1');
    expect(tracker.size).toBe(3);
    expect(tracker.evictions).toBe(1);
    tracker.durations.publish();
    tracker.attempts.publish();
    const families = parseExposition(await registry.metrics());
    expect(
      valueOf(families, 'upstash_qstash_message_duration_seconds', {
        outcome: 'delivered',
        queue: 'q',
        destination: 'h:1',
        le: '2.5',
      }),
    ).toBe(1);
    expect(
      valueOf(families, 'upstash_qstash_message_duration_seconds', {
        outcome: 'delivered',
        queue: 'q',
        destination: 'h:1',
        le: '1',
      }),
    ).toBe(0);
    expect(
      valueOf(families, 'upstash_qstash_message_attempts', {
        outcome: 'delivered',
        queue: 'q',
        destination: 'h:1',
        le: '2',
      }),
    ).toBe(1);
    expect(
      valueOf(families, 'upstash_qstash_message_attempts', {
        outcome: 'delivered',
        queue: 'q',
        destination: 'h:1',
        le: '1',
      }),
    ).toBe(0);
    expect(
      valueOf(families, 'upstash_qstash_message_duration_seconds', {
        outcome: 'failed',
        queue: 'q',
        destination: 'h:1',
        le: '+Inf',
      }),
    ).toBe(0);
  });

  it('remembers the newest 10,000 finished messages, oldest forgotten first, across a restore', () => {
    const tracker = new MessageTracker({ registry: new Registry(), capacity: 100, seriesLimit: 100 });
    const finish = (id: string): void => {
      tracker.observe(id, 4, 1000, 'q', 'h:1'); // DELIVERED
      tracker.finishSlice();
    };
    for (let i = 0; i < 10_000; i++) finish(`m${i}`);
    finish('m0'); // a late final entry of a finished message: still remembered, nothing moves
    expect(tracker.export().finished.slice(0, 2)).toEqual(['m0', 'm1']);
    finish('m10000');
    const finished = tracker.export().finished;
    expect(finished).toHaveLength(10_000);
    expect(finished[0]).toBe('m1');
    expect(finished.at(-1)).toBe('m10000');
    const restored = new MessageTracker({ registry: new Registry(), capacity: 100, seriesLimit: 100 });
    restored.restore({ messages: [], finished: ['m-old', ...finished] });
    expect(restored.export().finished).toEqual(finished);
    restored.observe('m-new', 4, 1000, 'q', 'h:1');
    restored.finishSlice();
    expect(restored.export().finished).toEqual([...finished.slice(1), 'm-new']);
    restored.observe('m1', 0, 900, 'q', 'h:1'); // forgotten: a new life
    restored.observe('m2', 0, 900, 'q', 'h:1'); // remembered: ignored
    expect(restored.size).toBe(1);
  });

  it('restores histogram buckets exactly and refuses other bounds', () => {
    const registry = new Registry();
    const family = new HistogramFamily({
      name: 'upstash_test_seconds',
      help: 'test',
      labelNames: ['k'],
      buckets: [1, 5],
      registry,
    });
    const series = family.series({ k: 'v' });
    for (const value of [0.5, 3, 3, 9]) family.observe(series, value);
    const saved = family.export();
    expect(saved.series[0]).toEqual({
      labels: ['v'],
      counts: [1, 2, 1],
      sum: 15.5,
      count: 4,
      created: expect.any(Number),
    });
    const other = new HistogramFamily({
      name: 'upstash_test_seconds',
      help: 'test',
      labelNames: ['k'],
      buckets: [1, 5],
      registry: new Registry(),
    });
    expect(other.restore(saved)).toBe(true);
    expect(other.export()).toEqual(saved);
    const rebucketed = new HistogramFamily({
      name: 'upstash_test_seconds',
      help: 'test',
      labelNames: ['k'],
      buckets: [1, 10],
      registry: new Registry(),
    });
    expect(rebucketed.restore(saved)).toBe(false);
  });

  it('counts CREATED entries of the current UTC day and reads 0 after midnight', () => {
    const daily = new DailyMessages();
    const day = Date.UTC(2026, 10, 21);
    daily.observeCreated(day + 1000);
    daily.observeCreated(day + 2000);
    daily.observeCreated(day - 1000); // yesterday, read after today's (newest first)
    expect(daily.valueAt(day + 5000)).toBe(2);
    expect(daily.valueAt(day + 86_400_000)).toBe(0);
    daily.observeCreated(day + 86_400_000 + 10);
    expect(daily.valueAt(day + 86_400_000 + 20)).toBe(1);
  });
});

// ---- a scripted log server ------------------------------------------------------------------

type Entry = Record<string, unknown> & { time: number; messageId: string };

interface ScriptedLogs {
  url: string;
  entries: Entry[];
  /** Called for every page; may change the answer. */
  tamper?: (page: { cursor?: string; logs: Entry[] }, request: number) => { cursor?: string; logs: Entry[] };
  requests: number;
  close(): Promise<void>;
}

/** Newest first, inclusive fromDate/toDate, `count` at most 100, the cursor is the next index. */
async function startScriptedLogs(): Promise<ScriptedLogs> {
  const state: ScriptedLogs = { url: '', entries: [], requests: 0, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://logs');
    const from = Number(url.searchParams.get('fromDate') ?? 0);
    const to = Number(url.searchParams.get('toDate') ?? Number.MAX_SAFE_INTEGER);
    const count = Math.min(100, Number(url.searchParams.get('count') ?? 100));
    const filter = url.searchParams.get('state');
    const matching = state.entries
      .filter((e) => e.time >= from && e.time <= to && (filter === null || e.state === undefined || e.state === filter))
      .sort((a, b) => b.time - a.time);
    const start = Number(url.searchParams.get('cursor') ?? 0);
    let page: { cursor?: string; logs: Entry[] } = { logs: matching.slice(start, start + count) };
    if (start + count < matching.length) page.cursor = String(start + count);
    state.requests += 1;
    if (state.tamper) page = state.tamper(page, state.requests);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(page));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function collectorFor(
  logs: ScriptedLogs,
  settings: Partial<typeof TEST_SETTINGS> = {},
): { collector: LogsCollector; log: ReturnType<typeof captureLogger> } {
  const client = new DeliveryClient({ baseUrl: logs.url, token: 'scripted', retry: { maxRetries: 0 } });
  const log = captureLogger('debug');
  const collector = new LogsCollector({
    source: client,
    settings: { ...TEST_SETTINGS, ingestionDelayMs: 0, overlapMs: 0, ...settings },
    stateFile: null,
    upstream: upstreamIdentity(logs.url, 'scripted'),
    logger: log.logger,
  });
  cleanups.push(() => client.close());
  return { collector, log };
}

async function families(collector: LogsCollector): Promise<Map<string, Family>> {
  return parseExposition(await collector.registry.metrics());
}

function entry(time: number, messageId: string, state: string | undefined, extra: Record<string, unknown> = {}): Entry {
  return { time, messageId, ...(state === undefined ? {} : { state }), url: 'http://dest.example:8080/x', ...extra };
}

describe('logs collector against a scripted log server', () => {
  it('normalises CANCELED, counts an unknown state under its own name and identical entries each', async () => {
    const logs = await startScriptedLogs();
    cleanups.push(() => logs.close());
    const { collector } = collectorFor(logs);
    await collector.poll(pollContext(captureLogger().logger));
    const t = Date.now() + 5;
    logs.entries.push(
      entry(t, 'm1', 'CANCELED'),
      entry(t, 'm2', 'CANCELLED'),
      entry(t, 'm3', 'cancel_requested'),
      entry(t, 'm4', 'PAUSED'),
      entry(t, 'm5', 'ACTIVE'),
      entry(t, 'm5', 'ACTIVE'),
    );
    await sleep(20);
    for (let i = 0; i < 3; i++) await collector.poll(pollContext(captureLogger().logger));
    const f = await families(collector);
    const byState = (state: string): number => sumOf(f, EVENTS, (l) => l.state === state);
    expect(byState('CANCELLED')).toBe(2);
    expect(byState('CANCEL_REQUESTED')).toBe(1);
    expect(byState('PAUSED')).toBe(1);
    expect(byState('ACTIVE')).toBe(2);
    expect(
      valueOf(f, EVENTS, {
        state: 'CANCELED',
        queue: '',
        url_group: '',
        endpoint: '',
        destination: 'dest.example:8080',
      }),
    ).toBeUndefined();
  });

  it('walks again from the last entry read when the same page comes back under a new cursor or a page is empty', async () => {
    const logs = await startScriptedLogs();
    cleanups.push(() => logs.close());
    const { collector, log } = collectorFor(logs);
    await collector.poll(pollContext(log.logger));
    const t = Date.now() + 5;
    for (let i = 0; i < 350; i++) logs.entries.push(entry(t + Math.floor(i / 10), `m${i}`, 'CREATED'));
    let served = 0;
    let previous: { cursor?: string; logs: Entry[] } | undefined;
    logs.tamper = (page) => {
      served += 1;
      // The second page is the first one again with a fresh cursor; the fourth is empty.
      if (served === 2 && previous) return { logs: previous.logs, cursor: 'fresh-cursor-0' };
      if (served === 4) return { logs: [], cursor: '999' };
      previous = page;
      return page;
    };
    await sleep(60);
    for (let i = 0; i < 4; i++) await collector.poll(pollContext(log.logger));
    const f = await families(collector);
    expect(sumOf(f, EVENTS)).toBe(350);
    expect(valueOf(f, 'upstash_exporter_log_duplicates_skipped_total')).toBeGreaterThan(0);
    expect(log.text()).toContain('the service returned the same page twice');
    expect(log.text()).toContain('the service returned an empty page with a cursor');
  });

  it('counts a log served oldest first exactly and says the order is broken', async () => {
    const logs = await startScriptedLogs();
    cleanups.push(() => logs.close());
    const { collector, log } = collectorFor(logs);
    await collector.poll(pollContext(log.logger));
    const t = Date.now() + 5;
    for (let i = 0; i < 250; i++) logs.entries.push(entry(t + Math.floor(i / 10), `m${i}`, 'ACTIVE'));
    await sleep(40);
    // From now on the pages come oldest first; the cursor still covers the whole range.
    const oldestFirst = [...logs.entries].sort((a, b) => a.time - b.time);
    const first = logs.requests + 1;
    logs.tamper = (_page, request) => {
      const start = (request - first) * 100;
      const logsOfPage = oldestFirst.slice(start, start + 100);
      return start + 100 < oldestFirst.length
        ? { logs: logsOfPage, cursor: String(start + 100) }
        : { logs: logsOfPage };
    };
    await collector.poll(pollContext(log.logger));
    const f = await families(collector);
    expect(sumOf(f, EVENTS)).toBe(250);
    expect(log.text()).toContain('not ordered newest first');
  });

  it('does not report a gap when the entries of a quiet log age out', async () => {
    const logs = await startScriptedLogs();
    cleanups.push(() => logs.close());
    const { collector } = collectorFor(logs);
    await collector.poll(pollContext(captureLogger().logger));
    logs.entries.push(entry(Date.now() + 2, 'old', 'CREATED'));
    await sleep(10);
    await collector.poll(pollContext(captureLogger().logger));
    // Retention by age: the only entry is gone; nothing new for a while, then new traffic.
    logs.entries.length = 0;
    await sleep(10);
    await collector.poll(pollContext(captureLogger().logger));
    logs.entries.push(entry(Date.now() + 2, 'new', 'CREATED'));
    await sleep(10);
    await collector.poll(pollContext(captureLogger().logger));
    const f = await families(collector);
    expect(sumOf(f, EVENTS)).toBe(2);
    expect(valueOf(f, 'upstash_exporter_log_gaps_total')).toBe(0);
  });
});

// ---- series cap and opt-in labels, against the emulator ----------------------------------------

describe('overlap and cycle time', () => {
  it('grows the overlap while late entries appear and halves it back after clean slices', () => {
    const log = captureLogger('info');
    const overlap = new AdaptiveOverlap({ configuredMs: 5_000, ingestionDelayMs: 15_000, logger: log.logger });
    overlap.afterSlice(0);
    expect(overlap.currentMs).toBe(5_000);
    for (const expected of [10_000, 20_000, 40_000, MAX_GROWN_OVERLAP_MS, MAX_GROWN_OVERLAP_MS]) {
      overlap.afterSlice(3);
      expect(overlap.currentMs).toBe(expected);
    }
    for (let i = 1; i < CLEAN_SLICES_TO_SHRINK; i++) overlap.afterSlice(0);
    expect(overlap.currentMs).toBe(MAX_GROWN_OVERLAP_MS);
    overlap.afterSlice(0);
    expect(overlap.currentMs).toBe(30_000);
    for (let i = 0; i < 3 * CLEAN_SLICES_TO_SHRINK; i++) overlap.afterSlice(0);
    expect(overlap.currentMs).toBe(5_000);
    expect(log.text()).toContain('re-reading a longer overlap');
    expect(log.text()).toContain('re-reading a shorter overlap again');
    // Configured at 0, it still grows from a second when late entries show up.
    const none = new AdaptiveOverlap({ configuredMs: 0, ingestionDelayMs: 15_000, logger: log.logger });
    none.afterSlice(1);
    expect(none.currentMs).toBe(1_000);
  });

  it('stops a cycle before a request that could not finish before the next poll, but always sends its first', () => {
    const clock = new CycleClock();
    clock.begin(0, 0, 10_000);
    expect(clock.allows(9_900, 5_000)).toBe(true); // the first request of a cycle always goes
    clock.requestDone(400, 300); // 100 ms once sent
    expect(clock.allows(10_000 - 100, 0)).toBe(true);
    expect(clock.allows(10_000 - 99, 0)).toBe(false);
    expect(clock.allows(9_250, 700)).toBe(false); // the wait for the rate-limit window counts
    clock.begin(20_000, 0, null);
    clock.requestDone(100, 0);
    expect(clock.allows(1e12, 1e6)).toBe(true);
  });

  it('judges the rate limit the bottleneck from what the upstream says, never from durations', () => {
    const clock = new CycleClock();
    const sent = (requests: number): void => {
      for (let i = 0; i < requests; i++) clock.requestDone(2_000, 0);
    };
    clock.begin(0, 0, null);
    // Cycles 15 s apart, 5 requests a second allowed: 75 requests between two cycles.
    clock.begin(15_000, 3, null);
    // 13.5 s walking, 68 pages (the whole allowed rate) for 6,750 new entries over 15 s of log time.
    sent(68);
    clock.page(6_750, 6_750);
    const limit = { held: 3, allowedPerSecond: 5 };
    expect(clock.heldBack(28_500, limit)).toBe(true);
    expect(clock.rateLimitBound(28_500, limit, 15_000, 5_000)).toBe(true);
    // The same cycle where a busy CPU or a slow upstream let only 20 requests out in 13.5 s,
    // however long each took: the limit does not hold it back.
    clock.begin(30_000, 3, null);
    sent(20);
    clock.page(2_000, 2_000);
    expect(clock.heldBack(43_500, limit)).toBe(false);
    expect(clock.rateLimitBound(43_500, limit, 15_000, 5_000)).toBe(false);
    // ...unless the upstream held a request back meanwhile (a 429, a window announced spent).
    expect(clock.heldBack(43_500, { held: 4, allowedPerSecond: 5 })).toBe(true);
    // Half the load at the full rate: 34 pages in 6.75 s; with the 5 s overlap about 45, under 80% of 75.
    clock.begin(45_000, 4, null);
    sent(34);
    clock.page(3_375, 3_375);
    expect(clock.rateLimitBound(51_750, { held: 4, allowedPerSecond: 5 }, 15_000, 5_000)).toBe(false);
    expect(clock.rateLimitBound(51_750, { held: 4, allowedPerSecond: 5 }, 15_000, 60_000)).toBe(true);
    // No limit announced, no request held back: never bound.
    expect(clock.rateLimitBound(51_750, { held: 4, allowedPerSecond: undefined }, 15_000, 60_000)).toBe(false);
  });
});

describe('late entries and the next poll against the emulator', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('counts entries visible after the ingestion delay once, reports them as late and re-reads a longer overlap', async () => {
    // Entries show up 300 ms after their time: 200 ms after the ingestion delay, inside the overlap.
    world = await startWorld({ logVisibilityDelayMs: 300 });
    const under = startCollector(world, { ingestionDelayMs: 100, overlapMs: 400 });
    cleanups.push(() => under.close());
    await under.collector.poll(pollContext(under.log.logger));
    const background = pollInBackground(under);
    await mixedTraffic(world);
    const truth = await settle(world.emu);
    await background.stop();
    await pollUntil(under, Date.now() + 1_000);
    const f = await familiesOfCollector(under.collector);
    expect(differences(exportedEventSeries(f), truthEventSeries(truth))).toEqual([]);
    expect(valueOf(f, 'upstash_exporter_log_late_events_total')).toBeGreaterThan(0);
    expect(valueOf(f, 'upstash_exporter_log_late_events_total')).toBeLessThanOrEqual(truth.total);
    expect(under.log.text()).toContain('re-reading a longer overlap');
  });

  it('stops a walk before the next poll is due and finishes it in the following polls, exactly', async () => {
    // Pages of 100 (the OpenAPI's cap), so 1,800 entries take 18 or more pages.
    world = await startWorld({ latencyMs: 40, faultScope: ['logs'], maxPageSize: 100 });
    const under = startCollector(world, { maxPagesPerCycle: 1_000 });
    cleanups.push(() => under.close());
    let pollsDue = 0;
    // One chain: 18+ pages of 40 ms (720 ms or more) cannot fit in one 400 ms poll. With parallel
    // chains they can fit in one or two, depending on the machine's load.
    const collector = new LogsCollector({
      source: under.client,
      settings: { ...TEST_SETTINGS, maxPagesPerCycle: 1_000, maxParallelSlices: 1 },
      stateFile: null,
      upstream: 'deadline',
      logger: under.log.logger,
      // The next poll is always 400 ms away.
      nextPollAt: (now) => {
        pollsDue += 1;
        return now + 400;
      },
    });
    await collector.poll(pollContext(under.log.logger));
    const group = Array.from({ length: 100 }, (_, i) => ({ url: `${world!.ok.url}/fan/${i}` }));
    await addUrlGroup(world.emu, 'fan', group);
    for (let i = 0; i < 6; i++) await publish(world.emu, 'fan');
    const truth = await settle(world.emu);
    const until = Date.now();
    await sleep(200);
    const durations: number[] = [];
    const pagesBefore = under.requests.length;
    for (let i = 0; i < 40 && collector.position.watermark < until; i++) {
      const started = Date.now();
      await collector.poll(pollContext(under.log.logger));
      durations.push(Date.now() - started);
    }
    const f = parseExposition(await collector.registry.metrics());
    expect(sumOf(f, EVENTS)).toBe(truth.total);
    // 1,800 entries (18+ pages of 40 ms) took more than one poll, none much longer than its
    // 400 ms: a poll stops before a request its smoothed request time says would end after the
    // next poll is due, so it ends at most the difference between one request's real and
    // smoothed time late (polls of 378 to 399 ms measured on a quiet machine; a walk that ignored
    // the deadline would read all 18+ pages, 720 ms or more, in one poll).
    expect(under.requests.length - pagesBefore).toBeGreaterThanOrEqual(18);
    expect(durations.length).toBeGreaterThan(1);
    expect(Math.max(...durations)).toBeLessThan(400 + 100);
    expect(pollsDue).toBe(durations.length + 1);
  });
});

describe('series cap and opt-in labels against the emulator', () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('folds label sets beyond the cap into __overflow__ (state kept) and counts what was folded', async () => {
    world = await startWorld();
    const extra = await Promise.all([startDestination(), startDestination(), startDestination()]);
    cleanups.push(async () => {
      for (const d of extra) await d.close();
    });
    const self = new SelfMetrics({ version: 'test', processMetrics: false });
    // Room for two destinations' 8 states each.
    const under = startCollector(world, { seriesLimit: 16 });
    cleanups.push(() => under.close());
    const collector = new LogsCollector({
      source: under.client,
      settings: { ...TEST_SETTINGS, seriesLimit: 16 },
      stateFile: null,
      upstream: 'test',
      dropped: self.seriesDropped,
      logger: under.log.logger,
    });
    await collector.poll(pollContext(under.log.logger));
    for (const d of extra) {
      await publish(world.emu, `${d.url}/a`);
      await publish(world.emu, `${d.url}/b`);
    }
    const truth = await settle(world.emu);
    await pollUntil({ ...under, collector }, Date.now());
    const f = await families(collector);
    expect(sumOf(f, EVENTS)).toBe(truth.total);
    const overflow = (f.get(EVENTS)?.samples ?? []).filter((s) => s.labels.destination === '__overflow__');
    expect(overflow.map((s) => s.labels.state).sort()).toEqual([
      'ACTIVE',
      'CANCELLED',
      'CANCEL_REQUESTED',
      'CREATED',
      'DELIVERED',
      'ERROR',
      'FAILED',
      'RETRY',
    ]);
    expect(overflow.every((s) => s.labels.queue === '__overflow__')).toBe(true);
    const folded = overflow.reduce((sum, s) => sum + s.value, 0);
    expect(folded).toBe(6); // one destination of three: 2 messages x CREATED, ACTIVE, DELIVERED
    expect(new Set((f.get(EVENTS)?.samples ?? []).map((s) => s.labels.destination)).size).toBe(3);
    const selfFamilies = parseExposition(await self.registry.metrics());
    expect(valueOf(selfFamilies, 'upstash_exporter_series_dropped_total', { metric: EVENTS })).toBe(6);
  });

  it('keeps counting when the state file cannot be written, and says so once', async () => {
    world = await startWorld();
    const under = startCollector(world, {}, join(world.stateDir, 'no-such-dir', 'state.json'));
    cleanups.push(() => under.close());
    await under.collector.poll(pollContext(under.log.logger));
    await publish(world.emu, `${world.ok.url}/a`);
    await publish(world.emu, `${world.ok.url}/b`);
    const truth = await settle(world.emu);
    await pollUntil(under, Date.now());
    const f = await families(under.collector);
    expect(sumOf(f, EVENTS)).toBe(truth.total);
    expect(valueOf(f, 'upstash_exporter_state_checkpoints_total', { result: 'success' })).toBe(0);
    expect(valueOf(f, 'upstash_exporter_state_checkpoints_total', { result: 'error' })).toBeGreaterThan(1);
    expect(under.log.lines().filter((line) => line.level === 'error')).toHaveLength(1);
  });

  it('adds opt-in labels: schedule id, first label, URL without query', async () => {
    world = await startWorld();
    const under = startCollector(world, { labels: ['schedule_id', 'label', 'url'] });
    cleanups.push(() => under.close());
    await under.collector.poll(pollContext(under.log.logger));
    await publish(world.emu, `${world.ok.url}/hook?token=do-not-export`, { labels: ['billing', 'eu'] });
    const truth = await settle(world.emu);
    await pollUntil(under, Date.now());
    const f = await families(under.collector);
    const samples = (f.get(EVENTS)?.samples ?? []).filter((s) => s.value > 0);
    expect(samples.reduce((sum, s) => sum + s.value, 0)).toBe(truth.total);
    for (const sample of samples) {
      expect(sample.labels).toMatchObject({ label: 'billing', url: `${world.ok.url}/hook`, schedule_id: '' });
    }
    expect(JSON.stringify([...exportedEventSeries(f).keys()])).not.toContain('do-not-export');
    expect(await under.collector.registry.metrics()).not.toContain('do-not-export');
  });
});

// ---- docs/metrics.md -----------------------------------------------------------------------------

describe('the logs families (docs/metrics.md is written from them)', () => {
  it('the collector registers exactly the families it declares, with their types and labels', () => {
    const registry = new LogsCollector({
      source: { logsPage: () => Promise.reject(new Error('unused')) },
      settings: TEST_SETTINGS,
      stateFile: null,
      upstream: 'docs',
      logger: captureLogger().logger,
    }).registry;
    expect(FAMILY_CATALOGUE.logs.length).toBe(24);
    expect(declaredFamilies(registry)).toEqual(familiesDeclaredAs(FAMILY_CATALOGUE.logs));
  });
});
