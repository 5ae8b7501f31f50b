// The share of the burst rate limit the exporter keeps for the application it watches
// (http.rate_limit_share): against the emulator's per-second limit, which counts every request
// and announces Burst-RateLimit-Limit/-Remaining/-Reset, a client with share 0.5 sends at most
// half the limit, one with share 1 uses (nearly) all of it; the log walk under the share stays
// exact, and the collector exports the ceiling it can follow.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import type { RequestReport } from '../../src/api/http.js';
import { LogsCollector } from '../../src/collectors/logs/index.js';
import { captureLogger, pollContext, sleep, valueOf } from '../support/exporter-e2e-helpers.js';
import {
  differences,
  exportedEventSeries,
  familiesOfCollector,
  mixedTraffic,
  pollInBackground,
  pollUntil,
  publish,
  settle,
  startWorld,
  truthEventSeries,
  TEST_SETTINGS,
  type World,
} from '../support/logs-helpers.js';

let world: World | undefined;
const clients: DeliveryClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await world?.close();
  world = undefined;
});

function client(share: number, requests: RequestReport[]): DeliveryClient {
  const made = new DeliveryClient({
    onRequest: (report) => requests.push(report),
    baseUrl: world!.emu.url,
    token: world!.emu.credentials.token,
    retry: { maxRetries: 4, baseDelayMs: 10, maxDelayMs: 100, maxRateLimitWaitMs: 1500, paceRateLimit: true },
    rateLimitShare: share,
  });
  clients.push(made);
  return made;
}

/** Log pages asked back to back for `ms`, by `parallel` callers at once: requests sent per second. */
async function hammer(source: DeliveryClient, ms: number, parallel: number): Promise<number> {
  await source.logsPage({ count: 1 }); // learns the limit
  let sent = 0;
  const until = Date.now() + ms;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (Date.now() < until) {
        await source.logsPage({ count: 1 });
        sent += 1;
      }
    }),
  );
  return sent / ((Date.now() - started) / 1000);
}

describe('rate limit share', () => {
  it('with share 0.5 sends at most half the announced limit, even from parallel callers; with share 1 nearly all of it; never a 429', async () => {
    world = await startWorld({ rateLimitPerSecond: 10 });
    const halfRequests: RequestReport[] = [];
    const half = client(0.5, halfRequests);
    const halfRate = await hammer(half, 3000, 3);
    const fullRequests: RequestReport[] = [];
    const full = client(1, fullRequests);
    const fullRate = await hammer(full, 3000, 3);
    // Side by side in one run: the first requests go before the limit is known, hence the slack.
    expect(halfRate).toBeLessThanOrEqual(5 * 1.15);
    expect(fullRate).toBeGreaterThan(7.5);
    expect(halfRate).toBeLessThan(fullRate * 0.75);
    expect([...halfRequests, ...fullRequests].filter((r) => r.code === '429')).toEqual([]);
    expect(halfRequests.at(-1)).toMatchObject({ rateLimitLimit: 10 });
    expect(half.logsRateLimit()).toEqual({ limit: 10, allowedPerSecond: 5 });
  });

  it('the log walk under a share of a limit counts exactly and exports the highest event rate it can follow', async () => {
    world = await startWorld();
    const requests: RequestReport[] = [];
    const source = client(0.5, requests);
    const log = captureLogger('debug');
    const pageSize = 5;
    const collector = new LogsCollector({
      source,
      settings: { ...TEST_SETTINGS, pageSize },
      stateFile: null,
      upstream: 'share',
      logger: log.logger,
    });
    const under = { collector, client: source, log, requests, close: async () => collector.close() };
    await collector.poll(pollContext(log.logger));
    let families = await familiesOfCollector(collector);
    // No limit announced yet: no ceiling (0).
    expect(valueOf(families, 'upstash_exporter_log_max_followable_events_per_second')).toBe(0);
    world.emu.setKnobs({ rateLimitPerSecond: 8 });
    const background = pollInBackground(under);
    await mixedTraffic(world, 2);
    const truth = await settle(world.emu);
    await background.stop();
    await pollUntil(under, Date.now(), 30_000);
    families = await familiesOfCollector(collector);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(valueOf(families, 'upstash_exporter_log_max_followable_events_per_second')).toBe(4 * pageSize);
    expect(requests.filter((r) => r.code === '429')).toEqual([]);
    await under.close();
  });

  it('a walk cut by the next poll in every cycle while it waits on the rate limit stops re-reading the overlap', async () => {
    // Polls a second apart, 2 requests a second allowed (4 x share 0.5), pages of 10, and about
    // 20 entries a second: the walk is behind the whole time, every cycle is cut by the next poll
    // and none reaches its frontier (where the rate limit is judged otherwise), so only the cut
    // cycles can tell that the limit bounds the walk. Re-reading the 1.5 s overlap (about 3 pages)
    // in every slice would cost more than the new entries.
    world = await startWorld({ latencyMs: 10, faultScope: ['logs'], rateLimitPerSecond: 4, maxPageSize: 10 });
    const requests: RequestReport[] = [];
    const source = client(0.5, requests);
    const log = captureLogger('debug');
    const nextSecond = (now: number): number => (Math.floor(now / 1_000) + 1) * 1_000;
    const collector = new LogsCollector({
      source,
      settings: { ...TEST_SETTINGS, pageSize: 10, ingestionDelayMs: 1_000, overlapMs: 1_500 },
      stateFile: null,
      upstream: 'cut',
      logger: log.logger,
      nextPollAt: nextSecond,
    });
    await collector.poll(pollContext(log.logger));
    let polling = true;
    const background = (async () => {
      while (polling) {
        // Back to back, as the runner runs a poll that came due during the previous one; each
        // stops at the next second.
        await collector.poll(pollContext(log.logger)).catch(() => undefined);
      }
    })();
    const trafficEnds = Date.now() + 8_000;
    const published: Array<Promise<void>> = [];
    while (Date.now() < trafficEnds) {
      published.push(publish(world.emu, `${world.ok.url}/steady`));
      await sleep(150);
    }
    // Judged while the walk was still behind, from cycles cut by the next poll.
    expect(log.text()).toContain('the rate limit bounds the log walk');
    expect(collector.position.watermark).toBeLessThan(Date.now() - 2_000);
    await Promise.all(published);
    const truth = await settle(world.emu);
    const settledAt = Date.now();
    while (collector.position.watermark < settledAt && Date.now() < settledAt + 40_000) await sleep(100);
    polling = false;
    await background;
    const families = await familiesOfCollector(collector);
    expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
    expect(requests.filter((r) => r.code === '429')).toEqual([]);
    await collector.close();
  }, 90_000);
});
