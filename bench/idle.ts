// The exporter at rest: every collector on at its default interval against the emulator (no
// traffic), its CPU share and resident memory, beside a bare Node process with the same V8
// flags that only loads the exporter's runtime dependencies. The difference is what the
// exporter's own code and state hold (docs/performance.md, "Cost per event").
import { spawn } from 'node:child_process';
import { createEmulator } from '../src/emulator/index.js';
import { NODE_FLAGS } from '../src/node-flags.js';
import { ExporterProcess, repoRoot } from './exporter-process.js';
import { rssKinds } from './logs.js';
import { mb, round, sampleProcess, sleep } from './measure.js';

/** The packages the exporter loads at run time (package.json's dependencies that `run` imports). */
const RUNTIME_DEPENDENCIES = ['prom-client', 'express', 'undici', 'node-cron', 'pino', 'zod', 'yaml', 'bcryptjs'];

export interface IdleFigures {
  seconds: number;
  /** Exporter CPU over the idle window, share of one core. */
  cpuShare: number;
  rssMiB: number;
  bareRssMiB: number;
  /** RSS by kind (anonymous: heaps and malloc; file-backed: the node binary and libraries), MiB. */
  anonMiB: number;
  fileMiB: number;
  bareAnonMiB: number;
  bareFileMiB: number;
  collectors: number;
}

async function bareRss(): Promise<{ rssMiB: number; anonMiB: number; fileMiB: number }> {
  const script = `${RUNTIME_DEPENDENCIES.map((name) => `await import(${JSON.stringify(name)});`).join(' ')} console.log('loaded'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script], {
    cwd: repoRoot(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString('utf8').includes('loaded') && resolve());
      child.once('exit', (code) => reject(new Error(`the bare Node process exited with ${code}`)));
    });
    // As long as the exporter's first seconds: what loading leaves settles the same way.
    await sleep(5_000);
    const pid = child.pid;
    if (pid === undefined) throw new Error('the bare Node process has no pid');
    const kinds = rssKinds(pid);
    return { rssMiB: mb(sampleProcess(pid)?.rss ?? Number.NaN), anonMiB: kinds.anon, fileMiB: kinds.file };
  } finally {
    child.kill('SIGKILL');
  }
}

export async function measureIdle(seconds = 60): Promise<IdleFigures> {
  const emulator = await createEmulator({});
  try {
    const { credentials } = emulator;
    const exporter = await ExporterProcess.start({
      qstashUrl: emulator.url,
      token: credentials.token,
      stateFile: null,
      args: [
        '--management-url',
        emulator.url,
        '--upstash-email',
        credentials.email,
        '--upstash-api-key',
        credentials.apiKey,
      ],
    });
    try {
      await exporter.ready(60_000);
      const families = await exporter.scrape();
      const collectors = families.get('upstash_exporter_collector_success')?.samples.length ?? 0;
      const start = exporter.sample();
      const startedAt = performance.now();
      await sleep(seconds * 1000);
      const end = exporter.sample();
      const elapsedMs = performance.now() - startedAt;
      const kinds = rssKinds(exporter.pid);
      const bare = await bareRss();
      return {
        seconds,
        cpuShare: round(((end?.cpuMs ?? Number.NaN) - (start?.cpuMs ?? Number.NaN)) / elapsedMs, 4),
        rssMiB: mb(end?.rss ?? Number.NaN),
        bareRssMiB: bare.rssMiB,
        anonMiB: kinds.anon,
        fileMiB: kinds.file,
        bareAnonMiB: bare.anonMiB,
        bareFileMiB: bare.fileMiB,
        collectors,
      };
    } finally {
      await exporter.stop();
    }
  } finally {
    await emulator.close();
  }
}
