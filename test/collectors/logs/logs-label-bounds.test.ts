// The logs collector against the emulator: a message published with a 10 KB label (the opt-in
// `label` label) is counted under a bounded label value (src/metrics/cardinality.ts), the counts
// stay exact, and a restart from the checkpoint continues the same bounded series.
import { afterEach, describe, expect, it } from 'vitest';
import { boundLabelValue, LABEL_VALUE_MAX_BYTES } from '../../../src/metrics/cardinality.js';
import { pollContext } from '../../support/exporter-e2e-helpers.js';
import {
  EVENTS,
  familiesOfCollector,
  pollUntil,
  publish,
  settle,
  startCollector,
  startWorld,
  sumOf,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';

let world: World | undefined;
const collectors: CollectorUnderTest[] = [];
afterEach(async () => {
  for (const under of collectors.splice(0)) await under.close();
  await world?.close();
  world = undefined;
});

describe('label values of the logs collector', () => {
  it('a 10 KB message label is counted under a bounded value, exactly, across a restart', async () => {
    world = await startWorld();
    const long = 'L'.repeat(10_240);
    const first = startCollector(world, { labels: ['label'] });
    collectors.push(first);
    await first.collector.poll(pollContext(first.log.logger));
    await publish(world.emu, `${world.ok.url}/long`, { labels: [long] });
    await publish(world.emu, `${world.ok.url}/long`, { labels: [`${long}2`] });
    const truth = await settle(world.emu);
    await pollUntil(first, Date.now());
    const families = await familiesOfCollector(first.collector);
    const samples = families.get(EVENTS)?.samples ?? [];
    for (const sample of samples) {
      for (const value of Object.values(sample.labels))
        expect(Buffer.byteLength(value)).toBeLessThanOrEqual(LABEL_VALUE_MAX_BYTES);
    }
    expect(sumOf(families, EVENTS)).toBe(truth.total);
    const bounded = boundLabelValue(long);
    const other = boundLabelValue(`${long}2`);
    expect(bounded).not.toBe(other);
    const delivered = (label: string): number =>
      sumOf(families, EVENTS, (l) => l.label === label && l.state === 'DELIVERED');
    expect([delivered(bounded), delivered(other)]).toEqual([1, 1]);

    await first.close();
    const second = startCollector(world, { labels: ['label'] });
    collectors.push(second);
    const restored = await familiesOfCollector(second.collector);
    expect(restored.get(EVENTS)?.samples).toEqual(families.get(EVENTS)?.samples);
  });
});
