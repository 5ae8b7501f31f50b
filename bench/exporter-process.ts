// The exporter as a child process, the way a user runs it (`node dist/cli.js run ...`), for the
// sustained-rate bench and the soak: start it, learn its URL from its first log line, scrape
// it, sample its memory and CPU from /proc, and kill it with SIGKILL at any moment.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseExposition, type Family } from '../test/support/exporter-e2e-helpers.js';
import { NODE_FLAGS } from '../src/node-flags.js';
import { sampleProcess, sleep, type ProcessSample } from './measure.js';
import { COLLECTOR_NAMES, COLLECTOR_NEEDS } from '../src/config/collector-catalogue.js';

/**
 * Flags that leave the logs collector alone among the QStash ones (the management ones are off
 * without credentials): the others would add their requests to the figures, and a bench's own
 * log server answers nothing but log reads.
 */
export const LOGS_ONLY_ARGS: readonly string[] = [
  '--disable-collector',
  COLLECTOR_NAMES.filter((name) => name !== 'logs' && COLLECTOR_NEEDS[name] === 'qstash').join(','),
];

/** The repository root, found from this file whether it runs compiled (tmp/bench/bench) or as TS. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bench', 'tsconfig.json'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error('cannot find the repository root (package.json next to bench/tsconfig.json)');
}

/** The exporter's CLI: dist/cli.js, or BENCH_EXPORTER_CLI (another build, e.g. the previous commit's, for a before/after). */
export function cliPath(): string {
  const path = process.env.BENCH_EXPORTER_CLI ?? join(repoRoot(), 'dist', 'cli.js');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
  return path;
}

/** A QStash region the exporter watches, given by the per-region flags (`--qstash-region-token <name>=<token>`). */
export interface ExporterRegion {
  name: string;
  url: string;
  token: string;
}

export interface ExporterProcessOptions {
  qstashUrl: string;
  token: string;
  /** Regions by name instead of qstashUrl and token (which are then not passed). */
  regions?: readonly ExporterRegion[];
  stateFile: string | null;
  /** Further flags, after the defaults (so they win). */
  args?: readonly string[];
  /** Every line the child writes (stdout and stderr), e.g. to keep the last ones for a report. */
  onLine?: (line: string) => void;
  startTimeoutMs?: number;
}

export class ExporterProcess {
  readonly child: ChildProcess;
  readonly url: string;
  #exited: Promise<number | null>;

  private constructor(child: ChildProcess, url: string, exited: Promise<number | null>) {
    this.child = child;
    this.url = url;
    this.#exited = exited;
  }

  /** Spawns the exporter on 127.0.0.1 (free port) and resolves once it listens. */
  static async start(options: ExporterProcessOptions): Promise<ExporterProcess> {
    // BENCH_EXPORTER_NODE_ARGS adds node flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (the
    // profile is written when the exporter exits on stop(), not on kill()).
    const nodeArgs = (process.env.BENCH_EXPORTER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
    const args = [
      ...NODE_FLAGS,
      ...nodeArgs,
      cliPath(),
      'run',
      '--listen-address',
      '127.0.0.1:0',
      ...qstashArgs(options),
      '--state-file',
      options.stateFile ?? 'none',
      '--log-format',
      'json',
      '--log-level',
      'info',
      ...(options.args ?? []),
    ];
    // A clean environment: settings come from the flags alone, not from the caller's variables.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' };
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    // BENCH_EXPORTER_OUTPUT: every line of every exporter child appended to that file, with its
    // pid (e.g. with BENCH_EXPORTER_NODE_ARGS=--trace-gc, the GC trace of each child).
    const outputFile = process.env.BENCH_EXPORTER_OUTPUT;
    const onLine =
      outputFile === undefined || outputFile === ''
        ? options.onLine
        : (line: string): void => {
            appendFileSync(outputFile, `${child.pid} ${line}\n`);
            options.onLine?.(line);
          };
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the exporter did not start listening in time')),
        options.startTimeoutMs ?? 30_000,
      );
      let buffer = '';
      const lastLines: string[] = [];
      const onData = (chunk: Buffer): void => {
        buffer += chunk.toString('utf8');
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          onLine?.(line);
          lastLines.push(line);
          if (lastLines.length > 5) lastLines.shift();
          const listening = /"url":"(http:\/\/127\.0\.0\.1:\d+\/)"/.exec(line);
          if (listening && line.includes('listening')) {
            clearTimeout(timer);
            resolveUrl(listening[1]!);
          }
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(
          new Error(
            `the exporter exited with ${code} before listening: ${[...lastLines, buffer].join(' | ').slice(0, 1000)}`,
          ),
        );
      });
    });
    return new ExporterProcess(child, url, exited);
  }

  get pid(): number {
    return this.child.pid!;
  }

  sample(): ProcessSample | undefined {
    return sampleProcess(this.pid);
  }

  async get(path: string, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
    const response = await fetch(new URL(path, this.url), { signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, text: await response.text() };
  }

  async scrape(): Promise<Map<string, Family>> {
    const answer = await this.get('/metrics');
    if (answer.status !== 200) throw new Error(`/metrics answered ${answer.status}`);
    return parseExposition(answer.text);
  }

  /** Waits until /readyz answers 200 (every collector succeeded once). */
  async ready(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        if ((await this.get('/readyz', 2_000)).status === 200) return;
      } catch {
        // Not answering yet.
      }
      if (Date.now() > deadline) throw new Error('the exporter did not become ready in time');
      await sleep(100);
    }
  }

  /** SIGKILL: no shutdown hook runs, the state file is whatever the last checkpoint wrote. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM and wait for the exit status (SIGKILL after `graceMs`). */
  async stop(graceMs = 15_000): Promise<number | null> {
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The flags naming the QStash upstream: one URL and token, or one pair per region. */
function qstashArgs(options: ExporterProcessOptions): string[] {
  if (options.regions === undefined) return ['--qstash-url', options.qstashUrl, '--qstash-token', options.token];
  return options.regions.flatMap((region) => [
    '--qstash-region-url',
    `${region.name}=${region.url}`,
    '--qstash-region-token',
    `${region.name}=${region.token}`,
  ]);
}

/** Sum of a family's samples whose labels match `where`. */
export function sumOf(families: Map<string, Family>, name: string, where: Record<string, string> = {}): number {
  let total = 0;
  for (const sample of families.get(name)?.samples ?? []) {
    if (Object.entries(where).every(([key, value]) => sample.labels[key] === value)) total += sample.value;
  }
  return total;
}
