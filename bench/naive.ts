// The exporter against the poller a user would script (bench/naive-poller.ts: every cycle
// re-reads the whole retained log), side by side on the same emulator and the same traffic:
// requests per second and per thousand new events, CPU time of each process per thousand
// events (from /proc), and how much of the ground truth each one reports at the end.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmulator } from '../src/emulator/index.js';
import { sumOf } from './exporter-process.js';
import { round, sampleProcess, seededRandom, sleep } from './measure.js';
import { DEFAULT_SUSTAINED, startLogsExporter, waitForQuiet } from './sustained.js';
import { Publisher, startDestinations } from './traffic.js';

export interface NaiveOptions {
  eventsPerSecond: number;
  seconds: number;
  latencyMs: number;
  retention: number;
  pollIntervalMs: number;
  ingestionDelayMs: number;
  overlapMs: number;
}

export const DEFAULT_NAIVE: NaiveOptions = {
  eventsPerSecond: 400,
  seconds: 30,
  latencyMs: 50,
  retention: 10_000,
  pollIntervalMs: 5_000,
  ingestionDelayMs: 2_000,
  overlapMs: DEFAULT_SUSTAINED.overlapMs,
};

export interface PollerFigures {
  requests: number;
  requestsPerSecond: number;
  requestsPerThousandEvents: number;
  cpuMs: number;
  cpuMsPerThousandEvents: number;
  /** Events it reports at the end. */
  reported: number;
  /** reported / ground truth. */
  reportedShare: number;
}

export interface NaiveComparison {
  settings: NaiveOptions;
  groundTruth: number;
  seconds: number;
  exporter: PollerFigures & { gapsReported: number; caughtUp: boolean };
  naive: PollerFigures & { cycles: number; longestCycleMs: number };
  /** naive / exporter. */
  requestsRatio: number;
  cpuRatio: number;
}

interface NaiveLine {
  cycle: number;
  ms: number;
  pages?: number;
  entries?: number;
  error?: string;
}

export async function compareWithNaivePoller(partial: Partial<NaiveOptions> = {}): Promise<NaiveComparison> {
  const options = { ...DEFAULT_NAIVE, ...partial };
  const destinations = await startDestinations();
  const emulator = await createEmulator({
    knobs: { latencyMs: options.latencyMs, logRetention: options.retention, faultScope: ['logs'] },
  });
  const exporter = await startLogsExporter(emulator, options);
  const script = join(dirname(fileURLToPath(import.meta.url)), 'naive-poller.js');
  const naive = spawn(
    process.execPath,
    [script, emulator.url, emulator.credentials.token, String(options.pollIntervalMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: NaiveLine[] = [];
  let buffer = '';
  naive.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line) as NaiveLine);
    }
  });
  const publisher = new Publisher({
    emulatorUrl: emulator.url,
    token: emulator.credentials.token,
    kinds: [{ path: `/v2/publish/${destinations.ok}/naive`, weight: 1 }],
    random: seededRandom(11),
    maxInFlight: 128,
  });
  try {
    await exporter.ready();
    while (lines.length === 0) await sleep(50);
    const exporterBefore = sampleProcess(exporter.pid)!;
    const naiveBefore = sampleProcess(naive.pid!)!;
    const requestsBefore = sumOf(await exporter.scrape(), 'upstash_exporter_api_requests_total', {
      endpoint: '/v2/events',
    });
    const linesBefore = lines.length;
    const started = Date.now();

    publisher.start(options.eventsPerSecond / 3);
    await sleep(options.seconds * 1000);
    await publisher.stop();
    await waitForQuiet(emulator);
    const ended = Date.now();
    const truth = emulator.groundTruth().total;

    // Both read up to the end: the exporter's watermark passes it, the naive poller starts a cycle after it.
    const deadline = ended + options.ingestionDelayMs + 3 * options.pollIntervalMs + 15_000;
    let families = await exporter.scrape();
    while (
      sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000 < ended &&
      Date.now() < deadline
    ) {
      await sleep(250);
      families = await exporter.scrape();
    }
    const cyclesAtEnd = lines.length;
    while (lines.length < cyclesAtEnd + 2 && Date.now() < deadline) await sleep(100);
    const elapsedSeconds = (Date.now() - started) / 1000;
    const exporterAfter = sampleProcess(exporter.pid)!;
    const naiveAfter = sampleProcess(naive.pid!)!;

    const exporterRequests =
      sumOf(families, 'upstash_exporter_api_requests_total', { endpoint: '/v2/events' }) - requestsBefore;
    const exporterCounted = sumOf(families, 'upstash_qstash_message_events_total');
    const naiveLines = lines.slice(linesBefore);
    const naiveRequests = naiveLines.reduce((sum, line) => sum + (line.pages ?? 0), 0);
    const lastComplete = [...naiveLines].reverse().find((line) => line.entries !== undefined);
    const thousands = truth / 1000;
    const figures = (requests: number, cpuMs: number, reported: number): PollerFigures => ({
      requests,
      requestsPerSecond: round(requests / elapsedSeconds, 1),
      requestsPerThousandEvents: round(requests / thousands, 1),
      cpuMs: round(cpuMs, 0),
      cpuMsPerThousandEvents: round(cpuMs / thousands, 1),
      reported,
      reportedShare: round(reported / truth, 3),
    });
    const exporterFigures = {
      ...figures(exporterRequests, exporterAfter.cpuMs - exporterBefore.cpuMs, exporterCounted),
      gapsReported: sumOf(families, 'upstash_exporter_log_gaps_total'),
      caughtUp: sumOf(families, 'upstash_exporter_log_watermark_timestamp_seconds') * 1000 >= ended,
    };
    const naiveFigures = figures(naiveRequests, naiveAfter.cpuMs - naiveBefore.cpuMs, lastComplete?.entries ?? 0);
    return {
      settings: options,
      groundTruth: truth,
      seconds: round(elapsedSeconds, 1),
      exporter: exporterFigures,
      naive: {
        ...naiveFigures,
        cycles: naiveLines.length,
        longestCycleMs: Math.max(0, ...naiveLines.map((line) => line.ms)),
      },
      requestsRatio: round(naiveFigures.requests / Math.max(1, exporterFigures.requests), 2),
      cpuRatio: round(naiveFigures.cpuMs / Math.max(1, exporterFigures.cpuMs), 2),
    };
  } finally {
    naive.kill('SIGKILL');
    await publisher.close();
    await exporter.stop();
    await emulator.close();
    await destinations.close();
  }
}
