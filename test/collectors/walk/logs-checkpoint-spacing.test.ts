// Checkpoints of a walk whose slices complete faster than a checkpoint is written (a catch-up
// with a large window and cold store): a completed slice is checkpointed only once
// CHECKPOINT_SPACING times the last write's duration has passed since that write began, so writes
// take about that fraction of the walk at most; every entry is still counted once. The walk
// reads an in-memory log (a source whose pages are made on demand): the emulator cannot make a
// checkpoint slow, and the spacing is the walk's own decision, whatever writes the checkpoint.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { LogEntry, LogsPage, LogsQuery } from '../../../src/api/delivery.js';
import { LogCounter } from '../../../src/collectors/logs/counter.js';
import { CHECKPOINT_SPACING } from '../../../src/collectors/walk/chains.js';
import { LogWalker } from '../../../src/collectors/walk/walker.js';
import type { WalkSettings } from '../../../src/collectors/walk/walk-types.js';
import { captureLogger } from '../../support/exporter-e2e-helpers.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const SPACING_MS = 100;

describe('checkpoints of a fast walk', () => {
  it('a completed slice is checkpointed once CHECKPOINT_SPACING times the last write has passed, and every entry is counted once', async () => {
    // One entry every SPACING_MS for 250 minutes, newest first, a cursor per page.
    const entries = 150_000;
    const timeOf = (k: number): number => T0 + k * SPACING_MS;
    const source = {
      logsPage(query: LogsQuery): Promise<LogsPage> {
        const from = Number(query.fromDate ?? 0);
        const to = Number(query.toDate ?? Number.MAX_SAFE_INTEGER);
        let k = Math.min(
          entries - 1,
          Math.floor((to - T0) / SPACING_MS),
          query.cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(query.cursor),
        );
        const logs: LogEntry[] = [];
        for (; k >= 0 && timeOf(k) >= from && logs.length < (query.count ?? 100); k--)
          logs.push({ time: timeOf(k), messageId: `m${k}`, state: 'CREATED', url: 'https://example.com/hook' });
        return Promise.resolve(k >= 0 && timeOf(k) >= from ? { logs, cursor: String(k) } : { logs });
      },
    };
    const settings: WalkSettings = {
      ingestionDelayMs: 1_000,
      overlapMs: 1_000,
      maxPagesPerCycle: 10_000,
      pageSize: 100,
    };
    let now = T0 + settings.ingestionDelayMs;
    const counter = new LogCounter({
      registry: new Registry(),
      seriesLimit: 1000,
      optIn: [],
      trackerCapacity: 100_000,
    });
    const checkpointStarts: number[] = [];
    const checkpointEnds: number[] = [];
    const writeMs = 2;
    const walker = new LogWalker({
      source,
      counter,
      settings,
      logger: captureLogger('info').logger,
      now: () => now,
      hooks: {
        onPage: () => undefined,
        onGap: () => undefined,
        onLate: () => undefined,
        checkpoint: async () => {
          checkpointStarts.push(performance.now());
          await new Promise((done) => setTimeout(done, writeMs));
          checkpointEnds.push(performance.now());
        },
      },
    });
    now = timeOf(entries) + settings.ingestionDelayMs;
    const report = await walker.cycle(new AbortController().signal);

    expect(report.stopped).toBeNull();
    expect(walker.position.watermark).toBeGreaterThanOrEqual(timeOf(entries - 1));
    expect([...counter.events.events.all()].reduce((sum, series) => sum + series.value, 0)).toBe(entries - 1); // after the start (T0) only
    expect(report.slicesCompleted).toBeGreaterThan(10);
    // Far fewer writes than completed slices, each begun at least CHECKPOINT_SPACING times the
    // write before it took (as measured here: the walk's own measure of it is a little longer)
    // after it began; several of them, so the spacing is seen.
    expect(checkpointStarts.length).toBeLessThan(report.slicesCompleted / 2);
    expect(checkpointStarts.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < checkpointStarts.length; i++) {
      expect(checkpointStarts[i]! - checkpointStarts[i - 1]!).toBeGreaterThanOrEqual(
        CHECKPOINT_SPACING * (checkpointEnds[i - 1]! - checkpointStarts[i - 1]!),
      );
    }
  });
});
