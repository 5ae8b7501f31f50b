// The log walk's page size against a purpose-built log server on 127.0.0.1 that honours any
// count and streams bodies of any size (the emulator's knobs maxPageSize, largeBodyRatio and
// largeBodyBytes give exporter-level tests the same cases). The server pages newest first with
// the cursor as the next index, as the real cursor marks a position: a smaller count on the
// same cursor continues where the chain was. Entries may carry huge base64 bodies, streamed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../../src/api/delivery.js';
import { LogsCollector } from '../../../src/collectors/logs/index.js';
import { upstreamIdentity } from '../../../src/state/index.js';
import { captureLogger, parseExposition, pollContext } from '../../support/exporter-e2e-helpers.js';
import { EVENTS, sumOf, TEST_SETTINGS } from '../../support/logs-helpers.js';
import { queryOf, sendJson, startServiceDouble, streamPage, type ServiceDouble } from '../../support/service-double.js';

interface LogServer {
  server: ServiceDouble;
  entries: Array<{ time: number; messageId: string; state: string }>;
  /** Counts asked, one per page request. */
  asked: number[];
  /** Cursor and count of every page request. */
  pages: Array<{ cursor: string | null; count: number }>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startLogServer(options: {
  cap: number;
  bodyBytes?: (messageId: string) => number;
  extra?: (index: number) => Record<string, unknown>;
}): Promise<LogServer> {
  const state: LogServer = { server: undefined as unknown as ServiceDouble, entries: [], asked: [], pages: [] };
  state.server = await startServiceDouble((req, res) => {
    const query = queryOf(req);
    const from = Number(query.get('fromDate') ?? 0);
    const to = Number(query.get('toDate') ?? Number.MAX_SAFE_INTEGER);
    const asked = Number(query.get('count') ?? 100);
    state.asked.push(asked);
    state.pages.push({ cursor: query.get('cursor'), count: asked });
    const count = Math.min(options.cap, asked);
    const matching = state.entries.filter((e) => e.time >= from && e.time <= to).sort((a, b) => b.time - a.time);
    const start = Number(query.get('cursor') ?? 0);
    const page = matching
      .slice(start, start + count)
      .map((e) => ({ ...e, ...options.extra?.(Number(e.messageId.slice(4))) }));
    const cursor = start + count < matching.length ? String(start + count) : undefined;
    void streamPage(res, page, (i) => options.bodyBytes?.(page[i]!.messageId) ?? 16, cursor);
  });
  cleanups.push(() => state.server.close());
  return state;
}

function collectorFor(
  server: LogServer,
  pageSize: number,
  client: Partial<ConstructorParameters<typeof DeliveryClient>[0]> = {},
  stateFile: string | null = null,
) {
  const delivery = new DeliveryClient({
    baseUrl: server.server.url,
    token: 'scripted',
    retry: { maxRetries: 0 },
    ...client,
  });
  const log = captureLogger('debug');
  const collector = new LogsCollector({
    source: delivery,
    // One chain: the requests are the page arithmetic alone (parallel chains split walks, a request each).
    settings: {
      ...TEST_SETTINGS,
      ingestionDelayMs: 0,
      overlapMs: 0,
      maxPagesPerCycle: 10_000,
      pageSize,
      maxParallelSlices: 1,
    },
    stateFile,
    upstream: upstreamIdentity(server.server.url, 'scripted'),
    logger: log.logger,
  });
  cleanups.push(() => delivery.close());
  return { collector, log };
}

/** `n` entries over the next 200 ms, each its own message, DELIVERED; resolves once they are all past. */
async function addEntries(server: LogServer, n: number): Promise<void> {
  const base = Date.now() + 205;
  for (let i = 0; i < n; i++)
    server.entries.push({ time: base - (i % 200), messageId: `msg_${i}`, state: 'DELIVERED' });
  await new Promise((resolve) => setTimeout(resolve, 250));
}

async function counted(collector: LogsCollector): Promise<number> {
  return sumOf(parseExposition(await collector.registry.metrics()), EVENTS, (l) => l.state === 'DELIVERED');
}

describe('log page size', () => {
  it('reads 3000 entries in 3 requests at page size 1000 and in 30 at 100, counting each once', async () => {
    const results: Record<number, { requests: number; counted: number }> = {};
    for (const pageSize of [100, 1000]) {
      const server = await startLogServer({ cap: 1000 });
      const { collector } = collectorFor(server, pageSize);
      await collector.poll(pollContext(captureLogger().logger));
      await addEntries(server, 3000);
      const before = server.asked.length;
      await collector.poll(pollContext(captureLogger().logger));
      results[pageSize] = { requests: server.asked.length - before, counted: await counted(collector) };
    }
    expect(results).toEqual({ 100: { requests: 30, counted: 3000 }, 1000: { requests: 3, counted: 3000 } });
  });

  it('learns a cap of 100 from a full page shorter than asked, and asks 100 from then on', async () => {
    const server = await startLogServer({ cap: 100 });
    const { collector, log } = collectorFor(server, 1000);
    await collector.poll(pollContext(captureLogger().logger));
    await addEntries(server, 450);
    await collector.poll(pollContext(captureLogger().logger));
    expect(await counted(collector)).toBe(450);
    const afterFirst = server.asked.slice(server.asked.lastIndexOf(1000) + 1);
    expect(afterFirst.length).toBeGreaterThan(0);
    expect(afterFirst.every((count) => count === 100)).toBe(true);
    expect(log.text()).toContain('returns at most 100 entries a page');
    const families = parseExposition(await collector.registry.metrics());
    expect(families.get('upstash_exporter_log_page_size')?.samples[0]?.value).toBe(100);
  });

  it('halves a page too large to keep, on the same cursor mid-walk, counting every entry once and going on', async () => {
    // 40 entries newest first (msg_0 .. msg_39); msg_10..msg_13 carry 6 MiB bodies (dropped
    // while streaming, never kept), msg_20..msg_39 a 300-byte url (kept). A kept-bytes cap of
    // 2 KiB: the first page shrinks from 1000 to 15 entries; the next pages, on a cursor, reach
    // the long urls and shrink again on that same cursor.
    const server = await startLogServer({
      cap: 1000,
      bodyBytes: (id) => (['msg_10', 'msg_11', 'msg_12', 'msg_13'].includes(id) ? 6 * 1024 * 1024 : 1024),
      extra: (index) => (index >= 20 ? { url: `https://example.com/${'u'.repeat(300)}` } : {}),
    });
    const { collector, log } = collectorFor(server, 1000, { logsMaxPageBytes: 2 * 1024 });
    await collector.poll(pollContext(captureLogger().logger));
    await addEntries(server, 40);
    server.pages.length = 0;
    await collector.poll(pollContext(captureLogger().logger));
    expect(await counted(collector)).toBe(40);
    expect(log.text()).toContain('too large or too slow');
    // A smaller count asked again on a cursor the walk was already following.
    const shrunkOnCursor = server.pages.some(
      (page, i) =>
        i > 0 &&
        page.cursor !== null &&
        page.cursor === server.pages[i - 1]!.cursor &&
        page.count < server.pages[i - 1]!.count,
    );
    expect(shrunkOnCursor).toBe(true);
  });
});

describe('bad answers leave the watermark where it was', () => {
  it('a drifted answer, then a 404 on both paths, fail the poll with their codes; the flat list then counts everything', async () => {
    const server = await startLogServer({ cap: 1000 });
    let mode: 'flat' | 'drifted' | 'missing' = 'flat';
    const flat = server.server;
    // A front that answers a drifted page or 404 before handing over to the log server.
    const front = await startServiceDouble((req, res) => {
      if (mode === 'drifted') return sendJson(res, 200, { events: 'not a list', cursor: 'x' });
      if (mode === 'missing') return sendJson(res, 404, { error: 'not found' });
      void fetch(`${flat.url}${req.url}`).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    cleanups.push(() => front.close());
    const stateDir = await mkdtemp(join(tmpdir(), 'upstash-walk-errors-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const stateFile = join(stateDir, 'state.json');
    const { collector } = collectorFor({ ...server, server: front }, 1000, {}, stateFile);
    await collector.poll(pollContext(captureLogger().logger));
    await addEntries(server, 30);
    mode = 'drifted';
    await expect(collector.poll(pollContext(captureLogger().logger))).rejects.toMatchObject({
      code: 'ERR_API_SCHEMA_DRIFT',
    });
    mode = 'missing';
    await expect(collector.poll(pollContext(captureLogger().logger))).rejects.toMatchObject({
      code: 'ERR_API_NOT_FOUND',
    });
    mode = 'flat';
    await collector.poll(pollContext(captureLogger().logger));
    expect(await counted(collector)).toBe(30);
    const families = parseExposition(await collector.registry.metrics());
    const errors: Record<string, number> = Object.fromEntries(
      (families.get('upstash_exporter_log_walk_errors_total')?.samples ?? []).map((sample) => [
        sample.labels.code,
        sample.value,
      ]),
    );
    // Every code is pre-set to 0; only the two that happened have counted.
    expect(Object.fromEntries(Object.entries(errors).filter(([, value]) => value > 0))).toEqual({
      ERR_API_SCHEMA_DRIFT: 1,
      ERR_API_NOT_FOUND: 1,
    });
    // Kept in the checkpoint: a restarted collector serves the same counts before any poll.
    await collector.close();
    const restarted = collectorFor({ ...server, server: front }, 1000, {}, stateFile).collector;
    const again = parseExposition(await restarted.registry.metrics());
    const restored = Object.fromEntries(
      (again.get('upstash_exporter_log_walk_errors_total')?.samples ?? []).map((sample) => [
        sample.labels.code,
        sample.value,
      ]),
    );
    expect(restored).toEqual(errors);
  });

  it('a page that never ends times out, is asked again smaller, and the walk goes on', async () => {
    // More than 8 entries asked: the server sends the start of the page and then nothing.
    const server = await startLogServer({ cap: 1000 });
    const inner = server.server;
    const front = await startServiceDouble((req, res) => {
      if (Number(queryOf(req).get('count')) > 8) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"events":[');
        return;
      }
      void fetch(`${inner.url}${req.url}`).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    cleanups.push(() => front.close());
    const { collector, log } = collectorFor({ ...server, server: front }, 1000, {
      timeouts: { bodyTimeoutMs: 200 },
      retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
    await collector.poll(pollContext(captureLogger().logger));
    await addEntries(server, 20);
    await collector.poll(pollContext(captureLogger().logger));
    expect(await counted(collector)).toBe(20);
    expect(log.text()).toContain('ERR_API_TIMEOUT');
    // Each stalled count was asked once (not retried as it was): 1000 down to 15 (in the first,
    // empty poll); later chains start at twice the count that worked (14), not at 1000 again.
    const stalled = front.requests.map((req) => Number(queryOf(req).get('count'))).filter((count) => count > 8);
    expect(stalled.slice(0, 7)).toEqual([1000, 500, 250, 125, 62, 31, 15]);
    // At least one later chain, or the check below would hold over nothing.
    expect(stalled[7]).toBe(14);
    expect(stalled.slice(7).every((count) => count <= 14)).toBe(true);
  });
});
