// The DLQ in the emulator and the dlq collector over real HTTP: messages that fail for good land
// in the DLQ (read, paged and deleted with the official @upstash/qstash client), and the
// collector's counts by queue and URL Group equal what the SDK reads; a page budget below the
// DLQ's size is reported as an incomplete read. A fixture server gives a cursor that repeats.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@upstash/qstash';
import { DeliveryClient } from '../../src/api/delivery.js';
import { DlqCollector } from '../../src/collectors/dlq.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { sdkClient, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import { captureLogger, familiesOf, pollContext, valueOf } from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';

let emulator: EmulatorHandle;
let failing: Destination;
let client: DeliveryClient;

beforeAll(async () => {
  emulator = await createEmulator({ knobs: { timeScale: 1000 } });
  failing = await startDestination(() => ({ status: 500, body: 'broken' }));
  client = new DeliveryClient({ baseUrl: emulator.url, token: emulator.credentials.token, retry: { maxRetries: 0 } });
});

afterAll(async () => {
  await client.close();
  await failing.close();
  await emulator.close();
});

afterEach(() => {
  emulator.reset();
});

type DlqEntry = Awaited<ReturnType<Client['dlq']['listMessages']>>['messages'][number];

async function allDlq(sdk: Client): Promise<DlqEntry[]> {
  const out: DlqEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await sdk.dlq.listMessages({ cursor });
    out.push(...page.messages);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

describe('DLQ in the emulator with the SDK', () => {
  it('keeps failed messages with their last answer; pages of 100; delete by id; the failure callback names the DLQ id', async () => {
    const sdk = sdkClient(emulator);
    const callbacks = await startDestination();
    try {
      const { messageId } = await sdk.publish({
        url: `${failing.url}/a`,
        body: 'first',
        retries: 1,
        failureCallback: `${callbacks.url}/failed`,
      });
      for (let i = 0; i < 120; i++) await sdk.publish({ url: `${failing.url}/b`, body: `m${i}`, retries: 0 });
      await waitFor(async () => (await allDlq(sdk)).length === 121, 10_000, 'all 121 messages in the DLQ');
      const first = await sdk.dlq.listMessages();
      expect(first.messages).toHaveLength(100);
      expect(first.cursor).toBeDefined();
      const entry = (await allDlq(sdk)).find((m) => m.messageId === messageId)!;
      expect(entry).toMatchObject({
        url: `${failing.url}/a`,
        body: 'first',
        responseStatus: 500,
        responseBody: 'broken',
        maxRetries: 1,
      });
      const [callback] = await callbacks.waitForRequests(1);
      expect(JSON.parse(callback!.body)).toMatchObject({ sourceMessageId: messageId, dlqId: entry.dlqId });

      await sdk.dlq.delete(entry.dlqId);
      expect((await allDlq(sdk)).some((m) => m.messageId === messageId)).toBe(false);
      expect(await allDlq(sdk)).toHaveLength(120);
    } finally {
      await callbacks.close();
    }
  });
});

describe('dlq collector against the emulator', () => {
  it('counts by queue and URL Group with the oldest creation time, equal to what the SDK reads', async () => {
    const sdk = sdkClient(emulator);
    await sdk.urlGroups.addEndpoints({
      name: 'fanout',
      endpoints: [{ url: `${failing.url}/x` }, { url: `${failing.url}/y` }],
    });
    await sdk.queue({ queueName: 'orders' }).upsert({ parallelism: 5 });
    for (let i = 0; i < 3; i++)
      await sdk.queue({ queueName: 'orders' }).enqueue({ url: `${failing.url}/order`, body: `o${i}`, retries: 0 });
    await sdk.publish({ urlGroup: 'fanout', body: 'g', retries: 0 });
    await sdk.publish({ url: `${failing.url}/plain`, body: 'p', retries: 0 });
    await waitFor(async () => (await allDlq(sdk)).length === 6, 10_000, '6 messages in the DLQ');

    const collector = new DlqCollector({ client, intervalMs: 60_000 });
    await collector.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(collector.registry);
    const truth = await allDlq(sdk);
    const groups = new Map<string, { queue: string; url_group: string; count: number; oldest: number }>();
    for (const m of truth) {
      const labels = { queue: m.queueName ?? '', url_group: m.topicName ?? '' };
      const key = JSON.stringify(labels);
      const group = groups.get(key) ?? { ...labels, count: 0, oldest: Number.POSITIVE_INFINITY };
      group.count++;
      group.oldest = Math.min(group.oldest, m.createdAt);
      groups.set(key, group);
    }
    expect(groups.size).toBe(3);
    for (const { count, oldest, ...labels } of groups.values()) {
      expect(valueOf(f, 'upstash_qstash_dlq_messages', labels)).toBe(count);
      expect(valueOf(f, 'upstash_qstash_dlq_oldest_message_timestamp_seconds', labels)).toBe(oldest / 1000);
    }
    expect(valueOf(f, 'upstash_qstash_dlq_messages', { queue: 'orders', url_group: '' })).toBe(3);
    expect(valueOf(f, 'upstash_qstash_dlq_messages', { queue: '', url_group: 'fanout' })).toBe(2);
    expect(valueOf(f, 'upstash_qstash_dlq_size')).toBe(6);
    expect(valueOf(f, 'upstash_qstash_dlq_complete')).toBe(1);
    expect(valueOf(f, 'upstash_qstash_dlq_pages_read')).toBe(1);
    const text = await collector.registry.metrics();
    for (const m of truth) expect(text).not.toContain(m.messageId);
    expect(text).not.toContain('/order');
  });

  it('stops at the page budget and says the figures are lower bounds', async () => {
    const sdk = sdkClient(emulator);
    for (let i = 0; i < 250; i++) await sdk.publish({ url: `${failing.url}/many`, body: `m${i}`, retries: 0 });
    await waitFor(async () => (await allDlq(sdk)).length === 250, 15_000, '250 messages in the DLQ');

    const limited = new DlqCollector({ client, intervalMs: 60_000, maxPages: 2 });
    await limited.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(limited.registry);
    expect(valueOf(f, 'upstash_qstash_dlq_size')).toBe(200);
    expect(valueOf(f, 'upstash_qstash_dlq_complete')).toBe(0);
    expect(valueOf(f, 'upstash_qstash_dlq_pages_read')).toBe(2);

    const full = new DlqCollector({ client, intervalMs: 60_000, maxPages: 3 });
    await full.poll(pollContext(captureLogger().logger));
    const g = await familiesOf(full.registry);
    expect(valueOf(g, 'upstash_qstash_dlq_size')).toBe(250);
    expect(valueOf(g, 'upstash_qstash_dlq_complete')).toBe(1);
    expect(valueOf(g, 'upstash_qstash_dlq_pages_read')).toBe(3);
  });

  it('an empty DLQ is size 0 and complete', async () => {
    const collector = new DlqCollector({ client, intervalMs: 60_000 });
    await collector.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(collector.registry);
    expect(valueOf(f, 'upstash_qstash_dlq_size')).toBe(0);
    expect(valueOf(f, 'upstash_qstash_dlq_complete')).toBe(1);
    expect(f.get('upstash_qstash_dlq_messages')?.samples ?? []).toHaveLength(0);
  });
});

describe('dlq collector: answers the emulator never gives', () => {
  const setup = fixtureClientPerTest(
    (url) => new DeliveryClient({ baseUrl: url, token: 'tok', retry: { maxRetries: 0 } }),
  );

  it('fails the poll on a cursor it already followed, keeping the previous snapshot; reads a numeric cursor and null messages', async () => {
    setup.fixture.routes.set('/v2/dlq', { body: { messages: null } });
    const collector = new DlqCollector({ client: setup.client, intervalMs: 60_000 });
    await collector.poll(pollContext(setup.log.logger));
    expect(valueOf(await familiesOf(collector.registry), 'upstash_qstash_dlq_size')).toBe(0);

    setup.fixture.routes.set('/v2/dlq', {
      body: {
        cursor: 17,
        messages: [{ dlqId: '1-0', messageId: 'msg_x', createdAt: 1_700_000_000_000, queueName: 'q' }],
      },
    });
    await expect(collector.poll(pollContext(setup.log.logger))).rejects.toMatchObject({ code: 'ERR_API_UPSTREAM' });
    expect(setup.fixture.requests).toContain('/v2/dlq?count=100&cursor=17');
    expect(valueOf(await familiesOf(collector.registry), 'upstash_qstash_dlq_size')).toBe(0);
  });
});
