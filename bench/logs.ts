// Benchmarks of the logs collector: run once, they report figures (no assertions).
//
//   1. requests per cycle in steady traffic, against the minimum ceil(new events / 100);
//   2. events counted per second (parse + validate + count, and count alone) against plain
//      JSON.parse of the same pages;
//   3. resident memory of the exporter's process after counting one million events (the default
//      logs settings and a state file, as the exporter runs by default).
//
// The log pages come from the emulator's own log store and paging code (src/emulator/delivery/log-store,
// routes/logs), fed synthetically and served over real HTTP by a child process, so the
// collector's process holds only what the collector holds. The collector runs on a simulated
// clock: hours of 15 s cycles take seconds.
//
// Run: `npx tsc -p bench/tsconfig.json && node --expose-gc tmp/bench/bench/logs.js [memory|speed|cycles]`
// (all three without an argument; --expose-gc makes the memory figure a post-GC one).
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { DeliveryClient, LOG_BODY_KEYS } from '../src/api/delivery.js';
import { skimWhole } from '../src/api/json-skim.js';
import { readLogsPage } from '../src/api/log-page-reader.js';
import { parseLogsPage } from '../src/api/schemas/logs.js';
import { LogCounter } from '../src/collectors/logs/counter.js';
import { PageTally } from '../src/collectors/walk/page-tally.js';
import { LogsCollector, type LogsSettings } from '../src/collectors/logs/index.js';
import { DEFAULT_PAGE_SIZE } from '../src/collectors/walk/page-size.js';
import { settingByKey } from '../src/config/settings.js';
import {
  LogStore,
  toLogEntryJson,
  urlParts,
  type LogState,
  type MessageFacts,
} from '../src/emulator/delivery/log-store.js';
import { encodeCursor, parseLogQuery } from '../src/emulator/delivery/routes/logs.js';
import { createLogger } from '../src/logging/index.js';
import { Registry } from 'prom-client';
import { collectGarbage, sleep } from './measure.js';

const PAGE = 100;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

// ---- synthetic traffic --------------------------------------------------------------------------

interface SyntheticEvent {
  time: number;
  state: LogState;
  facts: MessageFacts;
}

function facts(i: number): MessageFacts {
  const url = `https://app${i % 7}.example.com/api/hook/${i % 13}`;
  return {
    messageId: `msg_${(1e12 + i * 7919).toString(36)}${i.toString(36)}`,
    url,
    method: 'POST',
    header: { 'Content-Type': ['application/json'], 'Upstash-Forward-Trace': [`t-${i}`] },
    body: Buffer.from(`{"order":${i},"items":[1,2,3]}`).toString('base64'),
    ...(i % 5 === 0 ? { queueName: 'orders' } : {}),
    maxRetries: 3,
    timeout: 30_000,
    labels: i % 3 === 0 ? ['billing'] : [],
    ...urlParts(url),
  };
}

/** `rate` events per second from `start` for `seconds`: messages CREATED, ACTIVE, then DELIVERED (1 in 10 with an ERROR, RETRY and a second attempt). */
function traffic(rate: number, start: number, seconds: number): SyntheticEvent[] {
  const events: SyntheticEvent[] = [];
  const total = Math.floor(rate * seconds);
  for (let i = 0; events.length < total; i++) {
    const f = facts(i);
    const t = start + Math.floor((i * 3 * 1000) / rate);
    events.push({ time: t, state: 'CREATED', facts: f }, { time: t + 2, state: 'ACTIVE', facts: f });
    if (i % 10 === 0) {
      events.push(
        { time: t + 30, state: 'ERROR', facts: f },
        { time: t + 31, state: 'RETRY', facts: f },
        { time: t + 1031, state: 'ACTIVE', facts: f },
      );
      events.push({ time: t + 1060, state: 'DELIVERED', facts: f });
    } else {
      events.push({ time: t + 40, state: 'DELIVERED', facts: f });
    }
  }
  return events.slice(0, total).sort((a, b) => a.time - b.time);
}

/**
 * The log server (child process): the emulator's store and paging rules, everything visible.
 * Its `Date` header tells the harness's simulated time once the harness has sent one (IPC
 * `{ now }`, acknowledged): the walk reads the upstream's now from that header
 * (src/api/upstream-clock.ts), so a simulated clock must move the server's too.
 */
function serveLogs(rate: number, seconds: number): void {
  let simulatedNow: number | null = null;
  process.on('message', (message: { now: number }) => {
    simulatedNow = message.now;
    process.send?.({ now: simulatedNow });
  });
  let appendAt = 0;
  const events = traffic(rate, T0, seconds);
  const store = new LogStore(events.length + 1, () => appendAt);
  for (const event of events) {
    appendAt = event.time;
    store.append(
      event.state,
      event.facts,
      event.state === 'DELIVERED' || event.state === 'ERROR'
        ? { responseStatus: event.state === 'ERROR' ? 500 : 200 }
        : undefined,
    );
  }
  events.length = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://logs');
    const query = parseLogQuery(url.searchParams);
    const page = store.page({
      filter: query.filter,
      count: query.count,
      beforeSeq: query.beforeSeq,
      visibleUntil: Number.MAX_SAFE_INTEGER,
    });
    const body: Record<string, unknown> = { logs: page.entries.map((entry) => toLogEntryJson(entry, false)) };
    if (page.nextBeforeSeq !== undefined) {
      const last = page.entries[page.entries.length - 1]!;
      body.cursor = encodeCursor(last.time, last.seq);
    }
    if (simulatedNow !== null) {
      res.sendDate = false;
      res.setHeader('date', new Date(simulatedNow).toUTCString());
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1', () =>
    process.send?.({ port: (server.address() as AddressInfo).port, events: store.size }),
  );
}

interface LogServer {
  url: string;
  events: number;
  /** Moves the server's clock (its `Date` header) to the harness's simulated time. */
  setNow(now: number): Promise<void>;
  stop(): void;
}

async function startLogServer(rate: number, seconds: number): Promise<LogServer> {
  const child = fork(fileURLToPath(import.meta.url), ['serve', String(rate), String(seconds)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number; events: number }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { port: number; events: number }));
    child.once('exit', (code) => reject(new Error(`log server exited with ${code}`)));
  });
  const setNow = (now: number): Promise<void> =>
    new Promise((resolve) => {
      child.once('message', () => resolve());
      child.send({ now });
    });
  return { url: `http://127.0.0.1:${ready.port}`, events: ready.events, setNow, stop: () => child.kill('SIGKILL') };
}

// ---- the collector on a simulated clock -----------------------------------------------------------

const silent = createLogger({
  level: 'silent',
  format: 'json',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

interface Harness {
  collector: LogsCollector;
  clock: { now: number };
  requests: () => number;
  counted(): Promise<number>;
  close(): Promise<void>;
}

function harness(url: string, settings: LogsSettings, startAt: number, stateFile: string | null = null): Harness {
  let requests = 0;
  const client = new DeliveryClient({
    baseUrl: url,
    token: 'bench',
    onRequest: () => (requests += 1),
    retry: { maxRetries: 0 },
  });
  const clock = { now: startAt };
  const collector = new LogsCollector({
    source: client,
    settings,
    stateFile,
    upstream: 'bench',
    logger: silent,
    now: () => clock.now,
  });
  return {
    collector,
    clock,
    requests: () => requests,
    counted: async () => {
      const json = await collector.registry.getMetricsAsJSON();
      const events = json.find((metric) => metric.name === 'upstash_qstash_message_events_total');
      return (events?.values ?? []).reduce((sum, value) => sum + value.value, 0);
    },
    close: () => client.close(),
  };
}

async function poll(h: Harness): Promise<void> {
  await h.collector.poll({ signal: new AbortController().signal, now: () => h.clock.now, logger: silent });
}

const BASE_SETTINGS: LogsSettings = {
  ingestionDelayMs: 15_000,
  overlapMs: 5_000,
  maxPagesPerCycle: 200,
  labels: [],
  seriesLimit: 2000,
  messageTrackerSize: 100_000,
};

export interface CycleCost {
  ratePerSecond: number;
  ingestionDelayMs: number;
  overlapMs: number;
  cycles: number;
  requestsPerCycle: number;
  minimumPerCycle: number;
  ratio: number;
}

/** Steady traffic, one cycle every `intervalMs`: requests per cycle against ceil(new / page size), the page size the walk asks (the log server honours any). */
export async function measureRequestsPerCycle(
  ratePerSecond: number,
  overrides: Partial<LogsSettings> = {},
  cycles = 20,
  intervalMs = 15_000,
): Promise<CycleCost> {
  const settings = { ...BASE_SETTINGS, ...overrides };
  const warmup = 3;
  const seconds = ((cycles + warmup + 2) * intervalMs + settings.ingestionDelayMs) / 1000;
  const server = await startLogServer(ratePerSecond, seconds);
  const h = harness(server.url, settings, T0);
  try {
    let requests = 0;
    let minimum = 0;
    for (let cycle = 0; cycle < warmup + cycles; cycle++) {
      h.clock.now += intervalMs;
      await server.setNow(h.clock.now);
      const before = h.requests();
      const countedBefore = await h.counted();
      await poll(h);
      if (cycle < warmup) continue;
      requests += h.requests() - before;
      minimum += Math.ceil(((await h.counted()) - countedBefore) / (settings.pageSize ?? DEFAULT_PAGE_SIZE));
    }
    return {
      ratePerSecond,
      ingestionDelayMs: settings.ingestionDelayMs,
      overlapMs: settings.overlapMs,
      cycles,
      requestsPerCycle: requests / cycles,
      minimumPerCycle: minimum / cycles,
      ratio: minimum === 0 ? Number.NaN : requests / minimum,
    };
  } finally {
    await h.close();
    server.stop();
  }
}

export interface CountingSpeed {
  events: number;
  jsonParseEventsPerSecond: number;
  /**
   * What a page costs the exporter after the network, from its bytes: the single-pass reader
   * (log-page-reader.ts) and counting.
   */
  pipelineEventsPerSecond: number;
  /** The general path for contrast: skim, JSON.parse, the page check (parseLogsPage), counting. */
  generalPathEventsPerSecond: number;
  /** Counting parsed pages alone. */
  countEventsPerSecond: number;
  /** Counting speed over JSON.parse speed. */
  countToJsonParse: number;
  /** The pipeline's speed over JSON.parse's of the same pages (already decoded to text: JSON.parse is spared the decoding). */
  pipelineToJsonParse: number;
  generalPathToJsonParse: number;
}

/** `pages` pages of 100 entries of synthetic traffic, as the service would send them (newest first). */
export function syntheticPageTexts(pages: number): string[] {
  const events = traffic(1000, T0, (pages * PAGE) / 1000);
  let seq = 0;
  const texts: string[] = [];
  for (let i = 0; i < events.length; i += PAGE) {
    const logs = events
      .slice(i, i + PAGE)
      .reverse()
      .map((e) =>
        toLogEntryJson(
          {
            seq: ++seq,
            time: e.time,
            visibleAt: e.time,
            state: e.state,
            message: e.facts,
            transition: e.state === 'DELIVERED' ? { responseStatus: 200 } : undefined,
          },
          false,
        ),
      );
    texts.push(JSON.stringify({ cursor: `${logs[logs.length - 1]!.time as number}-${seq}`, logs }));
  }
  return texts;
}

/** Events counted per second against plain JSON.parse of the same pages. */
export function measureCountingSpeed(pages = 200, passes = 5): CountingSpeed {
  const texts = syntheticPageTexts(pages);
  const pagesBytes = texts.map((text) => Buffer.from(text, 'utf8'));
  const total = pages * PAGE;
  const context = { api: 'qstash' as const, endpoint: '/v2/logs', method: 'GET' };
  const time = (run: () => void): number => {
    run(); // warm-up
    const started = process.hrtime.bigint();
    for (let pass = 0; pass < passes; pass++) run();
    return Number(process.hrtime.bigint() - started) / 1e9;
  };
  const freshCounter = (): LogCounter =>
    new LogCounter({ registry: new Registry(), seriesLimit: 2000, optIn: [], trackerCapacity: 100_000 });
  const tally = new PageTally();
  const skim = { skipKeys: LOG_BODY_KEYS, quoteNumberKeys: ['cursor'], maxKeptBytes: 1 << 30, maxTotalBytes: 1 << 30 };

  const parseSeconds = time(() => {
    for (const text of texts) JSON.parse(text);
  });
  const pipelineSeconds = time(() => {
    const counter = freshCounter();
    counter.dedup.beginWalk();
    for (const bytes of pagesBytes) {
      const page = readLogsPage(bytes);
      if (page === null) throw new Error('the single-pass reader left a bench page to the general path');
      tally.reset(Number.POSITIVE_INFINITY);
      counter.countPage(page.logs, -1, 0, tally);
    }
  });
  const generalSeconds = time(() => {
    const counter = freshCounter();
    counter.dedup.beginWalk();
    for (const bytes of pagesBytes) {
      const page = parseLogsPage(JSON.parse(skimWhole(bytes, skim)), context);
      tally.reset(Number.POSITIVE_INFINITY);
      counter.countPage(page.logs, -1, 0, tally);
    }
  });
  const parsed = texts.map((text) => parseLogsPage(JSON.parse(text), context));
  const countSeconds = time(() => {
    const counter = freshCounter();
    counter.dedup.beginWalk();
    for (const page of parsed) {
      tally.reset(Number.POSITIVE_INFINITY);
      counter.countPage(page.logs, -1, 0, tally);
    }
  });
  const rate = (seconds: number): number => Math.round((total * passes) / seconds);
  return {
    events: total,
    jsonParseEventsPerSecond: rate(parseSeconds),
    pipelineEventsPerSecond: rate(pipelineSeconds),
    generalPathEventsPerSecond: rate(generalSeconds),
    countEventsPerSecond: rate(countSeconds),
    countToJsonParse: Number((parseSeconds / countSeconds).toFixed(3)),
    pipelineToJsonParse: Number((parseSeconds / pipelineSeconds).toFixed(3)),
    generalPathToJsonParse: Number((parseSeconds / generalSeconds).toFixed(3)),
  };
}

export interface MemoryFigures {
  events: number;
  counted: number;
  cycles: number;
  pages: number;
  minimumPages: number;
  seconds: number;
  rssBeforeMiB: number;
  /** After GC, when the walk had counted half of the events: with rssAfterMiB, whether RSS is flat. */
  rssHalfMiB: number;
  rssAfterMiB: number;
  /** The most RSS the process ever held (VmHWM), between GCs included. */
  rssPeakMiB: number;
  heapUsedHalfMiB: number;
  heapTotalHalfMiB: number;
  heapUsedAfterMiB: number;
  /** V8's heap (committed) and memory outside it (external, buffers) after GC, MiB. */
  heapTotalAfterMiB: number;
  externalAfterMiB: number;
  /** RSS after GC split by kind (/proc/self/status): anonymous (heaps, malloc) and file-backed (the node binary's pages). */
  rssAnonHalfMiB: number;
  rssAnonAfterMiB: number;
  rssFileAfterMiB: number;
  /** glibc's main heap (`[heap]` in /proc/self/smaps) after GC: where fragmentation shows. */
  mallocHeapAfterMiB: number;
  /** Array buffers (socket chunks, Buffers) at their highest, sampled every 20 ms: what glibc's heap must hold between collections. */
  arrayBuffersPeakMiB: number;
  /** The state file at half way (slices in progress, their window) and at the end. */
  stateFileHalfKiB: number;
  stateFileAfterKiB: number;
}

/**
 * A full GC, then time for V8's background threads to sweep and unmap what it freed (right after
 * gc() RSS still holds pages about to be released: readings varied by 40 MiB), then another.
 */
async function settleMemory(): Promise<void> {
  collectGarbage();
  await sleep(500);
  collectGarbage();
  await sleep(500);
}

/** RssAnon, RssFile and VmHWM of a process (this one by default) in MiB (NaN where /proc is missing). */
export function rssKinds(pid: number | 'self' = 'self'): { anon: number; file: number; peak: number } {
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // not Linux
  }
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    anon: Math.round(kib('RssAnon') / 1024),
    file: Math.round(kib('RssFile') / 1024),
    peak: Math.round(kib('VmHWM') / 1024),
  };
}

/** RSS of glibc's main heap (`[heap]`) of this process, MiB (NaN where /proc is missing). */
function mallocHeapMiB(): number {
  try {
    const smaps = readFileSync('/proc/self/smaps', 'utf8');
    const at = smaps.indexOf('[heap]');
    const rss = at < 0 ? null : /^Rss:\s+(\d+) kB/m.exec(smaps.slice(at));
    return rss ? Math.round(Number(rss[1]) / 1024) : 0;
  } catch {
    return Number.NaN;
  }
}

/**
 * A backlog of `events` counted from a fresh start: memory of the exporter's process after it.
 * The logs settings are the exporter's defaults (parallel slices, page size, pages per cycle),
 * with a state file, as the exporter runs by default: every checkpoint is written.
 */
export async function measureMemoryAfterEvents(events = 1_000_000, ratePerSecond = 1000): Promise<MemoryFigures> {
  const server = await startLogServer(ratePerSecond, events / ratePerSecond);
  const stateDir = mkdtempSync(join(tmpdir(), 'upstash-bench-memory-'));
  const stateFile = join(stateDir, 'state.json');
  const stateKiB = (): number => Math.round((statSync(stateFile, { throwIfNoEntry: false })?.size ?? 0) / 1024);
  const settings: LogsSettings = {
    ...BASE_SETTINGS,
    maxPagesPerCycle: Number(settingByKey('logs.max_pages').defaultText),
  };
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  // Fresh start just before the traffic; then the whole backlog is due at once.
  const h = harness(server.url, settings, T0 + settings.ingestionDelayMs - 1, stateFile);
  const started = Date.now();
  let cycles = 0;
  let arrayBuffersPeak = 0;
  const sampler = setInterval(() => {
    arrayBuffersPeak = Math.max(arrayBuffersPeak, process.memoryUsage().arrayBuffers);
  }, 20);
  try {
    await server.setNow(h.clock.now);
    await poll(h);
    h.clock.now = T0 + (events / ratePerSecond) * 1000 + 5_000 + settings.ingestionDelayMs;
    await server.setNow(h.clock.now);
    const frontier = h.clock.now - settings.ingestionDelayMs;
    let half: { memory: NodeJS.MemoryUsage; anon: number; stateKiB: number } | null = null;
    while (h.collector.position.watermark < frontier) {
      await poll(h);
      cycles += 1;
      h.clock.now += 1;
      // Counted so far (getMetricsAsJSON of the event counters: cheap next to a cycle of pages).
      if (half === null && (await h.counted()) >= server.events / 2) {
        await settleMemory();
        half = { memory: process.memoryUsage(), anon: rssKinds().anon, stateKiB: stateKiB() };
      }
    }
    clearInterval(sampler);
    await settleMemory();
    const memory = process.memoryUsage();
    const kinds = rssKinds();
    const mib = (bytes: number | undefined): number => (bytes === undefined ? Number.NaN : Math.round(bytes / 1048576));
    return {
      events: server.events,
      counted: await h.counted(),
      cycles,
      pages: h.requests(),
      minimumPages: Math.ceil(server.events / (settings.pageSize ?? DEFAULT_PAGE_SIZE)),
      seconds: Math.round((Date.now() - started) / 100) / 10,
      rssBeforeMiB: mib(rssBefore),
      rssHalfMiB: mib(half?.memory.rss),
      rssAfterMiB: mib(memory.rss),
      rssPeakMiB: kinds.peak,
      heapUsedHalfMiB: mib(half?.memory.heapUsed),
      heapTotalHalfMiB: mib(half?.memory.heapTotal),
      heapUsedAfterMiB: mib(memory.heapUsed),
      heapTotalAfterMiB: mib(memory.heapTotal),
      externalAfterMiB: mib(memory.external),
      rssAnonHalfMiB: half?.anon ?? Number.NaN,
      rssAnonAfterMiB: kinds.anon,
      rssFileAfterMiB: kinds.file,
      mallocHeapAfterMiB: mallocHeapMiB(),
      arrayBuffersPeakMiB: mib(arrayBuffersPeak),
      stateFileHalfKiB: half?.stateKiB ?? Number.NaN,
      stateFileAfterKiB: stateKiB(),
    };
  } finally {
    await h.close();
    server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === 'serve') {
    serveLogs(Number(rest[0]), Number(rest[1]));
    return;
  }
  const report = (name: string, value: unknown): void => console.log(`${name}: ${JSON.stringify(value)}`);
  const only = mode === undefined ? null : mode;
  // Memory first, in a process that has done nothing else yet.
  if (only === null || only === 'memory') report('memory after 1M events', await measureMemoryAfterEvents());
  if (only === null || only === 'speed') report('counting speed', measureCountingSpeed());
  if (only === null || only === 'cycles') {
    for (const rate of [1, 10, 100, 1000]) {
      report('requests per cycle (delay 15s, overlap 5s)', await measureRequestsPerCycle(rate));
      report('requests per cycle (delay 15s, overlap 2s)', await measureRequestsPerCycle(rate, { overlapMs: 2_000 }));
      report(
        'requests per cycle (delay 10s, overlap 2m)',
        await measureRequestsPerCycle(rate, { ingestionDelayMs: 10_000, overlapMs: 120_000 }),
      );
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
