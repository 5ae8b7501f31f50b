// A long wait the service asks for is honoured by every collector of that API (issue 39, item 4).
// The upstream is a real HTTP server on 127.0.0.1 answering every path with 429 and
// `Retry-After: 3600`; the exporter is the built one (dist/cli.js) with every QStash collector
// polling each second. Once the first 429 is in, the exporter sends nothing more to that API
// while its polls go on (and fail, saying why), shows until when on /metrics, and says it once
// in its log. With http.max_retry_after the user cuts the wait short, and only then.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawnExporter, type ExporterChild } from '../support/exporter-child.js';

const CLI = resolve('dist/cli.js');
const TOKEN = 'retry-after-gate-token';
const children: ChildProcessWithoutNullStreams[] = [];
const servers: Server[] = [];
const stateDir = mkdtempSync(join(tmpdir(), 'upstash-retry-after-'));

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }
  rmSync(join(stateDir, 'state.json'), { force: true });
});
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

/** Answers every request 429 with `Retry-After: 3600` and counts them. */
async function startLimitedUpstream(): Promise<{ url: string; requests: string[]; times: number[] }> {
  const requests: string[] = [];
  const times: number[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    times.push(Date.now());
    req.resume();
    res.writeHead(429, { 'retry-after': '3600', 'content-type': 'text/plain' }).end('Too many requests');
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, times };
}

async function metrics(child: ExporterChild): Promise<string> {
  return (await fetch(new URL('/metrics', child.url))).text();
}

function sumOf(text: string, family: string): number {
  return [...text.matchAll(new RegExp(`^${family}\\{[^}]*\\} (\\S+)$`, 'gm'))].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function start(upstream: string, extra: string[] = []): Promise<ExporterChild> {
  return spawnExporter(
    [
      CLI,
      'run',
      '--listen-address',
      '127.0.0.1:0',
      '--qstash-url',
      upstream,
      '--poll-interval',
      '1s',
      '--http-max-retries',
      '0',
      '--state-file',
      join(stateDir, 'state.json'),
      ...extra,
    ],
    TOKEN,
    children,
  );
}

describe('a 429 with Retry-After: 3600 to every path', () => {
  it('stops every collector of that API from calling it: no request in the following polls, until when on /metrics, said once', async () => {
    const upstream = await startLimitedUpstream();
    const startedAt = Date.now();
    const child = await start(upstream.url);
    await until('the gate on /metrics', async () =>
      /^upstash_exporter_rate_limit_blocked_until_seconds\{api="qstash"[^}]*\} [1-9]/m.test(await metrics(child)),
    );
    const text = await metrics(child);
    const blockedUntil = Number(
      /^upstash_exporter_rate_limit_blocked_until_seconds\{api="qstash"[^}]*\} (\S+)$/m.exec(text)?.[1],
    );
    expect(blockedUntil).toBeGreaterThan(startedAt / 1000 + 3590);
    expect(blockedUntil).toBeLessThan(Date.now() / 1000 + 3601);
    // Requests already under way when the first 429 came in may still arrive; none after them.
    await until(
      'the first failed polls',
      async () => sumOf(await metrics(child), 'upstash_exporter_collector_errors_total') >= 1,
    );
    const before = upstream.requests.length;
    const errorsBefore = sumOf(await metrics(child), 'upstash_exporter_collector_errors_total');
    // Polls go on, once a second for each collector, and each one fails without a request.
    await until(
      'many more polls',
      async () => sumOf(await metrics(child), 'upstash_exporter_collector_errors_total') >= errorsBefore + 20,
    );
    const after = upstream.requests.length;
    expect(after - before, `requests after the first 429: ${upstream.requests.slice(before).join(', ')}`).toBe(0);
    expect(before).toBeLessThanOrEqual(10);
    const warned = child
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"level":40') || line.includes('"level":"warn"'))
      .filter((line) => /429|rate.?limit|asks to wait/i.test(line));
    expect(warned, warned.join('\n')).toHaveLength(1);
    expect(warned[0]).toContain('no request to this API before');
  }, 60_000);

  it('with http.max_retry_after 2s the user cuts the wait short: requests go again after 2 s', async () => {
    const upstream = await startLimitedUpstream();
    const child = await start(upstream.url, ['--http-max-retry-after', '2s']);
    let blockedUntil = 0;
    await until('the gate on /metrics', async () => {
      const text = await metrics(child);
      blockedUntil = Number(
        /^upstash_exporter_rate_limit_blocked_until_seconds\{api="qstash"[^}]*\} (\S+)$/m.exec(text)?.[1],
      );
      return blockedUntil > 0;
    });
    // Cut to 2 s, not 3600.
    expect(blockedUntil).toBeLessThan(Date.now() / 1000 + 2.5);
    const gateSeenAt = Date.now();
    await until('requests again after the cut wait', () =>
      Promise.resolve(upstream.times.some((at) => at >= blockedUntil * 1000 - 100)),
    );
    // None between the first answers (requests already on their way then) and the end of the wait.
    const during = upstream.times.filter((at) => at > gateSeenAt + 500 && at < blockedUntil * 1000 - 100);
    expect(
      during,
      `gate seen ${gateSeenAt}, until ${blockedUntil * 1000}: ${upstream.times.map((at, i) => `${upstream.requests[i]}@${at}`).join(', ')}`,
    ).toEqual([]);
  }, 60_000);
});
