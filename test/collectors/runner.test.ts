// CollectorRunner with small in-test collectors: real implementations of the Collector
// interface (real peers of the framework), real node-cron timers, real SelfMetrics.

import { Gauge, type Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  COLLECTOR_NAMES,
  type Collector,
  type CollectorName,
  type PollContext,
} from '../../src/collectors/collector.js';
import { CollectorRunner, describeError } from '../../src/collectors/runner.js';
import { cronForInterval, PollSchedule } from '../../src/collectors/poll-schedule.js';
import type { Logger } from '../../src/logging/index.js';
import { SelfMetrics } from '../../src/metrics/self.js';
import { SnapshotRegistry } from '../../src/metrics/snapshot.js';
import { captureLogger } from '../support/exporter-e2e-helpers.js';
import { collectorSettings } from '../support/collector-settings.js';

type Behaviour = (poll: number, ctx: PollContext) => Promise<void> | void;

/** Serves `upstash_test_<name>_poll` = number of the poll that built the snapshot. */
class ScriptedCollector implements Collector {
  readonly snapshot = new SnapshotRegistry();
  polls = 0;
  finishedPolls = 0;
  closedAfterPolls: number | null = null;
  signals: AbortSignal[] = [];

  constructor(
    readonly name: CollectorName,
    private readonly behaviour: Behaviour = () => undefined,
  ) {}

  get registry(): Registry {
    return this.snapshot.current;
  }

  async poll(ctx: PollContext): Promise<void> {
    const n = ++this.polls;
    this.signals.push(ctx.signal);
    try {
      await this.behaviour(n, ctx);
      await this.snapshot.build((registry) => {
        new Gauge({ name: `upstash_test_${this.name}_poll`, help: 'poll number', registers: [registry] }).set(n);
      });
    } finally {
      this.finishedPolls += 1;
    }
  }

  close(): Promise<void> {
    this.closedAfterPolls = this.finishedPolls;
    return Promise.resolve();
  }
}

async function sampleValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return found?.value;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const runners: CollectorRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop(500)));
});

function startRunner(
  collectors: Collector[],
  intervalsMs: Partial<Record<CollectorName, number>>,
  extra: { secrets?: string[]; logger?: Logger; stopDeadlineMs?: number; schedule?: PollSchedule } = {},
) {
  const selfMetrics = new SelfMetrics({ version: '9.9.9', processMetrics: false });
  const log = extra.logger === undefined ? captureLogger('debug') : undefined;
  const runner = new CollectorRunner({
    collectors,
    ...(extra.schedule ? { schedule: extra.schedule } : {}),
    settings: collectorSettings(intervalsMs, 'no QSTASH_TOKEN'),
    selfMetrics,
    logger: extra.logger ?? log!.logger,
    secrets: extra.secrets,
    stopDeadlineMs: extra.stopDeadlineMs,
  });
  runners.push(runner);
  runner.start();
  return { runner, selfMetrics, log };
}

describe('cronForInterval', () => {
  it('keeps intervals that divide their unit and rounds the others to the nearest', () => {
    expect(cronForInterval(1_000)).toEqual({ expression: '* * * * * *', intervalMs: 1_000, exact: true });
    expect(cronForInterval(15_000)).toEqual({ expression: '*/15 * * * * *', intervalMs: 15_000, exact: true });
    expect(cronForInterval(60_000)).toEqual({ expression: '0 * * * * *', intervalMs: 60_000, exact: true });
    expect(cronForInterval(300_000)).toEqual({ expression: '0 */5 * * * *', intervalMs: 300_000, exact: true });
    expect(cronForInterval(3_600_000)).toEqual({ expression: '0 0 * * * *', intervalMs: 3_600_000, exact: true });
    expect(cronForInterval(6 * 3_600_000)).toEqual({
      expression: '0 0 */6 * * *',
      intervalMs: 6 * 3_600_000,
      exact: true,
    });
    expect(cronForInterval(86_400_000)).toEqual({ expression: '0 0 0 * * *', intervalMs: 86_400_000, exact: true });

    expect(cronForInterval(7_000)).toMatchObject({ intervalMs: 6_000, exact: false });
    expect(cronForInterval(45_000)).toMatchObject({ intervalMs: 60_000, exact: false }); // tie: the longer
    expect(cronForInterval(500)).toMatchObject({ expression: '* * * * * *', intervalMs: 1_000, exact: false });
    expect(cronForInterval(7 * 60_000)).toMatchObject({ intervalMs: 6 * 60_000, exact: false });
  });

  it('breaks ties towards the longer interval', () => {
    expect(cronForInterval(5 * 3_600_000).intervalMs).toBe(6 * 3_600_000);
    expect(cronForInterval(3 * 86_400_000).intervalMs).toBe(86_400_000);
  });

  it('warns once per collector whose interval had to be rounded', async () => {
    const log = captureLogger('debug');
    const { runner } = startRunner(
      [new ScriptedCollector('account'), new ScriptedCollector('logs')],
      { account: 7 * 60_000, logs: 15_000 },
      { logger: log.logger },
    );
    await runner.firstPolls();
    const warnings = log
      .lines()
      .filter((l) => l.level === 'warn' && String(l.msg).includes('cannot be scheduled exactly'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ collector: 'account', effectiveMs: 360_000 });
    expect(runner.status().find((s) => s.name === 'account')).toMatchObject({
      intervalMs: 360_000,
      schedule: '0 */6 * * * *',
    });
  });

  it('exports the interval each collector is polled at, as scheduled (the staleness alert reads it)', async () => {
    const { runner, selfMetrics } = startRunner([new ScriptedCollector('account'), new ScriptedCollector('logs')], {
      account: 7 * 60_000,
      logs: 60_000,
    });
    await runner.firstPolls();
    const values = (await selfMetrics.collectorPollInterval.get()).values.map((v) => [v.labels.collector, v.value]);
    expect(Object.fromEntries(values)).toEqual({ account: 360, logs: 60 });
  });
});

describe('PollSchedule', () => {
  it('gives each collector a fixed phase of at most 10% of its interval (5 s at most) and the start of its next poll', () => {
    const settings = collectorSettings({ logs: 15_000, account: 300_000 }, 'off');
    const schedule = new PollSchedule(settings, () => 0.5);
    expect(schedule.plan('logs')).toEqual({
      expression: '*/15 * * * * *',
      intervalMs: 15_000,
      exact: true,
      phaseMs: 750,
    });
    expect(schedule.plan('account').phaseMs).toBe(2_500);
    expect(new PollSchedule(settings, () => 0.999_999).plan('account').phaseMs).toBe(4_999);
    // Ticks at multiples of 15 s, each poll 750 ms after its tick.
    expect(schedule.nextPollAt('logs', 30_000)).toBe(30_750);
    expect(schedule.nextPollAt('logs', 30_749)).toBe(30_750);
    expect(schedule.nextPollAt('logs', 30_750)).toBe(45_750);
    expect(schedule.nextPollAt('logs', 44_000)).toBe(45_750);
  });
});

describe('describeError', () => {
  it('gives CODE: message on one line, without secrets', () => {
    const error = Object.assign(new Error('upstream said\nno to sk-canary-123 at https://me:pw@host/x?token=abc'), {
      code: 'ERR_API_AUTH',
    });
    const text = describeError(error, ['sk-canary-123']);
    expect(text).toBe('ERR_API_AUTH: upstream said no to *** at https://***@host/x?token=***');
    expect(describeError(new TypeError('bad'))).toBe('TypeError: bad');
    expect(describeError('Bearer abc.def')).toBe('ERR_UNKNOWN: Bearer ***');
    expect(describeError(new Error('x'.repeat(1000))).length).toBeLessThanOrEqual(300);
  });
});

describe('CollectorRunner', () => {
  it('polls each collector at start, then on schedule, and records success', async () => {
    const logs = new ScriptedCollector('logs');
    const { runner, selfMetrics } = startRunner([logs], { logs: 1_000 });
    await runner.firstPolls();
    expect(logs.polls).toBe(1);
    expect(runner.ready()).toBe(true);
    await waitFor(() => logs.polls >= 2, 3_000);
    const reg = selfMetrics.registry;
    expect(await sampleValue(reg, 'upstash_exporter_collector_success', { collector: 'logs' })).toBe(1);
    const lastSuccess = await sampleValue(reg, 'upstash_exporter_collector_last_success_timestamp_seconds', {
      collector: 'logs',
    });
    expect(lastSuccess).toBeGreaterThan(Date.now() / 1000 - 5);
    const status = runner.status();
    expect(status.map((s) => s.name)).toEqual([...COLLECTOR_NAMES]);
    expect(status.find((s) => s.name === 'logs')).toMatchObject({
      enabled: true,
      everSucceeded: true,
      lastOutcome: 'success',
      lastError: null,
    });
    expect(status.find((s) => s.name === 'vector')).toMatchObject({
      enabled: false,
      disabledReason: 'no QSTASH_TOKEN',
    });
  });

  it('keeps one failing collector from affecting another, flipping only its own success gauge', async () => {
    const healthy = new ScriptedCollector('schedules');
    const broken = new ScriptedCollector('account', (n) => {
      if (n >= 2) throw Object.assign(new Error('upstream is down'), { code: 'ERR_API_UPSTREAM' });
    });
    const { runner, selfMetrics } = startRunner([healthy, broken], { schedules: 1_000, account: 1_000 });
    await runner.firstPolls();
    expect(runner.ready()).toBe(true);
    await waitFor(() => broken.polls >= 3 && healthy.polls >= 3, 4_000);
    await waitFor(() => healthy.finishedPolls >= 3 && broken.finishedPolls >= 3);
    const reg = selfMetrics.registry;
    expect(await sampleValue(reg, 'upstash_exporter_collector_success', { collector: 'account' })).toBe(0);
    expect(await sampleValue(reg, 'upstash_exporter_collector_success', { collector: 'schedules' })).toBe(1);
    expect(
      await sampleValue(reg, 'upstash_exporter_collector_errors_total', { collector: 'account' }),
    ).toBeGreaterThanOrEqual(2);
    expect(await sampleValue(reg, 'upstash_exporter_collector_errors_total', { collector: 'schedules' })).toBe(0);
    // The failed collector still serves its last good snapshot (poll 1); the healthy one is fresh.
    expect(await sampleValue(broken.registry, 'upstash_test_account_poll', {})).toBe(1);
    expect(await sampleValue(healthy.registry, 'upstash_test_schedules_poll', {})).toBeGreaterThanOrEqual(3);
    const account = runner.status().find((s) => s.name === 'account');
    expect(account).toMatchObject({
      lastOutcome: 'failure',
      lastError: 'ERR_API_UPSTREAM: upstream is down',
      everSucceeded: true,
    });
    expect(runner.status().find((s) => s.name === 'schedules')?.lastError).toBeNull();
  });

  it('is not ready until every enabled collector succeeded once', async () => {
    const late = new ScriptedCollector('search', (n) => {
      if (n === 1) throw new Error('not yet');
    });
    const early = new ScriptedCollector('vector');
    const { runner } = startRunner([late, early], { search: 1_000, vector: 60_000 });
    await runner.firstPolls();
    expect(runner.ready()).toBe(false);
    expect(runner.waitingFor()).toEqual(['search']);
    await waitFor(() => runner.ready(), 3_000);
    expect(runner.waitingFor()).toEqual([]);
  });

  it('catches a collector that throws synchronously', async () => {
    const collector: Collector = {
      name: 'logs',
      registry: new SnapshotRegistry().current,
      poll: () => {
        throw Object.assign(new Error('sync boom'), { code: 'ERR_X' });
      },
    };
    const { runner } = startRunner([collector], { logs: 60_000 });
    await runner.firstPolls();
    expect(runner.status()[0]).toMatchObject({ lastOutcome: 'failure', lastError: 'ERR_X: sync boom' });
  });

  it('counts an overlap when a scheduled poll outlasts the 1 s interval', async () => {
    // Poll 1 (at start) is quick; poll 2 (the first scheduled one) takes 2.5 s, so at least one
    // tick finds it still running: node-cron skips it (noOverlap) and the runner counts it.
    const slow = new ScriptedCollector('logs', (n) => (n === 2 ? sleep(2_500) : undefined));
    const { runner, selfMetrics } = startRunner([slow], { logs: 1_000 });
    await runner.firstPolls();
    await waitFor(
      async () =>
        ((await sampleValue(selfMetrics.registry, 'upstash_exporter_collector_overlaps_total', {
          collector: 'logs',
        })) ?? 0) >= 1,
      5_000,
    );
    // No poll ran beside the slow one.
    expect(slow.polls).toBe(2);
    expect(runner.status()[0]?.running).toBe(true);
  });

  it("starts each scheduled poll at the collector's fixed phase after the tick", async () => {
    const starts: number[] = [];
    const logs = new ScriptedCollector('logs', (n) => {
      if (n > 1) starts.push(Date.now());
    });
    const schedule = new PollSchedule(collectorSettings({ logs: 2_000 }, 'off'), () => 0.75);
    expect(schedule.plan('logs').phaseMs).toBe(150);
    startRunner([logs], { logs: 2_000 }, { schedule });
    await waitFor(() => starts.length >= 3, 8_000);
    // Timers fire late, never early: at tick + 150 ms, up to a loaded machine's delay (a delay
    // drawn anew at each tick, in [0, 200 ms), would fall below 150 ms in 3 starts 98 times in 100).
    // The upper bound leaves a busy CI machine half a second of timer lateness. One millisecond
    // below: a timer's due time and Date.now() round differently (a start was seen at 149).
    for (const start of starts) expect(start % 2_000).toBeGreaterThanOrEqual(149);
    for (const start of starts) expect(start % 2_000).toBeLessThan(150 + 500);
  });

  it("starts a deferring collector's next poll as soon as one that ran past its tick ends, without counting an overlap", async () => {
    // Poll 2 (the first scheduled one) takes 2.5 s at a 1 s interval: ticks come while it runs.
    const ends: number[] = [];
    const starts: number[] = [];
    const walker = Object.assign(
      new ScriptedCollector('logs', async (n) => {
        starts.push(Date.now());
        if (n === 2) await sleep(2_500);
        ends.push(Date.now());
      }),
      { deferOverlappingTick: true },
    );
    const { runner, selfMetrics, log } = startRunner([walker], { logs: 1_000 });
    await runner.firstPolls();
    await waitFor(() => starts.length >= 3, 6_000);
    // Poll 3 started right after poll 2 ended (not at the following tick), and only once.
    expect(starts[2]! - ends[1]!).toBeLessThan(50);
    expect(
      await sampleValue(selfMetrics.registry, 'upstash_exporter_collector_overlaps_total', { collector: 'logs' }),
    ).toBe(0);
    expect(log!.text()).toContain('the next one starts when it ends');
    await sleep(300);
    expect(walker.polls).toBe(3);
  });

  it('counts an overlap when a tick comes during the first poll', async () => {
    const slow = new ScriptedCollector('logs', (n) => (n === 1 ? sleep(2_200) : undefined));
    const { runner, selfMetrics } = startRunner([slow], { logs: 1_000 });
    await runner.firstPolls();
    expect(
      await sampleValue(selfMetrics.registry, 'upstash_exporter_collector_overlaps_total', { collector: 'logs' }),
    ).toBeGreaterThanOrEqual(1);
    expect(slow.polls).toBe(1);
  });

  it('counts missed runs when the event loop is blocked past the tolerance', async () => {
    const logs = new ScriptedCollector('logs');
    const { runner, selfMetrics } = startRunner([logs], { logs: 1_000 });
    await runner.firstPolls();
    // Block the event loop for 2.6 s: the 1 s ticks in between cannot fire on time.
    const until = Date.now() + 2_600;
    while (Date.now() < until) {
      /* busy on purpose */
    }
    await waitFor(
      async () =>
        ((await sampleValue(selfMetrics.registry, 'upstash_exporter_collector_missed_runs_total', {
          collector: 'logs',
        })) ?? 0) >= 1,
      3_000,
    );
  });

  it('stop() lets the poll in flight finish, then closes the collector', async () => {
    let release!: () => void;
    const inFlight = new Promise<void>((resolve) => (release = resolve));
    const logs = new ScriptedCollector('logs', () => inFlight);
    const { runner } = startRunner([logs], { logs: 60_000 });
    await waitFor(() => logs.polls === 1);
    const stopped = runner.stop(5_000);
    let done = false;
    void stopped.then(() => (done = true));
    await sleep(300);
    expect(done).toBe(false);
    expect(logs.closedAfterPolls).toBeNull();
    release();
    await stopped;
    expect(logs.finishedPolls).toBe(1);
    expect(logs.closedAfterPolls).toBe(1);
    expect(logs.signals[0]?.aborted).toBe(false);
    expect(runner.status()[0]?.lastOutcome).toBe('success');
  });

  it('stop() aborts a poll that outlives the deadline, then closes', async () => {
    const stuck = new ScriptedCollector(
      'logs',
      (_n, ctx) =>
        new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () =>
            reject(Object.assign(new Error('aborted'), { code: 'ERR_API_ABORTED' })),
          );
        }),
    );
    const { runner } = startRunner([stuck], { logs: 60_000 });
    await waitFor(() => stuck.polls === 1);
    const started = Date.now();
    await runner.stop(200);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(stuck.signals[0]?.aborted).toBe(true);
    expect(stuck.closedAfterPolls).toBe(1);
    // No poll starts after stop.
    await sleep(1_100);
    expect(stuck.polls).toBe(1);
  });

  it('never writes a configured secret into status or logs', async () => {
    const canary = 'canary-secret-7f3a9';
    const log = captureLogger('debug');
    const leaky = new ScriptedCollector('account', () => {
      throw new Error(`failed with key ${canary} and ${encodeURIComponent(canary + '/x')}`);
    });
    const { runner } = startRunner(
      [leaky],
      { account: 60_000 },
      { secrets: [canary, `${canary}/x`], logger: log.logger },
    );
    await runner.firstPolls();
    const status = JSON.stringify(runner.status());
    expect(status).toContain('failed with key ***');
    expect(status).not.toContain(canary);
    expect(log.text()).toContain('failed with key ***');
    expect(log.text()).not.toContain(canary);
  });
});
