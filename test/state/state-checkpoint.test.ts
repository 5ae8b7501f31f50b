// The state file on a real file system: atomic writes (a process killed while writing never
// leaves a half file), corrupt, foreign and other-version files set aside, an unreadable path
// refused, no write over a file this process did not read or write, the upstream identity.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boundLabelValue } from '../../src/metrics/cardinality.js';
import { logsStateSchema, migrateLogsState } from '../../src/collectors/logs/logs-state.js';
import {
  CheckpointFile,
  CheckpointSection,
  STATE_VERSION,
  StateFileError,
  upstreamIdentity,
} from '../../src/state/index.js';
import { stateFileProblem } from '../../src/config/state-file-access.js';

const payloadSchema = z.strictObject({ watermark: z.number(), keys: z.array(z.string()) });
type Payload = z.infer<typeof payloadSchema>;

const UPSTREAM = upstreamIdentity('http://127.0.0.1:8080', 'token-one');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'upstash-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function file(path = join(dir, 'state.json'), upstream = UPSTREAM): CheckpointFile<Payload> {
  return new CheckpointFile({ path, upstream, schema: payloadSchema, now: () => 1_700_000_000_000 });
}

describe('state file', () => {
  it('writes and reads a file larger than its I/O buffers, with characters of every UTF-8 length across their edges', async () => {
    // Written and read through 64 KiB buffers (checkpoint-file.ts, IO_CHUNK_BYTES): 9 bytes a
    // repeat puts the buffers' edges inside characters of 2, 3 and 4 bytes.
    const state = file();
    const keys = [`x${'é€😀'.repeat(30_000)}`, '😀'.repeat(40_000), 'plain'];
    await state.save({ watermark: 1, keys });
    const envelope = {
      format: 'upstash-exporter-state',
      version: STATE_VERSION,
      upstream: UPSTREAM,
      savedAt: 1_700_000_000_000,
      payload: { watermark: 1, keys },
    };
    expect(await readFile(state.path, 'utf8')).toBe(JSON.stringify(envelope));
    expect(file().loadSync()).toEqual({
      status: 'loaded',
      payload: { watermark: 1, keys },
      savedAt: 1_700_000_000_000,
    });
  });

  it('round-trips a checkpoint, owner-only, without temp files or the token', async () => {
    const state = file();
    expect(state.loadSync()).toEqual({ status: 'missing' });
    await state.save({ watermark: 42, keys: ['a', 'b'] });
    await state.save({ watermark: 43, keys: ['c'] });
    expect(state.loadSync()).toEqual({
      status: 'loaded',
      payload: { watermark: 43, keys: ['c'] },
      savedAt: 1_700_000_000_000,
    });
    expect(await readdir(dir)).toEqual(['state.json']);
    expect(statSync(state.path).mode & 0o777).toBe(0o600);
    const text = await readFile(state.path, 'utf8');
    expect(text).not.toContain('token-one');
    expect(JSON.parse(text)).toMatchObject({
      format: 'upstash-exporter-state',
      version: STATE_VERSION,
      upstream: UPSTREAM,
    });
  });

  it('keeps the previous checkpoint when a write fails, and says why', async () => {
    const state = file();
    await state.save({ watermark: 1, keys: [] });
    // The next temporary file cannot be created: the directory is moved away and a file put in
    // its place (its name cannot be blocked in advance: it is random).
    await rename(dir, `${dir}.away`);
    await writeFile(dir, 'not a directory');
    const failure = await state.save({ watermark: 2, keys: [] }).catch((error: unknown) => error);
    await rm(dir);
    await rename(`${dir}.away`, dir);
    expect(failure).toBeInstanceOf(StateFileError);
    expect((failure as StateFileError).code).toBe('ERR_STATE_FILE');
    expect(state.loadSync()).toMatchObject({ status: 'loaded', payload: { watermark: 1 } });
    await expect(file(join(dir, 'missing-dir', 'state.json')).save({ watermark: 3, keys: [] })).rejects.toThrow(
      /cannot write the state file/,
    );
  });

  it('never leaves a half-written file when the writer is killed with SIGKILL', async () => {
    const module = resolve('dist/state/index.js');
    if (!existsSync(module)) throw new Error('dist/state/index.js is missing: run `npm run build` first');
    const path = join(dir, 'state.json');
    // A writer saving big checkpoints as fast as it can (the built module, as the exporter runs it).
    const script = `
      import { CheckpointFile, upstreamIdentity } from ${JSON.stringify(module)};
      import { z } from 'zod';
      const file = new CheckpointFile({ path: ${JSON.stringify(path)}, upstream: upstreamIdentity('http://127.0.0.1:8080', 'token-one'), schema: z.any() });
      const keys = Array.from({ length: 60000 }, (_, i) => 'key-' + i + '-' + 'x'.repeat(20));
      for (let round = 0; ; round++) { await file.save({ watermark: round, keys }); if (round === 0) process.stdout.write('first\\n'); }
    `;
    // Where a kill lands is up to the scheduler: keep killing (at varied moments) until at least
    // one kill has hit a write in progress, and check the file after every kill.
    let killedWhileWriting = 0;
    for (let attempt = 0; attempt < 16 && (attempt < 3 || killedWhileWriting === 0); attempt++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: resolve('.'),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((done) => child.stdout.once('data', () => done()));
      await new Promise((done) => setTimeout(done, 50 + (attempt % 5) * 70));
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      child.kill('SIGKILL');
      await exited;
      if ((await readdir(dir)).some((name) => name.includes('.tmp-'))) killedWhileWriting += 1;
      const loaded = file().loadSync();
      expect(loaded.status).toBe('loaded');
      if (loaded.status === 'loaded') expect(loaded.payload.keys).toHaveLength(60000);
      // The killed writer's temporary file is cleaned up by the next start.
      expect(await readdir(dir)).toEqual(['state.json']);
    }
    expect(killedWhileWriting).toBeGreaterThan(0);
  }, 30_000);

  it('sets aside a corrupt, foreign or other-version file and reports it', async () => {
    const path = join(dir, 'state.json');
    const cases: Array<[string, string, string]> = [
      ['{ "format": "upstash-exporter-state", "vers', 'corrupt', 'not JSON'],
      [
        '{"format":"something-else","version":1,"upstream":"x","savedAt":1,"payload":{}}',
        'corrupt',
        'not a state file',
      ],
      [
        JSON.stringify({
          format: 'upstash-exporter-state',
          version: STATE_VERSION,
          upstream: UPSTREAM,
          savedAt: 1,
          payload: { watermark: 'x', keys: [] },
        }),
        'corrupt',
        'invalid content (watermark',
      ],
      [
        JSON.stringify({
          format: 'upstash-exporter-state',
          version: STATE_VERSION,
          upstream: upstreamIdentity('http://127.0.0.1:8080', 'token-two'),
          savedAt: 1,
          payload: { watermark: 1, keys: [] },
        }),
        'foreign',
        'another QStash URL or token',
      ],
      [
        JSON.stringify({
          format: 'upstash-exporter-state',
          version: STATE_VERSION + 1,
          upstream: UPSTREAM,
          savedAt: 1,
          payload: {},
        }),
        'version',
        `format version ${STATE_VERSION + 1}`,
      ],
      // An older version without a migration (this reader has none) is set aside too.
      [
        JSON.stringify({
          format: 'upstash-exporter-state',
          version: 1,
          upstream: UPSTREAM,
          savedAt: 1,
          payload: { watermark: 1, keys: [] },
        }),
        'version',
        'format version 1',
      ],
    ];
    for (const [text, reason, detail] of cases) {
      await writeFile(path, text);
      const result = file().loadSync();
      expect(result).toMatchObject({ status: 'set-aside', reason });
      if (result.status !== 'set-aside') continue;
      expect(result.detail).toContain(detail);
      expect(result.movedTo).toBe(`${path}.${reason === 'foreign' ? 'foreign' : 'corrupt'}-1700000000000`);
      expect(existsSync(path)).toBe(false);
      expect(await readFile(result.movedTo, 'utf8')).toBe(text);
      await rm(result.movedTo);
    }
  });

  it('refuses a path it cannot read (here a directory) instead of starting fresh over it', async () => {
    const path = join(dir, 'state.json');
    await mkdir(path);
    const failure = (() => {
      try {
        return file(path).loadSync();
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(StateFileError);
    expect((failure as Error).message).toBe(`the state file ${path} is a directory`);
    expect(stateFileProblem(path)).toBe(`the state file ${path} is a directory`);
    expect(statSync(path).isDirectory()).toBe(true);
  });

  it('names nothing for a usable path, present or not', async () => {
    const path = join(dir, 'state.json');
    expect(stateFileProblem(path)).toBeNull();
    await writeFile(path, 'anything');
    expect(stateFileProblem(path)).toBeNull();
    expect(stateFileProblem(join(dir, 'missing-dir', 'state.json'))).toMatch(
      /^the directory .*missing-dir of the state file cannot take new files \(ENOENT\)/,
    );
  });

  it('refuses to start when a file to set aside cannot be renamed: its next write would replace it', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, 'not json at all');
    // The set-aside name is taken by a non-empty directory: the rename fails.
    await mkdir(join(dir, 'state.json.corrupt-1700000000000', 'inside'), { recursive: true });
    expect(() => file(path).loadSync()).toThrow(
      /^the state file .*state\.json cannot be used \(corrupt\) and cannot be renamed aside/,
    );
    expect(await readFile(path, 'utf8')).toBe('not json at all');
  });

  it('does not replace a file that appeared after it found none, nor one changed by another writer since its last write', async () => {
    const path = join(dir, 'state.json');
    const state = file(path);
    expect(state.loadSync()).toEqual({ status: 'missing' });
    // Someone else's checkpoint lands there while this process runs.
    const theirs = JSON.stringify({
      format: 'upstash-exporter-state',
      version: STATE_VERSION,
      upstream: UPSTREAM,
      savedAt: 1,
      payload: { watermark: 99, keys: ['x', 'y', 'z'] },
    });
    await writeFile(path, theirs);
    await expect(state.save({ watermark: 1, keys: [] })).rejects.toThrow(
      /a file appeared there after this process started/,
    );
    expect(await readFile(path, 'utf8')).toBe(theirs);

    // A process that read it writes over it as usual, until another writer replaces it.
    const reader = file(path);
    expect(reader.loadSync()).toMatchObject({ status: 'loaded', payload: { watermark: 99 } });
    await reader.save({ watermark: 100, keys: ['x', 'y', 'z'] });
    await reader.save({ watermark: 101, keys: ['x', 'y', 'z'] });
    const other = JSON.stringify({
      format: 'upstash-exporter-state',
      version: STATE_VERSION,
      upstream: UPSTREAM,
      savedAt: 2,
      payload: { watermark: 500, keys: [] },
    });
    await writeFile(`${path}.other`, other);
    await rename(`${path}.other`, path);
    await expect(reader.save({ watermark: 102, keys: [] })).rejects.toThrow(/replaced or changed by someone else/);
    expect(await readFile(path, 'utf8')).toBe(other);
    // Deleted by hand: nothing to lose, the next write goes through.
    await rm(path);
    await reader.save({ watermark: 103, keys: [] });
    expect(file(path).loadSync()).toMatchObject({ status: 'loaded', payload: { watermark: 103 } });
  });

  it('identifies the upstream by URL and token without revealing the token', () => {
    const a = upstreamIdentity('https://qstash.upstash.io', 'secret-token');
    expect(upstreamIdentity('https://QStash.upstash.io/', 'secret-token')).toBe(a);
    expect(upstreamIdentity('https://qstash.upstash.io', 'other-token')).not.toBe(a);
    expect(upstreamIdentity('https://qstash-eu.upstash.io', 'secret-token')).not.toBe(a);
    expect(a).toMatch(/^sha256:[0-9a-f]{32}$/);
    expect(a).not.toContain('secret');
  });

  it('upgrades a version 1 logs checkpoint: late events start at 0, long label values are bounded', async () => {
    const long = 'q'.repeat(10_240);
    const v1 = {
      watermark: 1_700_000_000_000,
      watermarkReadAt: 1_700_000_000_500,
      dedupFrom: 1_699_999_999_000,
      anchorTime: 1_700_000_000_000,
      lastEventTime: 1_700_000_000_000,
      sliceMs: 60_000,
      stateWalk: false,
      gapSince: null,
      rateEwma: null,
      slice: null,
      dedup: { keys: ['k1'], repeats: [] },
      counters: {
        events: {
          labelNames: ['state', 'queue'],
          series: [
            [['CREATED', long], 5],
            [['CREATED', 'short'], 2],
          ],
        },
        errors: { labelNames: ['reason', 'queue'], series: [] },
      },
      histograms: {
        duration: {
          labelNames: ['outcome', 'queue'],
          buckets: [1],
          series: [{ labels: ['delivered', long], counts: [1, 0], sum: 0.5, count: 1 }],
        },
        attempts: { labelNames: ['outcome', 'queue'], buckets: [1], series: [] },
      },
      tracker: { messages: [['msg_1', 1_700_000_000_000, 1, null, -1, long, 'example.com']], finished: [] },
      daily: { day: 19_675, count: 7 },
      self: { pages: 3, duplicates: 1, gaps: 0, evictions: 0, checkpointsSuccess: 4, checkpointsError: 0, folded: {} },
    };
    const path = join(dir, 'state.json');
    await writeFile(
      path,
      JSON.stringify({ format: 'upstash-exporter-state', version: 1, upstream: UPSTREAM, savedAt: 1, payload: v1 }),
    );
    const logs = new CheckpointFile({ path, upstream: UPSTREAM, schema: logsStateSchema, migrate: migrateLogsState });
    const result = logs.loadSync();
    if (result.status !== 'loaded') throw new Error(`not loaded: ${JSON.stringify(result)}`);
    const state = result.payload;
    expect(state.self).toEqual({ ...v1.self, late: 0, missedLate: 0, walkErrors: {} });
    expect(state.counters.events.series).toEqual([
      [['CREATED', boundLabelValue(long)], 5],
      [['CREATED', 'short'], 2],
    ]);
    expect(state.histograms.duration.series[0]!.labels).toEqual(['delivered', boundLabelValue(long)]);
    expect(state.tracker.messages[0]).toEqual([
      'msg_1',
      1_700_000_000_000,
      1,
      null,
      -1,
      boundLabelValue(long),
      'example.com',
    ]);
    expect(state.watermark).toBe(v1.watermark);
    // Written back in the current version, late events kept from then on.
    await logs.save({ ...state, self: { ...state.self, late: 9 } });
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      version: STATE_VERSION,
      payload: { self: { late: 9 } },
    });
    expect(migrateLogsState(STATE_VERSION + 1, v1)).toBeUndefined();
    expect(state.slices).toEqual([]);
  });

  it('upgrades a version 2 or 3 logs checkpoint: its slice in progress becomes the one slice of the list, cursor kept; no cold identities yet, the cold store complete from where the window starts', async () => {
    const slice = {
      from: 1_699_999_999_000,
      top: 1_700_000_060_000,
      startedAt: 1_700_000_075_000,
      atFrontier: true,
      basis: 1_700_000_000_000,
      hadAnchor: true,
      pages: 2,
      counted: 150,
      oldestCounted: 1_700_000_010_000,
      newestCounted: 1_700_000_059_000,
      sawBoundary: false,
      sawStateless: false,
      sawStateField: true,
      walks: [
        { state: null, resumeTo: 1_700_000_010_000, cursor: 'cursor-3', chainTo: 1_700_000_060_000, done: false },
      ],
    };
    const v2 = {
      watermark: 1_700_000_000_000,
      watermarkReadAt: 1_700_000_000_500,
      dedupFrom: 1_699_999_999_000,
      anchorTime: 1_700_000_000_000,
      lastEventTime: 1_700_000_059_000,
      sliceMs: 60_000,
      stateWalk: false,
      gapSince: null,
      rateEwma: 0.5,
      slice,
      dedup: { keys: ['k1'], repeats: [] },
      counters: {
        events: { labelNames: ['state'], series: [[['CREATED'], 5]] },
        errors: { labelNames: ['reason'], series: [] },
      },
      histograms: {
        duration: { labelNames: ['outcome'], buckets: [1], series: [] },
        attempts: { labelNames: ['outcome'], buckets: [1], series: [] },
      },
      tracker: { messages: [], finished: [] },
      daily: { day: 19_675, count: 7 },
      self: {
        pages: 3,
        duplicates: 1,
        gaps: 0,
        evictions: 0,
        checkpointsSuccess: 4,
        checkpointsError: 0,
        late: 2,
        missedLate: 0,
        walkErrors: {},
        folded: {},
      },
    };
    const path = join(dir, 'state-v2.json');
    const { slice: _one, ...v3 } = v2;
    const cases = [
      // version, payload, slices, the cold store's validFrom: the millisecond before the window (dedupFrom)
      [2, v2, [slice], v2.dedupFrom - 1],
      [2, { ...v2, slice: null }, [], v2.dedupFrom - 1],
      [3, { ...v3, slices: [slice] }, [slice], v2.dedupFrom - 1],
    ] as const;
    for (const [version, payload, slices, validFrom] of cases) {
      await writeFile(
        path,
        JSON.stringify({ format: 'upstash-exporter-state', version, upstream: UPSTREAM, savedAt: 1, payload }),
      );
      const logs = new CheckpointFile({ path, upstream: UPSTREAM, schema: logsStateSchema, migrate: migrateLogsState });
      const result = logs.loadSync();
      if (result.status !== 'loaded') throw new Error(`not loaded: ${JSON.stringify(result)}`);
      expect(result.payload.slices).toEqual(slices);
      expect(result.payload).not.toHaveProperty('slice');
      expect(result.payload.self).toEqual(v2.self);
      expect(result.payload.cold).toEqual({ validFrom, seconds: [] });
      await logs.save(result.payload);
      expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
        version: 4,
        payload: { slices, cold: { validFrom } },
      });
    }
    expect(STATE_VERSION).toBe(4);
  });
});

describe("a file shared with another collector's section", () => {
  it('holds each part as it was when saved, not as the live objects it came from became', async () => {
    // The logs payload holds the walk's live slices; a later write of the workflows section
    // serializes it again. Were the part kept by reference, that write would show slices read
    // further than the counters of the same payload: a restart would skip what they never counted.
    const path = join(dir, 'state.json');
    const owner = file(path);
    const section = new CheckpointSection({
      path,
      upstream: UPSTREAM,
      name: 'workflows',
      schema: z.object({ n: z.number() }),
    });
    const live: Payload = { watermark: 1, keys: ['a'] };
    await owner.save(live);
    live.watermark = 2;
    live.keys.push('b');
    await section.save({ n: 1 });
    const written = JSON.parse(await readFile(path, 'utf8')) as { payload: Payload & { workflows: { n: number } } };
    expect(written.payload).toEqual({ watermark: 1, keys: ['a'], workflows: { n: 1 } });
  });
});

describe("a file shared with another collector's section, after a restore", () => {
  it("holds the owner's part as loaded until the owner saves, however the loaded objects change", async () => {
    // The logs collector restores the walk's slices from the loaded payload and walks on with
    // them. Until its first checkpoint, a write of the workflows section carries the owner's part
    // as loaded: were that part the loaded object itself, the write would show the slices read
    // further than the counters beside them, and a SIGKILL then would skip what was never counted.
    const path = join(dir, 'state.json');
    // Written as a previous process left it (this process has not touched the path yet).
    await writeFile(
      path,
      JSON.stringify({
        format: 'upstash-exporter-state',
        version: STATE_VERSION,
        upstream: UPSTREAM,
        savedAt: 1,
        payload: { watermark: 1, keys: ['a'] },
      }),
    );
    const owner = file(path);
    const loaded = owner.loadSync();
    if (loaded.status !== 'loaded') throw new Error(`not loaded: ${loaded.status}`);
    loaded.payload.watermark = 2;
    loaded.payload.keys.push('b');
    await new CheckpointSection({
      path,
      upstream: UPSTREAM,
      name: 'workflows',
      schema: z.object({ n: z.number() }),
    }).save({ n: 1 });
    const written = JSON.parse(await readFile(path, 'utf8')) as { payload: Payload & { workflows: { n: number } } };
    expect(written.payload).toEqual({ watermark: 1, keys: ['a'], workflows: { n: 1 } });
  });
});
