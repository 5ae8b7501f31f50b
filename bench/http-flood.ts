// The HTTP surface under floods, with wrk (a child process, against 127.0.0.1 only, bounded in
// time): while it runs, the exporter's polls must stay on time and a legitimate scrape must
// still get through.
//
// scrape-flood: the demo (about 2,000 series, 255 KB of exposition) in a child process; wrk at
//   1,000 connections on /-/healthy, then on /metrics. Figures: /metrics requests/s as a share of
//   /-/healthy's, and how late the polls ran during the /metrics flood (from the exporter's debug
//   log: the gap between two starts of a collector's poll, less its interval).
// password-flood: the exporter with basic auth (bcrypt cost 10, as in real files) against the
//   emulator; wrk at 200 connections sending a wrong password, once the same one and once a new
//   one every request, while this process scrapes with the right password every 200 ms.
//   Figures: the legitimate scrapes' median latency, and the polls' lateness.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { parseDuration } from '../src/common/duration.js';
import { DEMO_POLL_INTERVALS } from '../src/demo.js';
import { createEmulator } from '../src/emulator/index.js';
import { NODE_FLAGS } from '../src/node-flags.js';
import { cliPath, ExporterProcess, repoRoot } from './exporter-process.js';
import { median, round, sampleProcess, sleep } from './measure.js';

const FLOOD_SECONDS = 10;
const SCRAPE_CONNECTIONS = 1_000;
const PASSWORD_CONNECTIONS = 200;
const LEGIT_EVERY_MS = 200;
const LEGIT_TIMEOUT_MS = 15_000;

// ---- wrk ---------------------------------------------------------------------------------------

export function wrkAvailable(): boolean {
  const probe = spawnSync('wrk', ['--version'], { stdio: 'ignore' });
  return (probe.error as { code?: string } | undefined)?.code !== 'ENOENT';
}

export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  /** Average latency, ms. */
  latencyAvgMs: number;
  /** Non-2xx/3xx answers. */
  non2xx: number;
  timeouts: number;
  /** connect/read/write errors. */
  socketErrors: number;
}

function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (match === null) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us'
    ? value / 1000
    : match[2] === 'ms'
      ? value
      : match[2] === 's'
        ? value * 1000
        : value * 60_000;
}

export function parseWrk(output: string): WrkResult {
  const number = (pattern: RegExp): number => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    requests: number(/(\d+) requests in/),
    latencyAvgMs: durationMs(/Latency\s+(\S+)/.exec(output)?.[1] ?? ''),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    timeouts: Number(errors?.[4] ?? 0),
    socketErrors: Number(errors?.[1] ?? 0) + Number(errors?.[2] ?? 0) + Number(errors?.[3] ?? 0),
  };
}

/** wrk for `seconds` against `url` (127.0.0.1 only); killed if it overruns. */
export async function runWrk(
  url: string,
  options: { connections: number; seconds: number; script?: string; headers?: string[] },
): Promise<WrkResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(url)) throw new Error(`wrk runs against 127.0.0.1 only, not ${url}`);
  const args = ['-t2', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s'];
  for (const header of options.headers ?? []) args.push('-H', header);
  if (options.script !== undefined) args.push('-s', options.script);
  args.push(url);
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), (options.seconds + 20) * 1000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${output.slice(-500)}`);
  return parseWrk(output);
}

// ---- poll lateness ------------------------------------------------------------------------------

interface PollRecord {
  collector: string;
  startedAt: number;
  endedAt: number;
}

/** Poll starts from the exporter's JSON debug log (`poll succeeded` / `poll failed ...` lines). */
export class PollWatch {
  readonly polls: PollRecord[] = [];
  missed = 0;

  line(text: string): void {
    if (!text.includes('"collector"')) return;
    if (text.includes('scheduled poll missed')) this.missed += 1;
    if (!text.includes('poll succeeded') && !text.includes('poll failed')) return;
    try {
      const entry = JSON.parse(text) as { collector?: string; time?: number | string; durationSeconds?: number };
      // pino writes epoch ms, or an ISO date with the exporter's timestamp setting.
      const time = typeof entry.time === 'string' ? Date.parse(entry.time) : entry.time;
      if (typeof entry.collector !== 'string' || time === undefined || !Number.isFinite(time)) return;
      this.polls.push({
        collector: entry.collector,
        startedAt: time - (entry.durationSeconds ?? 0) * 1000,
        endedAt: time,
      });
    } catch {
      // Not JSON: not a runner line.
    }
  }

  /**
   * The latest any poll started in [from, to], as a share of its collector's interval: how long
   * after both its due time (the previous start plus the interval) and the previous poll's end it
   * started. A collector whose poll outlasts its interval starts the next one when it ends (logs,
   * workflows) or skips a tick: that is the poll's duration, reported apart, not the scheduler
   * being late. A collector with no start left in the window counts up to `to`.
   */
  worstLateness(from: number, to: number, intervalsMs: ReadonlyMap<string, number>): PollLateness {
    let worst = { collector: '', lateMs: Number.NEGATIVE_INFINITY, ratio: Number.NEGATIVE_INFINITY };
    let longestPollMs = 0;
    for (const [collector, interval] of intervalsMs) {
      const polls = this.polls.filter((p) => p.collector === collector).sort((a, b) => a.startedAt - b.startedAt);
      const before = polls.filter((p) => p.startedAt < from).at(-1);
      const within = polls.filter((p) => p.startedAt >= from && p.startedAt <= to);
      const points = [...(before === undefined ? [] : [before]), ...within];
      if (points.length === 0)
        throw new Error(`no poll of ${collector} seen in the exporter's log: is it at debug level?`);
      for (const poll of within) longestPollMs = Math.max(longestPollMs, poll.endedAt - poll.startedAt);
      const lateness: number[] = [];
      for (let i = 1; i < points.length; i++)
        lateness.push(points[i]!.startedAt - Math.max(points[i - 1]!.startedAt + interval, points[i - 1]!.endedAt));
      const last = points.at(-1)!;
      lateness.push(to - Math.max(last.startedAt + interval, last.endedAt));
      for (const lateMs of lateness)
        if (lateMs / interval > worst.ratio) worst = { collector, lateMs, ratio: lateMs / interval };
    }
    // Early (before the due time) is on time.
    return {
      ...worst,
      lateMs: round(Math.max(0, worst.lateMs), 0),
      ratio: round(Math.max(0, worst.ratio), 2),
      longestPollMs: round(longestPollMs, 0),
    };
  }
}

export interface PollLateness {
  /** The collector of the latest poll. */
  collector: string;
  lateMs: number;
  /** lateMs over that collector's interval. */
  ratio: number;
  /** The longest poll that started in the window, ms. */
  longestPollMs: number;
}

function intervalsOf(spec: string): Map<string, number> {
  return new Map(
    spec.split(',').map((pair) => {
      const [name = '', duration = ''] = pair.split('=');
      return [name, parseDuration(duration)];
    }),
  );
}

/** Peak RSS of `pid` while `action` runs, MiB (sampled every 200 ms). */
async function peakRssDuring<T>(pid: number, action: () => Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, sampleProcess(pid)?.rss ?? 0);
  }, 200);
  try {
    const result = await action();
    return { result, peakMiB: round(peak / 1024 / 1024, 1) };
  } finally {
    clearInterval(timer);
  }
}

// ---- scrape flood -------------------------------------------------------------------------------

export interface ScrapeFloodResult {
  connections: number;
  seconds: number;
  exposition: { bytes: number; series: number };
  healthy: WrkResult;
  metrics: WrkResult;
  /** /metrics requests/s over /-/healthy's. */
  ratio: number;
  lateness: PollLateness;
  missedPolls: number;
  peakRssMiB: number;
  /** One /-/healthy request right after the /metrics flood ended, ms. */
  healthyAfterMs: number;
}

interface DemoChild {
  child: ChildProcess;
  url: string;
}

async function startDemo(onLine: (line: string) => void): Promise<DemoChild> {
  // With the exporter's V8 flags, as the shipped command line has them.
  const child = spawn(
    process.execPath,
    [
      ...NODE_FLAGS,
      cliPath(),
      'demo',
      '--listen-address',
      '127.0.0.1:0',
      '--emulator-address',
      '127.0.0.1:0',
      '--log-format',
      'json',
      '--log-level',
      'debug',
      '--state-file',
      'none',
    ],
    {
      cwd: repoRoot(),
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let buffer = '';
  let banner = '';
  const feed = (chunk: string): void => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (!line.startsWith('{')) banner += `${line}\n`;
      onLine(line);
    }
  };
  child.stdout.setEncoding('utf8').on('data', feed);
  child.stderr.setEncoding('utf8').on('data', feed);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /exporter metrics:\s+(http:\/\/\S+)\/metrics/.exec(banner);
    if (match !== null) return { child, url: `${match[1]}/` };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the demo did not start: ${banner.slice(-500)}`);
    }
    await sleep(100);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function measureScrapeFlood(log: (line: string) => void): Promise<ScrapeFloodResult> {
  const watch = new PollWatch();
  const demo = await startDemo((line) => watch.line(line));
  try {
    // Let every collector poll and the traffic fill the families.
    await sleep(15_000);
    const body = await (await fetch(new URL('metrics', demo.url))).text();
    const series = body.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
    log(
      `  demo: ${series} series, ${body.length} bytes; wrk -c${SCRAPE_CONNECTIONS} -d${FLOOD_SECONDS}s on /-/healthy, then /metrics`,
    );
    const healthy = await runWrk(new URL('-/healthy', demo.url).href, {
      connections: SCRAPE_CONNECTIONS,
      seconds: FLOOD_SECONDS,
    });
    await sleep(2_000);
    const missedBefore = watch.missed;
    const from = Date.now();
    const { result: metrics, peakMiB } = await peakRssDuring(demo.child.pid!, () =>
      runWrk(new URL('metrics', demo.url).href, { connections: SCRAPE_CONNECTIONS, seconds: FLOOD_SECONDS }),
    );
    const to = Date.now();
    const healthyStarted = performance.now();
    await (await fetch(new URL('-/healthy', demo.url), { signal: AbortSignal.timeout(30_000) })).text();
    const healthyAfterMs = round(performance.now() - healthyStarted, 1);
    // The last polls of the window are logged when they end.
    await sleep(2_000);
    return {
      connections: SCRAPE_CONNECTIONS,
      seconds: FLOOD_SECONDS,
      exposition: { bytes: body.length, series },
      healthy,
      metrics,
      ratio: round(metrics.requestsPerSecond / healthy.requestsPerSecond, 3),
      lateness: watch.worstLateness(from, to, intervalsOf(DEMO_POLL_INTERVALS)),
      missedPolls: watch.missed - missedBefore,
      peakRssMiB: peakMiB,
      healthyAfterMs,
    };
  } finally {
    await stopChild(demo.child);
  }
}

// ---- password flood -----------------------------------------------------------------------------

export interface PasswordFloodRun {
  kind: 'same wrong password' | 'new wrong password each request';
  wrk: WrkResult;
  legit: { scrapes: number; failed: number; medianMs: number; maxMs: number };
  lateness: PollLateness;
  missedPolls: number;
}

export interface PasswordFloodResult {
  connections: number;
  seconds: number;
  bcryptCost: number;
  runs: PasswordFloodRun[];
}

const USER = 'prometheus';
const PASSWORD = 'bench-right-password';
const BCRYPT_COST = 10;
const PASSWORD_POLL_INTERVAL = '2s';

/** A wrk script sending a new wrong password with every request (Lua has no base64: a small one). */
const DISTINCT_PASSWORDS_LUA = `
local alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
local function base64(data)
  return ((data:gsub('.', function(x)
    local r, b = '', x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and '1' or '0') end
    return r
  end) .. '0000'):gsub('%d%d%d?%d?%d?%d?', function(x)
    if #x < 6 then return '' end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == '1' and 2 ^ (6 - i) or 0) end
    return alphabet:sub(c + 1, c + 1)
  end) .. ({ '', '==', '=' })[#data % 3 + 1])
end
local counter = 0
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
local prefix = tostring(math.random(1, 1000000000))
request = function()
  counter = counter + 1
  local auth = 'Basic ' .. base64('${USER}:wrong-' .. prefix .. '-' .. counter)
  return wrk.format('GET', '/metrics', { ['Authorization'] = auth })
end
`;

async function legitScrapes(url: string, until: () => boolean): Promise<PasswordFloodRun['legit']> {
  const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const latencies: number[] = [];
  let failed = 0;
  while (!until()) {
    const started = performance.now();
    try {
      const response = await fetch(new URL('metrics', url), {
        headers: { authorization },
        signal: AbortSignal.timeout(LEGIT_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      if (response.status !== 200) failed += 1;
    } catch {
      failed += 1;
    }
    latencies.push(performance.now() - started);
    await sleep(LEGIT_EVERY_MS);
  }
  return {
    scrapes: latencies.length,
    failed,
    medianMs: round(median(latencies), 1),
    maxMs: round(Math.max(...latencies), 1),
  };
}

export async function measurePasswordFlood(log: (line: string) => void): Promise<PasswordFloodResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-password-flood-'));
  const emulator = await createEmulator({});
  const watch = new PollWatch();
  const webConfig = join(dir, 'web.yml');
  writeFileSync(webConfig, `basic_auth_users:\n  ${USER}: '${bcrypt.hashSync(PASSWORD, BCRYPT_COST)}'\n`);
  const script = join(dir, 'distinct.lua');
  writeFileSync(script, DISTINCT_PASSWORDS_LUA);
  const intervals = new Map(
    ['logs', 'schedules', 'queues', 'url_groups', 'dlq', 'flow_control', 'workflows'].map((name) => [
      name,
      parseDuration(PASSWORD_POLL_INTERVAL),
    ]),
  );
  const wrong = `Authorization: Basic ${Buffer.from(`${USER}:not-the-password`).toString('base64')}`;
  const runs: PasswordFloodRun[] = [];
  try {
    // A fresh exporter for each flood: what one flood left queued must not weigh on the next.
    for (const kind of ['same wrong password', 'new wrong password each request'] as const) {
      const exporter = await ExporterProcess.start({
        qstashUrl: emulator.url,
        token: emulator.credentials.token,
        stateFile: null,
        args: ['--web-config-file', webConfig, '--poll-interval', PASSWORD_POLL_INTERVAL, '--log-level', 'debug'],
        onLine: (line) => watch.line(line),
      });
      try {
        // The right password once before: its check is remembered, as for a Prometheus scraping already.
        const primed = await fetch(new URL('metrics', exporter.url), {
          headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
        });
        if (primed.status !== 200) throw new Error(`the right password got ${primed.status}`);
        await primed.arrayBuffer();
        await sleep(4_000);
        log(
          `  password flood, ${kind}: wrk -c${PASSWORD_CONNECTIONS} -d${FLOOD_SECONDS}s with legitimate scrapes every ${LEGIT_EVERY_MS} ms`,
        );
        const missedBefore = watch.missed;
        const from = Date.now();
        let flooding = true;
        const flood = runWrk(new URL('metrics', exporter.url).href, {
          connections: PASSWORD_CONNECTIONS,
          seconds: FLOOD_SECONDS,
          ...(kind === 'same wrong password' ? { headers: [wrong] } : { script }),
        }).finally(() => (flooding = false));
        await sleep(500);
        const legit = await legitScrapes(exporter.url, () => !flooding);
        const wrk = await flood;
        const to = Date.now();
        await sleep(3_000);
        runs.push({
          kind,
          wrk,
          legit,
          lateness: watch.worstLateness(from, to, intervals),
          missedPolls: watch.missed - missedBefore,
        });
      } finally {
        await exporter.stop();
        watch.polls.length = 0;
      }
    }
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { connections: PASSWORD_CONNECTIONS, seconds: FLOOD_SECONDS, bcryptCost: BCRYPT_COST, runs };
}
