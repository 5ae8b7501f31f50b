// The knobs that pick a side where the real service's behaviour is split or unsettled
// (docs/service-fidelity.md): which log paths exist, the grouped shape, the page size cap,
// trimBody, large bodies, out-of-order visibility, retention by age, schedule pause verbs, the
// daily-limit 429 and numeric cursors. Each through plain HTTP and, where the official SDK has a
// method, through the SDK as a client of the emulator.
import { QstashDailyRatelimitError } from '@upstash/qstash';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { DEFAULT_KNOBS } from '../../src/emulator/knobs.js';
import { sdkClient, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
let target: Destination;

beforeAll(async () => {
  emulator = await createEmulator({ seed: 11 });
  target = await startDestination((request) => ({
    status: request.url.startsWith('/fail') ? 500 : 200,
    body: 'answer',
  }));
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

async function publish(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${emulator.url}/v2/publish/${target.url}${path}`, {
    method: 'POST',
    headers: { ...auth(), 'Upstash-Retries': '0', ...headers },
    body: 'small',
  });
}

async function publishMany(count: number, path = '/ok'): Promise<void> {
  for (let i = 0; i < count; i++) expect((await publish(`${path}/${i}`)).status).toBe(200);
}

async function settled(total: number): Promise<void> {
  await waitFor(() => emulator.groundTruth().total >= total, 10_000, `${total} log events`);
}

async function get(path: string): Promise<{ status: number; text: string; json: () => Record<string, unknown> }> {
  const response = await fetch(`${emulator.url}${path}`, { headers: auth() });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('log paths (knob logsPaths)', () => {
  it('serves both by default; with "events" only /v2/events answers (the SDK reads it), with "logs" only /v2/logs', async () => {
    await publishMany(1);
    await settled(3);
    expect((await get('/v2/logs')).status).toBe(200);
    expect((await get('/v2/events')).status).toBe(200);

    emulator.setKnobs({ logsPaths: 'events' });
    expect((await get('/v2/logs')).status).toBe(404);
    const events = await sdkClient(emulator).logs();
    expect(events.logs).toHaveLength(3);

    emulator.setKnobs({ logsPaths: 'logs' });
    expect((await get('/v2/events')).status).toBe(404);
    await expect(sdkClient(emulator).logs()).rejects.toThrow();
    expect(((await get('/v2/logs')).json().logs as unknown[]).length).toBe(3);
  });
});

describe('grouped shape (knob logsShape, query groupBy=messageId)', () => {
  it('answers messages[].events[] for groupBy=messageId, and for every read with the knob', async () => {
    await publishMany(2);
    await settled(6);
    const flat = (await get('/v2/logs')).json();
    expect(Object.keys(flat)).toEqual(['logs']);
    const asked = (await get('/v2/logs?groupBy=messageId')).json() as {
      messages: Array<{ messageId: string; events: Array<{ messageId: string }> }>;
    };
    expect(asked.messages).toHaveLength(2);
    for (const group of asked.messages) {
      expect(group.events).toHaveLength(3);
      for (const event of group.events) expect(event.messageId).toBe(group.messageId);
    }
    emulator.setKnobs({ logsShape: 'grouped' });
    const forced = (await get('/v2/events')).json();
    expect(Object.keys(forced)).toEqual(['messages']);
  });
});

describe('bodies (knobs largeBodyRatio, largeBodyBytes, honourTrimBody)', () => {
  it('gives a share of messages a large base64 body, the same on every read, and ERROR entries such a responseBody', async () => {
    emulator.setKnobs({ largeBodyRatio: 1, largeBodyBytes: 300_000 });
    await publishMany(2);
    expect((await publish('/fail/x')).status).toBe(200);
    await settled(3 + 3 + 4);
    const page = (await get('/v2/events?count=1000')).json() as {
      events: Array<{ state: string; body?: string; responseBody?: string }>;
    };
    expect(page.events.length).toBeGreaterThanOrEqual(9);
    for (const entry of page.events) expect(Buffer.from(entry.body!, 'base64').length).toBe(300_000);
    const errors = page.events.filter((entry) => entry.state === 'ERROR');
    expect(errors.length).toBeGreaterThan(0);
    for (const entry of errors) expect(entry.responseBody?.length).toBe(400_000);
    // The SDK reads such a page too.
    const sdk = await sdkClient(emulator).logs({ count: 1000 });
    expect(sdk.logs.length).toBe(page.events.length);

    emulator.setKnobs({ largeBodyRatio: 0.5 });
    const first = (await get('/v2/logs?count=1000')).json() as { logs: Array<{ messageId: string; body: string }> };
    const second = (await get('/v2/logs?count=1000')).json() as { logs: Array<{ messageId: string; body: string }> };
    expect(second.logs.map((entry) => entry.body.length)).toEqual(first.logs.map((entry) => entry.body.length));
  });

  it('streams a page far larger than one string may be (30 x 10 MB bodies), entry by entry', async () => {
    emulator.setKnobs({ largeBodyRatio: 1, largeBodyBytes: 10 * 1_048_576 });
    await publishMany(10);
    await settled(30);
    const response = await fetch(`${emulator.url}/v2/events?count=1000`, { headers: auth() });
    expect(response.status).toBe(200);
    let bytes = 0;
    for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
    // 30 entries, each with a 10 MiB body in base64 (4/3 of it).
    expect(bytes).toBeGreaterThan(30 * 10 * 1_048_576 * (4 / 3));
  });

  it('ignores trimBody by default (nothing settles what the QStash logs do with it); honours it with the knob', async () => {
    emulator.setKnobs({ largeBodyRatio: 1, largeBodyBytes: 1000 });
    await publishMany(1);
    await settled(3);
    const ignored = (await get('/v2/logs?trimBody=0')).json() as { logs: Array<{ body: string }> };
    for (const entry of ignored.logs) expect(entry.body.length).toBeGreaterThan(1000);
    emulator.setKnobs({ honourTrimBody: true });
    const trimmed = (await get('/v2/logs?trimBody=10')).json() as { logs: Array<{ body: string }> };
    for (const entry of trimmed.logs) expect(entry.body).toHaveLength(10);
    const dropped = (await get('/v2/logs?trimBody=-1')).json() as { logs: Array<Record<string, unknown>> };
    for (const entry of dropped.logs) expect('body' in entry).toBe(false);
    expect((await get('/v2/logs?trimBody=lots')).status).toBe(400);
  });
});

describe('visibility and retention', () => {
  it('shows entries out of time order with a visibility lag, and all of them once the lag has passed', async () => {
    emulator.setKnobs({ logVisibilityLagMaxMs: 1500 });
    await publishMany(20);
    type Entry = { time: number; messageId: string; state: string };
    const identity = (entry: Entry): string => `${entry.messageId} ${entry.state} ${entry.time}`;
    const all = (): Promise<Entry[]> => get('/v2/logs?count=1000').then((page) => page.json().logs as Entry[]);
    // Read while the entries show up, until every one is visible. One read taken at one moment
    // may by chance show a suffix in time (on a loaded machine, most lags may have passed before
    // it); over all the reads, some entry must be hidden while a newer one shows.
    const reads: Entry[][] = [];
    await waitFor(
      async () => {
        const read = await all();
        reads.push(read);
        return read.length === emulator.groundTruth().total;
      },
      5000,
      'every entry visible',
    );
    const final = reads.at(-1)!;
    const hiddenOlder = reads.slice(0, -1).map((read) => {
      const shown = new Set(read.map(identity));
      const newestShown = Math.max(...read.map((entry) => entry.time));
      return final.filter((entry) => !shown.has(identity(entry)) && entry.time < newestShown).length;
    });
    expect(reads.length).toBeGreaterThan(1);
    expect(Math.max(...hiddenOlder)).toBeGreaterThan(0);
  });

  it('drops entries older than the retention age (scaled by timeScale), counted as dropped in the ground truth', async () => {
    emulator.setKnobs({ timeScale: 1000, logRetentionAgeMs: 400_000 });
    await publishMany(2);
    await settled(6);
    expect(((await get('/v2/logs')).json().logs as unknown[]).length).toBe(6);
    // 400 s at a time scale of 1000 is 400 ms.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(((await get('/v2/logs')).json().logs as unknown[]).length).toBe(0);
    expect(emulator.groundTruth()).toMatchObject({ total: 6, dropped: 6, retained: 0 });
  });
});

describe('schedule pause and resume verbs (knob scheduleVerbs)', () => {
  async function createSchedule(): Promise<string> {
    const response = await fetch(`${emulator.url}/v2/schedules/${target.url}/cron`, {
      method: 'POST',
      headers: { ...auth(), 'Upstash-Cron': '0 0 1 1 *' },
    });
    return ((await response.json()) as { scheduleId: string }).scheduleId;
  }
  const paused = async (id: string): Promise<boolean> =>
    (await sdkClient(emulator).schedules.get(id)).isPaused === true;

  it('accepts PATCH (the SDK) and POST (the OpenAPI) by default; with "patch" POST is a 405, with "post" PATCH is', async () => {
    const id = await createSchedule();
    await sdkClient(emulator).schedules.pause({ schedule: id });
    expect(await paused(id)).toBe(true);
    expect((await fetch(`${emulator.url}/v2/schedules/${id}/resume`, { method: 'POST', headers: auth() })).status).toBe(
      200,
    );
    expect(await paused(id)).toBe(false);

    emulator.setKnobs({ scheduleVerbs: 'patch' });
    const refused = await fetch(`${emulator.url}/v2/schedules/${id}/pause`, { method: 'POST', headers: auth() });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('PATCH');
    await sdkClient(emulator).schedules.pause({ schedule: id });
    expect(await paused(id)).toBe(true);

    emulator.setKnobs({ scheduleVerbs: 'post' });
    await expect(sdkClient(emulator).schedules.resume({ schedule: id })).rejects.toThrow();
    expect(await paused(id)).toBe(true);
    expect((await fetch(`${emulator.url}/v2/schedules/${id}/resume`, { method: 'POST', headers: auth() })).status).toBe(
      200,
    );
    expect(await paused(id)).toBe(false);
  });
});

describe('the daily limit (knob dailyLimitNext)', () => {
  it('answers 429 with RateLimit-* headers, which the SDK reads as its daily-limit error; then serves again', async () => {
    emulator.setKnobs({ dailyLimitNext: 1, faultScope: ['publish'] });
    const error = await sdkClient(emulator)
      .publish({ url: `${target.url}/daily`, body: 'x' })
      .then(
        () => null,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(QstashDailyRatelimitError);
    const daily = error as QstashDailyRatelimitError;
    expect(daily.remaining).toBe('0');
    // Unix seconds of the next UTC midnight.
    expect(Number(daily.reset) % 86_400).toBe(0);
    expect(Number(daily.reset) * 1000).toBeGreaterThan(Date.now());
    await sdkClient(emulator).publish({ url: `${target.url}/daily`, body: 'x' });

    emulator.setKnobs({ dailyLimitNext: 1, faultScope: ['logs'] });
    const response = await fetch(`${emulator.url}/v2/events`, { headers: auth() });
    expect(response.status).toBe(429);
    expect(response.headers.get('ratelimit-limit')).toBe('1000');
    expect(response.headers.get('burst-ratelimit-limit')).toBeNull();
    expect(await response.text()).toContain('daily ratelimit');
  });
});

describe('numeric cursors (knob numericCursor)', () => {
  it('writes the cursor as a bare JSON number beyond 2^53, and continues from its exact text', async () => {
    emulator.setKnobs({ numericCursor: 'number', maxPageSize: 2 });
    await publishMany(1);
    await settled(3);
    const first = await get('/v2/logs?count=2');
    const raw = /"cursor":(\d+)/.exec(first.text)?.[1];
    expect(raw).toBeDefined();
    expect(BigInt(raw!) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    // JSON.parse cannot keep it: the number a client gets is not the cursor.
    expect(String(first.json().cursor)).not.toBe(raw);
    const rest = (await get(`/v2/logs?count=2&cursor=${raw!}`)).json();
    expect(rest.logs as unknown[]).toHaveLength(1);
    expect('cursor' in rest).toBe(false);
  });
});
