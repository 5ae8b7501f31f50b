// The state file's temporary files cannot be turned against the exporter's host (issue 39, item 1).
// With the state file in a directory another user can write (a shared volume, a group-writable
// folder), a link planted under the name of the next temporary file used to make the exporter
// truncate and overwrite the file it points at: the name was `.<name>.tmp-<pid>-<n>`, guessable,
// and opened with 'w', which follows links. Now the name is random, the file is created
// exclusively (O_CREAT|O_EXCL|O_NOFOLLOW), and the clean-up of a crashed writer's leftovers removes
// only regular files of our pattern that our user owns.
// - in this process: links at every name the old scheme would use, and leftovers of each kind;
// - the built exporter (root) beside links planted by `nobody` through runuser (skipped with a
//   message when not root or without runuser; a failure under CI=true).
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CheckpointFile, upstreamIdentity } from '../../src/state/index.js';
import { spawnExporter } from '../support/exporter-child.js';
import { publish, startWorld, type World } from '../support/logs-helpers.js';
import { otherUser } from '../support/run-as.js';

const CLI = resolve('dist/cli.js');
const nobody = otherUser('state-temp-links (links planted by nobody)', 'nobody', [
  CLI,
  resolve('node_modules/pino/package.json'),
]);
const DECOY_TEXT = 'a file of root that no checkpoint may touch\n';
const UPSTREAM = upstreamIdentity('http://127.0.0.1:8080', 'token-one');
const schema = z.strictObject({ watermark: z.number() });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'upstash-temp-links-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function decoyIn(folder: string): string {
  const decoy = join(folder, 'decoy');
  writeFileSync(decoy, DECOY_TEXT, { mode: 0o644 });
  return decoy;
}

describe('the temporary file of a checkpoint', () => {
  it('never writes through a link planted at the name of a temporary file', async () => {
    const decoy = decoyIn(dir);
    const state = join(dir, 'state.json');
    // Every name the PID-and-counter scheme would use for this process's first writes, and a
    // dangling link (a link to a file not yet there would be created through).
    for (let n = 1; n <= 20; n++) symlinkSync(decoy, join(dir, `.state.json.tmp-${process.pid}-${n}`));
    const file = new CheckpointFile({ path: state, upstream: UPSTREAM, schema });
    for (let watermark = 1; watermark <= 5; watermark++) await file.save({ watermark });
    expect(readFileSync(decoy, 'utf8')).toBe(DECOY_TEXT);
    expect(lstatSync(state).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ payload: { watermark: 5 } });
    // The planted links are another's business: left as they are.
    expect(readlinkSync(join(dir, `.state.json.tmp-${process.pid}-1`))).toBe(decoy);
  });

  it('cleans up a crashed writer’s leftovers: only regular files of its pattern that its user owns', () => {
    const decoy = decoyIn(dir);
    const state = join(dir, 'state.json');
    const leftovers = [`.state.json.tmp-${'0a'.repeat(16)}`, `.state.json.tmp-4242-7`];
    for (const name of leftovers) writeFileSync(join(dir, name), 'half a checkpoint');
    const kept = {
      link: `.state.json.tmp-${'1b'.repeat(16)}`,
      otherName: '.state.json.tmp-notes',
      otherFile: '.other.json.tmp-1-1',
      otherUser: `.state.json.tmp-${'2c'.repeat(16)}`,
    };
    symlinkSync(decoy, join(dir, kept.link));
    writeFileSync(join(dir, kept.otherName), 'mine, not a temporary file');
    writeFileSync(join(dir, kept.otherFile), 'of another state file');
    writeFileSync(join(dir, kept.otherUser), 'of another user');
    const uid = process.geteuid?.();
    const chowned = uid === 0;
    // As root, the file can be given to nobody (65534); otherwise it is ours and goes.
    if (chowned) chownSync(join(dir, kept.otherUser), 65534, 65534);

    const result = new CheckpointFile({ path: state, upstream: UPSTREAM, schema }).loadSync();
    expect(result.status).toBe('missing');
    const left = readdirSync(dir).sort();
    for (const name of leftovers) expect(left).not.toContain(name);
    expect(left).toContain(kept.link);
    expect(left).toContain(kept.otherName);
    expect(left).toContain(kept.otherFile);
    if (chowned) expect(left).toContain(kept.otherUser);
    expect(readFileSync(decoy, 'utf8')).toBe(DECOY_TEXT);
  });
});

describe.skipIf(nobody.skip)(
  `links planted by another user beside a running exporter${nobody.skip ? ` (skipped: ${nobody.missing})` : ''}`,
  () => {
    let world: World | undefined;
    const children: ChildProcessWithoutNullStreams[] = [];
    beforeAll(() => nobody.ensure());
    afterEach(async () => {
      for (const child of children.splice(0)) {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((done) => child.once('exit', () => done()));
          child.kill('SIGKILL');
          await exited;
        }
      }
      await world?.close();
      world = undefined;
    });

    it('the exporter (root) keeps writing its checkpoints and never overwrites a root file that nobody linked', async () => {
      world = await startWorld();
      // A directory nobody can write (not sticky: the kernel's protected_symlinks would not
      // help there), holding the state file; the root-owned decoy beside it, 0644.
      chmodSync(dir, 0o755);
      const shared = join(dir, 'shared');
      mkdirSync(shared, { mode: 0o777 });
      chmodSync(shared, 0o777);
      const decoy = decoyIn(dir);
      const state = join(shared, 'state.json');
      const child = await spawnExporter(
        [
          CLI,
          'run',
          '--listen-address',
          '127.0.0.1:0',
          '--qstash-url',
          world.emu.url,
          '--state-file',
          state,
          '--poll-interval',
          'logs=1s',
          '--disable-collector',
          'schedules,queues,url_groups,dlq,flow_control,workflows',
          '--logs-ingestion-delay',
          '100ms',
        ],
        world.emu.credentials.token,
        children,
      );
      const pid = child.process.pid!;
      // nobody plants a link at every name the exporter could use for its next 300 writes.
      const planted = spawnSync(
        'runuser',
        [
          '-u',
          'nobody',
          '--',
          'sh',
          '-c',
          `for n in $(seq 1 300); do ln -s "$1" "$2/.state.json.tmp-${pid}-$n"; done`,
          'sh',
          decoy,
          shared,
        ],
        { encoding: 'utf8' },
      );
      expect(planted.status, planted.stderr).toBe(0);
      expect(lstatSync(join(shared, `.state.json.tmp-${pid}-1`)).uid).toBe(65534);

      let successes = 0;
      for (let i = 0; successes < 4; i++) {
        await publish(world.emu, `${world.ok.url}/n${i}`);
        const text = await (await fetch(`${child.url}/metrics`)).text();
        successes = Number(
          /^upstash_exporter_state_checkpoints_total\{result="success"[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0,
        );
        const errors = Number(
          /^upstash_exporter_state_checkpoints_total\{result="error"[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0,
        );
        expect(errors, child.stderr()).toBe(0);
        if (i > 300) throw new Error(`no 4 checkpoints after 300 rounds: ${child.stderr()}`);
        await sleep(100);
      }
      expect(readFileSync(decoy, 'utf8')).toBe(DECOY_TEXT);
      expect(lstatSync(decoy).uid).toBe(0);
      expect(lstatSync(state).isFile()).toBe(true);
      expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ format: 'upstash-exporter-state' });
    }, 60_000);
  },
);
