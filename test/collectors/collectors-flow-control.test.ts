// Flow control in the emulator and the flow_control collector over real HTTP. Messages published
// with the official @upstash/qstash client's flowControl option wait in the key's wait list
// beyond its parallelism or rate; pause, pin and resume go through the SDK too. The collector's
// gauges must equal what the SDK's flowControl.get() reads, with the list endpoint on (keys
// discovered) and off (knob `flowControlList: false`: only the configured keys are read).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { FlowControlCollector } from '../../src/collectors/flow-control.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { sdkClient, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';
import { captureLogger, familiesOf, pollContext, valueOf, type Family } from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';

let emulator: EmulatorHandle;
let slow: Destination;

beforeAll(async () => {
  // Real time: rate periods are seconds long.
  emulator = await createEmulator();
  slow = await startDestination(() => ({ status: 200, body: 'ok', delayMs: 400 }));
});

afterAll(async () => {
  await slow.close();
  await emulator.close();
});

beforeEach(() => {
  // The list endpoint is off by default (the SDK has no list call); most cases here read it.
  emulator.setKnobs({ flowControlList: true });
});

afterEach(() => {
  emulator.reset();
  slow.requests.length = 0;
});

function newClient(): DeliveryClient {
  return new DeliveryClient({ baseUrl: emulator.url, token: emulator.credentials.token, retry: { maxRetries: 0 } });
}

function expectEqualToSdk(
  f: Map<string, Family>,
  info: Awaited<ReturnType<ReturnType<typeof sdkClient>['flowControl']['get']>>,
): void {
  const id = { flow_control_key: info.flowControlKey };
  expect(valueOf(f, 'upstash_qstash_flow_control_waitlist_size', id)).toBe(info.waitListSize);
  expect(valueOf(f, 'upstash_qstash_flow_control_parallelism_max', id)).toBe(info.parallelismMax);
  expect(valueOf(f, 'upstash_qstash_flow_control_parallelism_in_use', id)).toBe(info.parallelismCount);
  expect(valueOf(f, 'upstash_qstash_flow_control_rate_max', id)).toBe(info.rateMax);
  expect(valueOf(f, 'upstash_qstash_flow_control_rate_in_use', id)).toBe(info.rateCount);
  expect(valueOf(f, 'upstash_qstash_flow_control_rate_period_seconds', id)).toBe(info.ratePeriod);
  expect(valueOf(f, 'upstash_qstash_flow_control_paused', id)).toBe(info.isPaused ? 1 : 0);
  expect(valueOf(f, 'upstash_qstash_flow_control_pinned', { ...id, setting: 'parallelism' })).toBe(
    info.isPinnedParallelism ? 1 : 0,
  );
  expect(valueOf(f, 'upstash_qstash_flow_control_pinned', { ...id, setting: 'rate' })).toBe(info.isPinnedRate ? 1 : 0);
}

describe('flow control in the emulator with the SDK', () => {
  it('holds messages beyond the parallelism in the wait list; pause keeps them there; pin changes the limit', async () => {
    const sdk = sdkClient(emulator);
    for (let i = 0; i < 5; i++)
      await sdk.publish({ url: `${slow.url}/p`, body: `m${i}`, flowControl: { key: 'tenant-a', parallelism: 1 } });
    await waitFor(() => slow.requests.length === 1, 3000, 'the first delivery');
    let info = await sdk.flowControl.get('tenant-a');
    expect(info).toMatchObject({
      flowControlKey: 'tenant-a',
      parallelismMax: 1,
      parallelismCount: 1,
      waitListSize: 4,
      isPaused: false,
    });
    await sdk.flowControl.pause('tenant-a');
    await waitFor(
      async () => (await sdk.flowControl.get('tenant-a')).parallelismCount === 0,
      3000,
      'the attempt in flight to finish',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slow.requests).toHaveLength(1);
    expect((await sdk.flowControl.get('tenant-a')).waitListSize).toBe(4);
    await sdk.flowControl.pin('tenant-a', { parallelism: 4 });
    await sdk.flowControl.resume('tenant-a');
    await waitFor(() => slow.requests.length === 5, 3000, 'the 4 waiting messages together');
    info = await sdk.flowControl.get('tenant-a');
    expect(info).toMatchObject({ parallelismMax: 4, parallelismCount: 4, waitListSize: 0, isPinnedParallelism: true });
    expect(slow.maxInFlight()).toBe(4);
    // A pinned parallelism is not changed by later messages.
    await sdk.publish({ url: `${slow.url}/p`, body: 'late', flowControl: { key: 'tenant-a', parallelism: 1 } });
    expect((await sdk.flowControl.get('tenant-a')).parallelismMax).toBe(4);
  });

  it('starts at most `rate` messages per period; the rest wait for the next period', async () => {
    const sdk = sdkClient(emulator);
    const fast = await startDestination();
    try {
      for (let i = 0; i < 5; i++)
        await sdk.publish({ url: `${fast.url}/r`, body: `m${i}`, flowControl: { key: 'rated', rate: 2, period: 1 } });
      await fast.waitForRequests(2);
      const info = await sdk.flowControl.get('rated');
      expect(info).toMatchObject({ rateMax: 2, ratePeriod: 1 });
      expect(info.rateCount + info.waitListSize).toBeGreaterThanOrEqual(3);
      await fast.waitForRequests(5, 4000);
      const times = fast.requests.map((r) => r.at);
      expect(times[4]! - times[0]!).toBeGreaterThanOrEqual(900);
    } finally {
      await fast.close();
    }
  });

  it('answers the global parallelism the SDK reads', async () => {
    const sdk = sdkClient(emulator);
    expect(await sdk.flowControl.getGlobalParallelism()).toEqual({ parallelismMax: 64, parallelismCount: 0 });
  });
});

describe('flow_control collector against the emulator', () => {
  it('discovers keys from the list endpoint and exports what the SDK reads per key', async () => {
    const sdk = sdkClient(emulator);
    for (let i = 0; i < 3; i++)
      await sdk.publish({
        url: `${slow.url}/a`,
        body: `a${i}`,
        flowControl: { key: 'tenant-a', parallelism: 1, rate: 10, period: 5 },
      });
    await sdk.publish({ url: `${slow.url}/b`, body: 'b', flowControl: { key: 'tenant-b', parallelism: 2 } });
    await waitFor(() => slow.requests.length === 2, 3000, 'two deliveries in flight');
    await sdk.flowControl.pause('tenant-b');

    const client = newClient();
    try {
      const collector = new FlowControlCollector({ client, intervalMs: 30_000 });
      const log = captureLogger();
      await collector.poll(pollContext(log.logger));
      const f = await familiesOf(collector.registry);
      for (const key of ['tenant-a', 'tenant-b']) expectEqualToSdk(f, await sdk.flowControl.get(key));
      expect(valueOf(f, 'upstash_qstash_flow_control_waitlist_size', { flow_control_key: 'tenant-a' })).toBe(2);
      expect(valueOf(f, 'upstash_qstash_flow_control_paused', { flow_control_key: 'tenant-b' })).toBe(1);
      expect(valueOf(f, 'upstash_qstash_flow_control_keys_listed')).toBe(2);
      expect(valueOf(f, 'upstash_qstash_flow_control_keys_unread')).toBe(0);

      // A budget of one key: the configured one first, the listed ones counted as unread.
      const budget = new FlowControlCollector({ client, intervalMs: 30_000, keys: ['tenant-b'], maxKeys: 1 });
      await budget.poll(pollContext(log.logger));
      const g = await familiesOf(budget.registry);
      expect(valueOf(g, 'upstash_qstash_flow_control_paused', { flow_control_key: 'tenant-b' })).toBe(1);
      expect(valueOf(g, 'upstash_qstash_flow_control_paused', { flow_control_key: 'tenant-a' })).toBeUndefined();
      expect(valueOf(g, 'upstash_qstash_flow_control_keys_unread')).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('without a list endpoint reads only the configured keys, asks the list once, and counts an unknown key as unread', async () => {
    emulator.setKnobs({ flowControlList: false });
    const sdk = sdkClient(emulator);
    for (let i = 0; i < 2; i++)
      await sdk.publish({ url: `${slow.url}/a`, body: `a${i}`, flowControl: { key: 'tenant-a', parallelism: 1 } });
    await sdk.publish({ url: `${slow.url}/c`, body: 'c', flowControl: { key: 'not-configured', parallelism: 1 } });

    const requests: string[] = [];
    const client = new DeliveryClient({
      baseUrl: emulator.url,
      token: emulator.credentials.token,
      retry: { maxRetries: 0 },
      onRequest: (report) => requests.push(`${report.endpoint} ${report.code}`),
    });
    try {
      const log = captureLogger();
      const collector = new FlowControlCollector({ client, intervalMs: 30_000, keys: ['tenant-a', 'never-used'] });
      await collector.poll(pollContext(log.logger));
      await collector.poll(pollContext(log.logger));
      const f = await familiesOf(collector.registry);
      expectEqualToSdk(f, await sdk.flowControl.get('tenant-a'));
      expect(
        valueOf(f, 'upstash_qstash_flow_control_waitlist_size', { flow_control_key: 'not-configured' }),
      ).toBeUndefined();
      expect(f.has('upstash_qstash_flow_control_keys_listed')).toBe(false);
      expect(valueOf(f, 'upstash_qstash_flow_control_keys_unread')).toBe(1);
      expect(requests.filter((r) => r === '/v2/flowControl 404')).toHaveLength(1);
      // The missing list and the unknown configured key are each reported once over two polls.
      expect(log.lines().filter((l) => l.level === 'warn')).toMatchObject([
        { endpoint: 'GET /v2/flowControl' },
        { flowControlKey: 'never-used' },
      ]);
    } finally {
      await client.close();
    }
  });
});

describe('flow_control collector: list shapes the emulator does not serve', () => {
  const setup = fixtureClientPerTest(
    (url) => new DeliveryClient({ baseUrl: url, token: 'tok', retry: { maxRetries: 0 } }),
  );

  it('reads a bare array with full records (no per-key request) and `waitlistSize` as the OpenAPI spells it', async () => {
    setup.fixture.routes.set('/v2/flowControl', {
      body: [
        {
          flowControlKey: 'full',
          waitListSize: 3,
          parallelismMax: 5,
          parallelismCount: 5,
          rateMax: 0,
          rateCount: 0,
          ratePeriod: 1,
          isPaused: false,
        },
        { flowControlKey: 'short', waitlistSize: 7 },
      ],
    });
    setup.fixture.routes.set('/v2/flowControl/short', {
      body: { flowControlKey: 'short', waitlistSize: 7, parallelismMax: 1, parallelismCount: 1 },
    });
    const collector = new FlowControlCollector({ client: setup.client, intervalMs: 30_000 });
    await collector.poll(pollContext(setup.log.logger));
    const f = await familiesOf(collector.registry);
    expect(valueOf(f, 'upstash_qstash_flow_control_parallelism_in_use', { flow_control_key: 'full' })).toBe(5);
    expect(valueOf(f, 'upstash_qstash_flow_control_waitlist_size', { flow_control_key: 'short' })).toBe(7);
    expect(setup.fixture.requests).toEqual(['/v2/flowControl', '/v2/flowControl/short']);
  });
});
