// SelfMetrics, the series guard and the snapshot registry; `promtool check metrics` on the
// exporter's own families.

import { spawnSync } from 'node:child_process';
import { Counter, Gauge, type Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  boundLabelValue,
  isCutLabelValue,
  LABEL_VALUE_MAX_BYTES,
  OVERFLOW_LABEL_VALUE,
  SeriesGuard,
} from '../../src/metrics/cardinality.js';
import { buildRevision, EVENT_LOOP_SAMPLE_MS, SelfMetrics } from '../../src/metrics/self.js';
import { createRegistry, SnapshotRegistry } from '../../src/metrics/snapshot.js';
import { SELF_FAMILIES } from '../../src/metrics/self-families.js';
import { declaredFamilies, familiesDeclaredAs } from '../support/exporter-e2e-helpers.js';

async function samples(
  registry: Registry,
  name: string,
): Promise<{ labels: Record<string, string | number>; value: number }[]> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.map((v) => ({
    labels: v.labels as Record<string, string | number>,
    value: v.value,
  }));
}

function promtoolAvailable(): boolean {
  return spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
}

describe('SelfMetrics', () => {
  it('serves build_info with version, revision and Node version', async () => {
    const self = new SelfMetrics({
      version: '1.2.3',
      revision: buildRevision({ UPSTASH_EXPORTER_REVISION: 'abc123' }),
      processMetrics: false,
    });
    expect(await samples(self.registry, 'upstash_exporter_build_info')).toEqual([
      { labels: { version: '1.2.3', revision: 'abc123', nodejs_version: process.version }, value: 1 },
    ]);
    expect(buildRevision({})).toBe('unknown');
    expect(buildRevision({ UPSTASH_EXPORTER_REVISION: '  ' })).toBe('unknown');
  });

  it('pre-sets every per-collector series to 0 and records polls', async () => {
    const self = new SelfMetrics({ version: '1.0.0', collectors: ['logs'], processMetrics: false });
    self.addCollector('account');
    self.addCollector('account'); // idempotent
    // Every family of a collector instance, but the poll interval (set when the runner schedules it).
    const perCollector = Object.values(SELF_FAMILIES)
      .filter((family) => family.labelNames.join() === 'collector,qstash_region')
      .filter((family) => family !== SELF_FAMILIES.collectorPollInterval)
      .map((family) => family.name);
    expect(perCollector).toHaveLength(7);
    for (const name of perCollector) {
      const got = await samples(self.registry, name);
      expect(got.map((s) => s.labels.collector).sort(), name).toEqual(['account', 'logs']);
      expect(
        got.every((s) => s.value === 0),
        name,
      ).toBe(true);
    }
    self.recordPoll({ collector: 'logs', ok: true, durationSeconds: 0.25, finishedAtMs: 1_700_000_000_000 });
    self.recordPoll({ collector: 'account', ok: false, durationSeconds: 1.5, finishedAtMs: 1_700_000_001_000 });
    self.countOverlap('account');
    self.countMissedRun('logs');
    const value = async (name: string, collector: string): Promise<number | undefined> =>
      (await samples(self.registry, name)).find((s) => s.labels.collector === collector)?.value;
    expect(await value('upstash_exporter_collector_success', 'logs')).toBe(1);
    expect(await value('upstash_exporter_collector_success', 'account')).toBe(0);
    expect(await value('upstash_exporter_collector_last_success_timestamp_seconds', 'logs')).toBe(1_700_000_000);
    expect(await value('upstash_exporter_collector_last_success_timestamp_seconds', 'account')).toBe(0);
    expect(await value('upstash_exporter_collector_duration_seconds', 'account')).toBe(1.5);
    expect(await value('upstash_exporter_collector_errors_total', 'account')).toBe(1);
    expect(await value('upstash_exporter_collector_errors_total', 'logs')).toBe(0);
    expect(await value('upstash_exporter_collector_overlaps_total', 'account')).toBe(1);
    expect(await value('upstash_exporter_collector_missed_runs_total', 'logs')).toBe(1);
  });

  it('implements the API clients onRequest hook', async () => {
    const self = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const { onRequest } = self; // passed detached, as the clients receive it
    onRequest({
      api: 'qstash',
      endpoint: '/v2/logs',
      method: 'GET',
      code: '200',
      durationSeconds: 0.04,
      rateLimitRemaining: 99,
    });
    onRequest({ api: 'qstash', endpoint: '/v2/logs', method: 'GET', code: '429', durationSeconds: 0.02 });
    onRequest({ api: 'management', endpoint: '/v2/search', method: 'GET', code: 'timeout', durationSeconds: 10 });
    // A region's client: its requests carry qstash_region.
    self.onRequestIn('us-east-1')({
      api: 'qstash',
      endpoint: '/v2/logs',
      method: 'GET',
      code: '200',
      durationSeconds: 1,
    });
    const requests = await samples(self.registry, 'upstash_exporter_api_requests_total');
    expect(requests).toEqual(
      expect.arrayContaining([
        { labels: { api: 'qstash', endpoint: '/v2/logs', code: '200', qstash_region: 'us-east-1' }, value: 1 },
        { labels: { api: 'qstash', endpoint: '/v2/logs', code: '200' }, value: 1 },
        { labels: { api: 'qstash', endpoint: '/v2/logs', code: '429' }, value: 1 },
        { labels: { api: 'management', endpoint: '/v2/search', code: 'timeout' }, value: 1 },
      ]),
    );
    const text = await self.registry.metrics();
    expect(text).toContain('upstash_exporter_api_request_duration_seconds_count{api="qstash",endpoint="/v2/logs"} 2');
    expect(text).toContain(
      'upstash_exporter_api_request_duration_seconds_bucket{le="0.05",api="qstash",endpoint="/v2/logs"} 2',
    );
    expect(text).toContain(
      'upstash_exporter_api_request_duration_seconds_bucket{le="10",api="management",endpoint="/v2/search"} 1',
    );
    // The 429 carried no header: the last value seen stays.
    expect(await samples(self.registry, 'upstash_exporter_rate_limit_remaining')).toEqual([
      { labels: { api: 'qstash' }, value: 99 },
    ]);
  });

  it('registers exactly the families it declares (docs/metrics.md is written from them), plus the process defaults', () => {
    const self = new SelfMetrics({ version: '1.0.0' });
    expect(declaredFamilies(self.registry)).toEqual(familiesDeclaredAs(Object.values(SELF_FAMILIES)));
    expect(Object.keys(SELF_FAMILIES).length).toBeGreaterThanOrEqual(18);
    const names = self.processRegistry.getMetricsAsArray().map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n) => n.startsWith('process_') || n.startsWith('nodejs_'))).toBe(true);
  });

  it('samples the event loop delay every EVENT_LOOP_SAMPLE_MS, not every 10 ms (each sample wakes the process)', async () => {
    const self = new SelfMetrics({ version: '1.0.0' });
    // The monitor starts with the registry; a few samples in, the shortest time between two is
    // about the sampling interval (prom-client's 10 ms would read about 0.01 s).
    await new Promise((resolve) => setTimeout(resolve, 4 * EVENT_LOOP_SAMPLE_MS));
    const text = await self.processRegistry.metrics();
    const min = Number(/^nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(text)?.[1]);
    expect(min).toBeGreaterThan((EVENT_LOOP_SAMPLE_MS * 0.8) / 1000);
  });

  it('passes promtool check metrics on its own families', async (ctx) => {
    if (!promtoolAvailable()) {
      if (process.env.CI === 'true') throw new Error('promtool is required under CI (apt-get install prometheus)');
      ctx.skip('promtool not installed');
    }
    const self = new SelfMetrics({ version: '1.0.0', collectors: ['logs', 'vector'] });
    self.onRequest({
      api: 'qstash',
      endpoint: '/v2/logs',
      method: 'GET',
      code: '200',
      durationSeconds: 0.1,
      rateLimitRemaining: 5,
    });
    self.recordPoll({ collector: 'logs', ok: true, durationSeconds: 0.1, finishedAtMs: Date.now() });
    const guard = new SeriesGuard({
      metric: 'upstash_qstash_message_events_total',
      limit: 1,
      dropped: self.seriesDropped,
    });
    guard.admit({ state: 'CREATED' });
    guard.admit({ state: 'ACTIVE' });
    const text = (await self.registry.metrics()) + (await self.processRegistry.metrics());
    // prom-client's default metrics include gauges named nodejs_active_{handles,requests,resources}_total,
    // which promtool's lint rejects ("non-counter metrics should not have _total suffix"). They are
    // prom-client's names, not ours: drop exactly those three families and lint everything else.
    const knownDefaultLintFailures = [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ];
    const filtered = text
      .split('\n')
      .filter(
        (line) => !knownDefaultLintFailures.some((family) => line.includes(` ${family} `) || line.startsWith(family)),
      )
      .join('\n');
    expect(filtered).toContain('upstash_exporter_build_info');
    expect(filtered).toContain('process_cpu_seconds_total');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: filtered, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);

    // The filter is not hiding anything else: unfiltered, only those three families fail.
    const unfiltered = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const complaints = `${unfiltered.stdout}${unfiltered.stderr}`.split('\n').filter((l) => l.trim() !== '');
    expect(complaints.every((line) => knownDefaultLintFailures.some((family) => line.startsWith(family)))).toBe(true);
    // If this starts passing, prom-client renamed those gauges and the filter can go.
    expect(unfiltered.status).toBe(3);
  });
});

describe('SeriesGuard', () => {
  it('admits up to the limit, then folds into one overflow series keeping the kept labels', async () => {
    const self = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const guard = new SeriesGuard<'state' | 'queue'>({
      metric: 'upstash_qstash_message_events_total',
      limit: 2,
      keep: ['state'],
      dropped: self.seriesDropped,
    });
    expect(await samples(self.registry, 'upstash_exporter_series_dropped_total')).toEqual([
      { labels: { metric: 'upstash_qstash_message_events_total' }, value: 0 },
    ]);
    expect(guard.admit({ state: 'CREATED', queue: 'a' })).toEqual({ state: 'CREATED', queue: 'a' });
    expect(guard.admit({ queue: 'b', state: 'ACTIVE' })).toEqual({ queue: 'b', state: 'ACTIVE' });
    // Full: a known set still gets its own series, in any key order.
    expect(guard.admit({ queue: 'a', state: 'CREATED' })).toEqual({ state: 'CREATED', queue: 'a' });
    expect(guard.admit({ state: 'DELIVERED', queue: 'c' }, 3)).toEqual({
      state: 'DELIVERED',
      queue: OVERFLOW_LABEL_VALUE,
    });
    expect(guard.admit({ state: 'ERROR', queue: 'd' })).toEqual({ state: 'ERROR', queue: OVERFLOW_LABEL_VALUE });
    expect(guard.size).toBe(2);
    expect(guard.folded).toBe(4);
    expect(guard.has({ state: 'DELIVERED', queue: 'c' })).toBe(false);
    expect(await samples(self.registry, 'upstash_exporter_series_dropped_total')).toEqual([
      { labels: { metric: 'upstash_qstash_message_events_total' }, value: 4 },
    ]);
  });

  it('exports and restores its admitted label sets (checkpoint)', () => {
    const first = new SeriesGuard({ metric: 'm', limit: 3 });
    first.admit({ queue: 'a' });
    first.admit({ queue: 'b"},{' }); // values with separators cannot collide with other sets
    first.admit({ queue: 'c' });
    const state = JSON.parse(JSON.stringify(first.exportState())) as Record<string, string>[];
    expect(state).toEqual([{ queue: 'a' }, { queue: 'b"},{' }, { queue: 'c' }]);

    const restored = new SeriesGuard({ metric: 'm', limit: 3 });
    expect(restored.restoreState(state)).toBe(3);
    expect(restored.admit({ queue: 'b"},{' })).toEqual({ queue: 'b"},{' });
    expect(restored.admit({ queue: 'new' })).toEqual({ queue: OVERFLOW_LABEL_VALUE });

    // A lowered limit keeps the earliest sets.
    const smaller = new SeriesGuard({ metric: 'm', limit: 2 });
    expect(smaller.restoreState(state)).toBe(2);
    expect(smaller.exportState()).toEqual([{ queue: 'a' }, { queue: 'b"},{' }]);
  });

  it('works as the label set of a real counter', async () => {
    const registry = createRegistry();
    const counter = new Counter({
      name: 'x_total',
      help: 'x',
      labelNames: ['state', 'queue'] as const,
      registers: [registry],
    });
    const guard = new SeriesGuard<'state' | 'queue'>({ metric: 'x_total', limit: 1, keep: ['state'] });
    for (const queue of ['q1', 'q2', 'q3']) counter.inc(guard.admit({ state: 'DELIVERED', queue }));
    const text = await registry.metrics();
    expect(text).toContain('x_total{state="DELIVERED",queue="q1"} 1');
    expect(text).toContain(`x_total{state="DELIVERED",queue="${OVERFLOW_LABEL_VALUE}"} 2`);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new SeriesGuard({ metric: 'm', limit: 0 })).toThrow(RangeError);
  });
});

describe('SnapshotRegistry', () => {
  it('swaps in a fully built registry, and keeps the previous one when a build fails', async () => {
    const snapshot = new SnapshotRegistry();
    expect(await snapshot.current.metrics()).toBe('\n');
    await snapshot.build((registry) => {
      new Gauge({ name: 'item_info', help: 'i', labelNames: ['id'] as const, registers: [registry] }).set(
        { id: 'a' },
        1,
      );
    });
    const first = snapshot.current;
    await expect(
      snapshot.build((registry) => {
        new Gauge({ name: 'item_info', help: 'i', registers: [registry] }).set(1);
        throw new Error('half built');
      }),
    ).rejects.toThrow('half built');
    expect(snapshot.current).toBe(first);
    // Series of vanished items go with the old registry.
    await snapshot.build((registry) => {
      new Gauge({ name: 'item_info', help: 'i', labelNames: ['id'] as const, registers: [registry] }).set(
        { id: 'b' },
        1,
      );
    });
    const text = await snapshot.current.metrics();
    expect(text).toContain('item_info{id="b"} 1');
    expect(text).not.toContain('id="a"');
    expect(snapshot.swaps).toBe(2);
  });
});

describe('label value bounding', () => {
  it('keeps values up to the limit and cuts longer ones on a character boundary with a hash of the whole value', () => {
    const fits = 'q'.repeat(LABEL_VALUE_MAX_BYTES);
    expect(boundLabelValue(fits)).toBe(fits);
    const long = 'q'.repeat(10_240);
    const cut = boundLabelValue(long);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(LABEL_VALUE_MAX_BYTES);
    expect(cut).toMatch(/^q+~[0-9a-f]{12}$/);
    // Same prefix, different tail: still two values. The same value: the same result.
    const other = boundLabelValue(`${'q'.repeat(10_239)}r`);
    expect(other).not.toBe(cut);
    expect(other.slice(0, -13)).toBe(cut.slice(0, -13));
    expect(boundLabelValue(long)).toBe(cut);
    // Multi-byte characters (3 bytes each in UTF-8) are never split.
    const wide = boundLabelValue('€'.repeat(5_000));
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(LABEL_VALUE_MAX_BYTES);
    expect(wide).toMatch(/^€+~[0-9a-f]{12}$/);
    // Without bounding such a value would exceed any label_value_length_limit below its size.
    expect(Buffer.byteLength(long)).toBeGreaterThan(LABEL_VALUE_MAX_BYTES);
  });

  it('bounds every label set the guard admits, counting each value cut once per series', async () => {
    const self = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const guard = new SeriesGuard<'state' | 'queue'>({
      metric: 'm',
      limit: 5,
      keep: ['state'],
      ...self.seriesCounters,
    });
    const queue = 'x'.repeat(10_000);
    const admitted = guard.admit({ state: 'CREATED', queue });
    expect(admitted).toEqual({ state: 'CREATED', queue: boundLabelValue(queue) });
    expect(guard.admit({ queue, state: 'CREATED' })).toBe(admitted);
    expect(guard.has({ state: 'CREATED', queue })).toBe(true);
    guard.admit({ state: 'CREATED', queue: `${queue}y` });
    expect(guard.size).toBe(2);
    expect(await samples(self.registry, 'upstash_exporter_label_values_truncated_total')).toEqual([
      { labels: { metric: 'm' }, value: 2 },
    ]);
    // After a restart the cut values are recognised, so the counter comes back to its value; a
    // checkpoint written before bounding (long values) restores bounded sets, counted the same.
    for (const saved of [
      guard.exportState(),
      [
        { state: 'CREATED', queue },
        { state: 'CREATED', queue: `${queue}y` },
      ],
    ]) {
      const next = new SelfMetrics({ version: '1.0.0', processMetrics: false });
      const restored = new SeriesGuard({ metric: 'm', limit: 5, ...next.seriesCounters });
      restored.restoreState(saved);
      expect(restored.exportState()[0]).toEqual(admitted);
      expect(await samples(next.registry, 'upstash_exporter_label_values_truncated_total')).toEqual([
        { labels: { metric: 'm' }, value: 2 },
      ]);
    }
    expect(isCutLabelValue('short~0123456789ab')).toBe(false);
  });
});
