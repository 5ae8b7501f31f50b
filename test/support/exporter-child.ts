// The built exporter (dist/cli.js) as a child process: started with the given arguments and the
// QStash token in its environment only, it resolves once the exporter logs the URL it listens on.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ExporterChild {
  process: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything the exporter wrote to stderr (its JSON log) so far. */
  stderr(): string;
}

/**
 * `args` start with the CLI path; `children` collects the process for the test's clean-up; `env`
 * adds to the child's environment (e.g. LD_PRELOAD of libfaketime, or the regions' variables of
 * the SDKs' migration mode with `qstashToken` null).
 */
export async function spawnExporter(
  args: readonly string[],
  qstashToken: string | null,
  children: ChildProcessWithoutNullStreams[],
  env: Record<string, string> = {},
): Promise<ExporterChild> {
  const child = spawn(process.execPath, [...args], {
    env: { PATH: process.env.PATH ?? '', ...(qstashToken === null ? {} : { QSTASH_TOKEN: qstashToken }), ...env },
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/?"/.exec(stderr);
    if (match) return { process: child, url: match[1]!, stderr: () => stderr };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`exporter did not start: ${stderr}`);
    await sleep(20);
  }
}
