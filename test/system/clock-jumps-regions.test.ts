// Clock jumps with two QStash regions in one exporter: the exporter as a real child process,
// configured by the SDKs' migration-mode environment, its wall clock moved by libfaketime while
// messages flow in both emulator regions (each region's service on this process's real clock).
// Each region reads the service's time from its own answers, so a jump is one region's offset as
// much as the other's: both must keep counting every event exactly once, both export the same
// offset, and neither reads the jump as late entries or a watermark ahead of the service.
import { type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GroundTruth } from '../../src/emulator/index.js';
import {
  settledRegion,
  startDestination,
  startRegions,
  type Destination,
  type MultiRegionEmulator,
  type RegionCredentials,
} from '../support/emulator-helpers.js';
import { spawnExporter, type ExporterChild } from '../support/exporter-child.js';
import { parseExposition, sleep, valueOf, type Family } from '../support/exporter-e2e-helpers.js';
import { faketimeEnvironment, requireFaketime, setOffset } from '../support/faketime.js';
import { differences, exportedEventSeries, truthEventSeries } from '../support/logs-helpers.js';

const CLI = resolve('dist/cli.js');
const REGIONS = ['eu-central-1', 'us-east-1'] as const;
const faketime = requireFaketime('clock-jumps-regions.test.ts');
const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-clock-regions-'));
const children: ChildProcessWithoutNullStreams[] = [];
let multi: MultiRegionEmulator | undefined;
let destination: Destination | undefined;

beforeAll(() => {
  faketime.ensure();
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
});
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await destination?.close();
  destination = undefined;
  await multi?.emulator.close();
  multi = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Messages published to each region so far (each is delivered: CREATED, ACTIVE, DELIVERED). */
const published = new Map<string, number>();

async function publish(region: RegionCredentials, count: number): Promise<void> {
  const jobs: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    jobs.push(
      (async () => {
        const response = await fetch(`${region.url}/v2/publish/${destination!.url}/${region.name}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${region.token}`, 'Upstash-Retries': '0' },
          body: 'tick',
        });
        expect(response.ok).toBe(true);
      })(),
    );
  }
  await Promise.all(jobs);
  published.set(region.name, (published.get(region.name) ?? 0) + count);
}

/** Waves into both regions for about `seconds`, the clock set to `offset` after the first. */
async function trafficWithJump(offsetFile: string, offset: string, seconds: number): Promise<void> {
  const regions = Object.values(multi!.regions);
  await Promise.all(regions.map((region) => publish(region, 20)));
  await setOffset(offsetFile, offset);
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    await Promise.all(regions.map((region) => publish(region, 10)));
    await sleep(250);
  }
}

async function scrape(child: ExporterChild): Promise<Map<string, Family>> {
  return parseExposition(await (await fetch(`${child.url}/metrics`)).text());
}

function ofRegion(families: Map<string, Family>, name: string, region: string, labels: Record<string, string> = {}) {
  return valueOf(families, name, { ...labels, qstash_region: region });
}

/**
 * Waits until both regions' event series equal their ground truth (a condition: a poll may take
 * seconds on a loaded machine), then one more page of each, so a count that goes on past the
 * truth shows; returns the last scrape.
 */
async function bothExact(child: ExporterChild): Promise<Map<string, Family>> {
  const truths = new Map<string, GroundTruth>();
  for (const region of Object.values(multi!.regions))
    truths.set(region.name, await settledRegion(region, published.get(region.name) ?? 0));
  const problems = (families: Map<string, Family>): string[] =>
    [...truths].flatMap(([region, truth]) =>
      differences(exportedEventSeries(families, region), truthEventSeries(truth)).map((d) => `${region}: ${d}`),
    );
  const deadline = Date.now() + 30_000;
  let families = await scrape(child);
  while (problems(families).length > 0 && Date.now() < deadline) {
    await sleep(100);
    families = await scrape(child);
  }
  const pages = (f: Map<string, Family>, region: string) =>
    ofRegion(f, 'upstash_exporter_log_pages_total', region) ?? 0;
  const before = REGIONS.map((region) => pages(families, region));
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
    families = await scrape(child);
    if (REGIONS.every((region, i) => pages(families, region) > before[i]!)) break;
  }
  expect(problems(families)).toEqual([]);
  return families;
}

/** Each region's clock offset (the exporter's clock minus that region's service's), as exported. */
function offsets(families: Map<string, Family>): number[] {
  return REGIONS.map(
    (region) => ofRegion(families, 'upstash_exporter_clock_offset_seconds', region, { api: 'qstash' }) ?? Number.NaN,
  );
}

function expectNeitherRegionFooled(families: Map<string, Family>): void {
  for (const region of REGIONS) {
    expect(ofRegion(families, 'upstash_exporter_log_gaps_total', region), `${region} gaps`).toBe(0);
    expect(ofRegion(families, 'upstash_exporter_log_late_events_total', region), `${region} late`).toBe(0);
    expect(ofRegion(families, 'upstash_exporter_log_watermark_resets_total', region), `${region} resets`).toBe(0);
  }
}

describe.skipIf(faketime.skip)(`two regions, the exporter's clock jumps while it runs${faketime.needs}`, () => {
  it('set forward an hour, then back, while messages flow in both regions: each region counts every event exactly once and exports the offset', async () => {
    published.clear();
    multi = await startRegions([...REGIONS]);
    destination = await startDestination();
    const stateFile = join(dir, 'state.json');
    const offsetFile = join(dir, 'faketime');
    await setOffset(offsetFile, '+0');
    const args = [
      CLI,
      ...['run', '--listen-address', '127.0.0.1:0', '--state-file', stateFile, '--poll-interval', 'logs=1s'],
      ...['--disable-collector', 'schedules,queues,url_groups,dlq,flow_control,workflows'],
      // The emulator shares this process's CPU: a second of ingestion delay and overlap keeps the
      // case about the clocks on a loaded machine (as clock-jumps.test.ts says).
      ...['--logs-ingestion-delay', '1s', '--logs-overlap', '1s', '--logs-page-size', '100', '--log-level', 'info'],
    ];
    const environment = { ...multi.migrationEnvironment('us-east-1'), ...faketimeEnvironment(offsetFile) };
    const child = await spawnExporter(args, null, children, environment);
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
      if (offsets(await scrape(child)).every(Number.isFinite)) break;
    }
    for (const offset of offsets(await scrape(child))) expect(Math.abs(offset)).toBeLessThan(1.5);

    await trafficWithJump(offsetFile, '+1h', 4);
    let families = await bothExact(child);
    for (const offset of offsets(families)) expect(Math.abs(offset - 3600)).toBeLessThan(1.5);
    expectNeitherRegionFooled(families);

    await trafficWithJump(offsetFile, '+0', 4);
    families = await bothExact(child);
    for (const offset of offsets(families)) expect(Math.abs(offset)).toBeLessThan(1.5);
    expectNeitherRegionFooled(families);
    // Each jump is said (once per region's walk at least), never as a failure of either region.
    expect(child.stderr()).toContain('the wall clock jumped');
    const failed = await scrape(child);
    for (const region of REGIONS)
      expect(ofRegion(failed, 'upstash_exporter_collector_success', region, { collector: 'logs' }), region).toBe(1);
  }, 90_000);
});
