// The emulator driven by the official @upstash/qstash client (base URL pointed at it, its own
// retries off): publish and enqueue to a URL and to a URL Group, schedules create / get / list /
// pause / resume / delete, URL Group endpoints, queues, and logs with filters and a cursor walk.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { sdkClient, startDestination, statesOf, waitFor, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
let destination: Destination;

beforeAll(async () => {
  emulator = await createEmulator({ knobs: { timeScale: 1000 } });
  destination = await startDestination();
});

afterAll(async () => {
  await destination.close();
  await emulator.close();
});

afterEach(() => {
  emulator.reset();
  destination.requests.length = 0;
});

describe('publish and enqueue with the SDK', () => {
  it('publishes to a URL: the destination gets the body, headers and service headers; logs show the lifecycle', async () => {
    const client = sdkClient(emulator);
    const result = await client.publishJSON({
      url: `${destination.url}/hook?x=1`,
      body: { hello: 'world' },
      headers: { 'X-Custom': 'yes' },
      label: ['alpha', 'beta'],
    });
    expect(result.messageId).toMatch(/^msg_/);
    expect(result.url).toBe(`${destination.url}/hook?x=1`);
    const [request] = await destination.waitForRequests(1);
    expect(request!.url).toBe('/hook?x=1');
    expect(request!.method).toBe('POST');
    expect(JSON.parse(request!.body)).toEqual({ hello: 'world' });
    expect(request!.headers['x-custom']).toBe('yes');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['upstash-message-id']).toBe(result.messageId);
    expect(request!.headers['upstash-retried']).toBe('0');
    expect(request!.headers['user-agent']).toBe('Upstash-QStash');
    await waitFor(async () => (await statesOf(emulator, result.messageId)).includes('DELIVERED'));
    expect(await statesOf(emulator, result.messageId)).toEqual(['CREATED', 'ACTIVE', 'DELIVERED']);

    const logs = await client.logs({ filter: { label: 'beta' } });
    expect(logs.logs.length).toBe(3);
    const entry = logs.logs[0]!;
    expect(entry.state).toBe('DELIVERED');
    expect(entry.labels).toEqual(['alpha', 'beta']);
    expect(entry.label).toBe('alpha');
    expect(Buffer.from(entry.body!, 'base64').toString()).toBe('{"hello":"world"}');
    expect(entry.header).toMatchObject({ 'X-Custom': ['yes'] });
  });

  it('enqueues to a URL Group: one message per endpoint, a bare array answer, queue created on first use', async () => {
    const client = sdkClient(emulator);
    await client.urlGroups.addEndpoints({
      name: 'group-a',
      endpoints: [
        { name: 'first', url: `${destination.url}/one` },
        { name: 'second', url: `${destination.url}/two` },
      ],
    });
    const group = await client.urlGroups.get('group-a');
    expect(group.endpoints).toEqual([
      { name: 'first', url: `${destination.url}/one` },
      { name: 'second', url: `${destination.url}/two` },
    ]);
    expect((await client.urlGroups.list()).map((item) => item.name)).toEqual(['group-a']);

    const results = (await client
      .queue({ queueName: 'orders' })
      .enqueue({ urlGroup: 'group-a', body: 'payload' })) as unknown as Array<{ messageId: string; url: string }>;
    expect(Array.isArray(results)).toBe(true);
    expect(results.map((item) => item.url).sort()).toEqual([`${destination.url}/one`, `${destination.url}/two`]);
    const requests = await destination.waitForRequests(2);
    expect(requests.map((request) => request.url).sort()).toEqual(['/one', '/two']);
    expect(requests.every((request) => request.headers['upstash-topic-name'] === 'group-a')).toBe(true);

    const queue = await client.queue({ queueName: 'orders' }).get();
    expect(queue.name).toBe('orders');
    expect(queue.parallelism).toBe(1);

    await waitFor(
      async () => (await client.logs({ filter: { urlGroup: 'group-a', state: 'DELIVERED' } })).logs.length === 2,
    );
    const delivered = await client.logs({ filter: { queueName: 'orders', state: 'DELIVERED' } });
    expect(delivered.logs.map((entry) => entry.endpointName).sort()).toEqual(['first', 'second']);
    expect(delivered.logs.every((entry) => entry.urlGroup === 'group-a')).toBe(true);

    await client.urlGroups.removeEndpoints({ name: 'group-a', endpoints: [{ name: 'first' }] });
    expect((await client.urlGroups.get('group-a')).endpoints).toEqual([
      { name: 'second', url: `${destination.url}/two` },
    ]);
    await client.urlGroups.delete('group-a');
    await expect(client.urlGroups.get('group-a')).rejects.toMatchObject({ status: 404 });
  });

  it('upserts, pauses and resumes queues; a paused queue holds its messages', async () => {
    const client = sdkClient(emulator);
    const queue = client.queue({ queueName: 'held' });
    await queue.upsert({ parallelism: 2, paused: true });
    const { messageId } = (await queue.enqueue({ url: `${destination.url}/held`, body: 'x' })) as { messageId: string };
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(destination.requests).toHaveLength(0);
    expect((await queue.get()).lag).toBe(1);
    await queue.resume();
    await destination.waitForRequests(1);
    await waitFor(async () => (await statesOf(emulator, messageId)).includes('DELIVERED'));
    expect((await queue.get()).lag).toBe(0);
    expect((await client.queue().list()).map((item) => item.name)).toContain('held');
    await queue.delete();
    await expect(queue.get()).rejects.toMatchObject({ status: 404 });
  });
});

describe('schedules with the SDK', () => {
  it('creates, gets, lists, pauses, resumes and deletes a schedule that fires on its cron', async () => {
    const client = sdkClient(emulator);
    const { scheduleId } = await client.schedules.create({
      destination: `${destination.url}/cron`,
      cron: '* * * * *',
      body: '{"tick":true}',
      retries: 2,
      label: 'nightly',
    });
    expect(scheduleId).toMatch(/^scd_/);
    const schedule = await client.schedules.get(scheduleId);
    expect(schedule).toMatchObject({
      scheduleId,
      cron: '* * * * *',
      destination: `${destination.url}/cron`,
      method: 'POST',
      retries: 2,
      isPaused: false,
      labels: ['nightly'],
    });
    expect(schedule.nextScheduleTime).toBeGreaterThan(Date.now() - 1000);

    // At time scale 1000 a minute lasts 60 ms.
    await destination.waitForRequests(2, 3000);
    expect(destination.requests[0]!.headers['upstash-schedule-id']).toBe(scheduleId);
    const listed = (await client.schedules.list()).find((item) => item.scheduleId === scheduleId)!;
    expect(listed.lastScheduleTime).toBeGreaterThan(0);
    expect(Object.keys(listed.lastScheduleStates ?? {})).toHaveLength(1);
    await waitFor(async () =>
      Object.values((await client.schedules.get(scheduleId)).lastScheduleStates ?? {}).includes('SUCCESS'),
    );

    await client.schedules.pause({ schedule: scheduleId });
    await client.schedules.pause({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(true);
    const seen = destination.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(destination.requests.length).toBeLessThanOrEqual(seen + 1); // at most one already on its way
    const whilePaused = destination.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(destination.requests.length).toBe(whilePaused);

    await client.schedules.resume({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);
    await destination.waitForRequests(whilePaused + 1, 3000);

    await client.schedules.delete(scheduleId);
    await expect(client.schedules.get(scheduleId)).rejects.toMatchObject({ status: 404 });
    expect(await client.schedules.list()).toEqual([]);
  });

  it('edits an existing schedule when created again with the same id', async () => {
    const client = sdkClient(emulator);
    await client.schedules.create({
      destination: `${destination.url}/a`,
      cron: '0 0 * * *',
      scheduleId: 'my-schedule',
    });
    const first = await client.schedules.get('my-schedule');
    await client.schedules.create({
      destination: `${destination.url}/b`,
      cron: '0 12 * * *',
      scheduleId: 'my-schedule',
    });
    const second = await client.schedules.get('my-schedule');
    expect(second).toMatchObject({
      cron: '0 12 * * *',
      destination: `${destination.url}/b`,
      createdAt: first.createdAt,
    });
    expect(await client.schedules.list()).toHaveLength(1);
  });
});

describe('logs with the SDK', () => {
  it('filters and walks every page with the cursor until it is absent', async () => {
    const client = sdkClient(emulator);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const result = await client.publish({
        url: `${destination.url}/walk/${i}`,
        body: `m${i}`,
        label: i % 2 === 0 ? 'even' : 'odd',
      });
      ids.push(result.messageId);
    }
    await waitFor(() => emulator.groundTruth().byState.DELIVERED === 12);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.logs({ count: 5, cursor, filter: { label: 'even' } });
      pages++;
      seen.push(...page.logs.map((entry) => `${entry.messageId}/${entry.state}`));
      cursor = page.cursor;
      expect(cursor === undefined || typeof cursor === 'string').toBe(true);
      if (cursor !== undefined) expect(cursor).not.toBe('');
    } while (cursor);
    expect(pages).toBe(4); // 6 messages x 3 states = 18 entries
    expect(seen).toHaveLength(18);
    expect(new Set(seen).size).toBe(18);

    const delivered = await client.logs({ filter: { state: 'DELIVERED', url: `${destination.url}/walk/3` } });
    expect(delivered.logs.map((entry) => entry.messageId)).toEqual([ids[3]]);
    const two = await client.logs({ messageIds: [ids[0]!, ids[1]!] });
    expect(new Set(two.logs.map((entry) => entry.messageId))).toEqual(new Set([ids[0], ids[1]]));
  });
});
