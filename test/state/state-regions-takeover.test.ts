// A state file written by today's single-region exporter (main's build, run as a child process)
// is taken over by its region when the exporter watches two regions: the EU region continues its
// counters from it, with no event counted twice or lost, and the US region keeps its own
// checkpoint beside it (issue 35). Main's build is `/work/main/dist/cli.js`, or MAIN_EXPORTER_CLI;
// without it the test is skipped, saying so.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { GroundTruth } from '../../src/emulator/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { upstreamIdentity } from '../../src/state/index.js';
import { startDestination, startRegions, type MultiRegionEmulator } from '../support/emulator-helpers.js';
import { spawnExporter } from '../support/exporter-child.js';
import { captureLogger, parseExposition, type Family } from '../support/exporter-e2e-helpers.js';
import { differences, EVENTS, truthEventSeries } from '../support/logs-helpers.js';

const MAIN_CLI = process.env.MAIN_EXPORTER_CLI ?? '/work/main/dist/cli.js';
const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-takeover-'));
const children: ChildProcessWithoutNullStreams[] = [];
let multi: MultiRegionEmulator | undefined;
let exporter: ExporterHandle | undefined;
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await exporter?.close();
  await multi?.emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

const ONLY_LOGS = ['--disable-collector', 'schedules,queues,url_groups,dlq,flow_control,workflows'];

function eventSeries(families: Map<string, Family>, region: string | null): Map<string, number> {
  const out = new Map<string, number>();
  for (const sample of families.get(EVENTS)?.samples ?? []) {
    if (sample.value === 0 || (region !== null && sample.labels.qstash_region !== region)) continue;
    const l = sample.labels;
    const key = [l.state, l.queue, l.url_group, l.endpoint, l.destination].map((v) => v ?? '').join(' | ');
    out.set(key, (out.get(key) ?? 0) + sample.value);
  }
  return out;
}

async function until(what: string, check: () => Promise<string[]>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let problems: string[] = [];
  while (Date.now() < deadline) {
    problems = await check();
    if (problems.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: ${problems.join('; ')}`);
}

describe.skipIf(!existsSync(MAIN_CLI))(`a state file of main's single-region exporter (${MAIN_CLI})`, () => {
  it('is taken over by its region: nothing counted twice or lost; the other region checkpoints beside it', async () => {
    multi = await startRegions(['eu-central-1', 'us-east-1']);
    const destination = await startDestination();
    const eu = multi.regions['eu-central-1']!;
    const us = multi.regions['us-east-1']!;
    const publish = async (region: typeof eu, count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const response = await fetch(`${region.url}/v2/publish/${destination.url}/${region.name}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${region.token}`, 'Upstash-Retries': '0' },
          body: 'hello',
        });
        expect(response.ok).toBe(true);
      }
    };
    const settled = async (region: typeof eu, created: number): Promise<GroundTruth> => {
      for (;;) {
        const truth = region.handle.groundTruth();
        const b = truth.byState;
        if (b.CREATED === created && b.DELIVERED + b.FAILED + b.CANCELLED === created) return truth;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const stateFile = join(dir, 'state.json');
    const common = ['--listen-address', '127.0.0.1:0', '--state-file', stateFile, '--poll-interval', 'logs=1s'];
    const walk = ['--logs-ingestion-delay', '100ms', ...ONLY_LOGS];

    // Today's exporter, watching the EU region with QSTASH_TOKEN and QSTASH_URL.
    const old = await spawnExporter([MAIN_CLI, ...common, ...walk], eu.token, children, { QSTASH_URL: eu.url });
    await publish(eu, 5);
    const before = await settled(eu, 5);
    await until('main counted the EU traffic', async () =>
      differences(
        eventSeries(parseExposition(await (await fetch(`${old.url}/metrics`)).text()), null),
        truthEventSeries(before),
      ),
    );
    const exited = new Promise<void>((done) => old.process.once('exit', () => done()));
    old.process.kill('SIGTERM');
    await exited;
    const written = JSON.parse(readFileSync(stateFile, 'utf8')) as { upstream: string };
    expect(written.upstream).toBe(upstreamIdentity(eu.url, eu.token));

    // More EU traffic while no exporter runs.
    await publish(eu, 3);
    const euTruth = await settled(eu, 8);

    // This exporter, with the app's migration-mode environment: EU continues from main's file.
    const config = loadConfig([...common, ...walk], multi.migrationEnvironment('us-east-1'));
    exporter = await startExporter(config, captureLogger('info').logger);
    const scrape = async (): Promise<Map<string, Family>> =>
      parseExposition(await (await fetch(new URL('/metrics', exporter!.url))).text());
    // A region watched for the first time counts from its first poll on (as a fresh state file does).
    await until('the US walk started', async () =>
      (await scrape())
        .get('upstash_exporter_collector_success')
        ?.samples.some((s) => s.labels.qstash_region === 'us-east-1' && s.labels.collector === 'logs' && s.value === 1)
        ? []
        : ['no successful US poll'],
    );
    await publish(us, 2);
    const usTruth = await settled(us, 2);
    await until('both regions counted exactly', async () => {
      const families = await scrape();
      return [
        ...differences(eventSeries(families, 'eu-central-1'), truthEventSeries(euTruth)).map((d) => `EU ${d}`),
        ...differences(eventSeries(families, 'us-east-1'), truthEventSeries(usTruth)).map((d) => `US ${d}`),
      ];
    });
    await exporter.close();
    exporter = undefined;
    // The file stays EU's; the US region's checkpoint is its own file beside it.
    expect((JSON.parse(readFileSync(stateFile, 'utf8')) as { upstream: string }).upstream).toBe(
      upstreamIdentity(eu.url, eu.token),
    );
    const usFile = join(dir, 'state.us-east-1.json');
    expect((JSON.parse(readFileSync(usFile, 'utf8')) as { upstream: string }).upstream).toBe(
      upstreamIdentity(us.url, us.token),
    );
    await destination.close();
  }, 90_000);
});
