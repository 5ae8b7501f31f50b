// The state file is never destroyed. The built exporter (dist/cli.js) in a child process:
// - a state file it cannot read or write (run as `nobody` through runuser against root's files, a
//   directory, a real read-only tmpfs) stops `run` before anything listens: exit 2, one line
//   naming the path and the cause, the file byte for byte as it was; check-config says the same;
// - a checkpoint that starts failing later (the state directory replaced by a file while it runs)
//   counts upstash_exporter_state_checkpoints_total{result="error"}, logs once, leaves the last
//   good file alone, and resumes when the directory is back;
// - a file replaced by someone else while it runs (another exporter on the same path) is not
//   overwritten.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { publish, startWorld, type World } from '../support/logs-helpers.js';
import { spawnExporter, type ExporterChild } from '../support/exporter-child.js';
import { otherUser } from '../support/run-as.js';
import { freePort } from '../support/prometheus.js';

const CLI = resolve('dist/cli.js');
const nobody = otherUser('state-file-refusal (as nobody)', 'nobody', [CLI, resolve('node_modules/pino/package.json')]);
const TOKEN = 'state-refusal-token';

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Connections the listen port accepted while the process ran. */
  answered: number;
}

/**
 * Runs the CLI (as `user` when given) and knocks on `port` every 20 ms until it exits: a process
 * that served anything, even for a moment, is seen.
 */
async function runCli(args: string[], options: { user?: string; port?: number; cwd?: string } = {}): Promise<Result> {
  const command =
    options.user === undefined
      ? [process.execPath, CLI, ...args]
      : ['runuser', '-u', options.user, '--', nobody.node, CLI, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd ?? '/',
    env: { PATH: process.env.PATH ?? '', QSTASH_TOKEN: TOKEN },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  let running = true;
  void exited.then(() => (running = false));
  let answered = 0;
  const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
  while (running && options.port !== undefined) {
    const port = options.port;
    answered += await new Promise<number>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(1);
      });
      socket.once('error', () => done(0));
    });
    await sleep(20);
  }
  const status = await exited;
  clearTimeout(timeout);
  return { status, stdout, stderr, answered };
}

/** Exit 2, nothing on stdout, exactly one line on stderr matching `line`, no stack trace. */
function expectOneLineExit2(result: Result, line: RegExp): void {
  expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  expect(result.stderr.trimEnd().split('\n'), result.stderr).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(line);
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A realistic checkpoint's bytes: a state file envelope around 340 KB of payload. */
function bigCheckpoint(): Buffer {
  const keys = Array.from({ length: 8000 }, (_, i) => `msg_${i.toString(36).padStart(8, '0')}-${'k'.repeat(24)}`);
  return Buffer.from(
    JSON.stringify({
      format: 'upstash-exporter-state',
      version: 3,
      upstream: 'sha256:0',
      savedAt: 1,
      payload: { dedup: keys },
    }),
  );
}

const dirs: string[] = [];
function tempDir(mode = 0o777): string {
  const dir = mkdtempSync(join(tmpdir(), 'upstash-state-refusal-'));
  chmodSync(dir, mode);
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(nobody.skip)(
  `a state file the exporter's user cannot read or write${nobody.skip ? ` (skipped: ${nobody.missing})` : ''}`,
  () => {
    beforeAll(() => nobody.ensure());

    it('root-owned, mode 0600, exporter as nobody: exit 2, one line with the path and the cause, nothing served, the file unchanged', async () => {
      const dir = tempDir();
      const path = join(dir, 'state.json');
      const bytes = bigCheckpoint();
      writeFileSync(path, bytes, { mode: 0o600 });
      const before = statSync(path);
      const port = await freePort();
      const result = await runCli(
        ['run', '--state-file', path, '--listen-address', `127.0.0.1:${port}`, '--qstash-url', 'http://127.0.0.1:9'],
        { user: 'nobody', port },
      );
      expectOneLineExit2(
        result,
        new RegExp(`^--state-file: the state file ${escape(path)} cannot be read \\(permission denied, EACCES\\); `),
      );
      expect(result.answered).toBe(0);
      expect(readFileSync(path).equals(bytes)).toBe(true);
      expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
      // check-config refuses it with the same line.
      const checked = await runCli(['check-config', '--state-file', path], { user: 'nobody' });
      expectOneLineExit2(checked, new RegExp(`^${escape(result.stderr.trimEnd())}$`));
    }, 30_000);

    it('a file nobody may read but not write, and a directory nobody may not create files in: exit 2, each cause named', async () => {
      const dir = tempDir();
      const readOnly = join(dir, 'state.json');
      writeFileSync(readOnly, bigCheckpoint(), { mode: 0o644 });
      const port = await freePort();
      const result = await runCli(['run', '--state-file', readOnly, '--listen-address', `127.0.0.1:${port}`], {
        user: 'nobody',
        port,
      });
      expectOneLineExit2(
        result,
        new RegExp(
          `^--state-file: the state file ${escape(readOnly)} cannot be written \\(permission denied, EACCES\\); `,
        ),
      );
      expect(result.answered).toBe(0);

      const closed = tempDir(0o755);
      const fresh = join(closed, 'state.json');
      const refused = await runCli(['run', '--state-file', fresh, '--listen-address', `127.0.0.1:${port}`], {
        user: 'nobody',
        port,
      });
      expectOneLineExit2(
        refused,
        new RegExp(
          `^--state-file: the directory ${escape(closed)} of the state file cannot take new files \\(permission denied, EACCES\\)`,
        ),
      );
      expect(existsSync(fresh)).toBe(false);
    }, 30_000);
  },
);

describe('a state file that is not a file', () => {
  it('--state-file naming a directory: exit 2, one line, from run and check-config alike', async () => {
    const dir = tempDir();
    const port = await freePort();
    const result = await runCli(['run', '--state-file', dir, '--listen-address', `127.0.0.1:${port}`], { port });
    expectOneLineExit2(result, new RegExp(`^--state-file: the state file ${escape(dir)} is a directory; `));
    expect(result.answered).toBe(0);
    expectOneLineExit2(
      await runCli(['check-config', '--state-file', dir]),
      new RegExp(`^${escape(result.stderr.trimEnd())}$`),
    );
  });
});

// A real read-only file system: a tmpfs mounted here, the checkpoint written, then remounted read-only.
const mountPoint = mkdtempSync(join(tmpdir(), 'upstash-state-rofs-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0777', 'tmpfs', mountPoint], {
  encoding: 'utf8',
});
const mountMissing =
  mounted.status === 0 ? null : `cannot mount a tmpfs (${(mounted.stderr || mounted.error?.message || '').trim()})`;
if (mountMissing !== null && process.env.CI !== 'true')
  console.warn(`state-file-refusal (read-only file system): skipped, ${mountMissing}`);
afterAll(() => {
  if (mountMissing === null) spawnSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

describe.skipIf(mountMissing !== null && process.env.CI !== 'true')('a state file on a read-only file system', () => {
  beforeAll(() => {
    if (mountMissing !== null) throw new Error(`CI=true: ${mountMissing}`);
  });

  it('exit 2 naming the read-only file system, nothing served, the file unchanged', async () => {
    const path = join(mountPoint, 'state.json');
    const bytes = bigCheckpoint();
    writeFileSync(path, bytes, { mode: 0o600 });
    const remount = spawnSync('mount', ['-o', 'remount,ro', mountPoint], { encoding: 'utf8' });
    expect(remount.status, remount.stderr).toBe(0);
    const port = await freePort();
    const result = await runCli(['run', '--state-file', path, '--listen-address', `127.0.0.1:${port}`], { port });
    expectOneLineExit2(
      result,
      new RegExp(
        `^--state-file: the state file ${escape(path)} cannot be written \\(read-only file system, EROFS\\); `,
      ),
    );
    expect(result.answered).toBe(0);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});

describe('a checkpoint that fails while the exporter runs', () => {
  let world: World;
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((done) => child.once('exit', () => done()));
        child.kill('SIGKILL');
        await exited;
      }
    }
    await world?.close();
  });

  async function startChild(stateFile: string): Promise<ExporterChild> {
    const args = [
      CLI,
      'run',
      '--listen-address',
      '127.0.0.1:0',
      '--qstash-url',
      world.emu.url,
      '--state-file',
      stateFile,
      '--poll-interval',
      'logs=1s',
      '--disable-collector',
      'schedules,queues,url_groups,dlq,flow_control,workflows',
      '--logs-ingestion-delay',
      '100ms',
    ];
    return spawnExporter(args, world.emu.credentials.token, children);
  }

  async function checkpoints(child: ExporterChild): Promise<{ success: number; error: number }> {
    const text = await (await fetch(`${child.url}/metrics`)).text();
    const value = (result: string): number =>
      Number(
        new RegExp(
          `^upstash_exporter_state_checkpoints_total\\{result="${result}",qstash_region="eu-central-1"\\} (\\S+)$`,
          'm',
        ).exec(text)?.[1] ?? Number.NaN,
      );
    return { success: value('success'), error: value('error') };
  }

  async function until<T>(
    what: string,
    read: () => Promise<T>,
    ok: (value: T) => boolean,
    timeoutMs = 15_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(value)})`);
      await sleep(100);
    }
  }

  it('counts result="error", logs once, leaves the last good file alone, and writes again once it can', async () => {
    world = await startWorld();
    const dir = join(world.stateDir, 'state');
    mkdirSync(dir);
    const path = join(dir, 'state.json');
    const child = await startChild(path);
    for (let i = 0; i < 5; i++) await publish(world.emu, `${world.ok.url}/n${i}`);
    await until(
      'a checkpoint',
      () => checkpoints(child),
      (c) => c.success >= 1,
    );

    // The state directory goes away under the running exporter; a file takes its place.
    const moved = join(world.stateDir, 'state.moved');
    renameSync(dir, moved);
    writeFileSync(dir, 'not a directory');
    const good = readFileSync(join(moved, 'state.json'));
    const failing = await until(
      'checkpoint errors',
      () => checkpoints(child),
      (c) => c.error >= 3,
    );
    expect(
      child
        .stderr()
        .split('\n')
        .filter((line) => line.includes('cannot write the state file')),
    ).toHaveLength(1);
    expect(readFileSync(join(moved, 'state.json')).equals(good)).toBe(true);

    // Back in place: the next checkpoint succeeds and holds the errors counted meanwhile.
    rmSync(dir);
    renameSync(moved, dir);
    await until(
      'a checkpoint again',
      () => checkpoints(child),
      (c) => c.success > failing.success,
    );
    await until(
      'the recovery log line',
      () => Promise.resolve(child.stderr()),
      (text) => text.includes('state file written again'),
    );
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { payload: { self: { checkpointsError: number } } };
    expect(saved.payload.self.checkpointsError).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('does not overwrite a state file someone else put in its place while it runs', async () => {
    world = await startWorld();
    const path = join(world.stateDir, 'state.json');
    const child = await startChild(path);
    for (let i = 0; i < 3; i++) await publish(world.emu, `${world.ok.url}/n${i}`);
    await until(
      'a checkpoint',
      () => checkpoints(child),
      (c) => c.success >= 1,
    );
    // Another exporter's (or a restored) checkpoint lands on the path, by rename as any writer does.
    const theirs = bigCheckpoint();
    writeFileSync(`${path}.incoming`, theirs);
    renameSync(`${path}.incoming`, path);
    await until(
      'checkpoint errors',
      () => checkpoints(child),
      (c) => c.error >= 2,
    );
    expect(readFileSync(path).equals(theirs)).toBe(true);
    expect(child.stderr()).toMatch(
      /cannot write the state file [^"]*state\.json: the file was replaced or changed by someone else/,
    );
    // Refused at every poll since, not once.
    const refused = await checkpoints(child);
    await until(
      'more checkpoint errors',
      () => checkpoints(child),
      (c) => c.error > refused.error,
    );
    expect((await checkpoints(child)).success).toBe(refused.success);
    expect(readFileSync(path).equals(theirs)).toBe(true);
  }, 60_000);
});
