// The request core against real node:http servers on 127.0.0.1: retries, rate-limit waits,
// timeouts, malformed and truncated bodies, the report hook, abort, and secret hygiene.
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, rateLimitWaitMs } from '../../src/api/http.js';
import type { HttpClientOptions, RequestReport } from '../../src/api/http.js';
import {
  ApiAbortedError,
  ApiAuthError,
  ApiError,
  ApiNetworkError,
  ApiNotFoundError,
  ApiRateLimitError,
  ApiTimeoutError,
  ApiUpstreamError,
} from '../../src/api/errors.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

interface TestServer {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];
const clients: HttpClient[] = [];

async function startServer(handler: Handler): Promise<TestServer> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = requests.length;
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      handler(req, res, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const TOKEN = 'canary-token-7f3a9c-SECRET';

function client(url: string, options: Partial<HttpClientOptions> = {}): HttpClient {
  const created = new HttpClient({
    api: 'qstash',
    baseUrl: url,
    credentials: { scheme: 'bearer', token: TOKEN },
    retry: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 20 },
    timeouts: { connectTimeoutMs: 1000, headersTimeoutMs: 1000, bodyTimeoutMs: 1000 },
    ...options,
  });
  clients.push(created);
  return created;
}

const get = (path = '/v2/logs', endpoint = '/v2/logs') =>
  ({ method: 'GET', path, endpoint, response: 'json' }) as const;

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the request to fail');
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('HttpClient', () => {
  it('sends the Bearer token and parses the JSON answer', async () => {
    const server = await startServer((_req, res) => json(res, 200, { ok: true }));
    await expect(client(server.url).request(get())).resolves.toEqual({ ok: true });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('sends Basic credentials as base64(user:password)', async () => {
    const server = await startServer((_req, res) => json(res, 200, []));
    const http = client(server.url, {
      api: 'management',
      credentials: { scheme: 'basic', username: 'ops@example.com', password: 'key-123' },
    });
    await http.request(get('/v2/search', '/v2/search'));
    expect(server.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('ops@example.com:key-123').toString('base64')}`,
    );
  });

  it('keeps the path prefix of the base URL', async () => {
    const server = await startServer((_req, res) => json(res, 200, {}));
    await client(`${server.url}/proxy/qstash/`).request(get());
    expect(server.requests[0]!.url).toBe('/proxy/qstash/v2/logs');
  });

  it('retries a 5xx and then succeeds, with backoff between attempts', async () => {
    const server = await startServer((_req, res, i) =>
      i < 2 ? json(res, 503, { error: 'busy' }) : json(res, 200, { n: 3 }),
    );
    const reports: RequestReport[] = [];
    const http = client(server.url, {
      retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000 },
      random: () => 0.5,
      onRequest: (r) => reports.push(r),
    });
    await expect(http.request(get())).resolves.toEqual({ n: 3 });
    expect(server.requests).toHaveLength(3);
    expect(reports.map((r) => r.code)).toEqual(['503', '503', '200']);
    // Full jitter with random 0.5: 0.5 * 100, then 0.5 * 200.
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(45);
    expect(server.requests[2]!.at - server.requests[1]!.at).toBeGreaterThanOrEqual(95);
  });

  it('gives up after maxRetries with ApiUpstreamError carrying the status', async () => {
    const server = await startServer((_req, res) => json(res, 500, { error: 'boom' }));
    const error = await failure(client(server.url, { retry: { maxRetries: 2 } }).request(get()));
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.code).toBe('ERR_API_UPSTREAM');
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(3);
    expect(error.message).toContain('/v2/logs');
    expect(error.message).toContain('boom');
    expect(server.requests).toHaveLength(3);
  });

  it.each([
    [401, ApiAuthError, 'ERR_API_AUTH'],
    [403, ApiAuthError, 'ERR_API_AUTH'],
    [404, ApiNotFoundError, 'ERR_API_NOT_FOUND'],
    [400, ApiUpstreamError, 'ERR_API_UPSTREAM'],
  ] as const)('does not retry a %i', async (status, errorClass, code) => {
    const server = await startServer((_req, res) => json(res, status, { error: 'no' }));
    const error = await failure(client(server.url).request(get()));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(server.requests).toHaveLength(1);
  });

  it('honours Retry-After in seconds on a 429', async () => {
    const server = await startServer((_req, res, i) =>
      i === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { ok: 1 }),
    );
    await expect(client(server.url).request(get())).resolves.toEqual({ ok: 1 });
    expect(server.requests).toHaveLength(2);
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(995);
    expect(gap).toBeLessThan(1500);
  });

  it('honours Retry-After as an HTTP-date', async () => {
    const target = Math.ceil((Date.now() + 1200) / 1000) * 1000; // HTTP-dates have whole seconds
    const server = await startServer((_req, res, i) =>
      i === 0 ? json(res, 429, {}, { 'retry-after': new Date(target).toUTCString() }) : json(res, 200, { ok: 2 }),
    );
    await expect(client(server.url).request(get())).resolves.toEqual({ ok: 2 });
    expect(server.requests[1]!.at).toBeGreaterThanOrEqual(target - 5);
    expect(server.requests[1]!.at).toBeLessThan(target + 500);
  });

  it('honours Burst-RateLimit-Reset (unix seconds) on a 429', async () => {
    let resetMs = 0;
    const server = await startServer((_req, res, i) => {
      if (i > 0) return json(res, 200, { ok: 3 });
      resetMs = Math.ceil((Date.now() + 300) / 1000) * 1000;
      json(
        res,
        429,
        { error: 'burst' },
        {
          'burst-ratelimit-limit': '10',
          'burst-ratelimit-remaining': '0',
          'burst-ratelimit-reset': String(resetMs / 1000),
        },
      );
    });
    const reports: RequestReport[] = [];
    const started = Date.now();
    await expect(client(server.url, { onRequest: (r) => reports.push(r) }).request(get())).resolves.toEqual({ ok: 3 });
    expect(server.requests[1]!.at).toBeGreaterThanOrEqual(resetMs - 5);
    expect(Date.now() - started).toBeLessThan(resetMs - started + 500);
    expect(reports[0]).toMatchObject({ code: '429', rateLimitRemaining: 0 });
  });

  it('reads a Burst-RateLimit-Reset above 1e12 as milliseconds', async () => {
    let resetMs = 0;
    const server = await startServer((_req, res, i) => {
      if (i > 0) return json(res, 200, { ok: 4 });
      resetMs = Date.now() + 300;
      json(res, 429, {}, { 'burst-ratelimit-reset': String(resetMs) });
    });
    await client(server.url).request(get());
    expect(server.requests[1]!.at).toBeGreaterThanOrEqual(resetMs - 5);
    expect(server.requests[1]!.at).toBeLessThan(resetMs + 400);
  });

  it('fails at once when the announced wait exceeds maxRateLimitWaitMs', async () => {
    const server = await startServer((_req, res) => json(res, 429, {}, { 'retry-after': '120' }));
    const started = Date.now();
    const error = await failure(client(server.url, { retry: { maxRateLimitWaitMs: 30_000 } }).request(get()));
    expect(error).toBeInstanceOf(ApiRateLimitError);
    expect(error.code).toBe('ERR_API_RATE_LIMIT');
    expect(error.retryAfterMs).toBe(120_000);
    expect(error.status).toBe(429);
    expect(server.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('retries a 429 without wait headers with backoff, then fails with ApiRateLimitError', async () => {
    const server = await startServer((_req, res) => json(res, 429, { error: 'limited' }));
    const error = await failure(client(server.url, { retry: { maxRetries: 2 } }).request(get()));
    expect(error).toBeInstanceOf(ApiRateLimitError);
    expect(error.retryAfterMs).toBeUndefined();
    expect(server.requests).toHaveLength(3);
  });

  it('times out a server that never sends headers, retrying, and reports "timeout"', async () => {
    const server = await startServer(() => {
      /* never answers */
    });
    const reports: RequestReport[] = [];
    const started = Date.now();
    const error = await failure(
      client(server.url, {
        timeouts: { headersTimeoutMs: 150 },
        retry: { maxRetries: 1 },
        onRequest: (r) => reports.push(r),
      }).request(get()),
    );
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(error.code).toBe('ERR_API_TIMEOUT');
    expect(server.requests).toHaveLength(2);
    expect(reports.map((r) => r.code)).toEqual(['timeout', 'timeout']);
    expect(reports[0]!.durationSeconds).toBeGreaterThanOrEqual(0.14);
    // undici checks headers/body timeouts on a coarse (~1 s) timer wheel.
    expect(Date.now() - started).toBeLessThan(3500);
  });

  it('times out a body that stalls half way', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"logs":[');
    });
    const error = await failure(
      client(server.url, { timeouts: { bodyTimeoutMs: 150 }, retry: { maxRetries: 0 } }).request(get()),
    );
    expect(error).toBeInstanceOf(ApiTimeoutError);
  });

  it('treats malformed JSON as a retryable upstream fault', async () => {
    const server = await startServer((_req, res, i) =>
      i === 0 ? res.end('{"logs": [ {"time": 1') : json(res, 200, { logs: [] }),
    );
    await expect(client(server.url).request(get())).resolves.toEqual({ logs: [] });
    expect(server.requests).toHaveLength(2);

    const always = await startServer((_req, res) => res.end('{"logs": oops'));
    const error = await failure(client(always.url, { retry: { maxRetries: 1 } }).request(get()));
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.message).toContain('malformed JSON in a 200 response (13 bytes)');
    expect(error.message).not.toContain('oops');
    expect(always.requests).toHaveLength(2);
  });

  it('says an HTML page in a 200 answer is one, with its title (secrets scrubbed), not malformed JSON', async () => {
    const page = `<!DOCTYPE html>\n<html><head><title>Sign in &amp; continue ${TOKEN}</title></head><body>portal</body></html>`;
    const portal = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
    });
    const error = await failure(client(portal.url, { retry: { maxRetries: 0 } }).request(get()));
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.message).toBe(
      `qstash GET /v2/logs: an HTML page, not JSON, in a 200 response (${Buffer.byteLength(page)} bytes): Sign in & continue [REDACTED]`,
    );
    // Without a content type or a title, the markup alone tells.
    const bare = await startServer((_req, res) => res.end('  <html><body>hello</body></html>'));
    const untitled = await failure(client(bare.url, { retry: { maxRetries: 0 } }).request(get()));
    expect(untitled.message).toBe(
      'qstash GET /v2/logs: an HTML page, not JSON, in a 200 response (33 bytes), without a title',
    );
  });

  it('says where a 3xx answer points (its Location, without query or user information), and does not retry it', async () => {
    const moved = await startServer((_req, res) => {
      res.writeHead(301, { location: `https://user:pw@qstash.example.com/v2/logs?token=${TOKEN}` });
      res.end();
    });
    const error = await failure(client(moved.url).request(get()));
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.message).toBe(
      'qstash GET /v2/logs: redirected (301) to https://qstash.example.com/v2/logs?…: the API is not at the configured URL',
    );
    expect(moved.requests).toHaveLength(1);
    const relative = await startServer((_req, res) => {
      res.writeHead(302, { location: '/login' });
      res.end();
    });
    expect((await failure(client(relative.url).request(get()))).message).toBe(
      'qstash GET /v2/logs: redirected (302) to /login: the API is not at the configured URL',
    );
    const nowhere = await startServer((_req, res) => {
      res.writeHead(307);
      res.end();
    });
    expect((await failure(client(nowhere.url).request(get()))).message).toBe(
      'qstash GET /v2/logs: redirected (307) to no Location: the API is not at the configured URL',
    );
  });

  it('treats a body cut short by the server as a retryable upstream fault', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"logs":[{"time":1,');
      setTimeout(() => res.destroy(), 20);
    });
    const reports: RequestReport[] = [];
    const error = await failure(
      client(server.url, { retry: { maxRetries: 1 }, onRequest: (r) => reports.push(r) }).request(get()),
    );
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.message).toContain('truncated');
    expect(server.requests).toHaveLength(2);
    expect(reports.map((r) => r.code)).toEqual(['error', 'error']);
  });

  it('refuses a body above the size cap without retrying', async () => {
    const server = await startServer((_req, res) => json(res, 200, { blob: 'x'.repeat(5000) }));
    const error = await failure(client(server.url, { maxResponseBytes: 1024 }).request(get()));
    expect(error).toBeInstanceOf(ApiUpstreamError);
    expect(error.message).toContain('larger than 1024 bytes');
    expect(server.requests).toHaveLength(1);
  });

  it('reports network errors after retrying (connection refused)', async () => {
    const server = await startServer(() => undefined);
    const url = server.url;
    await server.close();
    const reports: RequestReport[] = [];
    const error = await failure(
      client(url, { retry: { maxRetries: 2 }, onRequest: (r) => reports.push(r) }).request(get()),
    );
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(reports.map((r) => r.code)).toEqual(['error', 'error', 'error']);
  });

  it('reports every attempt with the endpoint template, method, code and rate-limit remaining', async () => {
    const server = await startServer((_req, res, i) =>
      i === 0
        ? json(res, 500, {}, { 'burst-ratelimit-remaining': '7' })
        : json(res, 200, {}, { 'burst-ratelimit-remaining': '6' }),
    );
    const reports: RequestReport[] = [];
    await client(server.url, { onRequest: (r) => reports.push(r) }).request({
      method: 'POST',
      path: '/v2/schedules/scd_private-id/pause',
      endpoint: '/v2/schedules/:id/pause',
      response: 'none',
      idempotent: true,
    });
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatchObject({
      api: 'qstash',
      endpoint: '/v2/schedules/:id/pause',
      method: 'POST',
      code: '500',
      rateLimitRemaining: 7,
    });
    expect(reports[1]).toMatchObject({ code: '200', rateLimitRemaining: 6 });
    expect(reports[1]!.durationSeconds).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(reports)).not.toContain('scd_private-id');
  });

  it('a throwing onRequest hook does not fail the request', async () => {
    const server = await startServer((_req, res) => json(res, 200, { fine: true }));
    const http = client(server.url, {
      onRequest: () => {
        throw new Error('hook bug');
      },
    });
    await expect(http.request(get())).resolves.toEqual({ fine: true });
  });

  it('does not retry a non-idempotent request after a 5xx, but does after a 429', async () => {
    const server = await startServer((_req, res) => json(res, 502, {}));
    const post = {
      method: 'POST',
      path: '/v2/enqueue/q/x',
      endpoint: '/v2/enqueue/:queue/:destination',
      response: 'json',
      idempotent: false,
    } as const;
    await failure(client(server.url).request(post));
    expect(server.requests).toHaveLength(1);

    const limited = await startServer((_req, res, i) =>
      i === 0 ? json(res, 429, {}, { 'retry-after': '0' }) : json(res, 200, { messageId: 'm' }),
    );
    await expect(client(limited.url).request(post)).resolves.toEqual({ messageId: 'm' });
    expect(limited.requests).toHaveLength(2);
  });

  it('aborts a rate-limit wait through the client signal', async () => {
    const server = await startServer((_req, res) => json(res, 429, {}, { 'retry-after': '10' }));
    const controller = new AbortController();
    const started = Date.now();
    const pending = failure(client(server.url, { signal: controller.signal }).request(get()));
    setTimeout(() => controller.abort(), 100);
    const error = await pending;
    expect(error).toBeInstanceOf(ApiAbortedError);
    expect(error.code).toBe('ERR_API_ABORTED');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts an in-flight request through the per-call signal', async () => {
    const server = await startServer(() => undefined);
    const controller = new AbortController();
    const pending = failure(client(server.url).request({ ...get(), signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeInstanceOf(ApiAbortedError);
    expect(server.requests).toHaveLength(1);
  });

  it('honours both signals on every request that reuses a per-call signal (a walk passes one to all its pages)', async () => {
    // Answers the first two requests, leaves the rest hanging.
    const server = await startServer((_req, res, i) => (i < 2 ? json(res, 200, { ok: i }) : undefined));
    const clientStop = new AbortController();
    const walkStop = new AbortController();
    const http = client(server.url, { signal: clientStop.signal });
    const request = { ...get(), signal: walkStop.signal };
    await expect(http.request(request)).resolves.toEqual({ ok: 0 });
    await expect(http.request(request)).resolves.toEqual({ ok: 1 });

    const byWalk = failure(http.request(request));
    setTimeout(() => walkStop.abort(), 50);
    expect(await byWalk).toBeInstanceOf(ApiAbortedError);

    const nextWalkStop = new AbortController();
    const next = { ...get(), signal: nextWalkStop.signal };
    const byClient = failure(http.request(next));
    setTimeout(() => clientStop.abort(), 50);
    expect(await byClient).toBeInstanceOf(ApiAbortedError);
    expect(server.requests).toHaveLength(4);
  });

  it('never lets a secret reach an error (message, string, JSON, stack)', async () => {
    const apiKey = 'canary-apikey-51d2e8-SECRET';
    const basic = Buffer.from(`ops@example.com:${apiKey}`).toString('base64');
    // A hostile server echoes the Authorization header back in its error bodies.
    const echo = await startServer((req, res, i) => {
      const said = `bad credentials: ${req.headers.authorization ?? ''}`;
      if (i % 3 === 0) json(res, 401, { error: said });
      else if (i % 3 === 1) json(res, 500, { message: said });
      else res.writeHead(400).end(said);
    });
    const errors: ApiError[] = [];
    const bearer = client(echo.url, { retry: { maxRetries: 0 } });
    const mgmt = client(echo.url, {
      api: 'management',
      credentials: { scheme: 'basic', username: 'ops@example.com', password: apiKey },
      retry: { maxRetries: 0 },
    });
    for (let i = 0; i < 3; i++) {
      errors.push(await failure(bearer.request(get())));
      errors.push(await failure(mgmt.request(get('/v2/qstash/user', '/v2/qstash/user'))));
    }
    const silent = await startServer(() => undefined);
    errors.push(
      await failure(
        client(silent.url, { timeouts: { headersTimeoutMs: 100 }, retry: { maxRetries: 0 } }).request(get()),
      ),
    );
    const closed = await startServer(() => undefined);
    await closed.close();
    errors.push(await failure(client(closed.url, { retry: { maxRetries: 0 } }).request(get())));

    expect(errors.some((e) => e.message.includes('[REDACTED]'))).toBe(true);
    for (const error of errors) {
      for (const text of [String(error), error.message, JSON.stringify(error), error.stack ?? '']) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain(apiKey);
        expect(text).not.toContain(basic);
      }
    }
  });
});

/**
 * A burst limit like the service's: `limit` requests per wall-clock second per path, announced
 * on every answer (Burst-RateLimit-Limit / -Remaining / -Reset in unix seconds), 429 above.
 */
function burstLimited(limit: number): Handler {
  const windows = new Map<string, { second: number; used: number }>();
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const second = Math.floor(Date.now() / 1000);
    const window = windows.get(path) ?? { second, used: 0 };
    if (window.second !== second) Object.assign(window, { second, used: 0 });
    window.used += 1;
    windows.set(path, window);
    const headers = {
      'burst-ratelimit-limit': String(limit),
      'burst-ratelimit-remaining': String(Math.max(0, limit - window.used)),
      'burst-ratelimit-reset': String(second + 1),
    };
    if (window.used > limit) json(res, 429, { error: 'Exceeded burst rate limit' }, headers);
    else json(res, 200, { ok: true }, headers);
  };
}

describe('pacing on the announced rate-limit budget', () => {
  it('spends no request on a 429 when every answer announces the budget, and waits for each reset', async () => {
    const server = await startServer(burstLimited(3));
    const reports: RequestReport[] = [];
    const http = client(server.url, { onRequest: (r) => reports.push(r), retry: { paceRateLimit: true } });
    // Start just after a second begins, so the first window holds its whole budget.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
    const started = Date.now();
    for (let i = 0; i < 8; i++) await http.request(get());
    expect(reports.map((r) => r.code)).toEqual(Array(8).fill('200'));
    // 3 + 3 + 2 requests in three windows: two waits for a reset, none in between.
    const seconds = server.requests.map((r) => Math.floor(r.at / 1000));
    expect([...new Set(seconds)]).toHaveLength(3);
    for (const second of new Set(seconds)) expect(seconds.filter((s) => s === second).length).toBeLessThanOrEqual(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('learns the budget only when asked to pace (a plain client spends requests on 429s)', async () => {
    const server = await startServer(burstLimited(2));
    const reports: RequestReport[] = [];
    const http = client(server.url, { onRequest: (r) => reports.push(r) });
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
    for (let i = 0; i < 3; i++) await http.request(get());
    expect(reports.map((r) => r.code)).toEqual(['200', '200', '429', '200']);
  });

  it('paces each endpoint on its own budget', async () => {
    const server = await startServer(burstLimited(1));
    const http = client(server.url, { retry: { paceRateLimit: true } });
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
    await http.request(get('/v2/logs', '/v2/logs'));
    const before = Date.now();
    await http.request(get('/v2/schedules', '/v2/schedules'));
    expect(Date.now() - before).toBeLessThan(300);
    await http.request(get('/v2/logs', '/v2/logs'));
    expect(Date.now() - before).toBeGreaterThanOrEqual(500);
    expect(server.requests).toHaveLength(3);
  });

  it('does not wait for a reset further away than maxRateLimitWaitMs: the service decides', async () => {
    const resetSeconds = Math.ceil(Date.now() / 1000) + 60;
    const server = await startServer((_req, res) =>
      json(res, 200, { ok: true }, { 'burst-ratelimit-remaining': '0', 'burst-ratelimit-reset': String(resetSeconds) }),
    );
    const http = client(server.url, { retry: { maxRateLimitWaitMs: 5_000, paceRateLimit: true } });
    const started = Date.now();
    await http.request(get());
    await http.request(get());
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('aborts the wait for a reset through the signal', async () => {
    const resetSeconds = Math.ceil(Date.now() / 1000) + 20;
    const server = await startServer((_req, res) =>
      json(res, 200, { ok: true }, { 'burst-ratelimit-remaining': '0', 'burst-ratelimit-reset': String(resetSeconds) }),
    );
    const controller = new AbortController();
    const http = client(server.url, { signal: controller.signal, retry: { paceRateLimit: true } });
    await http.request(get());
    const started = Date.now();
    const pending = failure(http.request(get()));
    setTimeout(() => controller.abort(), 100);
    const error = await pending;
    expect(error).toBeInstanceOf(ApiAbortedError);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps one abort listener on a signal whatever the waits on it, and its abort ends them all at once', async () => {
    // A limit of 1 a second: every request after the first waits for its own slot, a second apart.
    const server = await startServer(burstLimited(1));
    const walkStop = new AbortController();
    const http = client(server.url, { retry: { paceRateLimit: true, maxRateLimitWaitMs: 30_000 } });
    const request = { ...get(), signal: walkStop.signal };
    await http.request(request);
    const pending = Array.from({ length: 12 }, () => failure(http.request(request)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A listener per wait grew with the walk's parallel chains, past EventTarget's leak warning.
    expect(getEventListeners(walkStop.signal, 'abort').length).toBeLessThanOrEqual(1);
    const started = Date.now();
    walkStop.abort();
    const errors = await Promise.all(pending);
    expect(Date.now() - started).toBeLessThan(200);
    for (const error of errors) expect(error).toBeInstanceOf(ApiAbortedError);
    expect(server.requests).toHaveLength(1);
  });
});

describe('rateLimitWaitMs', () => {
  const now = 1_700_000_000_000;
  it('reads Retry-After seconds and dates, and Burst-RateLimit-Reset in s or ms', () => {
    expect(rateLimitWaitMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(rateLimitWaitMs({ 'retry-after': new Date(now + 3000).toUTCString() }, now)).toBe(3000);
    expect(rateLimitWaitMs({ 'burst-ratelimit-reset': String(now / 1000 + 4) }, now)).toBe(4000);
    expect(rateLimitWaitMs({ 'burst-ratelimit-reset': String(now + 1500) }, now)).toBe(1500);
    expect(rateLimitWaitMs({ 'burst-ratelimit-reset': '1' }, now)).toBe(1000);
    expect(rateLimitWaitMs({ 'retry-after': '1', 'burst-ratelimit-reset': String(now / 1000 + 5) }, now)).toBe(5000);
    expect(rateLimitWaitMs({ 'burst-ratelimit-reset': String(now / 1000 - 10) }, now)).toBe(0);
    expect(rateLimitWaitMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(rateLimitWaitMs({}, now)).toBeUndefined();
  });
});
