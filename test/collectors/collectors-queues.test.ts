// The queues and URL Groups collectors (and global parallelism) against the emulator over real
// HTTP: the state is made with the official @upstash/qstash client, read back with it, and the
// collectors' metrics must equal what the SDK reads. A fixture server gives the records the
// emulator never produces (fields absent or null).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { QueuesCollector } from '../../src/collectors/queues.js';
import { UrlGroupsCollector } from '../../src/collectors/url-groups.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { OVERFLOW_LABEL_VALUE } from '../../src/metrics/cardinality.js';
import { sdkClient, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import { captureLogger, familiesOf, pollContext, valueOf } from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';

let emulator: EmulatorHandle;
let destination: Destination;
let client: DeliveryClient;

beforeAll(async () => {
  emulator = await createEmulator({ knobs: { timeScale: 1000 }, concurrency: 4 });
  destination = await startDestination(() => ({ status: 200, body: 'ok', delayMs: 300 }));
  client = new DeliveryClient({ baseUrl: emulator.url, token: emulator.credentials.token, retry: { maxRetries: 0 } });
});

afterAll(async () => {
  await client.close();
  await destination.close();
  await emulator.close();
});

afterEach(() => {
  emulator.reset();
});

describe('queues collector against the emulator', () => {
  it('exports lag, paused and parallelism per queue and the queue count, equal to what the SDK reads', async () => {
    const sdk = sdkClient(emulator);
    const held = sdk.queue({ queueName: 'held' });
    await held.upsert({ parallelism: 3, paused: true });
    for (let i = 0; i < 5; i++) await held.enqueue({ url: `${destination.url}/held`, body: `m${i}` });
    const busy = sdk.queue({ queueName: 'busy' });
    await busy.upsert({ parallelism: 2 });
    // 4 messages, 2 in flight at a time for 300 ms each: a backlog while the poll runs.
    for (let i = 0; i < 4; i++) await busy.enqueue({ url: `${destination.url}/busy`, body: `b${i}` });
    await waitFor(() => destination.requests.length >= 2, 5000, 'two deliveries in flight');

    const collector = new QueuesCollector({ client, intervalMs: 30_000 });
    await collector.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(collector.registry);
    const truth = await sdk.queue().list();
    expect(truth.map((q) => q.name).sort()).toEqual(['busy', 'held']);
    for (const queue of truth) {
      expect(valueOf(f, 'upstash_qstash_queue_lag', { queue: queue.name })).toBe(queue.lag);
      expect(valueOf(f, 'upstash_qstash_queue_paused', { queue: queue.name })).toBe(queue.paused ? 1 : 0);
      expect(valueOf(f, 'upstash_qstash_queue_parallelism', { queue: queue.name })).toBe(queue.parallelism);
    }
    expect(valueOf(f, 'upstash_qstash_queue_lag', { queue: 'held' })).toBe(5);
    expect(valueOf(f, 'upstash_qstash_queue_lag', { queue: 'busy' })).toBeGreaterThan(0);
    expect(valueOf(f, 'upstash_qstash_queues', { paused: 'true' })).toBe(1);
    expect(valueOf(f, 'upstash_qstash_queues', { paused: 'false' })).toBe(1);
    const global = await sdk.flowControl.getGlobalParallelism();
    expect(valueOf(f, 'upstash_qstash_global_parallelism_max')).toBe(4);
    expect(global.parallelismMax).toBe(4);
    expect(valueOf(f, 'upstash_qstash_global_parallelism_in_use')).toBeGreaterThanOrEqual(1);
    expect(valueOf(f, 'upstash_qstash_global_parallelism_in_use')).toBeLessThanOrEqual(2);
    expect(f.get('upstash_qstash_queue_lag')!.help).toContain('lag of GET /v2/queues');

    // Resumed and drained: lag 0, and a deleted queue's series vanish on the next poll.
    await held.resume();
    await waitFor(async () => (await sdk.queue().list()).every((q) => q.lag === 0), 8000, 'queues drained');
    await busy.delete();
    await collector.poll(pollContext(captureLogger().logger));
    const after = await familiesOf(collector.registry);
    expect(valueOf(after, 'upstash_qstash_queue_lag', { queue: 'held' })).toBe(0);
    expect(valueOf(after, 'upstash_qstash_queue_paused', { queue: 'held' })).toBe(0);
    expect(valueOf(after, 'upstash_qstash_queue_lag', { queue: 'busy' })).toBeUndefined();
    expect(valueOf(after, 'upstash_qstash_global_parallelism_in_use')).toBe(0);
  });

  it('folds queues beyond the series cap into the overflow series', async () => {
    const sdk = sdkClient(emulator);
    for (const name of ['q1', 'q2', 'q3']) await sdk.queue({ queueName: name }).upsert({ parallelism: 1 });
    const collector = new QueuesCollector({ client, intervalMs: 30_000, bounds: { seriesLimit: 2 } });
    await collector.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(collector.registry);
    // Two queues keep their series; the third folds into the overflow series, whose value counts it.
    expect(f.get('upstash_qstash_queue_parallelism')!.samples).toHaveLength(3);
    expect(valueOf(f, 'upstash_qstash_queue_parallelism', { queue: OVERFLOW_LABEL_VALUE })).toBe(1);
  });
});

describe('a failing upstream (emulator fault scope `inventory`)', () => {
  it('fails the poll on a 5xx and keeps serving the previous snapshot', async () => {
    const sdk = sdkClient(emulator);
    await sdk.queue({ queueName: 'kept' }).upsert({ parallelism: 7 });
    const collector = new QueuesCollector({ client, intervalMs: 30_000 });
    await collector.poll(pollContext(captureLogger().logger));
    emulator.setKnobs({ errorRatio: 1, faultScope: ['inventory'] });
    try {
      await expect(collector.poll(pollContext(captureLogger().logger))).rejects.toMatchObject({
        code: 'ERR_API_UPSTREAM',
      });
      // Other reads are not in the scope: the schedules still answer.
      await expect(client.listSchedules()).resolves.toEqual([]);
    } finally {
      emulator.setKnobs({ errorRatio: 0, faultScope: ['logs', 'schedules', 'management'] });
    }
    expect(valueOf(await familiesOf(collector.registry), 'upstash_qstash_queue_parallelism', { queue: 'kept' })).toBe(
      7,
    );
  });
});

describe('URL Groups collector against the emulator', () => {
  it('exports endpoints per group and the group count, equal to what the SDK reads', async () => {
    const sdk = sdkClient(emulator);
    await sdk.urlGroups.addEndpoints({
      name: 'fanout',
      endpoints: [
        { url: `${destination.url}/a` },
        { name: 'b', url: `${destination.url}/b` },
        { url: `${destination.url}/c` },
      ],
    });
    await sdk.urlGroups.addEndpoints({ name: 'single', endpoints: [{ url: `${destination.url}/only?token=secret` }] });
    const collector = new UrlGroupsCollector({ client, intervalMs: 300_000 });
    await collector.poll(pollContext(captureLogger().logger));
    const f = await familiesOf(collector.registry);
    for (const group of await sdk.urlGroups.list()) {
      expect(valueOf(f, 'upstash_qstash_url_group_endpoints', { url_group: group.name })).toBe(group.endpoints.length);
    }
    expect(valueOf(f, 'upstash_qstash_url_group_endpoints', { url_group: 'fanout' })).toBe(3);
    expect(valueOf(f, 'upstash_qstash_url_groups')).toBe(2);
    const text = await collector.registry.metrics();
    expect(text).not.toContain('secret');
    expect(text).not.toContain('/only');

    await sdk.urlGroups.removeEndpoints({ name: 'fanout', endpoints: [{ name: 'b' }] });
    await sdk.urlGroups.delete('single');
    await collector.poll(pollContext(captureLogger().logger));
    const after = await familiesOf(collector.registry);
    expect(valueOf(after, 'upstash_qstash_url_group_endpoints', { url_group: 'fanout' })).toBe(2);
    expect(valueOf(after, 'upstash_qstash_url_group_endpoints', { url_group: 'single' })).toBeUndefined();
    expect(valueOf(after, 'upstash_qstash_url_groups')).toBe(1);
  });
});

describe('queues collector: records the emulator never serves', () => {
  const setup = fixtureClientPerTest(
    (url) => new DeliveryClient({ baseUrl: url, token: 'tok', retry: { maxRetries: 0 } }),
  );

  it('reads absent paused as active, leaves absent lag and parallelism out, and global parallelism absent as 0', async () => {
    setup.fixture.routes.set('/v2/queues', {
      body: [{ name: 'bare' }, { name: 'nulls', lag: null, parallelism: null, paused: true, extra: 'ignored' }],
    });
    setup.fixture.routes.set('/v2/globalParallelism', { body: {} });
    const collector = new QueuesCollector({ client: setup.client, intervalMs: 30_000 });
    await collector.poll(pollContext(setup.log.logger));
    const f = await familiesOf(collector.registry);
    expect(valueOf(f, 'upstash_qstash_queue_paused', { queue: 'bare' })).toBe(0);
    expect(valueOf(f, 'upstash_qstash_queue_paused', { queue: 'nulls' })).toBe(1);
    expect(valueOf(f, 'upstash_qstash_queue_lag', { queue: 'bare' })).toBeUndefined();
    expect(valueOf(f, 'upstash_qstash_queue_parallelism', { queue: 'nulls' })).toBeUndefined();
    expect(valueOf(f, 'upstash_qstash_global_parallelism_max')).toBe(0);
  });

  it('fails the poll on schema drift, naming the field, and keeps the previous snapshot', async () => {
    setup.fixture.routes.set('/v2/queues', { body: [{ name: 'q', lag: 3 }] });
    setup.fixture.routes.set('/v2/globalParallelism', { body: { parallelismMax: 10, parallelismCount: 1 } });
    const collector = new QueuesCollector({ client: setup.client, intervalMs: 30_000 });
    await collector.poll(pollContext(setup.log.logger));
    setup.fixture.routes.set('/v2/queues', { body: [{ name: 'q', lag: 'three' }] });
    await expect(collector.poll(pollContext(setup.log.logger))).rejects.toMatchObject({
      code: 'ERR_API_SCHEMA_DRIFT',
      path: '[0].lag',
    });
    expect(valueOf(await familiesOf(collector.registry), 'upstash_qstash_queue_lag', { queue: 'q' })).toBe(3);
  });
});
