// The log endpoints and the test knobs: cursor paging (every entry exactly once, also while new
// events arrive), every filter, inclusive date bounds, count, /v2/events, retention with the
// ground truth, visibility delay, entries without state, a repeated cursor, the rate limit,
// 5xx, malformed and truncated bodies, latency, the fault scope and the admin API.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { DEFAULT_KNOBS } from '../../src/emulator/knobs.js';
import { allLogs, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
let target: Destination;

beforeAll(async () => {
  emulator = await createEmulator({ seed: 7 });
  target = await startDestination((request) => ({ status: request.url.startsWith('/fail') ? 500 : 200 }));
});

afterEach(() => {
  emulator.reset();
  emulator.setKnobs(DEFAULT_KNOBS);
});

afterAll(async () => {
  await target.close();
  await emulator.close();
});

function auth(): Record<string, string> {
  return { authorization: `Bearer ${emulator.credentials.token}` };
}

async function publishMany(
  count: number,
  pathOf: (i: number) => string,
  headers: (i: number) => Record<string, string> = () => ({}),
): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, async (_, offset) => {
        const i = start + offset;
        const response = await fetch(`${emulator.url}/v2/publish/${target.url}${pathOf(i)}`, {
          method: 'POST',
          headers: { ...auth(), 'Upstash-Retries': '0', ...headers(i) },
          body: `m${i}`,
        });
        return ((await response.json()) as { messageId: string }).messageId;
      }),
    );
    ids.push(...batch);
  }
  return ids;
}

async function getLogs(query: string, path = '/v2/logs'): Promise<Response> {
  return fetch(`${emulator.url}${path}?${query}`, { headers: auth() });
}

async function settled(total: number): Promise<void> {
  await waitFor(() => emulator.groundTruth().total >= total, 10_000, `${total} log events`);
}

describe('paging', () => {
  it('returns every entry exactly once, newest first, while new events keep arriving', async () => {
    await publishMany(100, (i) => `/p/${i}`);
    await settled(300);
    const snapshot = await allLogs(emulator);
    expect(snapshot).toHaveLength(300);
    const times = snapshot.map((entry) => Number(entry.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // Walk again in pages of 7 while more messages are published between pages.
    const walked: Array<Record<string, unknown>> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await getLogs(`count=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const page = (await response.json()) as { cursor?: string; logs: Array<Record<string, unknown>> };
      walked.push(...page.logs);
      cursor = page.cursor;
      pages++;
      if (pages % 5 === 1) await publishMany(5, (i) => `/late/${pages}/${i}`);
    } while (cursor);
    const key = (entry: Record<string, unknown>): string => `${String(entry.messageId)}/${String(entry.state)}`;
    const walkedKeys = walked.map(key);
    expect(new Set(walkedKeys).size).toBe(walkedKeys.length);
    // Exactly the entries that existed when the walk started: the late ones are newer than its
    // first page, and later pages only go older.
    expect(walkedKeys).toEqual(snapshot.map(key));
    expect(pages).toBe(Math.ceil(300 / 7));
    expect(emulator.groundTruth().total).toBeGreaterThan(300);
  });

  it('count defaults to 100, larger values are clamped to maxPageSize (1000, or 100 as the OpenAPI says); the cursor is absent on the last page', async () => {
    await publishMany(40, (i) => `/c/${i}`);
    await settled(120);
    const first = (await (await getLogs('')).json()) as { cursor?: string; logs: unknown[] };
    expect(first.logs).toHaveLength(100);
    expect(typeof first.cursor).toBe('string');
    const whole = (await (await getLogs('count=1000')).json()) as Record<string, unknown>;
    expect((whole.logs as unknown[]).length).toBe(120);
    expect('cursor' in whole).toBe(false);
    emulator.setKnobs({ maxPageSize: 100 });
    const clamped = (await (await getLogs('count=1000')).json()) as { cursor?: string; logs: unknown[] };
    expect(clamped.logs).toHaveLength(100);
    const rest = (await (await getLogs(`count=1000&cursor=${encodeURIComponent(first.cursor!)}`)).json()) as Record<
      string,
      unknown
    >;
    expect((rest.logs as unknown[]).length).toBe(20);
    expect('cursor' in rest).toBe(false);
    const exact = (await (await getLogs('count=60')).json()) as { cursor?: string; logs: unknown[] };
    expect(exact.logs).toHaveLength(60);
    const lastPage = (await (await getLogs(`count=60&cursor=${encodeURIComponent(exact.cursor!)}`)).json()) as Record<
      string,
      unknown
    >;
    expect((lastPage.logs as unknown[]).length).toBe(60);
    expect('cursor' in lastPage).toBe(false);
  });

  it('serves /v2/events with the key events', async () => {
    await publishMany(1, () => '/e');
    await settled(3);
    const body = (await (await getLogs('', '/v2/events')).json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['events']);
    expect((body.events as unknown[]).length).toBe(3);
  });

  it('rejects malformed parameters with 400 naming them, and ignores unknown ones', async () => {
    for (const [query, field] of [
      ['count=0', 'count'],
      ['count=ten', 'count'],
      ['fromDate=yesterday', 'fromDate'],
      ['toDate=-1', 'toDate'],
      ['state=LOST', 'state'],
      ['cursor=garbage', 'cursor'],
    ] as const) {
      const response = await getLogs(query);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(field);
    }
    expect((await getLogs('groupBy=messageId&trimBody=0&order=latestFirst')).status).toBe(200);
  });
});

describe('filters', () => {
  it('filters by state (FAILED, IN_PROGRESS, both cancel spellings), url, label (OR), queue, date bounds (inclusive)', async () => {
    const ids = await publishMany(
      6,
      (i) => (i < 2 ? `/fail/${i}` : `/ok/${i}`),
      (i) => ({ 'Upstash-Label': i % 3 === 0 ? 'red' : i % 3 === 1 ? 'green' : 'blue' }),
    );
    await settled(6 * 3 + 2);
    const query = async (text: string): Promise<Array<Record<string, unknown>>> =>
      ((await (await getLogs(text)).json()) as { logs: Array<Record<string, unknown>> }).logs;

    expect((await query('state=FAILED')).map((entry) => entry.messageId).sort()).toEqual([ids[0], ids[1]].sort());
    expect((await query('state=IN_PROGRESS')).map((entry) => entry.state).sort()).toEqual([
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
      'ACTIVE',
      'ERROR',
      'ERROR',
    ]);
    expect(await query('state=CANCELED')).toEqual([]);
    expect(await query('state=CANCELLED')).toEqual([]);
    expect((await query('state=delivered&state=FAILED')).length).toBe(6);
    expect((await query('state=DELIVERED,FAILED')).length).toBe(6);

    const url = `${target.url}/ok/3`;
    expect(new Set((await query(`url=${encodeURIComponent(url)}`)).map((entry) => entry.messageId))).toEqual(
      new Set([ids[3]]),
    );
    const labelled = await query('label=red&label=green&state=CREATED');
    expect(labelled.map((entry) => entry.messageId).sort()).toEqual([ids[0], ids[1], ids[3], ids[4]].sort());
    expect((await query('label=red,blue&state=CREATED')).length).toBe(4);
    expect(await query('queueName=none')).toEqual([]);
    expect((await query(`host=${encodeURIComponent(new URL(target.url).host)}&path=/ok/2`)).length).toBe(3);
    expect((await query(`messageId=${ids[5]}`)).length).toBe(3);

    const all = await query('count=100');
    const middle = Number(all[Math.floor(all.length / 2)]!.time);
    const sameMs = all.filter((entry) => Number(entry.time) === middle);
    expect(await query(`fromDate=${middle}&toDate=${middle}`)).toEqual(sameMs);
    const newer = await query(`fromDate=${middle}`);
    expect(newer).toEqual(all.filter((entry) => Number(entry.time) >= middle));
    expect(await query(`toDate=${middle}`)).toEqual(all.filter((entry) => Number(entry.time) <= middle));
  });
});

describe('knobs', () => {
  it('keeps the newest N entries and counts every event ever written in the ground truth', async () => {
    emulator.setKnobs({ logRetention: 50 });
    await publishMany(30, (i) => (i < 10 ? `/fail/${i}` : `/ok/${i}`));
    await settled(30 * 3 + 10);
    const entries = await allLogs(emulator);
    expect(entries).toHaveLength(50);
    const truth = emulator.groundTruth();
    expect(truth).toMatchObject({ total: 100, retained: 50, dropped: 50 });
    expect(truth.byState).toMatchObject({
      CREATED: 30,
      ACTIVE: 30,
      DELIVERED: 20,
      ERROR: 10,
      FAILED: 10,
      RETRY: 0,
      CANCELLED: 0,
      CANCEL_REQUESTED: 0,
    });
    const host = new URL(target.url).host;
    expect(truth.series).toContainEqual({
      state: 'DELIVERED',
      queue: '',
      urlGroup: '',
      endpoint: '',
      destination: host,
      count: 20,
    });
    const overHttp = await (await fetch(`${emulator.url}/__emulator/ground-truth`)).json();
    expect(overHttp).toEqual(truth);
  });

  it('hides entries younger than the visibility delay', async () => {
    emulator.setKnobs({ logVisibilityDelayMs: 400 });
    await publishMany(1, () => '/v');
    await settled(3);
    expect(((await (await getLogs('')).json()) as { logs: unknown[] }).logs).toHaveLength(0);
    await waitFor(async () => ((await (await getLogs('')).json()) as { logs: unknown[] }).logs.length === 3, 2000);
  });

  it('serves entries without state when asked, while the state filter still works', async () => {
    emulator.setKnobs({ omitState: true });
    await publishMany(1, () => '/s');
    await settled(3);
    const logs = ((await (await getLogs('state=DELIVERED')).json()) as { logs: Array<Record<string, unknown>> }).logs;
    expect(logs).toHaveLength(1);
    expect('state' in logs[0]!).toBe(false);
  });

  it('repeats the cursor it was given once (repeatCursorNext)', async () => {
    await publishMany(5, (i) => `/r/${i}`);
    await settled(15);
    const first = (await (await getLogs('count=5')).json()) as { cursor: string };
    emulator.setKnobs({ repeatCursorNext: 1 });
    const repeated = (await (await getLogs(`count=5&cursor=${first.cursor}`)).json()) as { cursor: string };
    expect(repeated.cursor).toBe(first.cursor);
    const next = (await (await getLogs(`count=5&cursor=${first.cursor}`)).json()) as { cursor: string };
    expect(next.cursor).not.toBe(first.cursor);
  });

  it('answers 429 with Burst-RateLimit-* headers above the rate limit, and the headers on successes too', async () => {
    emulator.setKnobs({ rateLimitPerSecond: 3 });
    // Align to the start of a one-second window so all requests share it.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
    const responses = await Promise.all(Array.from({ length: 5 }, () => getLogs('')));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    for (const response of responses) {
      expect(response.headers.get('burst-ratelimit-limit')).toBe('3');
      expect(Number(response.headers.get('burst-ratelimit-reset'))).toBeGreaterThanOrEqual(
        Math.floor(Date.now() / 1000),
      );
    }
    const limited = responses.find((response) => response.status === 429)!;
    expect(limited.headers.get('burst-ratelimit-remaining')).toBe('0');
    expect(await limited.json()).toEqual({ error: 'Exceeded burst rate limit' });
    // Enqueue is not rate limited.
    const publish = await fetch(`${emulator.url}/v2/publish/${target.url}/x`, {
      method: 'POST',
      headers: auth(),
      body: 'x',
    });
    expect(publish.status).toBe(200);
  });

  it('injects 5xx (failNext, errorRatio), malformed and truncated bodies, within the configured scope', async () => {
    emulator.setKnobs({ failNext: 2 });
    expect((await getLogs('')).status).toBe(500);
    expect((await fetch(`${emulator.url}/v2/schedules`, { headers: auth() })).status).toBe(500);
    expect((await getLogs('')).status).toBe(200);

    emulator.setKnobs({ malformedNext: 1 });
    const malformed = await getLogs('');
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();

    emulator.setKnobs({ truncatedNext: 1 });
    await expect(getLogs('').then((response) => response.text())).rejects.toThrow();
    expect((await getLogs('')).status).toBe(200);

    emulator.setKnobs({ errorRatio: 1, faultScope: ['schedules'] });
    expect((await getLogs('')).status).toBe(200);
    expect([500, 502, 503]).toContain((await fetch(`${emulator.url}/v2/schedules`, { headers: auth() })).status);
    // Writes are never faulted.
    expect(
      (await fetch(`${emulator.url}/v2/publish/${target.url}/x`, { method: 'POST', headers: auth(), body: 'x' }))
        .status,
    ).toBe(200);
  });

  it('puts the management interface behind the same knobs, with its own Basic auth', async () => {
    const basic = {
      authorization: `Basic ${Buffer.from(`${emulator.credentials.email}:${emulator.credentials.apiKey}`).toString('base64')}`,
    };
    expect((await fetch(`${emulator.url}/v2/qstash/user`, { headers: basic })).status).toBe(200);
    expect((await fetch(`${emulator.url}/v2/qstash/user`, { headers: auth() })).status).toBe(401);
    emulator.setKnobs({ failNext: 1, faultScope: ['management'] });
    expect((await getLogs('')).status).toBe(200);
    expect((await fetch(`${emulator.url}/v2/search`, { headers: basic })).status).toBe(500);
    expect((await fetch(`${emulator.url}/v2/search`, { headers: basic })).status).toBe(200);
    expect(emulator.management.currentPlan()).toBe('payg');
  });

  it('draws ratios from the seeded PRNG: the same seed gives the same sequence', async () => {
    const run = async (): Promise<number[]> => {
      const seeded = await createEmulator({ seed: 42, knobs: { errorRatio: 0.5 } });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 20; i++) {
          statuses.push(
            (await fetch(`${seeded.url}/v2/logs`, { headers: { authorization: `Bearer ${seeded.credentials.token}` } }))
              .status,
          );
        }
        return statuses;
      } finally {
        await seeded.close();
      }
    };
    const first = await run();
    expect(first.filter((status) => status === 200).length).toBeGreaterThan(2);
    expect(first.filter((status) => status >= 500).length).toBeGreaterThan(2);
    expect(await run()).toEqual(first);
  });

  it('adds latency to faulted endpoints', async () => {
    emulator.setKnobs({ latencyMs: 150 });
    const started = Date.now();
    await getLogs('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('reads and patches knobs over HTTP, rejecting unknown knobs and bad values with 400', async () => {
    const patched = await fetch(`${emulator.url}/__emulator/knobs`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeScale: 5, latencyMs: 0 }),
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { timeScale: number }).timeScale).toBe(5);
    expect(((await (await fetch(`${emulator.url}/__emulator/knobs`)).json()) as { timeScale: number }).timeScale).toBe(
      5,
    );
    emulator.setKnobs({ timeScale: 1 });
    for (const body of [{ nope: 1 }, { errorRatio: 2 }, { timeScale: 0 }, { faultScope: ['everything'] }, [1]]) {
      const response = await fetch(`${emulator.url}/__emulator/knobs`, { method: 'PATCH', body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/knob/);
    }
    expect(() => emulator.setKnobs({ logRetention: -1 })).toThrow(/logRetention/);
  });

  it('resets state over HTTP', async () => {
    await publishMany(2, (i) => `/x/${i}`);
    await settled(6);
    const response = await fetch(`${emulator.url}/__emulator/reset`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(emulator.groundTruth().total).toBe(0);
    expect(await allLogs(emulator)).toEqual([]);
  });
});
