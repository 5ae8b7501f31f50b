// The schedules collector with the real DeliveryClient over HTTP. The emulator-backed behaviour
// (SDK-created schedules, runs, deletion) is covered end to end in exporter-e2e.test.ts; this
// file uses a fixture server on 127.0.0.1 for records the emulator never produces: an unknown
// run state, a zero lastScheduleTime, a missing isPaused, a URL with credentials.
import { describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { SchedulesCollector } from '../../src/collectors/schedules.js';
import { familiesOf, pollContext, valueOf } from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';
import { boundLabelValue, LABEL_VALUE_MAX_BYTES, OVERFLOW_LABEL_VALUE } from '../../src/metrics/cardinality.js';
import { SelfMetrics } from '../../src/metrics/self.js';

const setup = fixtureClientPerTest(
  (url) => new DeliveryClient({ baseUrl: url, token: 'tok', retry: { maxRetries: 0 } }),
);

function schedule(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scheduleId: id,
    cron: '*/5 * * * *',
    destination: 'https://user:pa55@hooks.example.com:8443/jobs/run?token=url-secret',
    method: 'POST',
    createdAt: 1_754_565_618_803,
    header: { Authorization: ['Bearer header-secret'] },
    body: 'body-secret',
    retries: 3,
    isPaused: false,
    ...extra,
  };
}

describe('schedules collector', () => {
  it('exports every family per schedule with timestamps in seconds and run states pre-set to 0', async () => {
    setup.fixture.routes.set('/v2/schedules', {
      body: [
        schedule('s-1', {
          lastScheduleTime: 1_755_095_280_020,
          nextScheduleTime: 1_759_909_800_000,
          lastScheduleStates: { msg_1: 'SUCCESS', msg_2: 'SUCCESS', msg_3: 'FAIL', msg_4: 'CANCELLED' },
        }),
        schedule('s-2', {
          destination: 'nightly-group',
          method: 'GET',
          isPaused: true,
          lastScheduleTime: 0,
          cron: 'CRON_TZ=Europe/Berlin 0 3 * * *',
        }),
        // isPaused omitted (a Go omitempty false): not paused.
        schedule('s-3', { isPaused: undefined, lastScheduleStates: null }),
      ],
    });
    const schedules = new SchedulesCollector({ client: setup.client, intervalMs: 60_000 });
    await schedules.poll(pollContext(setup.log.logger));
    await schedules.poll(pollContext(setup.log.logger));
    const f = await familiesOf(schedules.registry);

    expect(valueOf(f, 'upstash_qstash_schedules', { paused: 'true' })).toBe(1);
    expect(valueOf(f, 'upstash_qstash_schedules', { paused: 'false' })).toBe(2);
    expect(
      valueOf(f, 'upstash_qstash_schedule_info', {
        schedule_id: 's-1',
        cron: '*/5 * * * *',
        destination: 'hooks.example.com:8443',
        method: 'POST',
      }),
    ).toBe(1);
    expect(
      valueOf(f, 'upstash_qstash_schedule_info', {
        schedule_id: 's-2',
        cron: 'CRON_TZ=Europe/Berlin 0 3 * * *',
        destination: 'nightly-group',
        method: 'GET',
      }),
    ).toBe(1);
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: 's-1' })).toBe(0);
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: 's-2' })).toBe(1);
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: 's-3' })).toBe(0);
    expect(valueOf(f, 'upstash_qstash_schedule_created_timestamp_seconds', { schedule_id: 's-1' })).toBe(
      1_754_565_618.803,
    );
    expect(valueOf(f, 'upstash_qstash_schedule_last_run_timestamp_seconds', { schedule_id: 's-1' })).toBe(
      1_755_095_280.02,
    );
    expect(valueOf(f, 'upstash_qstash_schedule_next_run_timestamp_seconds', { schedule_id: 's-1' })).toBe(
      1_759_909_800,
    );
    // Before the first run (0 or absent): no last-run series, and no next run when not given.
    expect(valueOf(f, 'upstash_qstash_schedule_last_run_timestamp_seconds', { schedule_id: 's-2' })).toBeUndefined();
    expect(valueOf(f, 'upstash_qstash_schedule_last_run_timestamp_seconds', { schedule_id: 's-3' })).toBeUndefined();
    expect(valueOf(f, 'upstash_qstash_schedule_next_run_timestamp_seconds', { schedule_id: 's-3' })).toBeUndefined();

    const runs = (id: string): Record<string, number> =>
      Object.fromEntries(
        f
          .get('upstash_qstash_schedule_last_run_messages')!
          .samples.filter((s) => s.labels.schedule_id === id)
          .map((s) => [s.labels.state!, s.value]),
      );
    expect(runs('s-1')).toEqual({ IN_PROGRESS: 0, SUCCESS: 2, FAIL: 1 });
    expect(runs('s-2')).toEqual({ IN_PROGRESS: 0, SUCCESS: 0, FAIL: 0 });
    expect(runs('s-3')).toEqual({ IN_PROGRESS: 0, SUCCESS: 0, FAIL: 0 });
    // The unknown state is not exported and is reported once over two polls.
    const warnings = setup.log.lines().filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ state: 'CANCELLED' });

    const text = await schedules.registry.metrics();
    for (const secret of ['pa55', 'url-secret', 'header-secret', 'body-secret', '/jobs/run'])
      expect(text).not.toContain(secret);
    for (const family of f.values()) expect(family.help).toContain('GET /v2/schedules');
    expect(f.get('upstash_qstash_schedules')!.help).toContain('polled every 1m by the schedules collector');
  });

  it('pre-sets both paused states with no schedules; a deleted schedule vanishes on the next poll', async () => {
    setup.fixture.routes.set('/v2/schedules', { body: [schedule('s-1'), schedule('s-2')] });
    const schedules = new SchedulesCollector({ client: setup.client, intervalMs: 60_000 });
    await schedules.poll(pollContext(setup.log.logger));
    let f = await familiesOf(schedules.registry);
    expect(f.get('upstash_qstash_schedule_paused')!.samples.map((s) => s.labels.schedule_id)).toEqual(['s-1', 's-2']);

    setup.fixture.routes.set('/v2/schedules', { body: [schedule('s-2')] });
    await schedules.poll(pollContext(setup.log.logger));
    f = await familiesOf(schedules.registry);
    const ids = new Set(
      [...f.values()].flatMap((family) => family.samples.map((s) => s.labels.schedule_id)).filter(Boolean),
    );
    expect([...ids]).toEqual(['s-2']);

    setup.fixture.routes.set('/v2/schedules', { body: [] });
    await schedules.poll(pollContext(setup.log.logger));
    f = await familiesOf(schedules.registry);
    expect(f.get('upstash_qstash_schedules')!.samples).toEqual([
      { labels: { paused: 'true' }, value: 0 },
      { labels: { paused: 'false' }, value: 0 },
    ]);
    expect(f.get('upstash_qstash_schedule_info')!.samples).toEqual([]);
  });

  it('a failed poll rejects with the API error and keeps the previous snapshot', async () => {
    setup.fixture.routes.set('/v2/schedules', { body: [schedule('s-1')] });
    const schedules = new SchedulesCollector({ client: setup.client, intervalMs: 60_000 });
    await schedules.poll(pollContext(setup.log.logger));
    const before = await schedules.registry.metrics();
    setup.fixture.routes.set('/v2/schedules', { status: 401, body: { error: 'bad token' } });
    await expect(schedules.poll(pollContext(setup.log.logger))).rejects.toMatchObject({
      code: 'ERR_API_AUTH',
      endpoint: '/v2/schedules',
    });
    setup.fixture.routes.set('/v2/schedules', { body: [schedule('s-1', { createdAt: 'yesterday' })] });
    await expect(schedules.poll(pollContext(setup.log.logger))).rejects.toMatchObject({ code: 'ERR_API_SCHEMA_DRIFT' });
    expect(await schedules.registry.metrics()).toBe(before);
  });

  it('caps every family: beyond the limit schedules fold into the overflow series, counted as dropped', async () => {
    setup.fixture.routes.set('/v2/schedules', { body: ['s-1', 's-2', 's-3'].map((id) => schedule(id)) });
    const self = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const schedules = new SchedulesCollector({
      client: setup.client,
      intervalMs: 60_000,
      bounds: { seriesLimit: 2, ...self.seriesCounters },
    });
    await schedules.poll(pollContext(setup.log.logger));
    const f = await familiesOf(schedules.registry);
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: 's-2' })).toBe(0);
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: 's-3' })).toBeUndefined();
    // The overflow series of a gauge counts the series folded into it this poll.
    expect(valueOf(f, 'upstash_qstash_schedule_paused', { schedule_id: OVERFLOW_LABEL_VALUE })).toBe(1);
    const o = OVERFLOW_LABEL_VALUE;
    expect(valueOf(f, 'upstash_qstash_schedule_info', { schedule_id: o, cron: o, destination: o, method: o })).toBe(1);
    // 2 label sets = the first schedule's first two states; the rest fold with their state kept.
    expect(valueOf(f, 'upstash_qstash_schedule_last_run_messages', { schedule_id: o, state: 'FAIL' })).toBe(3);
    const own = await familiesOf(self.registry);
    expect(valueOf(own, 'upstash_exporter_series_dropped_total', { metric: 'upstash_qstash_schedule_paused' })).toBe(1);
    expect(
      valueOf(own, 'upstash_exporter_series_dropped_total', { metric: 'upstash_qstash_schedule_last_run_messages' }),
    ).toBe(7);
  });

  it('bounds a 10 KB destination (a URL Group name) and counts the cut', async () => {
    const group = 'g'.repeat(10_240);
    setup.fixture.routes.set('/v2/schedules', { body: [schedule('s-1', { destination: group })] });
    const self = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const schedules = new SchedulesCollector({ client: setup.client, intervalMs: 60_000, bounds: self.seriesCounters });
    await schedules.poll(pollContext(setup.log.logger));
    const f = await familiesOf(schedules.registry);
    const destination = boundLabelValue(group);
    expect(destination.length).toBeLessThanOrEqual(LABEL_VALUE_MAX_BYTES);
    expect(
      valueOf(f, 'upstash_qstash_schedule_info', {
        schedule_id: 's-1',
        cron: '*/5 * * * *',
        destination,
        method: 'POST',
      }),
    ).toBe(1);
    expect(
      valueOf(await familiesOf(self.registry), 'upstash_exporter_label_values_truncated_total', {
        metric: 'upstash_qstash_schedule_info',
      }),
    ).toBe(1);
  });
});
