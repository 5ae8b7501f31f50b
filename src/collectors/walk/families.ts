// Counter and histogram families whose values live in plain objects owned by the logs
// collector, exposed through prom-client classes whose get() reads those objects. Why not
// prom-client's own storage: every inc() there hashes the label object (too slow for the hot
// path), and a histogram cannot be restored bucket by bucket from a checkpoint. Here an
// increment is `series.value += 1` on a series found once per label set, and export/restore
// are exact.
//
// Each series has a live value and a published one; /metrics shows the published values, which
// the collector copies from the live ones when it writes a checkpoint. So what Prometheus sees
// never runs ahead of what a restart restores: a SIGKILL cannot make a counter go down.
//
// Each series also keeps when it was created (kept in the checkpoint, so a restart does not
// make it new) and, for histograms, the last exemplar per bucket; both reach OpenMetrics only
// (getForOpenMetrics, src/metrics/openmetrics.ts), the text 0.0.4 path never builds them.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OpenMetricsFamily, OpenMetricsValue } from '../../metrics/openmetrics.js';
import type { CounterFamilyState, HistogramFamilyState } from './family-schemas.js';

export type Labels<L extends string = string> = Readonly<Record<L, string>>;

export interface CounterSeries<L extends string = string> {
  readonly labels: Labels<L>;
  value: number;
  /** What /metrics shows (see publish()). */
  published: number;
  /** When the series was created, unix ms; null when unknown (restored from a file without it). */
  created: number | null;
}

/** The last observation of a histogram bucket, shown as its OpenMetrics exemplar. */
export interface BucketExemplar {
  messageId: string;
  value: number;
  /** Unix ms. */
  time: number;
}

export interface HistogramSeries<L extends string = string> {
  readonly labels: Labels<L>;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  readonly counts: number[];
  sum: number;
  count: number;
  readonly publishedCounts: number[];
  publishedSum: number;
  publishedCount: number;
  created: number | null;
  /** Per slot like counts; null until the first observation with an exemplar. */
  exemplars: Array<BucketExemplar | undefined> | null;
  publishedExemplars: Array<BucketExemplar | undefined> | null;
}

interface FamilyOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registry: Registry;
  /** Wall clock for created times (unix ms). */
  now?: () => number;
}

/** Series key: label values in labelNames order. NUL cannot occur in a label value we admit. */
function seriesKey<L extends string>(labelNames: readonly L[], labels: Labels<L>): string {
  let key = '';
  for (let i = 0; i < labelNames.length; i++) {
    if (i > 0) key += '\u0000';
    key += labels[labelNames[i]!];
  }
  return key;
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

export class CounterFamily<L extends string> {
  readonly name: string;
  readonly labelNames: readonly L[];
  readonly #series = new Map<string, CounterSeries<L>>();
  readonly #now: () => number;

  constructor(options: FamilyOptions<L>) {
    this.name = options.name;
    this.labelNames = options.labelNames;
    this.#now = options.now ?? Date.now;
    const all = this.#series;
    computedCounter(options.registry, options, () =>
      [...all.values()].map((series) => ({ labels: series.labels, value: series.published, created: series.created })),
    );
  }

  get size(): number {
    return this.#series.size;
  }

  /** The series of a label set, created at 0 on first use. */
  series(labels: Labels<L>): CounterSeries<L> {
    const key = seriesKey(this.labelNames, labels);
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, value: 0, published: 0, created: this.#now() };
      this.#series.set(key, series);
    }
    return series;
  }

  all(): IterableIterator<CounterSeries<L>> {
    return this.#series.values();
  }

  /** Makes the live values the ones /metrics shows. */
  publish(): void {
    for (const series of this.#series.values()) series.published = series.value;
  }

  export(): CounterFamilyState {
    return {
      labelNames: [...this.labelNames],
      series: [...this.#series.values()].map((series) => {
        const values = this.labelNames.map((name) => series.labels[name]);
        return series.created === null ? [values, series.value] : [values, series.value, series.created];
      }),
    };
  }

  /**
   * Restores values saved by export(); false (nothing restored) when the label names differ. A
   * series saved without a created time (a file of an older exporter) keeps none.
   */
  restore(state: CounterFamilyState): boolean {
    if (!sameNames(state.labelNames, this.labelNames)) return false;
    for (const [values, value, created] of state.series) {
      if (values.length !== this.labelNames.length) continue;
      const series = this.series(labelsOf(this.labelNames, values));
      series.value = value;
      series.created = created ?? null;
    }
    return true;
  }
}

export class HistogramFamily<L extends string> {
  readonly name: string;
  readonly labelNames: readonly L[];
  readonly buckets: readonly number[];
  readonly #series = new Map<string, HistogramSeries<L>>();
  readonly #now: () => number;

  constructor(options: FamilyOptions<L> & { buckets: readonly number[] }) {
    this.name = options.name;
    this.labelNames = options.labelNames;
    this.#now = options.now ?? Date.now;
    this.buckets = [...options.buckets].sort((a, b) => a - b);
    const all = this.#series;
    const { name, help } = options;
    const buckets = this.buckets;
    class FamilyHistogram extends Histogram<L> {
      override get(): ReturnType<Histogram<L>['get']> {
        return Promise.resolve(
          histogramExposition(name, help, buckets, all.values()) as unknown as Awaited<ReturnType<Histogram<L>['get']>>,
        );
      }
      // The registry prefers this one for the text format; same values.
      getForPromString(): ReturnType<Histogram<L>['get']> {
        return this.get();
      }
      getForOpenMetrics(): Promise<OpenMetricsFamily> {
        return Promise.resolve(histogramExposition(name, help, buckets, all.values(), true) as OpenMetricsFamily);
      }
    }
    new FamilyHistogram({
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      buckets: [...this.buckets],
      registers: [options.registry],
    });
  }

  get size(): number {
    return this.#series.size;
  }

  series(labels: Labels<L>): HistogramSeries<L> {
    const key = seriesKey(this.labelNames, labels);
    let series = this.#series.get(key);
    if (series === undefined) {
      const slots = this.buckets.length + 1;
      series = {
        labels: { ...labels },
        counts: new Array<number>(slots).fill(0),
        sum: 0,
        count: 0,
        publishedCounts: new Array<number>(slots).fill(0),
        publishedSum: 0,
        publishedCount: 0,
        created: this.#now(),
        exemplars: null,
        publishedExemplars: null,
      };
      this.#series.set(key, series);
    }
    return series;
  }

  /** Makes the live values the ones /metrics shows. */
  publish(): void {
    for (const series of this.#series.values()) {
      for (let i = 0; i < series.counts.length; i++) series.publishedCounts[i] = series.counts[i]!;
      series.publishedSum = series.sum;
      series.publishedCount = series.count;
      if (series.exemplars !== null) series.publishedExemplars = [...series.exemplars];
    }
  }

  /** One observation; `exemplar` (the message it measured) becomes its bucket's exemplar. */
  observe(series: HistogramSeries<L>, value: number, exemplar?: { messageId: string; time: number }): void {
    const buckets = this.buckets;
    let slot = buckets.length;
    for (let i = 0; i < buckets.length; i++) {
      if (value <= buckets[i]!) {
        slot = i;
        break;
      }
    }
    series.counts[slot]! += 1;
    series.sum += value;
    series.count += 1;
    if (exemplar !== undefined) {
      series.exemplars ??= new Array<BucketExemplar | undefined>(series.counts.length);
      series.exemplars[slot] = { messageId: exemplar.messageId, value, time: exemplar.time };
    }
  }

  export(): HistogramFamilyState {
    return {
      labelNames: [...this.labelNames],
      buckets: [...this.buckets],
      series: [...this.#series.values()].map((series) => ({
        labels: this.labelNames.map((name) => series.labels[name]),
        counts: [...series.counts],
        sum: series.sum,
        count: series.count,
        ...(series.created === null ? {} : { created: series.created }),
      })),
    };
  }

  /** Restores buckets saved by export(); false when label names or bucket bounds differ. */
  restore(state: HistogramFamilyState): boolean {
    if (!sameNames(state.labelNames, this.labelNames)) return false;
    if (state.buckets.length !== this.buckets.length || state.buckets.some((bound, i) => bound !== this.buckets[i]))
      return false;
    for (const saved of state.series) {
      if (saved.labels.length !== this.labelNames.length || saved.counts.length !== this.buckets.length + 1) continue;
      const series = this.series(labelsOf(this.labelNames, saved.labels));
      saved.counts.forEach((value, i) => (series.counts[i] = value));
      series.sum = saved.sum;
      series.count = saved.count;
      series.created = saved.created ?? null;
    }
    return true;
  }
}

/**
 * The same shape prom-client's Histogram produces: cumulative buckets, +Inf, _sum, _count. For
 * OpenMetrics, buckets carry their exemplar (message_id) and _count the created time.
 */
function histogramExposition(
  name: string,
  help: string,
  buckets: readonly number[],
  all: Iterable<HistogramSeries>,
  openMetrics = false,
): object {
  const values: OpenMetricsValue[] = [];
  const bucketName = `${name}_bucket`;
  for (const series of all) {
    const exemplars = openMetrics ? series.publishedExemplars : null;
    let cumulative = 0;
    for (let i = 0; i <= buckets.length; i++) {
      cumulative += series.publishedCounts[i]!;
      const value: OpenMetricsValue = {
        labels: { ...series.labels, le: i < buckets.length ? buckets[i]! : '+Inf' },
        value: i < buckets.length ? cumulative : series.publishedCount,
        metricName: bucketName,
      };
      const exemplar = exemplars?.[i];
      if (exemplar !== undefined)
        value.exemplar = {
          labelSet: { message_id: exemplar.messageId },
          value: exemplar.value,
          timestamp: exemplar.time / 1000,
        };
      values.push(value);
    }
    values.push({ labels: { ...series.labels }, value: series.publishedSum, metricName: `${name}_sum` });
    const count: OpenMetricsValue = {
      labels: { ...series.labels },
      value: series.publishedCount,
      metricName: `${name}_count`,
    };
    if (openMetrics && series.created !== null) count.created = series.created / 1000;
    values.push(count);
  }
  return { name, help, type: 'histogram', aggregator: 'sum', values };
}

function labelsOf<L extends string>(names: readonly L[], values: readonly string[]): Labels<L> {
  const labels = {} as Record<L, string>;
  names.forEach((name, i) => (labels[name] = values[i] ?? ''));
  return labels;
}

/**
 * A counter whose values are read from the caller's own fields at scrape time; `created` (unix
 * ms, null when unknown) reaches OpenMetrics only.
 */
export function computedCounter<L extends string>(
  registry: Registry,
  options: { name: string; help: string; labelNames?: readonly L[] },
  read: () => Array<{ labels: Labels<L>; value: number; created?: number | null }>,
): void {
  class ComputedCounter extends Counter<L> {
    override get(): ReturnType<Counter<L>['get']> {
      const values = read().map((item) => ({ labels: { ...item.labels }, value: item.value }));
      return Promise.resolve({
        name: options.name,
        help: options.help,
        type: 'counter',
        aggregator: 'sum',
        values,
      } as unknown as Awaited<ReturnType<Counter<L>['get']>>);
    }
    getForOpenMetrics(): Promise<OpenMetricsFamily> {
      const values = read().map((item): OpenMetricsValue =>
        item.created === undefined || item.created === null
          ? { labels: item.labels, value: item.value }
          : { labels: item.labels, value: item.value, created: item.created / 1000 },
      );
      return Promise.resolve({ name: options.name, help: options.help, type: 'counter', values });
    }
  }
  new ComputedCounter({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
  });
}

/** A gauge set from `read` at scrape time. */
export function computedGauge(registry: Registry, options: { name: string; help: string }, read: () => number): void {
  new Gauge({
    name: options.name,
    help: options.help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
