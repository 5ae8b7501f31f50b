// Helpers of the collector and end-to-end tests: a text-exposition parser, a captured logger, an
// "eventually" loop, a small fixture HTTP server on 127.0.0.1 (for answers the emulator cannot
// give), and the whole stack: emulator in process + the real startExporter pointed at it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/index.js';
import { startExporter, type ExporterHandle } from '../../src/exporter.js';
import { createEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator/index.js';
import { createLogger, type Logger } from '../../src/logging/index.js';
import type { PollContext } from '../../src/collectors/collector.js';

// ---- exposition text -----------------------------------------------------------------------

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/y;

function unescapeLabel(text: string): string {
  return text.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  // prom-client writes NaN as `Nan`; Prometheus (Go's ParseFloat) reads any case.
  if (text.toLowerCase() === 'nan') return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

/** Parses text format 0.0.4 into families by name (histogram/summary samples by base name). */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let found = families.get(name);
    if (!found) {
      found = { name, help: '', type: 'untyped', samples: [] };
      families.set(name, found);
    }
    return found;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'HELP') family(meta[2]!).help = meta[3]!;
      else family(meta[2]!).type = meta[3]!;
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL_PAIR.lastIndex = 0;
    while (LABEL_PAIR.lastIndex < body.length) {
      const at = LABEL_PAIR.lastIndex;
      const pair = LABEL_PAIR.exec(body);
      if (!pair) throw new Error(`unparseable labels at ${at}: ${body}`);
      labels[pair[1]!] = unescapeLabel(pair[2]!);
    }
    const name = match[1]!;
    const base = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    let value: number;
    try {
      value = parseValue(match[3]!);
    } catch (error) {
      throw new Error(`${(error as Error).message} in line: ${line}`);
    }
    family(families.has(base) ? base : name).samples.push({ labels, value });
  }
  return families;
}

/** Canonical text of a label set, for comparing sets of series. */
export function labelKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

/** The value of the series with exactly these labels, or undefined. */
export function valueOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const key = labelKey(labels);
  return families.get(name)?.samples.find((s) => labelKey(s.labels) === key)?.value;
}

/**
 * The value of the series with exactly these labels apart from `qstash_region` (the tests that
 * use it run one region, whose name is not what they check), or undefined.
 */
export function regionValueOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const key = labelKey(labels);
  return families.get(name)?.samples.find(({ labels: { qstash_region: _region, ...rest } }) => labelKey(rest) === key)
    ?.value;
}

/**
 * The value of a collector's self metric (`upstash_exporter_collector_*`), whatever its
 * `qstash_region` (a region-scoped collector carries its region; the tests run one region).
 */
export function collectorValue(families: Map<string, Family>, name: string, collector: string): number | undefined {
  return families.get(name)?.samples.find((s) => s.labels.collector === collector)?.value;
}

/** Families of a collector registry, parsed from its own rendering (no HTTP). */
export async function familiesOf(registry: Registry): Promise<Map<string, Family>> {
  return parseExposition(await registry.metrics());
}

/** Every family a registry declares (samples or not), by name: its type and sorted label names. */
export function declaredFamilies(registry: Registry): Record<string, { type: string; labels: string[] }> {
  return Object.fromEntries(
    registry.getMetricsAsArray().map((metric) => {
      const m = metric as unknown as { name: string; type: string; labelNames: string[] };
      return [m.name, { type: m.type, labels: [...m.labelNames].sort() }];
    }),
  );
}

/** Declared families (FamilyRow data) in the shape declaredFamilies reads a registry into. */
export function familiesDeclaredAs(
  rows: readonly { name: string; type: string; labelNames: readonly string[] }[],
): Record<string, { type: string; labels: string[] }> {
  return Object.fromEntries(rows.map((row) => [row.name, { type: row.type, labels: [...row.labelNames].sort() }]));
}

// ---- logging, waiting -----------------------------------------------------------------------

export interface CapturedLogger {
  logger: Logger;
  text(): string;
  /** Parsed JSON lines. */
  lines(): Array<Record<string, unknown>>;
}

export function captureLogger(level: 'trace' | 'debug' | 'info' = 'trace'): CapturedLogger {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  // No `secrets` option on purpose: the logger's scrub must not be what keeps secrets out.
  const logger = createLogger({ level, format: 'json', destination });
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** A PollContext for calling a collector's poll() directly. */
export function pollContext(logger: Logger, signal: AbortSignal = new AbortController().signal): PollContext {
  return { signal, now: Date.now, logger };
}

/**
 * Runs `check` until it returns no problems (an empty list) or the time is up; then throws with
 * the problems of the last attempt. For values that move with time or polls.
 */
export async function eventually(
  check: () => Promise<string[]> | string[],
  timeoutMs = 8_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let problems: string[] = [];
  for (;;) {
    problems = await check();
    if (problems.length === 0) return;
    if (Date.now() > deadline) break;
    await sleep(intervalMs);
  }
  throw new Error(`still failing after ${timeoutMs} ms:\n  ${problems.slice(0, 30).join('\n  ')}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- fixture server ---------------------------------------------------------------------------

export interface FixtureReply {
  status?: number;
  body: unknown;
}

export interface FixtureServer {
  url: string;
  /** Path (without query) -> answer; change it between polls. */
  routes: Map<string, FixtureReply | (() => FixtureReply)>;
  /** Paths asked, with their query. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 answering JSON per path. Used only for upstream answers the
 * emulator cannot produce (unordered series points, mixed timestamp layouts, unknown states,
 * missing fields); everything else runs against the emulator.
 */
export async function startFixtureServer(): Promise<FixtureServer> {
  const routes = new Map<string, FixtureReply | (() => FixtureReply)>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    requests.push(`${url.pathname}${url.search}`);
    const route = routes.get(url.pathname);
    const reply = typeof route === 'function' ? route() : route;
    const status = reply?.status ?? (reply ? 200 : 404);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply ? reply.body : { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- the whole stack ---------------------------------------------------------------------------

export const CANARY = {
  token: 'canary-qstash-token-7f3e9a',
  email: 'canary-owner@example.test',
  apiKey: 'canary-management-key-c41d',
} as const;

const MANAGEMENT_PATH = /^\/v2\/(vector|search|qstash\/user|qstash\/stats|svc\/user|svc\/stats)/;

/**
 * The flags every in-process exporter of the tests starts with: a free loopback port, QStash at
 * `qstashUrl`, no state file, the logs collector off (its own suites own it), no retries.
 */
export function exporterTestArgs(qstashUrl: string, token: string): string[] {
  return [
    '--listen-address',
    '127.0.0.1:0',
    '--qstash-url',
    qstashUrl,
    '--qstash-token',
    token,
    '--state-file',
    'none',
    '--disable-collector',
    'logs',
    '--http-max-retries',
    '0',
  ];
}

export interface Stack {
  emulator: EmulatorHandle;
  exporter: ExporterHandle;
  log: CapturedLogger;
  /** GET on the exporter. */
  get(path: string): Promise<{ status: number; text: string }>;
  scrape(): Promise<Map<string, Family>>;
  /** JSON from the emulator: admin routes without auth, management routes with Basic, the rest with the token. */
  emulatorJson<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
  close(): Promise<void>;
}

export interface StackOptions {
  emulator?: Partial<EmulatorOptions>;
  /** Extra exporter flags (after the defaults, so they win). */
  args?: string[];
}

/**
 * Emulator in process, then the real startExporter with every collector of this suite polling
 * each second (logs off: another suite owns it), no retries, no state file.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  // The flow-control list is off by default (as the SDK); on here so every documented family is served.
  const emulator = await createEmulator({
    ...CANARY,
    ...options.emulator,
    knobs: { flowControlList: true, ...options.emulator?.knobs },
  });
  const config = loadConfig(
    [
      ...exporterTestArgs(emulator.url, CANARY.token),
      '--management-url',
      emulator.url,
      '--upstash-email',
      CANARY.email,
      '--upstash-api-key',
      CANARY.apiKey,
      '--poll-interval',
      '1s',
      ...(options.args ?? []),
    ],
    {},
  );
  const log = captureLogger('trace');
  let exporter: ExporterHandle;
  try {
    exporter = await startExporter(config, log.logger);
  } catch (error) {
    await emulator.close();
    throw error;
  }
  const get = async (path: string): Promise<{ status: number; text: string }> => {
    const response = await fetch(new URL(path, exporter.url));
    return { status: response.status, text: await response.text() };
  };
  return {
    emulator,
    exporter,
    log,
    get,
    scrape: async () => {
      const answer = await get('/metrics');
      if (answer.status !== 200) throw new Error(`/metrics answered ${answer.status}`);
      return parseExposition(answer.text);
    },
    emulatorJson: async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (MANAGEMENT_PATH.test(path)) {
        headers.authorization = `Basic ${Buffer.from(`${CANARY.email}:${CANARY.apiKey}`).toString('base64')}`;
      } else if (!path.startsWith('/__emulator/')) {
        headers.authorization = `Bearer ${CANARY.token}`;
      }
      const response = await fetch(new URL(path, emulator.url), {
        method: init.method ?? 'GET',
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text}`);
      return JSON.parse(text) as T;
    },
    close: async () => {
      await exporter.close();
      await emulator.close();
    },
  };
}

/**
 * Waits for a successful poll of `collector` that STARTED after `afterMs` (unix ms): its end
 * (last success) minus its duration, both from the self metrics of one scrape.
 */
export async function waitForPollAfter(
  stack: Stack,
  collector: string,
  afterMs: number,
  timeoutMs = 6_000,
): Promise<void> {
  await eventually(async () => {
    const families = await stack.scrape();
    const end = collectorValue(families, 'upstash_exporter_collector_last_success_timestamp_seconds', collector) ?? 0;
    const duration = collectorValue(families, 'upstash_exporter_collector_duration_seconds', collector) ?? 0;
    const success = collectorValue(families, 'upstash_exporter_collector_success', collector);
    const started = (end - duration) * 1000;
    return success === 1 && started > afterMs
      ? []
      : [`${collector}: last successful poll started at ${started}, not after ${afterMs}`];
  }, timeoutMs);
}
