// The delivery client against what the real service may do where the evidence is split or the
// emulator on main cannot yet produce it (docs/service-fidelity.md): each case is served by a
// purpose-built server on 127.0.0.1 (test/support/service-double.ts) because the emulator of
// main serves both logs paths, the flat shape only, small bodies, both schedule verbs and no
// daily-limit 429.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient, type DeliveryClientOptions } from '../../src/api/delivery.js';
import { ApiError, ApiNotFoundError } from '../../src/api/errors.js';
import type { RequestReport } from '../../src/api/http.js';
import { JsonSkimmer } from '../../src/api/json-skim.js';
import {
  pathOf,
  queryOf,
  sendJson,
  startServiceDouble,
  streamPage,
  type ServiceDouble,
} from '../support/service-double.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
});

async function serve(handler: Parameters<typeof startServiceDouble>[0]): Promise<ServiceDouble> {
  const server = await startServiceDouble(handler);
  closers.push(() => server.close());
  return server;
}

function client(baseUrl: string, options: Partial<DeliveryClientOptions> = {}): DeliveryClient {
  const delivery = new DeliveryClient({
    baseUrl,
    token: 'tok-test',
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 },
    ...options,
  });
  closers.push(() => delivery.close());
  return delivery;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the call to fail');
}

const entry = (i: number, extra: Record<string, unknown> = {}) => ({
  time: 1_761_200_000_000 - i,
  messageId: `msg_${i}`,
  state: 'DELIVERED',
  ...extra,
});

describe('logs path', () => {
  it('asks /v2/events first; on a service with /v2/logs only it switches once and keeps it', async () => {
    const server = await serve((req, res) =>
      pathOf(req) === '/v2/logs'
        ? sendJson(res, 200, { logs: [entry(0)] })
        : sendJson(res, 404, { error: 'not found' }),
    );
    const delivery = client(server.url);
    expect((await delivery.logsPage()).logs).toHaveLength(1);
    expect((await delivery.logsPage()).logs).toHaveLength(1);
    expect(server.requests.map(pathOf)).toEqual(['/v2/events', '/v2/logs', '/v2/logs']);
    expect(delivery.logsPath).toBe('/v2/logs');
  });

  it('configured /v2/logs on a service with /v2/events only switches to /v2/events', async () => {
    const server = await serve((req, res) =>
      pathOf(req) === '/v2/events' ? sendJson(res, 200, { events: [] }) : sendJson(res, 404, {}),
    );
    const delivery = client(server.url, { logsPath: '/v2/logs' });
    await delivery.logsPage();
    expect(server.requests.map(pathOf)).toEqual(['/v2/logs', '/v2/events']);
  });

  it('a 404 on both paths is one clear not-found error naming both', async () => {
    const server = await serve((_req, res) => sendJson(res, 404, {}));
    const error = await failure(client(server.url).logsPage());
    expect(error).toBeInstanceOf(ApiNotFoundError);
    expect(error.message).toContain('neither /v2/events nor /v2/logs');
  });

  it('a path that answered once keeps its later 404s (a refused cursor) without switching', async () => {
    let calls = 0;
    const server = await serve((_req, res) =>
      calls++ === 0 ? sendJson(res, 200, { events: [] }) : sendJson(res, 404, {}),
    );
    const delivery = client(server.url);
    await delivery.logsPage();
    await failure(delivery.logsPage({ cursor: 'gone' }));
    expect(server.requests.map(pathOf)).toEqual(['/v2/events', '/v2/events']);
  });

  it("the grouped shape (messages[].events[]) is read flat, newest first, each entry with its group's messageId", async () => {
    const { messageId: _dropped, ...withoutId } = entry(5);
    const server = await serve((_req, res) =>
      sendJson(res, 200, {
        cursor: 'c',
        messages: [
          { messageId: 'm1', events: [entry(9, { messageId: 'm1' }), entry(2, { messageId: 'm1' })] },
          { messageId: 'm2', events: [withoutId] },
        ],
      }),
    );
    const page = await client(server.url).logsPage();
    expect(page.cursor).toBe('c');
    expect(page.logs.map((log) => [log.messageId, log.time])).toEqual([
      ['m1', entry(2).time],
      ['m2', entry(5).time],
      ['m1', entry(9).time],
    ]);
  });
});

describe('bodies in log entries', () => {
  it('asks trimBody=0 and still reads a page whose bodies the service did not trim, without keeping them', async () => {
    // 5 entries x 4 MiB bodies (an ERROR entry with a responseBody too): 24 MiB read, kept cap 1 MiB.
    const entries = [0, 1, 2, 3, 4].map((i) => entry(i, i === 2 ? { state: 'ERROR', responseStatus: 500 } : {}));
    const server = await serve((_req, res) => void streamPage(res, entries, 4 * 1024 * 1024, 'next'));
    const page = await client(server.url, { logsMaxPageBytes: 1024 * 1024 }).logsPage({ count: 5 });
    expect(queryOf(server.requests[0]!).get('trimBody')).toBe('0');
    expect(page.logs.map((l) => l.messageId)).toEqual(['msg_0', 'msg_1', 'msg_2', 'msg_3', 'msg_4']);
    expect(page.logs.every((l) => l.body === undefined && l.responseBody === undefined)).toBe(true);
    expect(page.logs[2]!.responseStatus).toBe(500);
    expect(page.cursor).toBe('next');
  });

  it('a page over the kept-bytes cap (without bodies) is ERR_API_PAGE_TOO_LARGE, not retried', async () => {
    const big = Array.from({ length: 2000 }, (_, i) => entry(i, { url: `https://example.com/${'x'.repeat(200)}` }));
    const server = await serve((_req, res) => sendJson(res, 200, { events: big }));
    const error = await failure(client(server.url, { logsMaxPageBytes: 64 * 1024 }).logsPage());
    expect(error.code).toBe('ERR_API_PAGE_TOO_LARGE');
    expect(server.requests).toHaveLength(1);
  });

  it('the skimmer drops only string values of the body keys, across any chunking', () => {
    const doc = {
      cursor: '1-2',
      events: [
        {
          time: 1,
          messageId: 'a',
          body: 'QUJD',
          responseBody: 'say \\"hi\\" {[,:]}',
          header: { body: ['kept: not a string'] },
        },
        {
          time: 2,
          messageId: 'b',
          body: null,
          nested: { responseBody: 'ends in a backslash \\' },
          bodyless: 'body',
          tail: 'also \\',
          'k\\"ey': 1,
        },
      ],
    };
    const text = Buffer.from(JSON.stringify(doc, null, 1));
    for (const size of [1, 2, 3, 7, text.length]) {
      const skimmer = new JsonSkimmer({ skipKeys: ['body', 'responseBody'], maxKeptBytes: 1e6, maxTotalBytes: 1e6 });
      for (let i = 0; i < text.length; i += size) skimmer.write(text.subarray(i, i + size));
      const parsed = JSON.parse(skimmer.end()) as typeof doc;
      expect(parsed.events[0]).toEqual({
        time: 1,
        messageId: 'a',
        body: null,
        responseBody: null,
        header: { body: ['kept: not a string'] },
      });
      expect(parsed.events[1]).toEqual({
        time: 2,
        messageId: 'b',
        body: null,
        nested: { responseBody: null },
        bodyless: 'body',
        tail: 'also \\',
        'k\\"ey': 1,
      });
      expect(skimmer.stats.skippedValues).toBe(3);
    }
  });

  it('the skimmer keeps text larger than its blocks whole, with characters of every UTF-8 length across their edges', () => {
    // Kept in blocks of 64 KiB (json-skim.ts, BLOCK_BYTES): 9 bytes a repeat puts the blocks'
    // edges inside characters of 2, 3 and 4 bytes.
    const events = Array.from({ length: 60 }, (_, i) => ({
      time: i,
      messageId: `m${i}`,
      url: `https://example.com/${'é€😀'.repeat(500 + i)}`,
      body: 'QUJD'.repeat(1000),
    }));
    const text = Buffer.from(JSON.stringify({ events }));
    for (const size of [1000, 65_536, 100_003, text.length]) {
      const skimmer = new JsonSkimmer({ skipKeys: ['body'], maxKeptBytes: 1e7, maxTotalBytes: 1e7 });
      for (let i = 0; i < text.length; i += size) skimmer.write(text.subarray(i, i + size));
      expect(skimmer.stats.keptBytes).toBeGreaterThan(3 * 65_536);
      expect(JSON.parse(skimmer.end())).toEqual({ events: events.map((event) => ({ ...event, body: null })) });
    }
  });
});

describe('cursors', () => {
  it('a numeric cursor, beyond 2^53 too, is read as its exact digits from the page text; a string of digits as it is', async () => {
    let cursorText = '1686652644442';
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"cursor": ${cursorText} ,"events":[]}`);
    });
    const delivery = client(server.url);
    expect((await delivery.logsPage()).cursor).toBe('1686652644442');
    cursorText = '18446744073709551615';
    expect((await delivery.logsPage()).cursor).toBe('18446744073709551615');
    cursorText = '"18446744073709551615"';
    expect((await delivery.logsPage()).cursor).toBe('18446744073709551615');
  });

  it('the skimmer quotes a top-level number under a quoted key, across any chunking, and nothing else', () => {
    const text = Buffer.from(
      '{"events":[{"time":1,"messageId":"a","cursor":5,"header":{"cursor":["9"]}}],"cursor" :\n 123456789012345678901234567890,"n":12}',
    );
    for (const size of [1, 2, 3, 7, text.length]) {
      const skimmer = new JsonSkimmer({
        skipKeys: ['body'],
        quoteNumberKeys: ['cursor'],
        maxKeptBytes: 1e6,
        maxTotalBytes: 1e6,
      });
      for (let i = 0; i < text.length; i += size) skimmer.write(text.subarray(i, i + size));
      expect(JSON.parse(skimmer.end())).toEqual({
        events: [{ time: 1, messageId: 'a', cursor: 5, header: { cursor: ['9'] } }],
        cursor: '123456789012345678901234567890',
        n: 12,
      });
    }
  });
});

describe('daily limit', () => {
  it('a 429 with RateLimit-* headers is ERR_API_DAILY_LIMIT, not retried, with the wait to the reset', async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    const server = await serve((_req, res) =>
      sendJson(
        res,
        429,
        { error: 'daily ratelimit exceeded' },
        { 'RateLimit-Limit': '500', 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(reset) },
      ),
    );
    const reports: RequestReport[] = [];
    const error = await failure(client(server.url, { onRequest: (r) => reports.push(r) }).logsPage());
    expect(error.code).toBe('ERR_API_DAILY_LIMIT');
    expect(error.retryAfterMs).toBeGreaterThan(3_500_000);
    expect(server.requests).toHaveLength(1);
    expect(reports.map((r) => r.code)).toEqual(['daily_limit']);
  });

  it('a burst 429 (Burst-RateLimit-*) is retried as before', async () => {
    let calls = 0;
    const server = await serve((_req, res) =>
      calls++ === 0
        ? sendJson(
            res,
            429,
            { error: 'too many' },
            { 'Burst-RateLimit-Limit': '100', 'Burst-RateLimit-Remaining': '0', 'Burst-RateLimit-Reset': '0' },
          )
        : sendJson(res, 200, { events: [] }),
    );
    await client(server.url).logsPage();
    expect(server.requests).toHaveLength(2);
  });
});

describe('schedule pause and resume verbs', () => {
  const verbServer = (allowed: 'PATCH' | 'POST') =>
    serve((req, res) => {
      if (req.method !== allowed) return sendJson(res, 405, { error: 'method not allowed' });
      if (req.url.includes('unknown')) return sendJson(res, 404, { error: 'schedule not found' });
      res.writeHead(200).end();
    });

  it('a PATCH-only service: PATCH for pause and resume', async () => {
    const server = await verbServer('PATCH');
    const delivery = client(server.url);
    await delivery.pauseSchedule('scd_1');
    await delivery.resumeSchedule('scd_1');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PATCH /v2/schedules/scd_1/pause',
      'PATCH /v2/schedules/scd_1/resume',
    ]);
    const error = await failure(delivery.pauseSchedule('unknown'));
    expect(error).toBeInstanceOf(ApiNotFoundError);
  });

  it('a POST-only service: PATCH is refused once, then POST is remembered', async () => {
    const server = await verbServer('POST');
    const delivery = client(server.url);
    await delivery.pauseSchedule('scd_1');
    await delivery.resumeSchedule('scd_1');
    await delivery.pauseSchedule('scd_2');
    expect(server.requests.map((r) => r.method)).toEqual(['PATCH', 'POST', 'POST', 'POST']);
  });

  it('an unknown id on a PATCH-only service reports the 404, not the 405 of the POST tried next', async () => {
    const server = await verbServer('PATCH');
    const error = await failure(client(server.url).pauseSchedule('unknown'));
    expect(error.code).toBe('ERR_API_NOT_FOUND');
  });
});
