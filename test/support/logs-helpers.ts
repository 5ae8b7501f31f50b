// Helpers of the logs collector tests: an emulator with real destinations on 127.0.0.1, traffic
// of every kind the exactness tests need, the collector under test talking to the emulator over
// real HTTP, and comparisons of its counters with the emulator's ground truth.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeliveryClient, type DeliveryClientOptions } from '../../src/api/delivery.js';
import type { RequestReport } from '../../src/api/http.js';
import { LogsCollector, type LogsSettings } from '../../src/collectors/logs/index.js';
import { createEmulator, type EmulatorHandle, type GroundTruth, type Knobs } from '../../src/emulator/index.js';
import type { Logger } from '../../src/logging/index.js';
import { upstreamIdentity } from '../../src/state/index.js';
import { startDestination, type Destination } from './emulator-helpers.js';
import {
  captureLogger,
  parseExposition,
  pollContext,
  sleep,
  type CapturedLogger,
  type Family,
} from './exporter-e2e-helpers.js';

export const TEST_SETTINGS: LogsSettings = {
  ingestionDelayMs: 150,
  overlapMs: 200,
  maxPagesPerCycle: 200,
  labels: [],
  seriesLimit: 2000,
  messageTrackerSize: 100_000,
};

export interface World {
  emu: EmulatorHandle;
  /** Answers 200. */
  ok: Destination;
  /** Answers 500 to a message's first attempt, 200 to its retries. */
  flaky: Destination;
  /** Always 500. */
  broken: Destination;
  /** Always 404. */
  missing: Destination;
  /** A loopback URL nobody listens on (connection refused). */
  refused: string;
  stateDir: string;
  /**
   * Runs `action` while the emulator's clock stands still, so every entry it writes shares one
   * millisecond (only with `freezableClock`).
   */
  atOneInstant(action: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export async function startWorld(
  knobs: Partial<Knobs> = {},
  options: { freezableClock?: boolean } = {},
): Promise<World> {
  // The emulator reads the time through the Date.now it finds at construction. To pack many
  // entries into one millisecond (a machine is rarely fast enough to do it by itself), it gets a
  // wrapper that can stand still; the rest of the process keeps the real Date.now.
  const realNow = Date.now;
  let frozenAt: number | null = null;
  if (options.freezableClock) Date.now = () => frozenAt ?? realNow();
  let emu: EmulatorHandle;
  try {
    emu = await createEmulator({ knobs: { timeScale: 60, ...knobs } });
  } finally {
    Date.now = realNow;
  }
  const ok = await startDestination(() => ({ status: 200, body: 'ok' }));
  const flaky = await startDestination((request) => ({
    status: request.headers['upstash-retried'] === '0' ? 500 : 200,
    body: 'flaky',
  }));
  const broken = await startDestination(() => ({ status: 500, body: 'broken' }));
  const missing = await startDestination(() => ({ status: 404, body: 'missing' }));
  const closed = await startDestination();
  const refused = closed.url;
  await closed.close();
  const stateDir = await mkdtemp(join(tmpdir(), 'upstash-logs-'));
  return {
    emu,
    ok,
    flaky,
    broken,
    missing,
    refused,
    stateDir,
    atOneInstant: async (action) => {
      if (!options.freezableClock) throw new Error('startWorld without freezableClock');
      frozenAt = realNow();
      try {
        await action();
      } finally {
        frozenAt = null;
      }
    },
    close: async () => {
      await emu.close();
      await Promise.all([ok.close(), flaky.close(), broken.close(), missing.close()]);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

export interface CollectorUnderTest {
  collector: LogsCollector;
  client: DeliveryClient;
  log: CapturedLogger;
  /** Every HTTP attempt of the client. */
  requests: RequestReport[];
  close(): Promise<void>;
}

export function startCollector(
  world: World,
  settings: Partial<LogsSettings> = {},
  stateFile: string | null = join(world.stateDir, 'state.json'),
  clientOptions: Pick<DeliveryClientOptions, 'logsPath' | 'logsMaxPageBytes'> = {},
): CollectorUnderTest {
  const requests: RequestReport[] = [];
  const log = captureLogger('debug');
  const client = new DeliveryClient({
    ...clientOptions,
    logger: log.logger,
    onRequest: (report) => requests.push(report),
    baseUrl: world.emu.url,
    token: world.emu.credentials.token,
    retry: { maxRetries: 4, baseDelayMs: 10, maxDelayMs: 100, maxRateLimitWaitMs: 1500 },
    timeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 5000, bodyTimeoutMs: 5000 },
  });
  let closed = false;
  const collector = new LogsCollector({
    source: client,
    settings: { ...TEST_SETTINGS, ...settings },
    stateFile,
    upstream: upstreamIdentity(world.emu.url, world.emu.credentials.token),
    logger: log.logger,
  });
  return {
    collector,
    client,
    log,
    requests,
    close: async () => {
      if (closed) return;
      closed = true;
      await collector.close();
      await client.close();
    },
  };
}

// ---- traffic -----------------------------------------------------------------------------------

async function call(
  emu: EmulatorHandle,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<unknown> {
  const response = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${emu.credentials.token}`, ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

export interface PublishOptions {
  retries?: number;
  labels?: string[];
  queue?: string;
}

export async function publish(emu: EmulatorHandle, destination: string, options: PublishOptions = {}): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'text/plain', 'Upstash-Retry-Delay': '100' };
  if (options.retries !== undefined) headers['Upstash-Retries'] = String(options.retries);
  if (options.labels) headers['Upstash-Label'] = options.labels.join(',');
  const path = options.queue ? `/v2/enqueue/${options.queue}/${destination}` : `/v2/publish/${destination}`;
  await call(emu, 'POST', path, headers, 'hello');
}

export async function addUrlGroup(
  emu: EmulatorHandle,
  name: string,
  endpoints: Array<{ name?: string; url: string }>,
): Promise<void> {
  await call(
    emu,
    'POST',
    `/v2/topics/${name}/endpoints`,
    { 'content-type': 'application/json' },
    JSON.stringify({ endpoints }),
  );
}

export async function createSchedule(emu: EmulatorHandle, destination: string, cron: string): Promise<string> {
  const created = (await call(
    emu,
    'POST',
    `/v2/schedules/${destination}`,
    { 'Upstash-Cron': cron, 'content-type': 'text/plain' },
    'tick',
  )) as { scheduleId: string };
  return created.scheduleId;
}

export async function deleteSchedule(emu: EmulatorHandle, id: string): Promise<void> {
  await call(emu, 'DELETE', `/v2/schedules/${id}`);
}

/**
 * Every kind of traffic the exactness tests ask for: delivered, retried then delivered, failed
 * after retries (5xx, 4xx, connection refused), URL group fan-out, a queue, labels and a
 * schedule (time scale 60: `* * * * *` fires every real second). `scale` multiplies the volume.
 */
export async function mixedTraffic(world: World, scale = 1): Promise<void> {
  const { emu } = world;
  const group = `group-${Math.random().toString(36).slice(2, 8)}`;
  await addUrlGroup(emu, group, [
    { name: 'first', url: `${world.ok.url}/g1` },
    { name: 'second', url: `${world.ok.url}/g2` },
    { url: `${world.flaky.url}/g3` },
  ]);
  const scheduleId = await createSchedule(emu, `${world.ok.url}/cron`, '* * * * *');
  const jobs: Array<Promise<void>> = [];
  for (let i = 0; i < 6 * scale; i++)
    jobs.push(publish(emu, `${world.ok.url}/plain`, { labels: i % 2 === 0 ? ['even'] : ['odd', 'extra'] }));
  for (let i = 0; i < 3 * scale; i++) jobs.push(publish(emu, `${world.flaky.url}/retry`, { retries: 2 }));
  for (let i = 0; i < 2 * scale; i++) jobs.push(publish(emu, `${world.broken.url}/fail`, { retries: 1 }));
  for (let i = 0; i < scale; i++) jobs.push(publish(emu, `${world.missing.url}/gone`, { retries: 0 }));
  for (let i = 0; i < scale; i++) jobs.push(publish(emu, `${world.refused}/nobody`, { retries: 0 }));
  for (let i = 0; i < 3 * scale; i++) jobs.push(publish(emu, group));
  for (let i = 0; i < 3 * scale; i++) jobs.push(publish(emu, `${world.ok.url}/queued`, { queue: 'jobs' }));
  await Promise.all(jobs);
  // Let the schedule fire twice (every real second at scale 60).
  await sleep(2100);
  await deleteSchedule(emu, scheduleId);
}

/**
 * Waits until every message reached a final state and the log has been quiet for a moment.
 * Fails when the log stops moving for `timeoutMs` with messages unfinished: a busy CPU makes
 * deliveries slow, not stuck, so the deadline follows the progress, not the total time.
 */
export async function settle(emu: EmulatorHandle, timeoutMs = 10_000): Promise<GroundTruth> {
  let last = -1;
  let stableSince = Date.now();
  for (;;) {
    const truth = emu.groundTruth();
    const b = truth.byState;
    const finished = b.CREATED === b.DELIVERED + b.FAILED + b.CANCELLED;
    if (truth.total !== last) {
      last = truth.total;
      stableSince = Date.now();
    } else if (finished && Date.now() - stableSince >= 300) {
      return truth;
    }
    if (Date.now() - stableSince > timeoutMs)
      throw new Error(`traffic did not settle: no new log entry for ${timeoutMs} ms: ${JSON.stringify(b)}`);
    await sleep(25);
  }
}

export async function waitUntil(check: () => string[], timeoutSeconds: number): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const problems = check();
    if (problems.length === 0) return;
    if (Date.now() > deadline) throw new Error(problems.join('; '));
    await sleep(20);
  }
}

export interface PollSummary {
  polls: number;
  failures: Error[];
}

/** Polls (errors are collected, not thrown) until the watermark passes `until`. */
export async function pollUntil(
  under: CollectorUnderTest,
  until: number,
  timeoutMs = 15_000,
  logger?: Logger,
): Promise<PollSummary> {
  const summary: PollSummary = { polls: 0, failures: [] };
  const deadline = Date.now() + timeoutMs;
  const context = pollContext(logger ?? under.log.logger);
  while (under.collector.position.watermark < until) {
    if (Date.now() > deadline) {
      throw new Error(
        `watermark ${under.collector.position.watermark} did not pass ${until} in ${timeoutMs} ms; failures: ${summary.failures.map((e) => e.message).join(' | ')}`,
      );
    }
    summary.polls += 1;
    try {
      await under.collector.poll(context);
    } catch (error) {
      summary.failures.push(error as Error);
    }
    await sleep(30);
  }
  return summary;
}

/** Polls every `intervalMs` in the background (like the runner) until stopped. */
export function pollInBackground(under: CollectorUnderTest, intervalMs = 50): { stop(): Promise<PollSummary> } {
  const summary: PollSummary = { polls: 0, failures: [] };
  let running = true;
  const context = pollContext(under.log.logger);
  const loop = (async () => {
    while (running) {
      summary.polls += 1;
      try {
        await under.collector.poll(context);
      } catch (error) {
        summary.failures.push(error as Error);
      }
      await sleep(intervalMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return summary;
    },
  };
}

// ---- comparisons -------------------------------------------------------------------------------

export const EVENTS = 'upstash_qstash_message_events_total';

function seriesKey(state: string, queue: string, urlGroup: string, endpoint: string, destination: string): string {
  return [state, queue, urlGroup, endpoint, destination].join(' | ');
}

/**
 * Non-zero event series of an exposition (of one QStash region when named), by
 * state | queue | url_group | endpoint | destination.
 */
export function exportedEventSeries(families: Map<string, Family>, qstashRegion?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const sample of families.get(EVENTS)?.samples ?? []) {
    if (sample.value === 0 || (qstashRegion !== undefined && sample.labels.qstash_region !== qstashRegion)) continue;
    const l = sample.labels;
    const key = seriesKey(l.state ?? '', l.queue ?? '', l.url_group ?? '', l.endpoint ?? '', l.destination ?? '');
    out.set(key, (out.get(key) ?? 0) + sample.value);
  }
  return out;
}

export function truthEventSeries(truth: GroundTruth): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of truth.series) {
    if (s.count === 0) continue;
    out.set(seriesKey(s.state, s.queue, s.urlGroup, s.endpoint, s.destination), s.count);
  }
  return out;
}

/** Differences between exported and true series (empty when equal). */
export function differences(exported: Map<string, number>, truth: Map<string, number>): string[] {
  const problems: string[] = [];
  for (const [key, value] of truth) {
    if (exported.get(key) !== value) problems.push(`${key}: exported ${exported.get(key) ?? 0}, truth ${value}`);
  }
  for (const [key, value] of exported) {
    if (!truth.has(key)) problems.push(`${key}: exported ${value}, truth 0`);
  }
  return problems;
}

export async function familiesOfCollector(collector: LogsCollector): Promise<Map<string, Family>> {
  return parseExposition(await collector.registry.metrics());
}

export function sumOf(
  families: Map<string, Family>,
  name: string,
  filter: (labels: Record<string, string>) => boolean = () => true,
): number {
  return (families.get(name)?.samples ?? []).filter((s) => filter(s.labels)).reduce((total, s) => total + s.value, 0);
}
