// The emulator's HTTP contract: authentication like the service, 400 naming the field for every
// malformed request, 404 for unknown schedules and routes, the body size limit, and robustness:
// random input never crashes it and every answer is JSON.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { SeededRandom } from '../../src/emulator/random.js';
import { startDestination, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
let target: Destination;

beforeAll(async () => {
  emulator = await createEmulator({ token: 'secret-token', maxBodyBytes: 1024 });
  target = await startDestination();
});

afterAll(async () => {
  await target.close();
  await emulator.close();
});

function bearer(token = 'secret-token'): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

describe('authentication', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/v2/logs'],
    ['GET', '/v2/events'],
    ['GET', '/v2/schedules'],
    ['POST', '/v2/schedules/x/pause'],
    ['POST', '/v2/enqueue/q/http://127.0.0.1:1/x'],
    ['POST', '/v2/publish/http://127.0.0.1:1/x'],
    ['POST', '/v2/trigger/http://127.0.0.1:1/x'],
    ['GET', '/v2/topics'],
    ['GET', '/v2/queues'],
  ];

  it.each(routes)('%s %s answers 401 with a JSON error without a valid Bearer token', async (method, path) => {
    for (const headers of [
      {},
      bearer('wrong'),
      { authorization: 'Basic c2VjcmV0LXRva2Vu' },
      { authorization: 'Bearer' },
    ]) {
      const response = await fetch(`${emulator.url}${path}`, { method, headers });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: string };
      expect(body.error).toMatch(/unauthorized/);
      expect(JSON.stringify(body)).not.toContain('secret-token');
    }
  });

  it('accepts the token as the qstash_token query parameter, which is not forwarded', async () => {
    const response = await fetch(`${emulator.url}/v2/publish/${target.url}/q?keep=1&qstash_token=secret-token`, {
      method: 'POST',
      body: 'x',
    });
    expect(response.status).toBe(200);
    const [request] = await target.waitForRequests(1);
    expect(request!.url).toBe('/q?keep=1');
    expect((await fetch(`${emulator.url}/v2/logs?qstash_token=secret-token`)).status).toBe(200);
  });

  it('leaves the admin path open (loopback tool)', async () => {
    expect((await fetch(`${emulator.url}/__emulator/knobs`)).status).toBe(200);
  });
});

describe('malformed requests', () => {
  const cases: Array<{
    name: string;
    path: string;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
    field: string;
  }> = [
    { name: 'bad scheme', path: '/v2/publish/ftp://127.0.0.1/x', field: 'destination' },
    { name: 'missing destination', path: '/v2/publish/', field: 'destination' },
    { name: 'bad group name', path: '/v2/publish/bad%20name', field: 'destination' },
    {
      name: 'bad retries',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Retries': 'many' },
      field: 'Upstash-Retries',
    },
    {
      name: 'negative retries',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Retries': '-1' },
      field: 'Upstash-Retries',
    },
    {
      name: 'bad timeout',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Timeout': '10 parsecs' },
      field: 'Upstash-Timeout',
    },
    {
      name: 'timeout without unit',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Timeout': '30' },
      field: 'Upstash-Timeout',
    },
    {
      name: 'bad delay',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Delay': 'soon' },
      field: 'Upstash-Delay',
    },
    {
      name: 'bad not-before',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Not-Before': 'tomorrow' },
      field: 'Upstash-Not-Before',
    },
    {
      name: 'bad retry delay',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Retry-Delay': 'process.exit(1)' },
      field: 'Upstash-Retry-Delay',
    },
    {
      name: 'retry delay arity',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Retry-Delay': 'pow(2)' },
      field: 'Upstash-Retry-Delay',
    },
    {
      name: 'bad method',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Method': 'BREW' },
      field: 'Upstash-Method',
    },
    {
      name: 'bad callback',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Callback': 'mailto:me' },
      field: 'Upstash-Callback',
    },
    {
      name: 'bad failure callback retries',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Failure-Callback': 'http://127.0.0.1:1/f', 'Upstash-Failure-Callback-Retries': 'x' },
      field: 'Upstash-Failure-Callback-Retries',
    },
    {
      name: 'bad redact field',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Redact-Fields': 'everything' },
      field: 'Upstash-Redact-Fields',
    },
    {
      name: 'bad dedup flag',
      path: '/v2/publish/http://127.0.0.1:1/x',
      headers: { 'Upstash-Content-Based-Deduplication': 'maybe' },
      field: 'Upstash-Content-Based-Deduplication',
    },
    {
      name: 'flow control key without value',
      path: '/v2/trigger/http://127.0.0.1:1/x',
      headers: { 'Upstash-Flow-Control-Key': 'k' },
      field: 'Upstash-Flow-Control-Value',
    },
    {
      name: 'bad flow control value',
      path: '/v2/trigger/http://127.0.0.1:1/x',
      headers: { 'Upstash-Flow-Control-Key': 'k', 'Upstash-Flow-Control-Value': 'speed=fast' },
      field: 'Upstash-Flow-Control-Value',
    },
    { name: 'trigger to a group', path: '/v2/trigger/some-group', field: 'workflowUrl' },
    { name: 'bad queue name', path: '/v2/enqueue/bad%20queue/http://127.0.0.1:1/x', field: 'queueName' },
    { name: 'missing cron', path: '/v2/schedules/http://127.0.0.1:1/x', field: 'Upstash-Cron' },
    {
      name: 'bad cron',
      path: '/v2/schedules/http://127.0.0.1:1/x',
      headers: { 'Upstash-Cron': '61 * * * *' },
      field: 'Upstash-Cron',
    },
    {
      name: 'six-field cron',
      path: '/v2/schedules/http://127.0.0.1:1/x',
      headers: { 'Upstash-Cron': '* * * * * *' },
      field: 'Upstash-Cron',
    },
    {
      name: 'bad cron zone',
      path: '/v2/schedules/http://127.0.0.1:1/x',
      headers: { 'Upstash-Cron': 'CRON_TZ=Mars/Olympus 0 * * * *' },
      field: 'Upstash-Cron',
    },
    { name: 'topics without JSON', path: '/v2/topics/g/endpoints', body: 'not json', field: 'body' },
    {
      name: 'topics bad endpoint url',
      path: '/v2/topics/g/endpoints',
      body: JSON.stringify({ endpoints: [{ url: 'nope' }] }),
      field: 'endpoints[0].url',
    },
    {
      name: 'topics no endpoints',
      path: '/v2/topics/g/endpoints',
      body: JSON.stringify({ endpoints: [] }),
      field: 'endpoints',
    },
    {
      name: 'queue upsert parallelism',
      path: '/v2/queues',
      body: JSON.stringify({ queueName: 'q', parallelism: 0 }),
      field: 'parallelism',
    },
    { name: 'publish with GET', path: '/v2/publish/http://127.0.0.1:1/x', method: 'GET', field: 'method' },
  ];

  it.each(cases)('$name → 400 naming $field', async ({ path, headers, method, body, field }) => {
    const response = await fetch(`${emulator.url}${path}`, {
      method: method ?? 'POST',
      headers: { ...bearer(), ...headers },
      body: method === 'GET' ? undefined : (body ?? 'x'),
    });
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error: string };
    expect(answer.error).toContain(field);
  });

  it('answers 404 for unknown schedules, URL Groups, queues and routes', async () => {
    for (const [method, path] of [
      ['GET', '/v2/schedules/nope'],
      ['DELETE', '/v2/schedules/nope'],
      ['POST', '/v2/schedules/nope/pause'],
      ['PATCH', '/v2/schedules/nope/pause'],
      ['PATCH', '/v2/schedules/nope/resume'],
      ['GET', '/v2/topics/nope'],
      ['POST', '/v2/publish/nope'],
      ['GET', '/v2/queues/nope'],
      ['GET', '/v2/nothing-here'],
    ] as const) {
      const response = await fetch(`${emulator.url}${path}`, { method, headers: bearer() });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBeTruthy();
    }
  });

  it('answers 413 above the body size limit', async () => {
    const response = await fetch(`${emulator.url}/v2/publish/${target.url}/big`, {
      method: 'POST',
      headers: bearer(),
      body: 'x'.repeat(2048),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'request body too large' });
    expect(
      (
        await fetch(`${emulator.url}/v2/publish/${target.url}/ok`, {
          method: 'POST',
          headers: bearer(),
          body: 'x'.repeat(1000),
        })
      ).status,
    ).toBe(200);
  });
});

describe('robustness', () => {
  it('survives random paths, methods, headers and bodies, answering JSON every time', async () => {
    const random = new SeededRandom(99);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random.next() * items.length)]!;
    const pieces = [
      'v2',
      'publish',
      'enqueue',
      'schedules',
      'topics',
      'queues',
      'logs',
      'events',
      'trigger',
      'pause',
      'resume',
      'endpoints',
      'http:',
      '',
      '%',
      '%zz',
      '..',
      'https://127.0.0.1:1',
      '__emulator',
      'knobs',
      'ground-truth',
      'ümlaut',
      '?',
      '&cursor=',
      ';',
    ];
    const headerNames = [
      'Upstash-Retries',
      'Upstash-Delay',
      'Upstash-Timeout',
      'Upstash-Retry-Delay',
      'Upstash-Cron',
      'Upstash-Method',
      'Upstash-Label',
      'Upstash-Redact-Fields',
      'Upstash-Not-Before',
      'Upstash-Flow-Control-Value',
      'Content-Type',
    ];
    const values = [
      '',
      '-1',
      '1e999',
      'pow(',
      'retried/0',
      '9'.repeat(40),
      '* * * * *',
      'GET',
      'body,header[',
      '{}',
      '1h1h1h',
      ',,,',
      'null',
    ];
    for (let i = 0; i < 150; i++) {
      const path = `/${Array.from({ length: 1 + Math.floor(random.next() * 6) }, () => pick(pieces)).join('/')}`;
      const headers: Record<string, string> = random.next() < 0.8 ? bearer() : {};
      for (let h = 0; h < 3; h++) if (random.next() < 0.5) headers[pick(headerNames)] = pick(values);
      const method = pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
      let response: Response;
      try {
        response = await fetch(`${emulator.url}${path}`, {
          method,
          headers,
          body: method === 'GET' ? undefined : pick(['', '{"endpoints":[{"url":1}]}', '[', 'x'.repeat(50)]),
        });
      } catch (error) {
        // A URL the client itself refuses to send is not the emulator's concern.
        if (error instanceof TypeError && /Invalid URL|Failed to parse/.test(String(error.message))) continue;
        throw error;
      }
      const text = await response.text();
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      if (text !== '') expect(() => JSON.parse(text) as unknown, `${method} ${path}: ${text}`).not.toThrow();
    }
    expect((await fetch(`${emulator.url}/v2/logs`, { headers: bearer() })).status).toBe(200);
  });

  it('answers 400 to bytes that are not HTTP and keeps serving', async () => {
    const { port } = new URL(emulator.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('\x00\x01garbage that is not http\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await fetch(`${emulator.url}/v2/logs`, { headers: bearer() })).status).toBe(200);
  });
});
