// /metrics render time and event-loop delay at 1k, 10k and 50k series: the logs collector's
// registry (its counter families read from the collector's own objects) rendered the way the
// server renders it (renderMetrics), against a bare prom-client registry holding the same
// samples; and the same registry in OpenMetrics (renderMetrics with format openmetrics-1.0.0:
// every series with its _created line) against text 0.0.4 of the same registry, and prom-client's
// own OpenMetrics rendering of the bare registry. The collector is fed through its real poll() from an in-memory LogsSource whose one
// page holds one entry per target (queue); every state of a target is pre-set, so each target
// is 8 series of upstash_qstash_message_events_total.
import { Counter, Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import type { LogEntry, LogsPage, LogsQuery } from '../src/api/delivery.js';
import { LogsCollector } from '../src/collectors/logs/index.js';
import { createLogger } from '../src/logging/index.js';
import { renderMetrics } from '../src/server/metrics-endpoint.js';
import { parseExposition } from '../test/support/exporter-e2e-helpers.js';
import { eventLoopDelayDuring, median, round, timeMs } from './measure.js';

export interface RenderPoint {
  series: number;
  exporterMs: number;
  bareMs: number;
  /** exporter / bare. */
  ratio: number;
  exporterLoopDelayMaxMs: number;
  bareLoopDelayMaxMs: number;
  bytes: number;
  /** The exporter's registry rendered as OpenMetrics (with _created lines). */
  openMetricsMs: number;
  /** openMetricsMs / exporterMs: OpenMetrics against text 0.0.4 of the same registry. */
  openMetricsToText: number;
  /** prom-client's own OpenMetrics rendering of the bare registry (no _created). */
  bareOpenMetricsMs: number;
  openMetricsBytes: number;
  openMetricsLoopDelayMaxMs: number;
}

export const RENDER_SERIES = [1_000, 10_000, 50_000] as const;
const STATES_PER_TARGET = 8;

const silent = createLogger({ level: 'silent', format: 'json' });

/** A LogsCollector holding `series` event series, filled through poll(). */
export async function collectorWithSeries(series: number): Promise<LogsCollector> {
  const targets = Math.ceil(series / STATES_PER_TARGET);
  let clock = Date.now();
  let served = false;
  const source = {
    logsPage: (query: LogsQuery): Promise<LogsPage> => {
      if (served) return Promise.resolve({ logs: [] });
      served = true;
      const time = typeof query.toDate === 'number' ? query.toDate : clock;
      const logs: LogEntry[] = [];
      for (let i = 0; i < targets; i++) {
        logs.push({
          time,
          messageId: `msg_${i}`,
          state: 'DELIVERED',
          url: `http://127.0.0.1:${4000 + (i % 50)}/path`,
          queueName: `queue-${i}`,
        });
      }
      return Promise.resolve({ logs });
    },
  };
  const collector = new LogsCollector({
    source,
    settings: {
      ingestionDelayMs: 0,
      overlapMs: 0,
      maxPagesPerCycle: 10,
      labels: [],
      seriesLimit: series + 1000,
      messageTrackerSize: 100_000,
    },
    stateFile: null,
    upstream: 'bench',
    logger: silent,
    now: () => clock,
  });
  clock += 5_000;
  await collector.poll({ signal: new AbortController().signal, now: () => clock, logger: silent });
  return collector;
}

/** A bare prom-client registry with the same counter and gauge samples as `text`. */
export function bareRegistryOf(text: string): Registry {
  const registry = new Registry();
  for (const family of parseExposition(text).values()) {
    if (family.samples.length === 0 || (family.type !== 'counter' && family.type !== 'gauge')) continue;
    const labelNames = Object.keys(family.samples[0]!.labels);
    if (family.type === 'counter') {
      const counter = new Counter({ name: family.name, help: family.help, labelNames, registers: [registry] });
      for (const sample of family.samples) counter.inc(sample.labels, sample.value);
    } else {
      const gauge = new Gauge({ name: family.name, help: family.help, labelNames, registers: [registry] });
      for (const sample of family.samples) gauge.set(sample.labels, sample.value);
    }
  }
  return registry;
}

export async function measureRender(repeats = 5, sizes: readonly number[] = RENDER_SERIES): Promise<RenderPoint[]> {
  const points: RenderPoint[] = [];
  for (const series of sizes) {
    const collector = await collectorWithSeries(series);
    const sources = [{ name: 'logs', registry: collector.registry }];
    const text = await renderMetrics(sources, silent);
    const counted = parseExposition(text).get('upstash_qstash_message_events_total')?.samples.length ?? 0;
    if (counted < series) throw new Error(`render bench: expected ${series} series, the collector has ${counted}`);
    const bare = bareRegistryOf(text);
    const bareOpenMetrics = bareRegistryOf(text);
    // prom-client's typings fix a registry's format at construction; switch it at run time.
    (bareOpenMetrics as unknown as Registry<OpenMetricsContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const openMetricsText = await renderMetrics(sources, silent, 'openmetrics-1.0.0');
    // Warm every path up, then alternate so drift (GC, frequency) hits all alike.
    await renderMetrics(sources, silent);
    await bare.metrics();
    await bareOpenMetrics.metrics();
    const exporterTimes: number[] = [];
    const bareTimes: number[] = [];
    const exporterDelays: number[] = [];
    const bareDelays: number[] = [];
    const openMetricsTimes: number[] = [];
    const openMetricsDelays: number[] = [];
    const bareOpenMetricsTimes: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const ours = await eventLoopDelayDuring(() => timeMs(() => renderMetrics(sources, silent)));
      exporterTimes.push(ours.result);
      exporterDelays.push(ours.maxMs);
      const theirs = await eventLoopDelayDuring(() => timeMs(() => bare.metrics()));
      bareTimes.push(theirs.result);
      bareDelays.push(theirs.maxMs);
      const om = await eventLoopDelayDuring(() => timeMs(() => renderMetrics(sources, silent, 'openmetrics-1.0.0')));
      openMetricsTimes.push(om.result);
      openMetricsDelays.push(om.maxMs);
      bareOpenMetricsTimes.push(await timeMs(() => bareOpenMetrics.metrics()));
    }
    const exporterMs = median(exporterTimes);
    const bareMs = median(bareTimes);
    points.push({
      series,
      exporterMs: round(exporterMs),
      bareMs: round(bareMs),
      ratio: round(exporterMs / bareMs),
      exporterLoopDelayMaxMs: round(median(exporterDelays)),
      bareLoopDelayMaxMs: round(median(bareDelays)),
      bytes: Buffer.byteLength(text),
      openMetricsMs: round(median(openMetricsTimes)),
      openMetricsToText: round(median(openMetricsTimes) / exporterMs),
      bareOpenMetricsMs: round(median(bareOpenMetricsTimes)),
      openMetricsBytes: Buffer.byteLength(openMetricsText),
      openMetricsLoopDelayMaxMs: round(median(openMetricsDelays)),
    });
    bare.clear();
    bareOpenMetrics.clear();
  }
  return points;
}
