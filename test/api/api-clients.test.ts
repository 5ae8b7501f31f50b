// DeliveryClient and ManagementClient against real node:http servers on 127.0.0.1: auth
// headers, the logs cursor walk, filters, schema drift, enqueue/trigger wire format, and the
// management endpoints.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/qstash';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import type { DeliveryClientOptions } from '../../src/api/delivery.js';
import { ManagementClient, VECTOR_STATS_SERIES } from '../../src/api/management.js';
import type { ManagementClientOptions } from '../../src/api/management.js';
import { ApiError, ApiNotFoundError, ApiSchemaDriftError } from '../../src/api/errors.js';
import type { RequestReport } from '../../src/api/http.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Received, res: ServerResponse, index: number) => void;

const servers: Array<() => Promise<void>> = [];
const closers: Array<() => Promise<void>> = [];

async function startServer(handler: Handler): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      handler(received, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const TOKEN = 'canary-qstash-token-a1b2c3';
const EMAIL = 'ops@example.com';
const API_KEY = 'canary-mgmt-key-d4e5f6';

function delivery(baseUrl: string, options: Partial<DeliveryClientOptions> = {}): DeliveryClient {
  const client = new DeliveryClient({ baseUrl, token: TOKEN, retry: { maxRetries: 0 }, ...options });
  closers.push(() => client.close());
  return client;
}

function management(baseUrl: string, options: Partial<ManagementClientOptions> = {}): ManagementClient {
  const client = new ManagementClient({ baseUrl, email: EMAIL, apiKey: API_KEY, retry: { maxRetries: 0 }, ...options });
  closers.push(() => client.close());
  return client;
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
  url: 'https://example.com/hook',
  queueName: 'q1',
  ...extra,
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((close) => close()));
});

describe('DeliveryClient logs', () => {
  it('walks the cursor over several pages until the cursor is absent, with the Bearer token', async () => {
    const pages: Record<string, unknown> = {
      '': { cursor: 'c1', logs: [entry(0), entry(1)] },
      c1: { cursor: 'c2', logs: [entry(2), entry(3)] },
      c2: { logs: [entry(4)] },
    };
    const server = await startServer((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor') ?? '';
      json(res, 200, pages[cursor]);
    });
    const client = delivery(server.url);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pageCount = 0;
    do {
      const page = await client.logsPage({ cursor, count: 2 });
      pageCount++;
      seen.push(...page.logs.map((log) => log.messageId));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(pageCount).toBe(3);
    expect(seen).toEqual(['msg_0', 'msg_1', 'msg_2', 'msg_3', 'msg_4']);
    expect(server.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v2/events?count=2&trimBody=0',
      '/v2/events?cursor=c1&count=2&trimBody=0',
      '/v2/events?cursor=c2&count=2&trimBody=0',
    ]);
  });

  it('reads the list from "events" as well as "logs", on a configurable path', async () => {
    const server = await startServer((_req, res) => json(res, 200, { events: [entry(0), entry(1)] }));
    const client = delivery(server.url, { logsPath: '/v2/logs' });
    const page = await client.logsPage();
    expect(page.logs.map((l) => l.messageId)).toEqual(['msg_0', 'msg_1']);
    expect(page.cursor).toBeUndefined();
    expect(server.requests[0]!.url).toBe('/v2/logs?trimBody=0');
  });

  it('sends every filter, labels as repeated parameters, and clamps count to 1..1000', async () => {
    const server = await startServer((_req, res) => json(res, 200, { logs: [] }));
    const client = delivery(server.url);
    await client.logsPage({
      cursor: 'cur-1',
      messageId: 'msg_1',
      state: 'FAILED',
      url: 'https://example.com/a?b=1',
      topicName: 'group-1',
      scheduleId: 'scd_1',
      queueName: 'q1',
      fromDate: 1_700_000_000_000,
      toDate: new Date(1_700_000_100_000),
      count: 5000,
      label: ['blue', 'green'],
    });
    const params = new URL(server.requests[0]!.url, 'http://x').searchParams;
    expect(params.get('count')).toBe('1000');
    expect(params.getAll('label')).toEqual(['blue', 'green']);
    expect(Object.fromEntries([...params].filter(([k]) => k !== 'label'))).toEqual({
      cursor: 'cur-1',
      messageId: 'msg_1',
      state: 'FAILED',
      url: 'https://example.com/a?b=1',
      topicName: 'group-1',
      scheduleId: 'scd_1',
      queueName: 'q1',
      fromDate: '1700000000000',
      toDate: '1700000100000',
      count: '1000',
      trimBody: '0',
    });
    await client.logsPage({ count: 0, label: 'solo' });
    const second = new URL(server.requests[1]!.url, 'http://x').searchParams;
    expect(second.get('count')).toBe('1');
    expect(second.getAll('label')).toEqual(['solo']);
  });

  it('reports a wrong type as ApiSchemaDriftError with its path', async () => {
    const server = await startServer((_req, res) => json(res, 200, { logs: [entry(0), entry(1, { time: true })] }));
    const error = await failure(delivery(server.url).logsPage());
    expect(error).toBeInstanceOf(ApiSchemaDriftError);
    const drift = error as ApiSchemaDriftError;
    expect(drift.code).toBe('ERR_API_SCHEMA_DRIFT');
    expect(drift.path).toBe('logs[1].time');
    expect(drift.endpoint).toBe('/v2/events');
    expect(drift.message).toContain('logs[1].time');
    expect(drift.message).toContain('boolean');
  });

  it('checks the types of optional fields, accepts unknown fields, nulls and string times', async () => {
    const server = await startServer((_req, res, i) => {
      if (i === 0) {
        json(res, 200, {
          events: [
            entry(0, { time: '1761200000000', labels: null, futureField: { nested: [1] } }),
            { time: 5, messageId: 'msg_nostate' },
          ],
        });
      } else if (i === 1) json(res, 200, { events: [entry(0, { responseStatus: '500' })] });
      else if (i === 2) json(res, 200, { logs: [entry(0, { labels: ['a', 7] })] });
      else if (i === 3) json(res, 200, { events: [{ time: 1 }] });
      else json(res, 200, { cursor: 'x' });
    });
    const client = delivery(server.url);
    const page = await client.logsPage();
    expect(page.logs[0]!.time).toBe(1_761_200_000_000);
    expect(page.logs[0]!.labels).toBeUndefined();
    // Checked as JSON and passed over: the page reader keeps the fields the exporter reads.
    expect(page.logs[0]!.futureField).toBeUndefined();
    expect(page.logs[0]!.messageId).toBe('msg_0');
    expect(page.logs[1]!.state).toBeUndefined();

    const paths: string[] = [];
    for (let i = 0; i < 4; i++) {
      const error = await failure(client.logsPage());
      expect(error).toBeInstanceOf(ApiSchemaDriftError);
      paths.push((error as ApiSchemaDriftError).path);
    }
    expect(paths).toEqual(['events[0].responseStatus', 'logs[0].labels', 'events[0].messageId', 'logs']);
  });

  it('reports every request with the endpoint template', async () => {
    const server = await startServer((_req, res) => json(res, 200, { logs: [] }));
    const reports: RequestReport[] = [];
    await delivery(server.url, { onRequest: (r) => reports.push(r) }).logsPage({ messageId: 'msg_secretish' });
    expect(reports).toEqual([
      expect.objectContaining({ api: 'qstash', endpoint: '/v2/events', method: 'GET', code: '200' }),
    ]);
  });
});

describe('DeliveryClient schedules', () => {
  const schedule = {
    scheduleId: 'scd_1',
    cron: '*/5 * * * *',
    destination: 'https://example.com/cron',
    createdAt: 1_754_565_618_803,
    method: 'POST',
    isPaused: false,
    lastScheduleStates: { msg_1: 'SUCCESS' },
    callerIP: '127.0.0.1',
    somethingNew: 1,
  };

  it('lists schedules and reports drift with the element path', async () => {
    const { isPaused: _omitted, ...withoutPaused } = schedule;
    const server = await startServer((_req, res, i) =>
      i === 0
        ? json(res, 200, [schedule, { ...withoutPaused, scheduleId: 'scd_2', isPaused: undefined }])
        : json(res, 200, [schedule, { ...schedule, createdAt: '2025-01-01' }]),
    );
    const client = delivery(server.url);
    const list = await client.listSchedules();
    expect(list.map((s) => [s.scheduleId, s.isPaused])).toEqual([
      ['scd_1', false],
      ['scd_2', false],
    ]);
    expect(list[0]!.lastScheduleStates).toEqual({ msg_1: 'SUCCESS' });
    expect(list[0]!.somethingNew).toBe(1);
    const error = await failure(client.listSchedules());
    expect(error).toBeInstanceOf(ApiSchemaDriftError);
    expect((error as ApiSchemaDriftError).path).toBe('[1].createdAt');
  });

  it('pauses with PATCH (as the SDKs) on the URL-encoded id, reporting the template', async () => {
    const server = await startServer((req, res) =>
      req.url.includes('unknown') ? json(res, 404, { error: 'schedule not found' }) : res.writeHead(200).end(),
    );
    const reports: RequestReport[] = [];
    const client = delivery(server.url, { onRequest: (r) => reports.push(r) });
    await client.pauseSchedule('scd 1/x');
    expect(server.requests[0]).toMatchObject({ method: 'PATCH', url: '/v2/schedules/scd%201%2Fx/pause' });
    expect(reports[0]).toMatchObject({ endpoint: '/v2/schedules/:id/pause', code: '200' });
    const error = await failure(client.pauseSchedule('unknown'));
    expect(error).toBeInstanceOf(ApiNotFoundError);
    expect(error.message).toContain('/v2/schedules/:id/pause');
    expect(error.message).not.toContain('unknown');
  });
});

describe('DeliveryClient enqueue and trigger', () => {
  it('enqueues to a URL (object answer) with the raw destination and prefixed headers', async () => {
    const server = await startServer((_req, res) =>
      json(res, 200, { messageId: 'msg_a', url: 'https://example.com/hook' }),
    );
    const reports: RequestReport[] = [];
    const client = delivery(server.url, { onRequest: (r) => reports.push(r) });
    const result = await client.enqueue({
      queueName: 'orders',
      destination: 'https://example.com/hook?x=1',
      body: '{"id":1}',
      contentType: 'application/json',
      retries: 2,
      retryDelay: 'pow(2, retried) * 1000',
      timeout: 30,
      delay: '10s',
      notBefore: 1_900_000_000,
      labels: ['blue', 'green'],
      deduplicationId: 'dedup-1',
      contentBasedDeduplication: true,
      callback: 'https://example.com/cb',
      failureCallback: 'https://example.com/fail',
      forwardHeaders: { 'X-Custom': 'v1' },
      redactFields: ['body', 'header[Authorization]'],
    });
    expect(result).toEqual([{ messageId: 'msg_a', url: 'https://example.com/hook' }]);
    const req = server.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v2/enqueue/orders/https://example.com/hook?x=1');
    expect(req.body).toBe('{"id":1}');
    expect(req.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'upstash-method': 'POST',
      'upstash-retries': '2',
      'upstash-retry-delay': 'pow(2, retried) * 1000',
      'upstash-timeout': '30s',
      'upstash-delay': '10s',
      'upstash-not-before': '1900000000',
      'upstash-label': 'blue,green',
      'upstash-deduplication-id': 'dedup-1',
      'upstash-content-based-deduplication': 'true',
      'upstash-callback': 'https://example.com/cb',
      'upstash-failure-callback': 'https://example.com/fail',
      'upstash-forward-x-custom': 'v1',
      'upstash-redact-fields': 'body,header[Authorization]',
    });
    expect(reports[0]).toMatchObject({ endpoint: '/v2/enqueue/:queue/:destination', code: '200' });
  });

  it('enqueues to a URL Group (bare array answer) with a custom header prefix', async () => {
    const server = await startServer((_req, res) =>
      json(res, 200, [
        { messageId: 'msg_1', url: 'https://a.example.com' },
        { messageId: 'msg_2', url: 'https://b.example.com', deduplicated: true },
      ]),
    );
    const result = await delivery(server.url, { headerPrefix: 'Svc-' }).enqueue({
      queueName: 'q1',
      destination: 'my-group',
      body: 'hello',
    });
    expect(result.map((r) => [r.messageId, r.deduplicated])).toEqual([
      ['msg_1', undefined],
      ['msg_2', true],
    ]);
    expect(server.requests[0]!.url).toBe('/v2/enqueue/q1/my-group');
    expect(server.requests[0]!.headers['svc-method']).toBe('POST');
    expect(server.requests[0]!.headers['upstash-method']).toBeUndefined();
  });

  it('puts the destination in the path exactly as the official SDK does', async () => {
    const server = await startServer((_req, res) => json(res, 200, { messageId: 'msg_x', url: 'u' }));
    const destination = 'https://example.com/a b/ünï?q=1&r=2#frag';
    await delivery(server.url).enqueue({ queueName: 'q1', destination, body: 'x' });
    const sdk = new Client({ baseUrl: server.url, token: TOKEN, retry: false, devMode: false });
    await sdk.queue({ queueName: 'q1' }).enqueue({ url: destination, body: 'x' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.url).toBe(server.requests[1]!.url);
  });

  it('does not retry a plain enqueue on 5xx (it may have been accepted), but retries a deduplicated one', async () => {
    const server = await startServer((_req, res, i) =>
      i < 2 ? json(res, 500, { error: 'oops' }) : json(res, 200, { messageId: 'm' }),
    );
    const client = delivery(server.url, { retry: { maxRetries: 2, baseDelayMs: 1 } });
    await failure(client.enqueue({ queueName: 'q', destination: 'https://e.com', body: '' }));
    expect(server.requests).toHaveLength(1);
    await expect(
      client.enqueue({ queueName: 'q', destination: 'https://e.com', body: '', deduplicationId: 'd' }),
    ).resolves.toEqual([{ messageId: 'm' }]);
    expect(server.requests).toHaveLength(3);
  });

  it('triggers a workflow with the raw URL and prefixed headers', async () => {
    const server = await startServer((_req, res) =>
      json(res, 200, { workflowRunId: 'wfr_1', workflowCreatedAt: 1_761_200_000_000 }),
    );
    const reports: RequestReport[] = [];
    const result = await delivery(server.url, { onRequest: (r) => reports.push(r) }).triggerWorkflow({
      workflowUrl: 'https://wf.example.com/api/workflow',
      body: '{"start":true}',
      runId: 'run-1',
      retries: 3,
      delay: 5,
      labels: ['x'],
      flowControl: { key: 'fc', parallelism: 3, rate: 5, period: '10s' },
      failureCallback: 'https://wf.example.com/failed',
      forwardHeaders: { 'X-Trace': 't1' },
      retryDelay: '1000',
    });
    expect(result).toMatchObject({ workflowRunId: 'wfr_1', workflowCreatedAt: 1_761_200_000_000 });
    const req = server.requests[0]!;
    expect(req.url).toBe('/v2/trigger/https://wf.example.com/api/workflow');
    expect(req.body).toBe('{"start":true}');
    expect(req.headers).toMatchObject({
      'upstash-workflow-runid': 'run-1',
      'upstash-retries': '3',
      'upstash-delay': '5s',
      'upstash-label': 'x',
      'upstash-flow-control-key': 'fc',
      'upstash-flow-control-value': 'parallelism=3, rate=5, period=10s',
      'upstash-failure-callback': 'https://wf.example.com/failed',
      'upstash-forward-x-trace': 't1',
      'upstash-retry-delay': '1000',
    });
    expect(reports[0]).toMatchObject({ endpoint: '/v2/trigger/:url' });
  });
});

describe('ManagementClient', () => {
  const basic = `Basic ${Buffer.from(`${EMAIL}:${API_KEY}`).toString('base64')}`;
  const point = (y: number) => ({ x: '2025-10-23 17:34:00.000 +0000 UTC', y });

  it('reads the account record with Basic auth, dropping secret fields', async () => {
    const server = await startServer((_req, res) =>
      json(res, 200, {
        customer_id: EMAIL,
        state: 'active',
        active: true,
        max_queues: 1000,
        timeout: 21600,
        type: 'paid',
        token: 'service-token-value',
        password: 'service-password',
        read_only_token: 'ro',
        prometheus_enabled: 'true',
      }),
    );
    const account = await management(server.url).account();
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/v2/qstash/user' });
    expect(server.requests[0]!.headers.authorization).toBe(basic);
    expect(account).toMatchObject({
      state: 'active',
      active: true,
      max_queues: 1000,
      timeout: 21600,
      prometheus_enabled: 'true',
    });
    expect(account).not.toHaveProperty('token');
    expect(account).not.toHaveProperty('password');
    expect(account).not.toHaveProperty('read_only_token');
  });

  it('uses the configured account path and reports drift without the value', async () => {
    const server = await startServer((_req, res) => json(res, 200, { max_queues: 'canary-value-in-wrong-field' }));
    const error = await failure(management(server.url, { accountPath: '/v2/svc/user' }).account());
    expect(server.requests[0]!.url).toBe('/v2/svc/user');
    expect(error).toBeInstanceOf(ApiSchemaDriftError);
    expect((error as ApiSchemaDriftError).path).toBe('max_queues');
    expect(error.endpoint).toBe('/v2/svc/user');
    for (const text of [String(error), JSON.stringify(error), error.stack ?? '']) {
      expect(text).not.toContain('canary-value-in-wrong-field');
      expect(text).not.toContain(API_KEY);
    }
  });

  it('lists search indexes (vercel_email or partner_email) and vector indexes', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/v2/search') {
        json(res, 200, [
          {
            id: 's1',
            name: 'one',
            vercel_email: '',
            max_daily_queries: -1,
            token: 'sec',
            throughput_vector: [point(3)],
          },
          { id: 's2', name: 'two', partner_email: 'p@example.com' },
        ]);
      } else json(res, 200, [{ id: 'v1', name: 'vec', dimension_count: 1536, read_only_token: 'sec' }]);
    });
    const client = management(server.url);
    const search = await client.listSearchIndexes();
    expect(search.map((s) => s.id)).toEqual(['s1', 's2']);
    expect(search[0]!.max_daily_queries).toBe(-1);
    expect(search[0]!.throughput_vector).toEqual([point(3)]);
    expect(search[0]).not.toHaveProperty('token');
    expect(search[1]!.partner_email).toBe('p@example.com');
    const vectors = await client.listVectorIndexes();
    expect(vectors).toEqual([{ id: 'v1', name: 'vec', dimension_count: 1536 }]);
    expect(server.requests.map((r) => r.url)).toEqual(['/v2/search', '/v2/vector/index']);
  });

  it('reads vector stats for a period, with series and drift inside a series', async () => {
    const stats: Record<string, unknown> = { current_vector_count: 1000, monthly_cost: 0.5, days: ['Monday'] };
    for (const name of VECTOR_STATS_SERIES) stats[name] = [point(1), point(2)];
    stats.daily_rerank_requests = null; // Go nil slice
    const server = await startServer((_req, res, i) =>
      i === 0
        ? json(res, 200, stats)
        : json(res, 200, { ...stats, query_latency_99: [point(1), { x: 't', y: 'NaN' }] }),
    );
    const reports: RequestReport[] = [];
    const client = management(server.url, { onRequest: (r) => reports.push(r) });
    const result = await client.vectorStats('idx/1', '7d');
    expect(server.requests[0]!.url).toBe('/v2/vector/index/idx%2F1/stats?period=7d');
    expect(result.current_vector_count).toBe(1000);
    expect(result.query_throughput).toHaveLength(2);
    expect(result.daily_rerank_requests).toBeUndefined();
    expect(reports[0]).toMatchObject({ api: 'management', endpoint: '/v2/vector/index/:id/stats', code: '200' });

    const error = await failure(client.vectorStats('idx-2'));
    expect(server.requests[1]!.url).toBe('/v2/vector/index/idx-2/stats?period=1h');
    expect((error as ApiSchemaDriftError).path).toBe('query_latency_99[1].y');
  });
});
