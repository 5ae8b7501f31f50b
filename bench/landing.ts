// The landing page: server-side render time (the overview read from the registries, plots and
// HTML) and size, with the logs collector holding 1k and 10k event series and an hour of
// history in the ring, against a /metrics render of the same registries; and the ring's memory.
import { renderLanding } from '../src/server/landing.js';
import { renderMetrics } from '../src/server/metrics-endpoint.js';
import { HISTORY_SAMPLE_INTERVAL_MS, OverviewHistory, readOverview } from '../src/server/overview.js';
import { createLogger } from '../src/logging/index.js';
import { median, round, timeMs } from './measure.js';
import { collectorWithSeries } from './render.js';

export interface LandingPoint {
  series: number;
  renders: number;
  /** Median ms of one page (readOverview + renderLanding). */
  pageMs: number;
  /** Median ms of one /metrics render of the same registries. */
  metricsMs: number;
  ratio: number;
  pageBytes: number;
  metricsBytes: number;
  /** Bytes the history's ring holds, whatever it contains. */
  ringBytes: number;
  ringSamples: number;
}

const silent = createLogger({ level: 'silent', format: 'json' });

export async function measureLanding(
  renders = 100,
  sizes: readonly number[] = [1_000, 10_000],
): Promise<LandingPoint[]> {
  const points: LandingPoint[] = [];
  for (const series of sizes) {
    const collector = await collectorWithSeries(series);
    const sources = [{ name: 'logs', registry: collector.registry }];
    // An hour of samples, so the plots and their tables are as large as they get.
    let clock = Date.now() - 3_600_000;
    const history = new OverviewHistory(() => sources, { now: () => clock });
    for (let i = 0; i < history.ring.capacity; i++) {
      await history.sample();
      clock += HISTORY_SAMPLE_INTERVAL_MS;
    }
    const page = async (): Promise<string> =>
      renderLanding({
        version: 'bench',
        statuses: [],
        ready: true,
        now: clock,
        overview: await readOverview(sources, history, clock),
      });
    const html = await page();
    const text = await renderMetrics(sources, silent);
    const pageTimes: number[] = [];
    const metricsTimes: number[] = [];
    // Alternate so drift (GC, frequency) hits both alike.
    for (let i = 0; i < renders; i++) {
      pageTimes.push(await timeMs(page));
      metricsTimes.push(await timeMs(() => renderMetrics(sources, silent)));
    }
    const pageMs = median(pageTimes);
    const metricsMs = median(metricsTimes);
    points.push({
      series,
      renders,
      pageMs: round(pageMs, 3),
      metricsMs: round(metricsMs, 3),
      ratio: round(pageMs / metricsMs, 3),
      pageBytes: Buffer.byteLength(html),
      metricsBytes: Buffer.byteLength(text),
      ringBytes: history.ring.bytes,
      ringSamples: history.ring.capacity,
    });
    await collector.close?.();
  }
  return points;
}
