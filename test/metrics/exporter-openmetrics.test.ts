// OpenMetrics on /metrics: the exporter as a real child process (dist/cli.js) against the
// emulator, with the logs collector counting real traffic and a state file. Scraped with each
// Accept header: Content-Type, Vary, one `# EOF`, `_created` on counters and histograms only,
// exemplars (message ids) on the delivery latency buckets, the same series as text 0.0.4;
// promtool on each format; a real Prometheus 2.42 scraping with its default Accept (which prefers
// OpenMetrics) with exemplar storage on; created times identical after a restart on the same
// state file, and none (rather than a made-up one) for series of a file written without them.
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { canonicalNumber, renderFamily, type OpenMetricsValue } from '../../src/metrics/openmetrics.js';
import { negotiateFormat } from '../../src/server/negotiate.js';
import { sleep } from '../support/exporter-e2e-helpers.js';
import { publish, settle, startWorld, type World } from '../support/logs-helpers.js';
import { freePort, requireBinaries, startDaemon, type Daemon } from '../support/prometheus.js';
import { spawnExporter } from '../support/exporter-child.js';

const CLI = resolve('dist/cli.js');
/** What Prometheus 2.42 (Debian) sends, captured from /usr/bin/prometheus. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const OM_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const EVENTS = 'upstash_qstash_message_events_total';
const DURATION = 'upstash_qstash_message_duration_seconds';
const binaries = requireBinaries('exporter-openmetrics', ['prometheus', 'promtool']);

describe('Accept negotiation', () => {
  it.each([
    [undefined, 'text-0.0.4'],
    ['', 'text-0.0.4'],
    [PROMETHEUS_ACCEPT, 'openmetrics-1.0.0'],
    // Prometheus 2.5x-3.x: OpenMetrics preferred at q=0.5 over text.
    [
      'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'openmetrics-1.0.0',
    ],
    // Prometheus 3 (escaping parameter ignored: every name here is a classic one).
    [
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      'openmetrics-1.0.0',
    ],
    // Prometheus 3 with scrape_protocols: [PrometheusText0.0.4] only.
    ['text/plain;version=0.0.4;q=0.9,*/*;q=0.1', 'text-0.0.4'],
    ['application/openmetrics-text;version=0.0.1', 'openmetrics-0.0.1'],
    ['application/openmetrics-text', 'openmetrics-1.0.0'],
    ['Application/OpenMetrics-Text; Version="1.0.0"', 'openmetrics-1.0.0'],
    // A version we do not speak is skipped, the next range wins.
    ['application/openmetrics-text;version=2.0.0,text/plain;q=0.1', 'text-0.0.4'],
    ['text/plain;version=1.0.0;q=0.9,application/openmetrics-text;version=1.0.0;q=0.8', 'openmetrics-1.0.0'],
    // The scraper's weights decide, not our preference.
    ['text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5', 'text-0.0.4'],
    ['application/openmetrics-text;version=1.0.0;q=0,*/*', 'text-0.0.4'],
    ['application/json', 'text-0.0.4'],
    ['*/*', 'text-0.0.4'],
  ])('Accept %j -> %s', (accept, format) => {
    expect(negotiateFormat(accept, true)).toBe(format);
  });

  it('answers text 0.0.4 to everything when OpenMetrics is switched off', () => {
    expect(negotiateFormat(PROMETHEUS_ACCEPT, false)).toBe('text-0.0.4');
    expect(negotiateFormat('application/openmetrics-text;version=1.0.0', false)).toBe('text-0.0.4');
  });
});

describe('renderFamily (OpenMetrics text of one family)', () => {
  it('escapes label values and HELP, writes NaN and infinities the OpenMetrics way', () => {
    const text = renderFamily({
      name: 'upstash_test_ratio',
      help: 'a "quoted" help \\ with\nnewline',
      type: 'gauge',
      values: [
        { labels: { queue: 'a"b\\c\nd' }, value: Number.NaN },
        { labels: { queue: 'up' }, value: Infinity },
        { labels: { queue: 'down' }, value: -Infinity },
      ],
    });
    expect(text).toBe(
      [
        '# TYPE upstash_test_ratio gauge',
        '# HELP upstash_test_ratio a \\"quoted\\" help \\\\ with\\nnewline',
        'upstash_test_ratio{queue="a\\"b\\\\c\\nd"} NaN',
        'upstash_test_ratio{queue="up"} +Inf',
        'upstash_test_ratio{queue="down"} -Inf',
        '',
      ].join('\n'),
    );
  });

  it('names a counter family without _total, adds _created per series, and keeps a counter without _total as unknown', () => {
    const values = [
      { labels: { code: '200' }, value: 3, created: 1_700_000_000.5 },
      { labels: { code: '500' }, value: 1 },
    ];
    expect(
      renderFamily({ name: 'upstash_test_requests_total', help: 'h', type: 'counter', values }, () => 1_600_000_000),
    ).toBe(
      [
        '# TYPE upstash_test_requests counter',
        '# HELP upstash_test_requests h',
        'upstash_test_requests_total{code="200"} 3',
        'upstash_test_requests_created{code="200"} 1700000000.5',
        'upstash_test_requests_total{code="500"} 1',
        'upstash_test_requests_created{code="500"} 1600000000',
        '',
      ].join('\n'),
    );
    // No created time known: no _created line. A counter not named *_total keeps its sample name.
    expect(
      renderFamily({ name: 'upstash_test_odd', help: 'h', type: 'counter', values: [{ labels: {}, value: 1 }] }),
    ).toBe('# TYPE upstash_test_odd unknown\n# HELP upstash_test_odd h\nupstash_test_odd 1\n');
  });

  it('writes le values in the canonical form of the spec (its own examples)', () => {
    const render = (values: number[]): string => values.map(canonicalNumber).join(' ');
    expect(render([0, 0.001, 0.002, 0.01, 0.1, 0.9, 0.95, 0.99, 0.999, 1, 1.7, 10])).toBe(
      '0.0 0.001 0.002 0.01 0.1 0.9 0.95 0.99 0.999 1.0 1.7 10.0',
    );
    expect(render([1e-10, 1e-9, 1e-5, 0.0001, 0.1, 1, 100000, 1e6, 1e10])).toBe(
      '1e-10 1e-09 1e-05 0.0001 0.1 1.0 100000.0 1e+06 1e+10',
    );
    expect(render([86400, 1234567, -2.5, Infinity])).toBe('86400.0 1.234567e+06 -2.5 +Inf');
  });

  it('writes exemplars on buckets and drops one whose labels pass 128 characters', () => {
    const bucket = (le: number | string, value: number, messageId?: string): OpenMetricsValue => ({
      labels: { le },
      value,
      metricName: 'upstash_test_seconds_bucket',
      ...(messageId === undefined
        ? {}
        : { exemplar: { labelSet: { message_id: messageId }, value: 0.2, timestamp: 1_700_000_000.25 } }),
    });
    const text = renderFamily({
      name: 'upstash_test_seconds',
      help: 'h',
      type: 'histogram',
      values: [
        bucket(0.5, 1, 'msg_short'),
        bucket('+Inf', 1, `msg_${'x'.repeat(128 - 'message_id'.length - 3)}`),
        { labels: {}, value: 0.2, metricName: 'upstash_test_seconds_sum' },
        { labels: {}, value: 1, metricName: 'upstash_test_seconds_count', created: 1_699_999_999 },
      ],
    });
    expect(text.split('\n')).toEqual([
      '# TYPE upstash_test_seconds histogram',
      '# UNIT upstash_test_seconds seconds',
      '# HELP upstash_test_seconds h',
      'upstash_test_seconds_bucket{le="0.5"} 1 # {message_id="msg_short"} 0.2 1700000000.25',
      // 10 + 4 + 115 = 129 characters: over the limit, the exemplar is left out.
      'upstash_test_seconds_bucket{le="+Inf"} 1',
      'upstash_test_seconds_sum 0.2',
      'upstash_test_seconds_count 1',
      'upstash_test_seconds_created 1699999999',
      '',
    ]);
  });
});

// ---- the exporter as a child process -----------------------------------------------------------

interface Child {
  process: ChildProcessWithoutNullStreams;
  url: string;
  stderr: () => string;
}

const children: ChildProcessWithoutNullStreams[] = [];

async function startChild(world: World, stateFile: string, extra: string[] = []): Promise<Child> {
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
    'schedules',
    '--logs-ingestion-delay',
    '150ms',
    '--logs-overlap',
    '200ms',
    '--log-level',
    'info',
    ...extra,
  ];
  return spawnExporter(args, world.emu.credentials.token, children);
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null) return;
  const exited = new Promise<void>((done) => child.process.once('exit', () => done()));
  child.process.kill('SIGTERM');
  await exited;
}

interface Scrape {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Decompressed when the answer was gzip. */
  text: string;
}

/** node:http rather than fetch, which would decompress on its own and hide the encoding. */
function scrape(child: Child, accept?: string, init: { method?: string; gzip?: boolean } = {}): Promise<Scrape> {
  const headers: Record<string, string> = { 'accept-encoding': init.gzip ? 'gzip' : 'identity' };
  if (accept !== undefined) headers.accept = accept;
  return new Promise((done, fail) => {
    const req = request(`${child.url}/metrics`, { method: init.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text =
          res.headers['content-encoding'] === 'gzip' && body.length > 0
            ? gunzipSync(body).toString('utf8')
            : body.toString('utf8');
        done({ status: res.statusCode ?? 0, headers: res.headers, text });
      });
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

// ---- a small OpenMetrics reader (enough to check what we write) -------------------------------

interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
  exemplar?: { labels: Record<string, string>; value: number; timestamp: number | undefined };
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^}"]|"(?:[^"\\]|\\.)*")*\})? (\S+)(?: # (\{.*\}) (\S+)(?: (\S+))?)?$/;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text === undefined) return labels;
  for (const match of text.slice(1, -1).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
    labels[match[1]!] = match[2]!;
  return labels;
}

function samplesOf(text: string): { lines: Line[]; types: Map<string, string> } {
  const lines: Line[] = [];
  const types = new Map<string, string>();
  for (const raw of text.split('\n')) {
    if (raw === '' || raw.startsWith('# HELP') || raw.startsWith('# UNIT') || raw === '# EOF') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(raw);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const match = LINE.exec(raw);
    if (!match) throw new Error(`unreadable line: ${raw}`);
    const line: Line = { name: match[1]!, labels: labelsOf(match[2]), value: Number(match[3]!.replace('Nan', 'NaN')) };
    if (match[4] !== undefined)
      line.exemplar = {
        labels: labelsOf(match[4]),
        value: Number(match[5]),
        timestamp: match[6] === undefined ? undefined : Number(match[6]),
      };
    lines.push(line);
  }
  return { lines, types };
}

/** A series' identity; `le` as a number, since OpenMetrics writes `1.0` where text 0.0.4 writes `1`. */
const key = (line: { name: string; labels: Record<string, string> }): string =>
  `${line.name}{${Object.entries(line.labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${k === 'le' ? String(Number(v)) : v}`)
    .join(',')}}`;

function createdOf(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of samplesOf(text).lines)
    if (line.name === `${name}_created`) out.set(key({ name, labels: line.labels }), line.value);
  return out;
}

// ---- the suite ---------------------------------------------------------------------------------

describe('OpenMetrics exposition of the running exporter', () => {
  let world: World;
  let dir: string;
  let stateFile: string;
  let child: Child;
  let startedAt: number;

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
    world = await startWorld();
    dir = mkdtempSync(join(tmpdir(), 'upstash-openmetrics-'));
    stateFile = join(dir, 'state.json');
    startedAt = Date.now() / 1000;
    child = await startChild(world, stateFile);
    const jobs: Array<Promise<void>> = [];
    for (let i = 0; i < 8; i++) jobs.push(publish(world.emu, `${world.ok.url}/ok`));
    for (let i = 0; i < 2; i++) jobs.push(publish(world.emu, `${world.broken.url}/fail`, { retries: 0 }));
    await Promise.all(jobs);
    await settle(world.emu);
    // Until the delivered messages are in the latency histogram (published at a checkpoint).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { text } = await scrape(child, PROMETHEUS_ACCEPT);
      const delivered = samplesOf(text).lines.filter(
        (line) => line.name === `${DURATION}_count` && line.labels.outcome === 'delivered',
      );
      if (delivered.reduce((sum, line) => sum + line.value, 0) >= 8) break;
      if (Date.now() > deadline)
        throw new Error(
          `no delivered durations on /metrics:\n${text
            .split('\n')
            .filter((line) => line.includes('duration_seconds_count') || line.includes('DELIVERED'))
            .join('\n')
            .slice(0, 4000)}\n${child.stderr().slice(-2000)}`,
        );
      await sleep(200);
    }
  }, 60_000);

  afterAll(async () => {
    for (const process of children.splice(0))
      if (process.exitCode === null && process.signalCode === null) process.kill('SIGKILL');
    await world?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers each Accept header with its Content-Type, Vary: Accept and one # EOF for OpenMetrics', async () => {
    const plain = await scrape(child);
    expect(plain.headers['content-type']).toBe(TEXT_TYPE);
    expect(plain.headers.vary).toBe('Accept, Accept-Encoding');
    expect(plain.text).not.toContain('# EOF');
    expect(plain.text).not.toMatch(/_created[{ ]/);

    const om = await scrape(child, PROMETHEUS_ACCEPT);
    expect(om.headers['content-type']).toBe(OM_TYPE);
    expect(om.headers.vary).toBe('Accept, Accept-Encoding');
    expect(om.text.endsWith('\n# EOF\n')).toBe(true);
    expect(om.text.match(/^# EOF$/gm)).toHaveLength(1);

    const old = await scrape(child, 'application/openmetrics-text;version=0.0.1');
    expect(old.headers['content-type']).toBe('application/openmetrics-text; version=0.0.1; charset=utf-8');
    expect(old.text.endsWith('# EOF\n')).toBe(true);

    // gzip and HEAD work for both formats.
    for (const [accept, type] of [
      [undefined, TEXT_TYPE],
      [PROMETHEUS_ACCEPT, OM_TYPE],
    ] as const) {
      const zipped = await scrape(child, accept, { gzip: true });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers['content-type']).toBe(type);
      expect(zipped.text.endsWith(accept === undefined ? '\n' : '# EOF\n')).toBe(true);
      const head = await scrape(child, accept, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe(type);
      expect(head.text).toBe('');
    }
  });

  it('serves the same series in both formats, plus _created for counters and histograms only', async () => {
    // Each format is rendered once per poll generation and kept (src/server/exposition.ts): a
    // series that appeared between the two renders shows in one only, so both are read again
    // until they come from the same moment.
    let plain = samplesOf((await scrape(child)).text);
    let omText = (await scrape(child, PROMETHEUS_ACCEPT)).text;
    let om = samplesOf(omText);
    const withoutCreated = (lines: typeof om.lines): typeof om.lines =>
      lines.filter((line) => !line.name.endsWith('_created'));
    for (
      let attempt = 0;
      attempt < 10 && !sameItems(new Set(withoutCreated(om.lines).map(key)), new Set(plain.lines.map(key)));
      attempt++
    ) {
      await sleep(500);
      plain = samplesOf((await scrape(child)).text);
      omText = (await scrape(child, PROMETHEUS_ACCEPT)).text;
      om = samplesOf(omText);
    }
    const created = om.lines.filter((line) => line.name.endsWith('_created'));
    const rest = withoutCreated(om.lines);
    // Same sample names and label sets (values may move between the two scrapes), `le` apart:
    // canonical in OpenMetrics (`1.0`), as JavaScript writes it in text 0.0.4 (`1`).
    expect(new Set(rest.map(key))).toEqual(new Set(plain.lines.map(key)));
    const les = new Set(rest.filter((line) => line.labels.le !== undefined).map((line) => line.labels.le!));
    expect(les).toContain('1.0');
    expect(les).toContain('0.05');
    expect(les).toContain('86400.0');
    expect(plain.lines.some((line) => line.labels.le === '1')).toBe(true);

    // Each family once, and no sample name claimed by two families (a gauge `foo_created` next
    // to a counter `foo`, say: the spec forbids such clashes).
    const typeLines = omText.split('\n').filter((line) => line.startsWith('# TYPE '));
    expect(typeLines.length).toBe(om.types.size);
    const owner = new Map<string, string>();
    let family = '';
    for (const line of omText.split('\n')) {
      const type = /^# TYPE (\S+) /.exec(line);
      if (type) family = type[1]!;
      else if (line !== '' && !line.startsWith('#')) {
        const name = line.split(/[{ ]/)[0]!;
        expect([name, owner.get(name) ?? family]).toEqual([name, family]);
        expect(name.startsWith(family)).toBe(true);
        owner.set(name, family);
      }
    }
    // Every _created belongs to a counter or a histogram family, never a gauge.
    for (const line of created) {
      const family = line.name.slice(0, -'_created'.length);
      expect([line.name, om.types.get(family)]).toEqual([line.name, expect.stringMatching(/^(counter|histogram)$/)]);
      // Nothing of this exporter existed before the test started it.
      expect(line.value).toBeGreaterThanOrEqual(startedAt - 0.01);
      expect(line.value).toBeLessThanOrEqual(Date.now() / 1000);
    }
    for (const [family, type] of om.types)
      if (type === 'gauge') expect(om.lines.some((line) => line.name === `${family}_created`)).toBe(false);
    // UNIT metadata where the name ends in a base unit, a suffix of the family name as the spec wants.
    expect(omText).toContain(`# UNIT ${DURATION} seconds`);
    expect(omText).toContain('# UNIT process_cpu_seconds seconds');
    for (const [, name, unit] of omText.matchAll(/^# UNIT (\S+) (\S+)$/gm))
      expect(name!.endsWith(`_${unit!}`)).toBe(true);
    // Counter families are named without _total; their samples keep it.
    expect(om.types.get(EVENTS.replace(/_total$/, ''))).toBe('counter');

    // The families the brief names: the logs collector's counters and histogram, self-metrics counters.
    const events = rest.filter((line) => line.name === EVENTS);
    expect(events.length).toBeGreaterThan(0);
    expect(createdOf(omText, 'upstash_qstash_message_events').size).toBe(events.length);
    const durationCounts = rest.filter((line) => line.name === `${DURATION}_count`);
    expect(created.filter((line) => line.name === `${DURATION}_created`)).toHaveLength(durationCounts.length);
    const requests = rest.filter((line) => line.name === 'upstash_exporter_api_requests_total');
    expect(requests.length).toBeGreaterThan(0);
    expect(created.filter((line) => line.name === 'upstash_exporter_api_requests_created')).toHaveLength(
      requests.length,
    );
    const apiDurations = rest.filter((line) => line.name === 'upstash_exporter_api_request_duration_seconds_count');
    expect(apiDurations.length).toBeGreaterThan(0);
    expect(
      created.filter((line) => line.name === 'upstash_exporter_api_request_duration_seconds_created'),
    ).toHaveLength(apiDurations.length);
    // The self counters started with the process: created = its start (within the test's start).
    for (const line of created.filter((l) => l.name === 'upstash_exporter_api_requests_created'))
      expect(line.value).toBeGreaterThanOrEqual(startedAt - 1);
    // Continued from the checkpoint, so no created time: one would read as a reset.
    expect(created.some((line) => line.name === 'upstash_exporter_series_dropped_created')).toBe(false);
  });

  it('puts the message id as exemplar on the delivery latency buckets, in OpenMetrics only', async () => {
    const plainText = (await scrape(child)).text;
    expect(plainText).not.toContain('message_id');
    const om = samplesOf((await scrape(child, PROMETHEUS_ACCEPT)).text);
    const buckets = om.lines.filter((line) => line.name === `${DURATION}_bucket`);
    const withExemplar = buckets.filter((line) => line.exemplar !== undefined);
    expect(withExemplar.length).toBeGreaterThan(0);
    const bounds = [...new Set(buckets.map((line) => line.labels.le!))]
      .map((le) => (le === '+Inf' ? Infinity : Number(le)))
      .sort((a, b) => a - b);
    for (const line of withExemplar) {
      const exemplar = line.exemplar!;
      expect(Object.keys(exemplar.labels)).toEqual(['message_id']);
      expect(exemplar.labels.message_id).toMatch(/^msg_/);
      // The exemplar lies in its bucket: above the bound below, at or under its own.
      const le = line.labels.le === '+Inf' ? Infinity : Number(line.labels.le);
      const below = bounds[bounds.indexOf(le) - 1] ?? -Infinity;
      expect(exemplar.value).toBeLessThanOrEqual(le);
      expect(exemplar.value).toBeGreaterThan(below);
      expect(exemplar.timestamp).toBeGreaterThan(startedAt - 60);
    }
    // Never on a label, never elsewhere.
    expect(om.lines.some((line) => 'message_id' in line.labels)).toBe(false);
    expect(
      om.lines.filter((line) => line.exemplar !== undefined).every((line) => line.name === `${DURATION}_bucket`),
    ).toBe(true);
  });

  it('serves text 0.0.4 whatever the Accept header with --no-openmetrics', async () => {
    const plainOnly = await startChild(world, 'none', ['--no-openmetrics']);
    try {
      const answer = await scrape(plainOnly, PROMETHEUS_ACCEPT);
      expect(answer.headers['content-type']).toBe(TEXT_TYPE);
      expect(answer.headers.vary).toBe('Accept-Encoding');
      expect(answer.text).not.toContain('# EOF');
      expect(answer.text).not.toMatch(/_created[{ ]/);
    } finally {
      await stopChild(plainOnly);
    }
  });

  it.skipIf(binaries.skip)(`promtool checks each format${binaries.needs}`, async () => {
    binaries.ensure();
    const plain = (await scrape(child)).text;
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: plain, encoding: 'utf8' });
    // It parses; the only remarks are on three of prom-client's process defaults (gauges named
    // *_total), none on the exporter's own families.
    const remarks = `${lint.stdout}${lint.stderr}`.split('\n').filter((line) => line.trim() !== '');
    expect(
      remarks.filter(
        (line) =>
          !/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/.test(
            line,
          ),
      ),
    ).toEqual([]);

    // promtool 2.42's `check metrics` reads text 0.0.4 only (it stops at the first exemplar:
    // "expected integer as timestamp, got #"), so OpenMetrics goes through promtool's own
    // OpenMetrics parser instead: `tsdb create-blocks-from openmetrics` (backfill), which needs a
    // timestamp on every sample; one is added before any exemplar, nothing else changes.
    const om = (await scrape(child, PROMETHEUS_ACCEPT)).text;
    const refused = spawnSync('promtool', ['check', 'metrics'], { input: om, encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    const now = Math.floor(Date.now() / 1000);
    const stamped = om
      .split('\n')
      .map((line) =>
        line === '' || line.startsWith('#') ? line : line.replace(/^(\S+(?:\{.*?\})? \S+)( # .*)?$/, `$1 ${now}$2`),
      )
      .join('\n');
    const input = join(dir, 'scrape.om');
    writeFileSync(input, stamped);
    const backfill = spawnSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', input, join(dir, 'blocks')], {
      encoding: 'utf8',
    });
    expect(backfill.status, `${backfill.stdout}${backfill.stderr}`).toBe(0);
  });

  it.skipIf(binaries.skip)(
    `a real Prometheus 2.42 scrapes OpenMetrics with its default Accept, exemplars included${binaries.needs}`,
    async () => {
      binaries.ensure();
      const port = await freePort();
      const promDir = join(dir, 'prometheus');
      const target = child.url.replace('http://', '');
      writeFileSync(
        join(dir, 'prometheus.yml'),
        YAML.stringify({
          global: { scrape_interval: '1s' },
          scrape_configs: [{ job_name: 'upstash-exporter', static_configs: [{ targets: [target] }] }],
        }),
      );
      const prometheus: Daemon = startDaemon('prometheus', [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${promDir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--enable-feature=exemplar-storage',
      ]);
      const base = `http://127.0.0.1:${port}`;
      const query = async (
        promql: string,
      ): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> => {
        const body = (await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as {
          data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
        };
        return body.data.result;
      };
      try {
        const deadline = Date.now() + 30_000;
        let exemplars: Array<{
          seriesLabels: Record<string, string>;
          exemplars: Array<{ labels: Record<string, string> }>;
        }> = [];
        for (;;) {
          try {
            const targets = (await (await fetch(`${base}/api/v1/targets`)).json()) as {
              data: { activeTargets: Array<{ health: string; lastError: string }> };
            };
            const active = targets.data.activeTargets[0];
            if (active !== undefined && active.lastError !== '') throw new Error(`scrape failed: ${active.lastError}`);
            const up = await query('up');
            const events = await query(EVENTS);
            const start = Math.floor(Date.now() / 1000) - 120;
            const found = (await (
              await fetch(
                `${base}/api/v1/query_exemplars?query=${encodeURIComponent(`${DURATION}_bucket`)}&start=${start}&end=${start + 240}`,
              )
            ).json()) as { data: typeof exemplars };
            exemplars = found.data;
            if (up[0]?.value[1] === '1' && events.length > 0 && exemplars.length > 0) break;
          } catch (error) {
            if (error instanceof Error && error.message.startsWith('scrape failed')) throw error;
          }
          if (Date.now() > deadline || prometheus.child.exitCode !== null)
            throw new Error(`Prometheus did not ingest the exporter:\n${prometheus.output().slice(-3000)}`);
          await sleep(250);
        }
        expect(
          exemplars
            .flatMap((series) => series.exemplars)
            .every((exemplar) => /^msg_/.test(exemplar.labels.message_id ?? '')),
        ).toBe(true);
        // It negotiated OpenMetrics: 2.42 ingests `_created` as series of their own (created-timestamp
        // ingestion, which would use them instead, does not exist in 2.42).
        expect((await query('upstash_qstash_message_events_created')).length).toBeGreaterThan(0);
        expect(Number((await query('scrape_samples_scraped'))[0]?.value[1])).toBeGreaterThan(0);
        // Same series names as text 0.0.4: the counter keeps its _total name.
        expect((await query(`${EVENTS}{state="DELIVERED"}`)).length).toBeGreaterThan(0);
      } finally {
        await prometheus.stop();
      }
    },
    45_000,
  );

  it('keeps created times across a restart on the same state file; a file without them gives none', async () => {
    const beforeText = (await scrape(child, PROMETHEUS_ACCEPT)).text;
    const before = createdOf(beforeText, 'upstash_qstash_message_events');
    const beforeDuration = createdOf(beforeText, DURATION);
    const beforeRequests = Math.max(...createdOf(beforeText, 'upstash_exporter_api_requests').values());
    expect(before.size).toBeGreaterThan(0);
    expect(beforeDuration.size).toBeGreaterThan(0);
    await stopChild(child);
    const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as {
      payload: {
        counters: { events: { series: unknown[][] } };
        histograms: { duration: { series: Array<Record<string, unknown>> } };
      };
    };
    expect(saved.payload.counters.events.series.every((series) => typeof series[2] === 'number')).toBe(true);

    const restartedAt = Date.now() / 1000;
    child = await startChild(world, stateFile);
    // Until its first upstream request is on /metrics.
    let afterText = '';
    for (let i = 0; i < 100 && createdOf(afterText, 'upstash_exporter_api_requests').size === 0; i++) {
      afterText = (await scrape(child, PROMETHEUS_ACCEPT)).text;
      await sleep(50);
    }
    // Restored series: the same created times (the restart is not a reset)...
    expect(createdOf(afterText, 'upstash_qstash_message_events')).toEqual(before);
    expect(createdOf(afterText, DURATION)).toEqual(beforeDuration);
    // ...while the self counters, which really start again at 0, are created at the new start.
    const afterRequests = [...createdOf(afterText, 'upstash_exporter_api_requests').values()];
    expect(afterRequests.length).toBeGreaterThan(0);
    for (const created of afterRequests) expect(created).toBeGreaterThanOrEqual(restartedAt - 0.01);
    expect(Math.min(...afterRequests)).toBeGreaterThan(beforeRequests);
    await stopChild(child);

    // A state file of an exporter before created times: it loads (same version, no migration),
    // values continue, and the restored series show no _created.
    const older = JSON.parse(readFileSync(stateFile, 'utf8')) as typeof saved;
    for (const series of older.payload.counters.events.series) series.splice(2);
    for (const series of older.payload.histograms.duration.series) delete series.created;
    writeFileSync(stateFile, JSON.stringify(older));
    child = await startChild(world, stateFile);
    const om = (await scrape(child, PROMETHEUS_ACCEPT)).text;
    expect(createdOf(om, 'upstash_qstash_message_events').size).toBe(0);
    expect(createdOf(om, DURATION).size).toBe(0);
    const delivered = samplesOf(om).lines.filter((line) => line.name === EVENTS && line.labels.state === 'DELIVERED');
    expect(delivered.reduce((sum, line) => sum + line.value, 0)).toBeGreaterThanOrEqual(8);
    expect(child.stderr()).not.toMatch(/set aside|corrupt/i);
  }, 40_000);
});

function sameItems<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}
