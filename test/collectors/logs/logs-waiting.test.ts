// Waiting time from the delivery logs, against the emulator over real HTTP: the queue wait
// (CREATED to the first ACTIVE beyond the asked delay) of delayed messages and of a queue with
// parallelism 1 whose messages wait for each other; the lateness of retries against their
// nextDeliveryTime; the age of the oldest message in flight per queue; all kept across a restart.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDestination, type Destination } from '../../support/emulator-helpers.js';
import { familiesOf, pollContext, sleep, valueOf, type Family } from '../../support/exporter-e2e-helpers.js';
import {
  pollUntil,
  publish,
  settle,
  startCollector,
  startWorld,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';

let world: World | undefined;
let slow: Destination | undefined;
const collectors: CollectorUnderTest[] = [];

afterEach(async () => {
  for (const under of collectors.splice(0)) await under.close();
  await slow?.close();
  await world?.close();
  world = undefined;
});

async function send(path: string, headers: Record<string, string>, body = 'x'): Promise<void> {
  const response = await fetch(`${world!.emu.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world!.emu.credentials.token}`, ...headers },
    body,
  });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
}

/** Observations of a histogram per queue: count, sum and the count at or below `le`. */
function histogram(
  families: Map<string, Family>,
  name: string,
  queue: string,
  le: string,
): { count: number; sum: number; below: number } {
  const samples = families.get(name)?.samples.filter((sample) => sample.labels.queue === queue) ?? [];
  const count = samples.find((sample) => sample.labels.le === '+Inf')?.value ?? 0;
  const below = samples.find((sample) => sample.labels.le === le)?.value ?? 0;
  // _sum and _count share the base name and have no `le`: the sum is the one that is not the count.
  const plain = samples.filter((sample) => sample.labels.le === undefined).map((sample) => sample.value);
  const sum = plain.length === 2 ? (plain[0] === count ? plain[1]! : plain[0]!) : 0;
  return { count, sum, below };
}

describe('waiting time', () => {
  it('queue wait beyond the asked delay, a queue of parallelism 1, retry lateness, oldest in-flight age; kept across a restart', async () => {
    world = await startWorld({ timeScale: 60 });
    slow = await startDestination(() => ({ status: 200, body: 'slow', delayMs: 300 }));
    const stateFile = join(world.stateDir, 'state.json');
    const under = startCollector(world, {}, stateFile);
    collectors.push(under);
    await sleep(200);
    await send(
      '/v2/queues',
      { 'content-type': 'application/json' },
      JSON.stringify({ queueName: 'one', parallelism: 1 }),
    );
    // Delayed 30 s on the emulator's clock (0.5 s real): the delay is not waiting.
    for (let i = 0; i < 3; i++) await send(`/v2/publish/${world.ok.url}/later`, { 'Upstash-Delay': '30s' });
    // Four messages through one slot, 0.3 s each: they wait about 0, 0.3, 0.6 and 0.9 s.
    await Promise.all([0, 1, 2, 3].map(() => send(`/v2/enqueue/one/${slow!.url}/one`, {})));
    // Fail once, then delivered on the retry when announced.
    for (let i = 0; i < 3; i++) await publish(world.emu, `${world.flaky.url}/retry`, { retries: 2 });

    await sleep(450);
    await under.collector.poll(pollContext(under.log.logger));
    const during = await familiesOf(under.collector.registry);
    expect(valueOf(during, 'upstash_qstash_oldest_in_flight_message_age_seconds', { queue: 'one' })).toBeGreaterThan(
      0.2,
    );

    const truth = await settle(world.emu);
    await pollUntil(under, Date.now());
    const families = await familiesOf(under.collector.registry);
    const plain = histogram(families, 'upstash_qstash_message_queue_wait_seconds', '', '0.25');
    expect(plain.count).toBe(6);
    expect(plain.below).toBe(6);
    const queued = histogram(families, 'upstash_qstash_message_queue_wait_seconds', 'one', '0.25');
    expect(queued.count).toBe(4);
    expect(queued.sum).toBeGreaterThan(1.5);
    const late = histogram(families, 'upstash_qstash_delivery_lateness_seconds', '', '0.25');
    expect(late.count).toBe(truth.byState.RETRY);
    expect(late.count).toBe(3);
    expect(late.below).toBe(3);
    expect(valueOf(families, 'upstash_qstash_oldest_in_flight_message_age_seconds', { queue: 'one' })).toBeUndefined();

    await under.close();
    const again = startCollector(world, {}, stateFile);
    collectors.push(again);
    const restored = await familiesOf(again.collector.registry);
    expect(histogram(restored, 'upstash_qstash_message_queue_wait_seconds', 'one', '0.25')).toEqual(queued);
    expect(histogram(restored, 'upstash_qstash_delivery_lateness_seconds', '', '0.25')).toEqual(late);
  });
});
