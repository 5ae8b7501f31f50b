// Entries that become visible out of time order (the emulator's logVisibilityLagMaxMs: older
// entries appear after newer ones, as the real service's asynchronous log writes allow). Within
// ingestion delay + overlap they are counted exactly; later ones are found by the overlap
// re-read, the anchor or the late-entry audit, counted once, reported as late, and the overlap
// widens by itself. Only entries later than the lateness horizon are reported missed.
import { afterEach, describe, expect, it } from 'vitest';
import {
  differences,
  exportedEventSeries,
  familiesOfCollector,
  mixedTraffic,
  pollInBackground,
  pollUntil,
  settle,
  startCollector,
  startWorld,
  sumOf,
  truthEventSeries,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';
import { pollContext, sleep, valueOf } from '../../support/exporter-e2e-helpers.js';
import type { Knobs } from '../../../src/emulator/index.js';

let world: World | undefined;
let under: CollectorUnderTest | undefined;

afterEach(async () => {
  await under?.close();
  await world?.close();
  under = undefined;
  world = undefined;
});

const EVENTS = 'upstash_qstash_message_events_total';

async function run(
  lagMaxMs: number,
  settings: {
    ingestionDelayMs: number;
    overlapMs: number;
    auditIntervalMs?: number;
    maxGrownOverlapMs?: number;
    latenessHorizonMs?: number;
  },
  exact = true,
  knobs: Partial<Knobs> = {},
): Promise<{ families: Awaited<ReturnType<typeof familiesOfCollector>>; total: number }> {
  world = await startWorld({ logVisibilityLagMaxMs: lagMaxMs, ...knobs });
  under = startCollector(world, settings);
  await under.collector.poll(pollContext(under.log.logger));
  const background = pollInBackground(under);
  await mixedTraffic(world, 3);
  const truth = await settle(world.emu);
  const during = await background.stop();
  // Every entry is visible once the longest lag has passed.
  await sleep(lagMaxMs + 200);
  const after = await pollUntil(under, Date.now(), 15_000);
  expect([...during.failures, ...after.failures]).toEqual([]);
  const families = await familiesOfCollector(under.collector);
  if (exact) {
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(sumOf(families, EVENTS)).toBe(truth.total);
  } else {
    // Nothing counted twice, whatever was missed.
    const expected = truthEventSeries(truth);
    for (const [key, value] of exportedEventSeries(families))
      expect(value, key).toBeLessThanOrEqual(expected.get(key) ?? 0);
  }
  expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
  return { families, total: truth.total };
}

describe('out-of-order visibility', () => {
  it('counts exactly when entries appear out of order within ingestion delay + overlap', async () => {
    // Lags up to 300 ms; 100 ms delay + 400 ms overlap.
    await run(300, { ingestionDelayMs: 100, overlapMs: 400 });
  });

  /** Polls until the traffic's seconds are behind the overlap, where the audit looks. */
  async function pollPastOverlap(): Promise<Awaited<ReturnType<typeof familiesOfCollector>>> {
    const auditedUntil = Date.now() + under!.collector.overlapMs + 2500;
    while (Date.now() < auditedUntil) {
      await under!.collector.poll(pollContext(under!.log.logger));
      await sleep(200);
    }
    return familiesOfCollector(under!.collector);
  }

  it('finds entries later than ingestion delay + overlap, counts them once within the lateness horizon, reports them as late and widens the overlap', async () => {
    // Lags up to 2 s; 50 ms delay + 100 ms overlap: most late entries fall behind the walk. The
    // overlap re-read and the anchor find some (counted once, reported as late) and the overlap
    // grows, here to 1 s at most: entries later than that are behind the walk, where the audit
    // finds them and, within the lateness horizon (5 minutes), counts them.
    const { total } = await run(
      2000,
      { ingestionDelayMs: 50, overlapMs: 100, auditIntervalMs: 0, maxGrownOverlapMs: 1000 },
      false,
    );
    const families = await pollPastOverlap();
    expect(valueOf(families, 'upstash_exporter_log_late_events_total')).toBeGreaterThan(0);
    expect(under!.log.text()).toContain('re-reading a longer overlap');
    expect(under!.log.text()).toContain('counted now, as late entries');
    expect(valueOf(families, 'upstash_exporter_log_missed_late_events_total')).toBe(0);
    expect(differences(exportedEventSeries(families), truthEventSeries(world!.emu.groundTruth()))).toEqual([]);
    expect(sumOf(families, EVENTS)).toBe(total);
  });

  it('counts what the audit finds once when the service hands back the cursor it was given (a page served twice is not a pair of twins)', async () => {
    // Pages of 15, so the audit follows cursors; while it reads, the service repeats cursors.
    const { total } = await run(
      2000,
      { ingestionDelayMs: 50, overlapMs: 100, auditIntervalMs: 0, maxGrownOverlapMs: 1000 },
      false,
      { maxPageSize: 15 },
    );
    world!.emu.setKnobs({ repeatCursorNext: 1_000 });
    const families = await pollPastOverlap();
    world!.emu.setKnobs({ repeatCursorNext: 0 });
    expect(under!.log.text()).toContain('counted now, as late entries');
    expect(valueOf(families, 'upstash_exporter_log_missed_late_events_total')).toBe(0);
    expect(differences(exportedEventSeries(families), truthEventSeries(world!.emu.groundTruth()))).toEqual([]);
    expect(sumOf(families, EVENTS)).toBe(total);
  });

  it('reports, exactly, the entries later than the lateness horizon, and counts none twice', async () => {
    // The same, with a lateness horizon of 200 ms: what the walk passed for good and the audit
    // finds behind the horizon is reported missing (with a warning), none silently lost.
    const { total } = await run(
      2000,
      { ingestionDelayMs: 50, overlapMs: 100, auditIntervalMs: 0, maxGrownOverlapMs: 1000, latenessHorizonMs: 200 },
      false,
    );
    const families = await pollPastOverlap();
    const missed = valueOf(families, 'upstash_exporter_log_missed_late_events_total')!;
    expect(missed).toBeGreaterThan(0);
    expect(under!.log.text()).toContain('were not counted; raise logs.lateness_horizon');
    expect(sumOf(families, EVENTS) + missed).toBe(total);
  });
});
