// Helpers of the demo tests: the demo as users run it (`node dist/cli.js demo` in a child
// process, free ports, URLs read from its banner), and the families docs/metrics.md lists.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface DemoProcess {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:PORT/metrics */
  metricsUrl: string;
  /** Exporter base URL without trailing slash. */
  exporterUrl: string;
  emulatorUrl: string;
  /** The migration-mode environment the banner prints (QSTASH_REGION, <REGION>_QSTASH_URL, ...). */
  regionEnvironment: Record<string, string>;
  /** The state file the banner names, or null for none. */
  stateFile: string | null;
  stdout(): string;
  stderr(): string;
  /** Sends the signal and resolves with the exit status once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; durationMs: number }>;
}

/** The first group of `pattern` in `text`, or throws naming what was missing. */
function find(text: string, pattern: RegExp, what: string): string {
  const match = pattern.exec(text);
  if (!match?.[1]) throw new Error(`demo banner without ${what}:\n${text}`);
  return match[1];
}

/**
 * Starts `node dist/cli.js demo` on free ports (port 0 for exporter and emulator) and resolves once
 * its banner is printed. Build first: `npm test` runs `npm run build` as pretest.
 */
export async function startDemoProcess(
  extraArgs: string[] = [],
  timeoutMs = 15_000,
  /** Added to the child's environment (PATH only by default). */
  env: Record<string, string> = {},
): Promise<DemoProcess> {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const child = spawn(
    process.execPath,
    [
      CLI,
      'demo',
      '--listen-address',
      '127.0.0.1:0',
      '--emulator-address',
      '127.0.0.1:0',
      '--log-format',
      'json',
      '--log-level',
      'warn',
      ...extraArgs,
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const deadline = Date.now() + timeoutMs;
  while (!/state file:.*\n/.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`demo exited (${child.exitCode ?? child.signalCode}) before printing its URLs:\n${out}\n${err}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`demo printed no banner within ${timeoutMs} ms:\n${out}\n${err}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const metricsUrl = find(out, /exporter metrics:\s+(\S+)/, 'the metrics URL');
  const stateText = find(out, /state file:\s+(\S+)/, 'the state file');
  return {
    child,
    metricsUrl,
    exporterUrl: metricsUrl.replace(/\/metrics$/, ''),
    emulatorUrl: find(out, /emulator:\s+(\S+)/, 'the emulator URL'),
    regionEnvironment: Object.fromEntries(
      [...out.matchAll(/^\s+((?:QSTASH_REGION|[A-Z0-9_]+_QSTASH_[A-Z_]+|UPSTASH_EMAIL|UPSTASH_API_KEY))=(\S+)$/gm)]
        .filter((match) => match[1] !== 'QSTASH_TOKEN')
        .map((match) => [match[1]!, match[2]!]),
    ),
    stateFile: stateText === 'none' ? null : stateText,
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = 'SIGINT') => {
      const started = Date.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const result = await exited;
      return { ...result, durationMs: Date.now() - started };
    },
  };
}

/** Every family docs/metrics.md lists in its tables (`| \`name\` ...` or `| \`name{labels}\` ...`). */
export function documentedFamilyNames(
  text: string = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8'),
): string[] {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const row = /^\|\s*`(upstash_[a-z0-9_]+)(?:\{[^`]*\})?`\s*\|/.exec(line);
    if (row) names.add(row[1]!);
  }
  return [...names];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
