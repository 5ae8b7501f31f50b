// Two QStash regions in one exporter (issue 35), against one emulator serving two independent
// regions, configured with nothing but the SDKs' own migration-mode environment (an app's .env
// pasted as it is). Every region-scoped series carries qstash_region; each region counts its own
// delivery events exactly; while one region answers 500s from the start, the other counts
// exactly and on time, and readiness, the landing page and collector_success name the failing
// region; once it heals, it counts exactly too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import type { GroundTruth } from '../../src/emulator/index.js';
import {
  startDestination,
  startRegions,
  type Destination,
  type MultiRegionEmulator,
} from '../support/emulator-helpers.js';
import { captureLogger, parseExposition, type Family } from '../support/exporter-e2e-helpers.js';
import { differences, EVENTS, truthEventSeries } from '../support/logs-helpers.js';

/** How long the US region stays broken (the issue asks for a minute; REGIONS_OUTAGE_MS to run it so). */
const OUTAGE_MS = Number(process.env.REGIONS_OUTAGE_MS ?? 15_000);

let multi: MultiRegionEmulator;
let destination: Destination;
let exporter: ExporterHandle;

async function publish(region: 'eu-central-1' | 'us-east-1', count: number): Promise<void> {
  const { url, token } = multi.regions[region]!;
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}/v2/publish/${destination.url}/${region}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'Upstash-Retries': '0' },
      body: `hello ${region} ${i}`,
    });
    expect(response.ok, await response.text()).toBe(true);
  }
}

async function settled(region: string, created: number): Promise<GroundTruth> {
  const handle = multi.regions[region]!.handle;
  for (;;) {
    const truth = handle.groundTruth();
    const b = truth.byState;
    if (b.CREATED === created && b.DELIVERED + b.FAILED + b.CANCELLED === created) return truth;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function scrape(): Promise<Map<string, Family>> {
  return parseExposition(await (await fetch(new URL('/metrics', exporter.url))).text());
}

/** The family's samples of one region, as a family. */
function inRegion(families: Map<string, Family>, region: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const [name, family] of families)
    out.set(name, { ...family, samples: family.samples.filter((sample) => sample.labels.qstash_region === region) });
  return out;
}

function exported(families: Map<string, Family>, region: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const sample of inRegion(families, region).get(EVENTS)?.samples ?? []) {
    if (sample.value === 0) continue;
    const l = sample.labels;
    const key = [l.state, l.queue, l.url_group, l.endpoint, l.destination].map((v) => v ?? '').join(' | ');
    out.set(key, (out.get(key) ?? 0) + sample.value);
  }
  return out;
}

async function until(what: string, check: () => Promise<string[]>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let problems: string[] = [];
  while (Date.now() < deadline) {
    problems = await check();
    if (problems.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: ${problems.join('; ')}`);
}

beforeAll(async () => {
  multi = await startRegions(['eu-central-1', 'us-east-1']);
  destination = await startDestination();
  // The US region is broken from the start: every read answers 500.
  multi.regions['us-east-1']!.handle.setKnobs({ errorRatio: 1 });
  const { email, apiKey } = multi.emulator.credentials;
  const env = {
    ...multi.migrationEnvironment('us-east-1'),
    UPSTASH_EMAIL: email,
    UPSTASH_API_KEY: apiKey,
    UPSTASH_MANAGEMENT_URL: multi.emulator.url,
  };
  const config = loadConfig(
    [
      ...['--listen-address', '127.0.0.1:0', '--state-file', 'none', '--poll-interval', '1s'],
      ...['--http-max-retries', '0', '--logs-ingestion-delay', '100ms', '--disable-collector', 'search,vector'],
    ],
    env,
  );
  expect(config.qstash.regions.map((region) => region.name)).toEqual(['eu-central-1', 'us-east-1']);
  exporter = await startExporter(config, captureLogger('info').logger);
}, 30_000);

afterAll(async () => {
  await exporter?.close();
  await destination?.close();
  await multi?.emulator.close();
});

describe('two regions in one exporter', () => {
  it('one region failing: the other counts exactly and on time; readiness, landing page and collector_success name the failing one; healed, it counts exactly', async () => {
    const started = Date.now();
    await publish('eu-central-1', 6);
    const euTruth = await settled('eu-central-1', 6);
    await until(
      'eu-central-1 counted exactly while us-east-1 fails',
      async () => differences(exported(await scrape(), 'eu-central-1'), truthEventSeries(euTruth)),
      20_000,
    );
    // On time: within a few poll intervals of the traffic, whatever the other region does.
    expect(Date.now() - started).toBeLessThan(15_000);

    const ready = await fetch(new URL('/-/ready', exporter.url));
    expect(ready.status).toBe(503);
    const readyText = await ready.text();
    expect(readyText).toContain('logs (us-east-1)');
    expect(readyText).not.toContain('logs (eu-central-1)');
    const landing = await (await fetch(new URL('/', exporter.url))).text();
    expect(landing).toMatch(/<tr class="bad"><td>logs \(us-east-1\)<\/td>/);
    expect(landing).toMatch(/<tr class="ok"><td>logs \(eu-central-1\)<\/td>/);
    const families = await scrape();
    const success = families.get('upstash_exporter_collector_success')!.samples;
    expect(success).toContainEqual({ labels: { collector: 'logs', qstash_region: 'eu-central-1' }, value: 1 });
    expect(success).toContainEqual({ labels: { collector: 'logs', qstash_region: 'us-east-1' }, value: 0 });
    // Every series of the region-scoped collectors says its region; one family for both regions.
    for (const [name, family] of families) {
      if (!name.startsWith('upstash_qstash_')) continue;
      for (const sample of family.samples)
        expect(sample.labels.qstash_region, `${name}`).toMatch(/^(eu-central-1|us-east-1)$/);
    }
    // The account of each region: its own QStash user, chosen by its token.
    const plan = [...families.keys()].find((name) => name.startsWith('upstash_qstash_account'));
    expect(plan, 'an account family').toBeDefined();
    expect(families.get(plan!)!.samples.some((s) => s.labels.qstash_region === 'eu-central-1')).toBe(true);

    // The outage goes on; more EU traffic is still counted exactly.
    await publish('eu-central-1', 4);
    const euLater = await settled('eu-central-1', 10);
    await until(
      'eu-central-1 still exact',
      async () => differences(exported(await scrape(), 'eu-central-1'), truthEventSeries(euLater)),
      20_000,
    );
    await publish('us-east-1', 5);
    const usTruth = await settled('us-east-1', 5);
    const left = OUTAGE_MS - (Date.now() - started);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    multi.regions['us-east-1']!.handle.setKnobs({ errorRatio: 0 });
    await until(
      'us-east-1 counted exactly once healed',
      async () => differences(exported(await scrape(), 'us-east-1'), truthEventSeries(usTruth)),
      30_000,
    );
    expect(differences(exported(await scrape(), 'eu-central-1'), truthEventSeries(euLater))).toEqual([]);
    await until(
      'ready once every region succeeded',
      async () => ((await fetch(new URL('/-/ready', exporter.url))).status === 200 ? [] : ['not ready']),
      15_000,
    );
  }, 120_000);
});
