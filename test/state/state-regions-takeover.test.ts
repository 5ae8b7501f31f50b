// Every watched QStash region keeps its checkpoint as its part of the one state file (issue 35).
// - A state file written by today's single-region exporter (main's build, run as a child
//   process) is taken over by its region when the exporter watches two regions: the EU region
//   continues its counters from it, with no event counted twice or lost, and the US region's part
//   joins it in the same file.
// - The files of the previous build (main's, watching two regions: `state.json` for the first
//   region and `state.us-east-1.json` beside it) are taken over: the side file is read once, its
//   region continues from it, and it is gone once the one file carries it.
// - This build as a child process, restarted for real: two regions writing their logs and
//   workflows checkpoints into the one file side by side lose none of each other's; a region taken
//   out of the configuration keeps its part as it was (version, upstream, savedAt, payload), is
//   said once in the log, and resumes where it was when it is watched again.
// The previous build is f40a6c0's (the last single-file-per-region layout; with one region it
// writes the file as the single-region main did), built from this checkout's history by
// test/support/previous-build.ts, or MAIN_EXPORTER_CLI. Without the history (a shallow clone)
// the first two are skipped, saying why. This build's is dist/cli.js (`npm run build`).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { GroundTruth } from '../../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { upstreamIdentity } from '../../src/state/index.js';
import { CLI } from '../support/demo-helpers.js';
import {
  startDestination,
  settledRegion,
  startRegions,
  type Destination,
  type MultiRegionEmulator,
  type RegionCredentials,
} from '../support/emulator-helpers.js';
import { spawnExporter } from '../support/exporter-child.js';
import { captureLogger, parseExposition, type Family } from '../support/exporter-e2e-helpers.js';
import { differences, exportedEventSeries, truthEventSeries } from '../support/logs-helpers.js';
import { previousBuild } from '../support/previous-build.js';

const PREVIOUS_COMMIT = 'f40a6c0da0b8ee98d9f80265398f645a6480953d';
const previous = previousBuild(PREVIOUS_COMMIT);
const MAIN_CLI = previous.cli ?? '';
const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-takeover-'));
const children: ChildProcessWithoutNullStreams[] = [];
let multi: MultiRegionEmulator | undefined;
let destination: Destination | undefined;
let exporter: ExporterHandle | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await exporter?.close();
  exporter = undefined;
  await destination?.close();
  destination = undefined;
  await multi?.emulator.close();
  multi = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ONLY_LOGS = ['--disable-collector', 'schedules,queues,url_groups,dlq,flow_control,workflows'];

interface StateFileJson {
  region?: string;
  version: number;
  upstream: string;
  savedAt: number;
  payload: Record<string, unknown>;
  regions?: Record<string, { version: number; upstream: string; savedAt: number; payload: Record<string, unknown> }>;
}

function readState(path: string): StateFileJson {
  return JSON.parse(readFileSync(path, 'utf8')) as StateFileJson;
}

/**
 * A region's part of the file as written: its version, upstream, savedAt and payload, wherever it
 * is (the top level or under `regions`: which region's part is at the top may change when the
 * watched regions do, the part itself must not).
 */
function partOf(
  file: StateFileJson,
  region: string,
): { version: number; upstream: string; savedAt: number; payload: Record<string, unknown> } | undefined {
  const part = file.region === region ? file : file.regions?.[region];
  if (part === undefined) return undefined;
  const { version, upstream, savedAt, payload } = part;
  return { version, upstream, savedAt, payload };
}

async function until(what: string, check: () => Promise<string[]> | string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let problems: string[] = [];
  while (Date.now() < deadline) {
    problems = await check();
    if (problems.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: ${problems.join('; ')}`);
}

async function publish(region: RegionCredentials, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${region.url}/v2/publish/${destination!.url}/${region.name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${region.token}`, 'Upstash-Retries': '0' },
      body: 'hello',
    });
    expect(response.ok).toBe(true);
  }
}

async function scrapeAt(url: string): Promise<Map<string, Family>> {
  return parseExposition(await (await fetch(new URL('/metrics', url))).text());
}

/** Both regions' series equal their ground truth. */
async function exactly(url: string, truths: Record<string, GroundTruth>): Promise<void> {
  await until(`counted exactly: ${Object.keys(truths).join(', ')}`, async () => {
    const families = await scrapeAt(url);
    return Object.entries(truths).flatMap(([region, truth]) =>
      differences(exportedEventSeries(families, region), truthEventSeries(truth)).map((d) => `${region} ${d}`),
    );
  });
}

/** This build (or another) as a child process with exactly this environment, up once it logs its URL. */
async function spawnWith(cli: string, args: readonly string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const deadline = Date.now() + 15_000;
  for (;;) {
    const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/?"/.exec(stderr);
    if (match) return { process: child, url: match[1]!, stderr: () => stderr };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`exporter did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  await exited;
}

/** Only these regions of the SDKs' environment. */
function environmentOf(regions: readonly RegionCredentials[]): Record<string, string> {
  const all = multi!.migrationEnvironment(regions[0]!.name);
  const prefixes = regions.map((region) => region.name.toUpperCase().replaceAll('-', '_'));
  return Object.fromEntries(
    Object.entries(all).filter(
      ([key]) => key === 'QSTASH_REGION' || prefixes.some((prefix) => key.startsWith(`${prefix}_`)),
    ),
  );
}

async function logsPolled(url: string, region: string): Promise<string[]> {
  return (await scrapeAt(url))
    .get('upstash_exporter_collector_success')
    ?.samples.some((s) => s.labels.qstash_region === region && s.labels.collector === 'logs' && s.value === 1)
    ? []
    : [`no successful ${region} poll`];
}

describe.skipIf(previous.cli === null)(
  `the state files of the previous build (${previous.cli === null ? `skipped: ${previous.reason}` : PREVIOUS_COMMIT.slice(0, 7)})`,
  () => {
    it("a single-region file is taken over by its region: nothing counted twice or lost; the other region's part joins it in the one file", async () => {
      multi = await startRegions(['eu-central-1', 'us-east-1']);
      destination = await startDestination();
      const eu = multi.regions['eu-central-1']!;
      const us = multi.regions['us-east-1']!;
      const stateFile = join(dir, 'single.json');
      const common = ['--listen-address', '127.0.0.1:0', '--state-file', stateFile, '--poll-interval', 'logs=1s'];
      const walk = ['--logs-ingestion-delay', '100ms', ...ONLY_LOGS];

      // Today's exporter, watching the EU region with QSTASH_TOKEN and QSTASH_URL.
      const old = await spawnExporter([MAIN_CLI, ...common, ...walk], eu.token, children, { QSTASH_URL: eu.url });
      await publish(eu, 5);
      const before = await settledRegion(eu, 5);
      await until('main counted the EU traffic', async () =>
        differences(exportedEventSeries(await scrapeAt(old.url)), truthEventSeries(before)),
      );
      await stop(old.process);
      const written = readState(stateFile);
      expect(written.upstream).toBe(upstreamIdentity(eu.url, eu.token));
      expect(written.region).toBeUndefined();

      // More EU traffic while no exporter runs.
      await publish(eu, 3);
      const euTruth = await settledRegion(eu, 8);

      // This exporter, with the app's migration-mode environment: EU continues from main's file.
      const config = loadConfig([...common, ...walk], multi.migrationEnvironment('us-east-1'));
      exporter = await startExporter(config, captureLogger('info').logger);
      // A region watched for the first time counts from its first poll on (as a fresh state file does).
      await until('the US walk started', () => logsPolled(exporter!.url, 'us-east-1'));
      await publish(us, 2);
      const usTruth = await settledRegion(us, 2);
      await exactly(exporter.url, { 'eu-central-1': euTruth, 'us-east-1': usTruth });
      await exporter.close();
      exporter = undefined;
      // One file: EU's part where main's file had it, US's part beside it, each for its own upstream.
      const file = readState(stateFile);
      expect(file.region).toBe('eu-central-1');
      expect(file.upstream).toBe(upstreamIdentity(eu.url, eu.token));
      expect(file.regions?.['us-east-1']?.upstream).toBe(upstreamIdentity(us.url, us.token));
      expect(file.regions?.['us-east-1']?.payload.watermark).toBeTypeOf('number');
      expect(existsSync(join(dir, 'single.us-east-1.json'))).toBe(false);
    }, 90_000);

    it("the previous build's file beside the state file (`<name>.<region>.json`) is read once, its region continues from it, and the one file carries it from then on", async () => {
      multi = await startRegions(['eu-central-1', 'us-east-1']);
      destination = await startDestination();
      const eu = multi.regions['eu-central-1']!;
      const us = multi.regions['us-east-1']!;
      const stateFile = join(dir, 'previous.json');
      const sideFile = join(dir, 'previous.us-east-1.json');
      const args = [
        ...['--listen-address', '127.0.0.1:0', '--state-file', stateFile, '--poll-interval', 'logs=1s'],
        ...['--logs-ingestion-delay', '100ms', ...ONLY_LOGS],
      ];
      const env = environmentOf([eu, us]);

      // Main's build watching both regions: EU in the state file, US in its own file beside it.
      const old = await spawnWith(MAIN_CLI, args, env);
      await publish(eu, 4);
      await publish(us, 3);
      await exactly(old.url, { 'eu-central-1': await settledRegion(eu, 4), 'us-east-1': await settledRegion(us, 3) });
      await stop(old.process);
      expect(readState(sideFile).upstream).toBe(upstreamIdentity(us.url, us.token));

      // More traffic in both while no exporter runs; this build takes both files over.
      await publish(eu, 2);
      await publish(us, 5);
      const euTruth = await settledRegion(eu, 6);
      const usTruth = await settledRegion(us, 8);
      const current = await spawnWith(CLI, args, env);
      await exactly(current.url, { 'eu-central-1': euTruth, 'us-east-1': usTruth });
      await until('the side file carried by the one file and removed', () =>
        existsSync(sideFile) ? ['the side file is still there'] : [],
      );
      const file = readState(stateFile);
      expect(file.region).toBe('eu-central-1');
      expect(file.regions?.['us-east-1']?.upstream).toBe(upstreamIdentity(us.url, us.token));
      await stop(current.process);

      // Restarted: US continues from the one file (its side file is gone): nothing twice, nothing lost.
      await publish(us, 1);
      const usLater = await settledRegion(us, 9);
      const again = await spawnWith(CLI, args, env);
      await exactly(again.url, { 'eu-central-1': euTruth, 'us-east-1': usLater });
      await stop(again.process);
    }, 120_000);
  },
);

describe('the one state file of two regions, restarted for real (dist/cli.js)', () => {
  it("two regions' logs and workflows parts written side by side lose nothing of each other; a region taken out keeps its part untouched, is said once, and resumes where it was", async () => {
    if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
    multi = await startRegions(['eu-central-1', 'us-east-1']);
    destination = await startDestination();
    const eu = multi.regions['eu-central-1']!;
    const us = multi.regions['us-east-1']!;
    const stateFile = join(dir, 'both.json');
    // logs and workflows of both regions write the one file every second, each on its own schedule.
    const args = [
      ...['--listen-address', '127.0.0.1:0', '--state-file', stateFile, '--poll-interval', '1s'],
      ...['--logs-ingestion-delay', '100ms', '--disable-collector', 'schedules,queues,url_groups,dlq,flow_control'],
    ];
    const both = await spawnWith(CLI, args, environmentOf([eu, us]));
    await until('both walks started', async () => [
      ...(await logsPolled(both.url, 'eu-central-1')),
      ...(await logsPolled(both.url, 'us-east-1')),
    ]);
    await publish(eu, 4);
    await publish(us, 3);
    await exactly(both.url, { 'eu-central-1': await settledRegion(eu, 4), 'us-east-1': await settledRegion(us, 3) });
    await stop(both.process);
    const written = readState(stateFile);
    for (const [region, credentials] of [
      ['eu-central-1', eu],
      ['us-east-1', us],
    ] as const) {
      const part = partOf(written, region);
      expect(part?.upstream, region).toBe(upstreamIdentity(credentials.url, credentials.token));
      expect(part?.payload.watermark, region).toBeTypeOf('number');
      expect(part?.payload.workflows, `${region}'s workflows section`).toBeDefined();
    }
    expect(existsSync(join(dir, 'both.us-east-1.json'))).toBe(false);
    // The first watched region's part is at the top, whichever region wrote first.
    expect(written.region).toBe('eu-central-1');

    // Traffic in both while no exporter runs; restarted with EU only.
    await publish(eu, 2);
    await publish(us, 2);
    const euTruth = await settledRegion(eu, 6);
    const usPart = JSON.stringify(partOf(written, 'us-east-1'));
    const euOnly = await spawnWith(CLI, args, environmentOf([eu]));
    await exactly(euOnly.url, { 'eu-central-1': euTruth });
    // Said once, at start, naming the region.
    const said = euOnly
      .stderr()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { level: unknown; msg: string; qstash_region?: string })
      .filter((line) => line.msg.includes('us-east-1') || line.qstash_region === 'us-east-1');
    expect(said, JSON.stringify(said)).toHaveLength(1);
    expect(said[0]!.qstash_region).toBe('us-east-1');
    expect([30, 'info']).toContain(said[0]!.level);
    // EU keeps writing; US's part stays as it was.
    const euWatermark = partOf(written, 'eu-central-1')!.payload.watermark as number;
    await until('EU checkpointed again', () =>
      (partOf(readState(stateFile), 'eu-central-1')!.payload.watermark as number) > euWatermark ? [] : ['not yet'],
    );
    await stop(euOnly.process);
    expect(JSON.stringify(partOf(readState(stateFile), 'us-east-1'))).toBe(usPart);

    // Both again: US resumes where it was (the traffic of while it was not watched counted once).
    await publish(us, 1);
    const usTruth = await settledRegion(us, 6);
    const again = await spawnWith(CLI, args, environmentOf([eu, us]));
    await exactly(again.url, { 'eu-central-1': euTruth, 'us-east-1': usTruth });
    expect(again.stderr()).not.toContain('not configured');
    await stop(again.process);
  }, 120_000);
});
