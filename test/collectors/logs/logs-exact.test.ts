// The logs collector against the emulator over real HTTP: after mixed traffic, and under each
// fault the service can throw at a poller, the exported counters equal the emulator's ground
// truth exactly, per state and label set. The collector starts before the traffic (without
// state it starts at now), so the ground truth is exactly what it must have counted.
import { afterEach, describe, expect, it } from 'vitest';
import type { Knobs } from '../../../src/emulator/index.js';
import {
  differences,
  exportedEventSeries,
  familiesOfCollector,
  mixedTraffic,
  pollInBackground,
  pollUntil,
  publish,
  addUrlGroup,
  settle,
  startCollector,
  startWorld,
  sumOf,
  truthEventSeries,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';
import { allLogs } from '../../support/emulator-helpers.js';
import { captureLogger, pollContext, valueOf } from '../../support/exporter-e2e-helpers.js';
import { LogsCollector, type LogsSettings } from '../../../src/collectors/logs/index.js';
import { DeliveryClient } from '../../../src/api/delivery.js';
import type { RequestReport } from '../../../src/api/http.js';
import { TEST_SETTINGS } from '../../support/logs-helpers.js';

let world: World | undefined;
let under: CollectorUnderTest | undefined;

afterEach(async () => {
  await under?.close();
  await world?.close();
  under = undefined;
  world = undefined;
});

interface Scenario {
  knobs?: Partial<Knobs>;
  freezableClock?: boolean;
  /** Knobs switched on once the first poll is done (faults during the traffic). */
  faults?: Partial<Knobs>;
  settings?: Partial<LogsSettings>;
  traffic?: (world: World) => Promise<void>;
}

async function runScenario(
  scenario: Scenario,
): Promise<{ world: World; under: CollectorUnderTest; failures: Error[] }> {
  world = await startWorld(scenario.knobs, { freezableClock: scenario.freezableClock ?? false });
  under = startCollector(world, scenario.settings);
  await under.collector.poll(pollContext(under.log.logger));
  if (scenario.faults) world.emu.setKnobs(scenario.faults);
  // The collector polls while the traffic flows, as it does in production.
  const background = pollInBackground(under);
  await (scenario.traffic ?? mixedTraffic)(world);
  const truth = await settle(world.emu);
  const during = await background.stop();
  const summary = await pollUntil(under, Date.now(), 15_000);
  summary.failures.unshift(...during.failures);
  const families = await familiesOfCollector(under.collector);
  expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
  for (const [state, count] of Object.entries(truth.byState)) {
    expect(
      sumOf(families, 'upstash_qstash_message_events_total', (l) => l.state === state),
      state,
    ).toBe(count);
  }
  expect(truth.dropped).toBe(0);
  expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
  return { world, under, failures: summary.failures };
}

describe('logs collector: exact counts against the emulator', () => {
  it('counts mixed traffic exactly: delivered, retried, failed, URL group, queue, schedule, labels', async () => {
    const { world, under } = await runScenario({});
    const families = await familiesOfCollector(under.collector);
    const truth = world.emu.groundTruth();

    // Every state pre-set to 0 for each label set seen.
    const okHost = new URL(world.ok.url).host;
    for (const state of [
      'CREATED',
      'ACTIVE',
      'RETRY',
      'ERROR',
      'DELIVERED',
      'FAILED',
      'CANCEL_REQUESTED',
      'CANCELLED',
    ]) {
      expect(
        valueOf(families, 'upstash_qstash_message_events_total', {
          state,
          queue: '',
          url_group: '',
          endpoint: '',
          destination: okHost,
        }),
        state,
      ).toBeDefined();
    }
    // Errors by class: 500s, a 404, a refused connection; together every ERROR entry.
    expect(sumOf(families, 'upstash_qstash_delivery_errors_total')).toBe(truth.byState.ERROR);
    expect(sumOf(families, 'upstash_qstash_delivery_errors_total', (l) => l.reason === '4xx')).toBe(1);
    expect(sumOf(families, 'upstash_qstash_delivery_errors_total', (l) => l.reason === 'connection')).toBe(1);
    expect(sumOf(families, 'upstash_qstash_delivery_errors_total', (l) => l.reason === '5xx')).toBe(
      truth.byState.ERROR - 2,
    );
    // Durations and attempts of every finished message (all were seen from CREATED on).
    const finished = truth.byState.DELIVERED + truth.byState.FAILED;
    expect(sumOf(families, 'upstash_qstash_message_duration_seconds', (l) => l.le === '+Inf')).toBe(finished);
    const attempts = families.get('upstash_qstash_message_attempts')!.samples;
    const attemptSum = attempts.filter(
      (s) => s.labels.le === undefined && s.value > 0 && s.labels.outcome !== undefined,
    );
    expect(attemptSum.length).toBeGreaterThan(0);
    expect(valueOf(families, 'upstash_qstash_messages_in_flight')).toBe(0);
    expect(valueOf(families, 'upstash_qstash_daily_messages')).toBe(truth.byState.CREATED);
    expect(valueOf(families, 'upstash_exporter_log_state_walk')).toBe(0);
    expect(valueOf(families, 'upstash_exporter_log_lag_seconds')).toBeLessThan(5);
    expect(valueOf(families, 'upstash_qstash_last_event_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    // The overlap re-reads entries: they are skipped, not counted.
    expect(valueOf(families, 'upstash_exporter_log_duplicates_skipped_total')).toBeGreaterThan(0);
    expect(valueOf(families, 'upstash_exporter_state_checkpoints_total', { result: 'success' })).toBeGreaterThan(0);
  });

  it('stays exact with a log visibility delay longer than the ingestion delay ', async () => {
    await runScenario({ knobs: { logVisibilityDelayMs: 250 }, settings: { ingestionDelayMs: 100, overlapMs: 400 } });
  });

  it('stays exact with many events in one millisecond across page boundaries, one page per cycle', async () => {
    await runScenario({
      // The OpenAPI's side of the page-size question: the service holds at most 100 a page.
      knobs: { maxPageSize: 100 },
      settings: { maxPagesPerCycle: 1 },
      freezableClock: true,
      traffic: async (w) => {
        // One publish to a group of 150 endpoints writes 150 CREATED entries in one millisecond.
        await addUrlGroup(
          w.emu,
          'wide',
          Array.from({ length: 150 }, (_, i) => ({ url: `${w.ok.url}/wide/${i}` })),
        );
        await w.atOneInstant(() => publish(w.emu, 'wide'));
        await w.atOneInstant(() => publish(w.emu, 'wide'));
      },
    });
    expect(world!.emu.groundTruth().total).toBe(900);
    // The premise: more than a page of entries share one millisecond.
    const perMs = new Map<unknown, number>();
    for (const entry of await allLogs(world!.emu)) perMs.set(entry.time, (perMs.get(entry.time) ?? 0) + 1);
    expect(Math.max(...perMs.values())).toBeGreaterThan(100);
    // The walk asks 1000 (logs.page_size) on /v2/events; the emulator clamps to 100 with a
    // cursor, and the walk learns that cap from the answers.
    expect(under!.log.text()).toContain('returns at most 100 entries a page');
    expect(new Set(under!.requests.map((r) => r.endpoint))).toEqual(new Set(['/v2/events']));
  });

  it('stays exact when the service repeats cursors', async () => {
    // Pages of 100, so the walk follows cursors at all.
    const { failures } = await runScenario({
      knobs: { maxPageSize: 100 },
      faults: { repeatCursorNext: 4 },
      traffic: (w) => mixedTraffic(w, 3),
    });
    expect(failures).toEqual([]);
    expect(under!.log.text()).toContain('walking again from the last entry read');
  });

  it('stays exact through 429 storms', async () => {
    await runScenario({
      faults: { rateLimitPerSecond: 3 },
      settings: { maxPagesPerCycle: 4 },
      traffic: (w) => mixedTraffic(w, 3),
    });
    expect(under!.requests.filter((r) => r.code === '429').length).toBeGreaterThan(0);
  });

  it('stays exact through a rate limit without spending a request on a 429 when pacing on the announced budget', async () => {
    world = await startWorld();
    const requests: RequestReport[] = [];
    const client = new DeliveryClient({
      onRequest: (report) => requests.push(report),
      baseUrl: world.emu.url,
      token: world.emu.credentials.token,
      retry: { maxRetries: 4, baseDelayMs: 10, maxDelayMs: 100, maxRateLimitWaitMs: 1500, paceRateLimit: true },
    });
    const log = captureLogger('debug');
    const settings = { ...TEST_SETTINGS, maxPagesPerCycle: 4 };
    const collector = new LogsCollector({
      source: client,
      settings,
      stateFile: null,
      upstream: 'paced',
      logger: log.logger,
    });
    under = { collector, client, log, requests, close: () => client.close() };
    await collector.poll(pollContext(log.logger));
    world.emu.setKnobs({ rateLimitPerSecond: 3 });
    const background = pollInBackground(under);
    await mixedTraffic(world, 3);
    const truth = await settle(world.emu);
    await background.stop();
    await pollUntil(under, Date.now(), 20_000);
    const families = await familiesOfCollector(collector);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBe(0);
    // The budget was spent (3 a second, several pages per poll) and never overdrawn.
    const afterLimit = requests.slice(1);
    expect(afterLimit.some((r) => r.rateLimitRemaining === 0)).toBe(true);
    expect(requests.filter((r) => r.code === '429')).toEqual([]);
  });

  it('stays exact through 5xx bursts (polls fail, nothing is lost or doubled)', async () => {
    const { failures } = await runScenario({
      faults: { failNext: 12, errorRatio: 0.2 },
      traffic: (w) => mixedTraffic(w, 2),
    });
    expect(failures.length).toBeGreaterThan(0);
  });

  it('stays exact through malformed and truncated pages', async () => {
    // More in a row than the client retries: at least one poll fails midway.
    const { failures } = await runScenario({
      faults: { malformedNext: 4, truncatedNext: 4 },
      traffic: (w) => mixedTraffic(w, 2),
    });
    expect(failures.length).toBeGreaterThan(0);
  });

  it('switches to one filtered walk per state when entries lack state, and stays exact', async () => {
    await runScenario({ knobs: { omitState: true } });
    const families = await familiesOfCollector(under!.collector);
    expect(valueOf(families, 'upstash_exporter_log_state_walk')).toBe(1);
    expect(under!.log.text()).toContain('switching to one filtered walk per state');
  });
});
