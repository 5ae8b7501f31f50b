// The floor under the exporter's cost per event (bench/throughput.ts): a bare client, in its own
// process so its CPU is read from /proc like the exporter's, that reads the same kind of log with
// undici's Pool (the exporter's HTTP library) at a given request rate. Parallel chains (as many as
// the exporter's slices and connections) each walk a slice of the log newest first, following the
// cursor the log returns, and JSON.parse each page; nothing else (no schema, no counting, no
// metrics, no logging). Started with fork like the log server (bench/live-log.ts); the parent
// samples its CPU around the measured window, after a warm-up, while the client is paused.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { NODE_FLAGS } from '../src/node-flags.js';
import { round, sampleProcess, sleep } from './measure.js';

export interface BareClientOptions {
  url: string;
  token: string;
  /** The exporter's logs path (its default). */
  path: string;
  pageSize: number;
  requestsPerSecond: number;
  /** The measured window ends after this long, or after `maxPages` pages, whichever comes first. */
  seconds: number;
  maxPages: number | null;
  warmupSeconds: number;
  /** The log's time range the chains walk, slice after slice, starting over at its end. */
  from: number;
  to: number;
  /** Slices of this many milliseconds (a few pages each, so the cursor is followed). */
  sliceMs: number;
  chains: number;
}

export interface BareClientResult {
  requestsPerSecond: number;
  seconds: number;
  pages: number;
  entries: number;
  rateLimited: number;
  cpuMs: number;
  cpuMsPerThousandEntries: number;
}

interface Counts {
  pages: number;
  entries: number;
  rateLimited: number;
  seconds: number;
}

type ParentMessage = { type: 'measure' } | { type: 'exit' };
type ChildMessage = { type: 'warm' } | { type: 'done'; counts: Counts };

async function walk(pool: Pool, options: BareClientOptions, seconds: number, maxPages: number | null): Promise<Counts> {
  const counts: Counts = { pages: 0, entries: 0, rateLimited: 0, seconds: 0 };
  const periodMs = 1000 / options.requestsPerSecond;
  const started = Date.now();
  const end = started + seconds * 1000;
  let issued = 0;
  // Pages asked for (under way or read); a 429 gives its place back.
  let claimed = 0;
  let nextSlice = options.from;
  const takeSlice = (): { from: number; to: number } => {
    if (nextSlice + options.sliceMs - 1 > options.to) nextSlice = options.from;
    const slice = { from: nextSlice, to: nextSlice + options.sliceMs - 1 };
    nextSlice += options.sliceMs;
    return slice;
  };
  const authorization = `Bearer ${options.token}`;
  const chain = async (): Promise<void> => {
    let slice = takeSlice();
    let cursor: string | undefined;
    for (;;) {
      if (maxPages !== null && claimed >= maxPages) return;
      claimed += 1;
      // Request number n starts at started + n x period: the rate holds whatever the latency.
      const due = started + issued * periodMs;
      issued += 1;
      if (due >= end) return;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      const query = `count=${options.pageSize}&fromDate=${slice.from}&toDate=${slice.to}${cursor === undefined ? '' : `&cursor=${cursor}`}`;
      const response = await pool.request({
        path: `${options.path}?${query}`,
        method: 'GET',
        headers: { authorization },
      });
      const text = await response.body.text();
      if (response.statusCode === 429) {
        counts.rateLimited += 1;
        claimed -= 1;
        continue;
      }
      if (response.statusCode !== 200)
        throw new Error(`the log answered ${response.statusCode}: ${text.slice(0, 200)}`);
      const page = JSON.parse(text) as { logs?: unknown[]; cursor?: string };
      counts.pages += 1;
      counts.entries += page.logs?.length ?? 0;
      cursor = page.cursor;
      if (cursor === undefined) slice = takeSlice();
    }
  };
  await Promise.all(Array.from({ length: options.chains }, chain));
  counts.seconds = (Date.now() - started) / 1000;
  return counts;
}

async function runChild(options: BareClientOptions): Promise<void> {
  const pool = new Pool(options.url, { connections: options.chains });
  const send = (message: ChildMessage): void => void process.send?.(message);
  await walk(pool, options, options.warmupSeconds, null);
  const measure = new Promise<void>((resolve) =>
    process.once('message', (message: ParentMessage) => {
      if (message.type === 'measure') resolve();
    }),
  );
  send({ type: 'warm' });
  await measure;
  const counts = await walk(pool, options, options.seconds, options.maxPages);
  send({ type: 'done', counts });
  // The parent samples the CPU now, then asks this process to exit: an exit of its own writes
  // the profile that BENCH_BARE_CLIENT_NODE_ARGS="--cpu-prof ..." asked for (a kill would not).
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'exit') process.exit(0);
  });
}

/** Runs the bare client in a child process; its CPU over the measured window, from /proc. */
export async function measureBareClient(options: BareClientOptions): Promise<BareClientResult> {
  // The exporter's V8 flags, so the two differ by their code alone.
  const child = fork(fileURLToPath(import.meta.url), ['run', JSON.stringify(options)], {
    // BENCH_BARE_CLIENT_NODE_ARGS adds node flags (as BENCH_EXPORTER_NODE_ARGS does for the
    // exporter), e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to set its profile beside the exporter's.
    execArgv: [
      ...NODE_FLAGS,
      ...(process.env.BENCH_BARE_CLIENT_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const exited = new Promise<never>((_resolve, reject) =>
      child.once('exit', (code) => reject(new Error(`the bare client exited with ${code}`))),
    );
    exited.catch(() => undefined);
    const next = (type: ChildMessage['type']): Promise<ChildMessage> =>
      Promise.race([
        new Promise<ChildMessage>((resolve) => {
          const onMessage = (message: ChildMessage): void => {
            if (message.type !== type) return;
            child.off('message', onMessage);
            resolve(message);
          };
          child.on('message', onMessage);
        }),
        exited,
      ]);
    await next('warm');
    const cpuStart = sampleProcess(child.pid!)?.cpuMs ?? Number.NaN;
    child.send({ type: 'measure' } satisfies ParentMessage);
    const done = await next('done');
    const cpuMs = (sampleProcess(child.pid!)?.cpuMs ?? Number.NaN) - cpuStart;
    if (done.type !== 'done') throw new Error('unexpected message from the bare client');
    await exitOnRequest(child);
    const { pages, entries, rateLimited, seconds } = done.counts;
    return {
      requestsPerSecond: round((pages + rateLimited) / seconds, 1),
      seconds: round(seconds, 1),
      pages,
      entries,
      rateLimited,
      cpuMs: round(cpuMs, 0),
      cpuMsPerThousandEntries: entries > 0 ? round((cpuMs * 1000) / entries, 2) : Number.NaN,
    };
  } finally {
    child.kill('SIGKILL');
  }
}

/** Asks the child to exit on its own (so a profile it was started with is written); killed after 10 s. */
async function exitOnRequest(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ type: 'exit' } satisfies ParentMessage);
  await Promise.race([exited, sleep(10_000)]);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'run') {
  void runChild(JSON.parse(process.argv[3]!) as BareClientOptions).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
