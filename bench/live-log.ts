// A synthetic live delivery log for the throughput benches (bench/throughput.ts), served by a
// child process: entries appear at a set rate (entry k at startAt + floor(k * 1000 / rate) ms,
// visible once that time has come, none after endAt), computed on demand, so an hour of 1,000
// events a second costs no memory. It answers GET /v2/events like the emulator: newest first,
// inclusive fromDate/toDate, a cursor that marks a position, pages of at most `maxPageSize`, the
// emulator's one-second burst limit announced on every answer (Burst-RateLimit-Limit, -Remaining,
// -Reset; 429 above it) and a fixed latency before each answer. Entries are those of a message
// delivered at once: CREATED, ACTIVE, DELIVERED (messages k / 3).
//
// The emulator itself could not be used at these rates: publishing 5,000 events a second through
// it (1,700 messages a second, each delivered over HTTP) takes both cores of the bench machine.
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface LiveLogOptions {
  ratePerSecond: number;
  startAt: number;
  /** No entry after this time (null: the log goes on). */
  endAt: number | null;
  rateLimitPerSecond: number;
  latencyMs: number;
  maxPageSize: number;
}

const STATES = ['CREATED', 'ACTIVE', 'DELIVERED'] as const;

/** Arithmetic of the entries' times. */
export class LiveLogTimes {
  constructor(readonly options: Pick<LiveLogOptions, 'ratePerSecond' | 'startAt' | 'endAt'>) {}

  timeOf(k: number): number {
    return this.options.startAt + Math.floor((k * 1000) / this.options.ratePerSecond);
  }

  /** The last entry at or before `time` (-1: none). */
  lastAtOrBefore(time: number): number {
    const end = this.options.endAt === null ? time : Math.min(time, this.options.endAt);
    if (end < this.options.startAt) return -1;
    let k = Math.floor(((end - this.options.startAt + 1) * this.options.ratePerSecond) / 1000);
    while (k >= 0 && this.timeOf(k) > end) k -= 1;
    while (this.timeOf(k + 1) <= end) k += 1;
    return k;
  }

  /** The first entry at or after `time`. */
  firstAtOrAfter(time: number): number {
    if (time <= this.options.startAt) return 0;
    let k = Math.max(0, Math.floor(((time - this.options.startAt) * this.options.ratePerSecond) / 1000) - 1);
    while (this.timeOf(k) < time) k += 1;
    while (k > 0 && this.timeOf(k - 1) >= time) k -= 1;
    return k;
  }

  /** Entries with a time in [from, to]. */
  countBetween(from: number, to: number): number {
    const last = this.lastAtOrBefore(to);
    const first = this.firstAtOrAfter(from);
    return Math.max(0, last - first + 1);
  }
}

function entryJson(k: number, time: number): string {
  const message = Math.floor(k / 3);
  const state = STATES[k % 3]!;
  const status = state === 'DELIVERED' ? ',"responseStatus":200' : '';
  return `{"time":${time},"messageId":"msg_${message.toString(36)}","state":"${state}","url":"https://app${message % 7}.example.com/hook","method":"POST"${status}}`;
}

function serve(options: LiveLogOptions): void {
  const times = new LiveLogTimes(options);
  const window = { second: 0, used: 0 };
  const server = createServer((req, res) => {
    req.resume();
    setTimeout(() => {
      const second = Math.floor(Date.now() / 1000);
      if (second !== window.second) {
        window.second = second;
        window.used = 0;
      }
      window.used += 1;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (options.rateLimitPerSecond > 0) {
        headers['burst-ratelimit-limit'] = String(options.rateLimitPerSecond);
        headers['burst-ratelimit-remaining'] = String(Math.max(0, options.rateLimitPerSecond - window.used));
        headers['burst-ratelimit-reset'] = String(second + 1);
        if (window.used > options.rateLimitPerSecond) {
          res.writeHead(429, headers);
          res.end('{"error":"Exceeded burst rate limit"}');
          return;
        }
      }
      const url = new URL(req.url ?? '/', 'http://log');
      const number = (name: string): number | null => {
        const text = url.searchParams.get(name);
        return text === null || text === '' ? null : Number(text);
      };
      const count = Math.max(1, Math.min(options.maxPageSize, number('count') ?? 10));
      const to = Math.min(number('toDate') ?? Number.MAX_SAFE_INTEGER, Date.now());
      const from = number('fromDate') ?? 0;
      const cursor = number('cursor');
      const high = Math.min(times.lastAtOrBefore(to), cursor ?? Number.MAX_SAFE_INTEGER);
      const low = times.firstAtOrAfter(from);
      const parts: string[] = [];
      let k = high;
      for (; k >= low && parts.length < count; k--) parts.push(entryJson(k, times.timeOf(k)));
      const next = k >= low && parts.length > 0 ? `,"cursor":"${k}"` : '';
      res.writeHead(200, headers);
      res.end(`{"logs":[${parts.join(',')}]${next}}`);
    }, options.latencyMs);
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
}

export interface LiveLog {
  url: string;
  times: LiveLogTimes;
  child: ChildProcess;
  stop(): void;
}

/** Starts the log in a child process (its CPU is not the exporter's nor the bench's). */
export async function startLiveLog(options: LiveLogOptions): Promise<LiveLog> {
  const child = fork(fileURLToPath(import.meta.url), ['serve', JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { port: number }));
    child.once('exit', (code) => reject(new Error(`live log server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${ready.port}`,
    times: new LiveLogTimes(options),
    child,
    stop: () => child.kill('SIGKILL'),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'serve') {
  serve(JSON.parse(process.argv[3]!) as LiveLogOptions);
}
