// Waiting time of messages, from the delivery logs: how long a message waited to be
// delivered beyond what it asked for.
// - upstash_qstash_message_queue_wait_seconds{queue}: CREATED to the first ACTIVE, minus the
//   delay the message asked for (its `notBefore`, when the entry carries it): queueing, queue
//   parallelism, flow control.
// - upstash_qstash_delivery_lateness_seconds{queue}: each retry's ACTIVE against the
//   `nextDeliveryTime` its RETRY entry announced.
// Like the duration histogram, both are observed by the tracker (tracker.ts, which keeps the
// per-message times) when a message's final entry was counted and its slice is complete (walks
// go newest first, so only then are all its older entries known). Histograms and per-message
// times are kept in the checkpoint's optional `waiting` section.
import { Gauge, type Counter, type Registry } from 'prom-client';
import { OVERFLOW_LABEL_VALUE } from '../../metrics/cardinality.js';
import { SeriesGuard } from '../../metrics/cardinality.js';
import type { WaitingState } from './waiting-state.js';
import { HistogramFamily, type HistogramSeries } from '../walk/families.js';
import { metricOptions } from '../../metrics/families.js';
import { LOGS_FAMILIES } from './families.js';

export const OLDEST_IN_FLIGHT_METRIC = LOGS_FAMILIES.oldestInFlight.name;
export const QUEUE_WAIT_METRIC = LOGS_FAMILIES.queueWait.name;
export const LATENESS_METRIC = LOGS_FAMILIES.lateness.name;
export const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 10_800, 86_400];
/** Attempts and retries remembered per message (beyond: not observed, the message keeps its first ones). */
export const MAX_WAIT_TIMES = 32;

/** The waiting facts the tracker keeps per message (tracker.ts). */
export interface WaitFacts {
  created: number;
  /** The earliest ACTIVE (NaN: none yet). */
  firstActive: number;
  /** The rarer facts, made on first need (most messages have one attempt and no delay). */
  waitExtra: WaitExtra | null;
}

export interface WaitExtra {
  /** When the message may be delivered (its asked delay), unix ms; NaN when not given. */
  notBefore: number;
  /** ACTIVE times other than the earliest, and the nextDeliveryTime of each RETRY. */
  readonly laterActives: number[];
  readonly nexts: number[];
}

/** A log entry's notBefore in unix ms (a value below 1e11 is seconds, the header's unit); NaN when absent. */
export function notBeforeMs(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return Number.NaN;
  return value < 1e11 ? value * 1000 : value;
}

export class WaitingTimes {
  readonly queueWait: HistogramFamily<'queue'>;
  readonly lateness: HistogramFamily<'queue'>;
  readonly #guard: SeriesGuard<'queue'>;
  /** Series of each queue, found once (the hot path of a slice completion). */
  readonly #byQueue = new Map<string, { wait: HistogramSeries<'queue'>; late: HistogramSeries<'queue'> }>();

  constructor(options: {
    registry: Registry;
    seriesLimit: number;
    dropped?: Counter<'metric'>;
    truncated?: Counter<'metric'>;
  }) {
    this.queueWait = new HistogramFamily({
      ...metricOptions(LOGS_FAMILIES.queueWait),
      buckets: WAIT_BUCKETS,
      registry: options.registry,
    });
    this.lateness = new HistogramFamily({
      ...metricOptions(LOGS_FAMILIES.lateness),
      buckets: WAIT_BUCKETS,
      registry: options.registry,
    });
    this.#guard = new SeriesGuard<'queue'>({
      metric: QUEUE_WAIT_METRIC,
      limit: options.seriesLimit,
      ...(options.dropped ? { dropped: options.dropped } : {}),
      ...(options.truncated ? { truncated: options.truncated } : {}),
    });
  }

  /** Observes a finished message whose slice is complete (called by the tracker). */
  observeFinished(queue: string, facts: WaitFacts): void {
    if (Number.isNaN(facts.firstActive)) return;
    let series = this.#byQueue.get(queue);
    if (series === undefined) {
      const labels = this.#guard.admit({ queue });
      series = { wait: this.queueWait.series(labels), late: this.lateness.series(labels) };
      if (this.#byQueue.size >= 10_000) this.#byQueue.clear();
      this.#byQueue.set(queue, series);
    }
    if (!Number.isNaN(facts.created)) {
      // notBefore is absent without a delay, or before CREATED: the wait starts at CREATED.
      const notBefore = facts.waitExtra?.notBefore ?? Number.NaN;
      const due = Number.isNaN(notBefore) ? facts.created : Math.max(facts.created, notBefore);
      this.queueWait.observe(series.wait, Math.max(0, facts.firstActive - due) / 1000);
    }
    const extra = facts.waitExtra;
    if (extra === null || extra.nexts.length === 0) return;
    // The k-th RETRY announced the (k+1)-th attempt.
    const nexts = extra.nexts.sort((a, b) => a - b);
    const later = extra.laterActives.sort((a, b) => a - b);
    for (let k = 0; k < nexts.length && k < later.length; k++) {
      this.lateness.observe(series.late, Math.max(0, later[k]! - nexts[k]!) / 1000);
    }
  }

  publish(): void {
    this.queueWait.publish();
    this.lateness.publish();
  }

  /** Restores the histograms; false when label names or buckets changed (those start from 0). */
  restore(state: Pick<WaitingState, 'queueWait' | 'lateness'>): boolean {
    const restored = this.queueWait.restore(state.queueWait) && this.lateness.restore(state.lateness);
    this.#guard.restoreState(
      [...this.queueWait.export().series, ...this.lateness.export().series].map((series) => ({
        queue: series.labels[0] ?? '',
      })),
    );
    return restored;
  }
}

/**
 * upstash_qstash_oldest_in_flight_message_age_seconds{queue}: the age of the oldest message the
 * exporter still sees in flight, per queue (`""`: not sent through a queue), from the tracker's
 * numbers as of the last checkpoint. At most `limit` queues (the oldest first); the rest fold
 * into `__overflow__` with the oldest age among them.
 */
export function registerOldestInFlightGauge(
  registry: Registry,
  read: () => ReadonlyMap<string, number>,
  now: () => number,
  limit: number,
): void {
  new Gauge({
    ...metricOptions(LOGS_FAMILIES.oldestInFlight),
    registers: [registry],
    collect() {
      this.reset();
      const at = now();
      const oldest = [...read()].sort((a, b) => a[1] - b[1]);
      oldest.slice(0, limit).forEach(([queue, created]) => this.set({ queue }, Math.max(0, at - created) / 1000));
      const rest = oldest[limit];
      if (rest !== undefined) this.set({ queue: OVERFLOW_LABEL_VALUE }, Math.max(0, at - rest[1]) / 1000);
    },
  });
}
