// The logs collector against the emulator set to each side where the evidence about the real
// service is split (docs/service-fidelity.md): which log path exists, the page size honoured,
// large untrimmed bodies, the grouped shape, numeric cursors, the daily limit, retention by age.
// Every case ends with the exported counters equal to the emulator's ground truth, or with a
// clear error code and the watermark where it was.
import { afterEach, describe, expect, it } from 'vitest';
import type { Knobs } from '../../../src/emulator/index.js';
import {
  addUrlGroup,
  differences,
  exportedEventSeries,
  familiesOfCollector,
  pollUntil,
  publish,
  settle,
  startCollector,
  startWorld,
  sumOf,
  truthEventSeries,
  type CollectorUnderTest,
  type World,
} from '../../support/logs-helpers.js';
import { pollContext, sleep, valueOf } from '../../support/exporter-e2e-helpers.js';

let world: World | undefined;
const collectors: CollectorUnderTest[] = [];

afterEach(async () => {
  for (const under of collectors.splice(0)) await under.close();
  await world?.close();
  world = undefined;
});

const EVENTS = 'upstash_qstash_message_events_total';

async function begin(
  knobs: Partial<Knobs>,
  ...rest: Parameters<typeof startCollector> extends [World, ...infer R] ? R : never
): Promise<CollectorUnderTest> {
  world = await startWorld(knobs);
  const under = startCollector(world, ...rest);
  collectors.push(under);
  // Without state the collector starts at now: the first poll sets the start.
  await under.collector.poll(pollContext(under.log.logger));
  return under;
}

async function expectExact(under: CollectorUnderTest): Promise<void> {
  const truth = await settle(world!.emu);
  const summary = await pollUntil(under, Date.now(), 20_000);
  expect(summary.failures).toEqual([]);
  const families = await familiesOfCollector(under.collector);
  expect(differences(exportedEventSeries(families), truthEventSeries(truth))).toEqual([]);
  expect(sumOf(families, EVENTS)).toBe(truth.total);
}

async function publishMessages(count: number, path = 'ok'): Promise<void> {
  for (let i = 0; i < count; i++) await publish(world!.emu, `${world!.ok.url}/${path}/${i}`);
}

describe('log path', () => {
  it('reads /v2/events by default; where only /v2/logs exists it switches once, says so, and counts exactly', async () => {
    const under = await begin({ logsPaths: 'logs' });
    await publishMessages(5);
    await expectExact(under);
    const paths = under.requests.map((request) => request.endpoint);
    expect(paths[0]).toBe('/v2/events');
    expect(paths.filter((path) => path === '/v2/events')).toHaveLength(1);
    expect(paths.at(-1)).toBe('/v2/logs');
    expect(under.log.text()).toContain('/v2/logs');
  });

  it('configured for /v2/logs where only /v2/events exists, it switches to /v2/events', async () => {
    const under = await begin({ logsPaths: 'events' }, {}, null, { logsPath: '/v2/logs' });
    await publishMessages(5);
    await expectExact(under);
    expect(under.requests.at(-1)!.endpoint).toBe('/v2/events');
  });
});

describe('page size', () => {
  async function firstWalkRequests(
    maxPageSize: number,
  ): Promise<{ requests: number; slices: number; pageSize: number | undefined }> {
    const under = await begin({ maxPageSize });
    // 2 publishes to a group of 250 endpoints: 500 messages, 1,500 entries.
    await addUrlGroup(
      world!.emu,
      'wide',
      Array.from({ length: 250 }, (_, i) => ({ url: `${world!.ok.url}/wide/${i}` })),
    );
    await publish(world!.emu, 'wide');
    await publish(world!.emu, 'wide');
    await settle(world!.emu);
    await sleep(300);
    const before = under.requests.length;
    const logged = under.log.lines().length;
    await under.collector.poll(pollContext(under.log.logger));
    const requests = under.requests.length - before;
    // The slices this walk was cut into: the range since the first poll is cut at the first
    // slices' length (15 s with 4 chains), and a busy machine stretches it past that.
    const walked = under.log
      .lines()
      .slice(logged)
      .find((line) => line.msg === 'logs walked');
    const slices = Number(walked?.slices ?? 0);
    await expectExact(under);
    const families = await familiesOfCollector(under.collector);
    await under.close();
    await world!.close();
    world = undefined;
    return { requests, slices, pageSize: valueOf(families, 'upstash_exporter_log_page_size') };
  }

  it('asks 1000 a page: where the service honours it a walk of 1,500 entries takes 2 pages, where it holds 100 it takes 15 and the cap is learnt', async () => {
    const honoured = await firstWalkRequests(1000);
    const capped = await firstWalkRequests(100);
    expect(honoured.pageSize).toBe(1000);
    expect(capped.pageSize).toBe(100);
    // One walk over the new entries (plus the overlap re-read, a few entries), and one page for
    // each further slice the range was cut into (they hold no entry: all came in one burst).
    expect(honoured.slices).toBeGreaterThanOrEqual(1);
    expect(honoured.requests).toBeLessThanOrEqual(3 + honoured.slices - 1);
    expect(capped.requests).toBeGreaterThanOrEqual(15);
    expect(capped.requests).toBeLessThanOrEqual(17 + capped.slices - 1);
  });
});

describe('bodies', () => {
  it('counts every event at the defaults when a third of the messages carry 1 MiB bodies the service does not trim', async () => {
    // The case of the issue: /v2/events only, 1 MiB bodies in a third of the entries, trimBody ignored.
    const under = await begin({
      logsPaths: 'events',
      largeBodyRatio: 0.33,
      largeBodyBytes: 1_048_576,
      honourTrimBody: false,
    });
    await publishMessages(40);
    await expectExact(under);
    const families = await familiesOfCollector(under.collector);
    expect(sumOf(families, 'upstash_exporter_log_walk_errors_total')).toBe(0);
  });

  it('reads a range again in smaller pages when the kept part of a page passes the cap, and counts exactly', async () => {
    // A 40 KB kept-bytes cap: a page of 1000 entries (about 500 bytes each without bodies) is over it.
    const under = await begin({}, {}, null, { logsMaxPageBytes: 40_000 });
    await publishMessages(60);
    await expectExact(under);
    const families = await familiesOfCollector(under.collector);
    expect(valueOf(families, 'upstash_exporter_log_walk_errors_total', { code: 'ERR_API_PAGE_TOO_LARGE' })).toBe(0);
    expect(under.log.text()).toContain('ERR_API_PAGE_TOO_LARGE');
  });
});

describe('answers the collector cannot count', () => {
  async function failsThenRecovers(
    knobs: Partial<Knobs>,
    code: string,
    off: Partial<Knobs>,
  ): Promise<CollectorUnderTest> {
    const under = await begin({});
    await publishMessages(5);
    await settle(world!.emu);
    await sleep(400);
    world!.emu.setKnobs(knobs);
    const watermark = under.collector.position.watermark;
    await expect(under.collector.poll(pollContext(under.log.logger))).rejects.toMatchObject({ code });
    expect(under.collector.position.watermark).toBe(watermark);
    world!.emu.setKnobs(off);
    await expectExact(under);
    const families = await familiesOfCollector(under.collector);
    expect(valueOf(families, 'upstash_exporter_log_walk_errors_total', { code })).toBe(1);
    return under;
  }

  it('the daily-limit 429 is ERR_API_DAILY_LIMIT, asked once (not retried), and nothing is lost', async () => {
    const under = await failsThenRecovers({ dailyLimitNext: 1 }, 'ERR_API_DAILY_LIMIT', {});
    expect(under.requests.filter((request) => request.code === 'daily_limit')).toHaveLength(1);
  });
});

describe('shapes of the page other than a flat list with text cursors', () => {
  async function countsExactly(knobs: Partial<Knobs>): Promise<CollectorUnderTest> {
    // Small pages: every cursor is followed many times, across groups and chains.
    const under = await begin({ ...knobs, maxPageSize: 7 });
    await addUrlGroup(
      world!.emu,
      'fan',
      [0, 1, 2].map((i) => ({ url: `${world!.ok.url}/fan/${i}` })),
    );
    for (let i = 0; i < 6; i++) await publish(world!.emu, 'fan');
    await publishMessages(10);
    await expectExact(under);
    const families = await familiesOfCollector(under.collector);
    expect(sumOf(families, 'upstash_exporter_log_walk_errors_total')).toBe(0);
    return under;
  }

  it('a service that always answers grouped (messages[].events[], without groupBy asked) is read flat: every entry counted once', async () => {
    const under = await countsExactly({ logsShape: 'grouped' });
    expect(under.requests.length).toBeGreaterThan(5);
  });

  it('cursors beyond 2^53 as bare JSON numbers are followed with their exact digits', async () => {
    await countsExactly({ numericCursor: 'number' });
  });

  it('cursors beyond 2^53 as JSON strings of digits are followed as they are', async () => {
    await countsExactly({ numericCursor: 'digits' });
  });

  it('both at once: grouped pages with bare numeric cursors', async () => {
    await countsExactly({ logsShape: 'grouped', numericCursor: 'number' });
  });
});

describe('retention by age', () => {
  it('entries that aged out while the exporter was down are a reported gap, and nothing is counted twice', async () => {
    // timeScale 60 (startWorld): 180 s of retention is 3 s of wall time.
    const first = await begin({ logRetentionAgeMs: 180_000 });
    await publishMessages(5);
    await pollUntil(first, Date.now());
    await first.close();
    // While it is down, messages come, and they and the last counted entry age out.
    await publishMessages(20, 'down');
    await sleep(3500);
    await publishMessages(5, 'after');
    // Traffic went on: the restart finds entries newer than the gap (with none, an aged-out anchor
    // is a quiet log, and nothing is reported).
    await settle(world!.emu);
    await sleep(300);
    const second = startCollector(world!);
    collectors.push(second);
    await second.collector.poll(pollContext(second.log.logger));
    const truth = await settle(world!.emu);
    await pollUntil(second, Date.now());
    const families = await familiesOfCollector(second.collector);
    const exported = exportedEventSeries(families);
    for (const [key, value] of exported) expect(value, key).toBeLessThanOrEqual(truthEventSeries(truth).get(key) ?? 0);
    expect(truth.dropped).toBeGreaterThan(0);
    expect(valueOf(families, 'upstash_exporter_log_gaps_total')).toBeGreaterThan(0);
    expect(second.log.text()).toContain('retention overrun');
  });
});
