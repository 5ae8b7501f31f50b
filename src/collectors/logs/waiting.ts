// Waiting time of messages, from the delivery logs (issue 16): how long a message waited to be
// delivered beyond what it asked for.
// - upstash_qstash_message_queue_wait_seconds{queue}: CREATED to the first ACTIVE, minus the
//   delay the message asked for (its `notBefore`, when the entry carries it): queueing, queue
//   parallelism, flow control.
// - upstash_qstash_delivery_lateness_seconds{queue}: each retry's ACTIVE against the
//   `nextDeliveryTime` its RETRY entry announced.
// Like the duration histogram (tracker.ts), both are observed when a message's final entry was
// counted and its slice is complete (walks go newest first, so only then are all its older
// entries known). The per-message records are bounded (the tracker's capacity) and kept in the
// checkpoint's optional `waiting` section.
import { Gauge, type Counter, type Registry } from 'prom-client';
import { OVERFLOW_LABEL_VALUE } from '../../metrics/cardinality.js';
import { SeriesGuard } from '../../metrics/cardinality.js';
import type { WaitingState } from '../../state/waiting-state.js';
import { HistogramFamily } from './families.js';
import { ACTIVE, CREATED, RETRY, outcomeOf } from './states.js';

export const OLDEST_IN_FLIGHT_METRIC = 'upstash_qstash_oldest_in_flight_message_age_seconds';
export const QUEUE_WAIT_METRIC = 'upstash_qstash_message_queue_wait_seconds';
export const LATENESS_METRIC = 'upstash_qstash_delivery_lateness_seconds';
export const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 10_800, 86_400];
/** Attempts and retries remembered per message (beyond: not observed, the message keeps its first ones). */
const MAX_TIMES = 32;

interface Waiting {
  readonly queue: string;
  created: number;
  notBefore: number;
  /** ACTIVE times and RETRY nextDeliveryTimes, in the order read (sorted when observed). */
  readonly actives: number[];
  readonly nexts: number[];
  final: boolean;
}

export class WaitingTimes {
  readonly queueWait: HistogramFamily<'queue'>;
  readonly lateness: HistogramFamily<'queue'>;
  readonly #messages = new Map<string, Waiting>();
  readonly #finalSeen = new Set<string>();
  readonly #guard: SeriesGuard<'queue'>;
  readonly #capacity: number;

  constructor(options: { registry: Registry; capacity: number; seriesLimit: number; dropped?: Counter<'metric'>; truncated?: Counter<'metric'> }) {
    this.#capacity = options.capacity;
    this.queueWait = new HistogramFamily({
      name: QUEUE_WAIT_METRIC,
      help: 'Time from CREATED to the first ACTIVE beyond the delay the message asked for (queueing, parallelism, flow control), of finished messages whose CREATED was seen',
      labelNames: ['queue'],
      buckets: WAIT_BUCKETS,
      registry: options.registry,
    });
    this.lateness = new HistogramFamily({
      name: LATENESS_METRIC,
      help: 'Lateness of retries: each retry attempt (ACTIVE) against the nextDeliveryTime its RETRY entry announced, of finished messages',
      labelNames: ['queue'],
      buckets: WAIT_BUCKETS,
      registry: options.registry,
    });
    this.#guard = new SeriesGuard<'queue'>({ metric: QUEUE_WAIT_METRIC, limit: options.seriesLimit, ...(options.dropped ? { dropped: options.dropped } : {}), ...(options.truncated ? { truncated: options.truncated } : {}) });
  }

  /** One counted entry (hot path: only CREATED, ACTIVE, RETRY and final entries do anything). */
  observe(messageId: string, stateIndex: number, time: number, queue: string, notBefore: unknown, nextDeliveryTime: unknown): void {
    const final = outcomeOf(stateIndex) >= 0;
    if (stateIndex !== CREATED && stateIndex !== ACTIVE && stateIndex !== RETRY && !final) return;
    let waiting = this.#messages.get(messageId);
    if (waiting === undefined) {
      if (this.#messages.size >= this.#capacity) this.#evictOldest();
      waiting = { queue, created: Number.NaN, notBefore: Number.NaN, actives: [], nexts: [], final: false };
      this.#messages.set(messageId, waiting);
    }
    // Milliseconds like the SDK's Message.notBefore; a value in seconds (the header's unit) is converted.
    if (typeof notBefore === 'number' && Number.isFinite(notBefore) && notBefore > 0) waiting.notBefore = notBefore < 1e11 ? notBefore * 1000 : notBefore;
    if (stateIndex === CREATED) waiting.created = time;
    else if (stateIndex === ACTIVE) {
      if (waiting.actives.length < MAX_TIMES) waiting.actives.push(time);
    } else if (stateIndex === RETRY) {
      if (typeof nextDeliveryTime === 'number' && waiting.nexts.length < MAX_TIMES) waiting.nexts.push(nextDeliveryTime);
    } else {
      waiting.final = true;
      this.#finalSeen.add(messageId);
    }
  }

  /** At a slice completion (from the tracker): observes and forgets the finished messages. */
  finishSlice(): void {
    for (const messageId of this.#finalSeen) {
      const waiting = this.#messages.get(messageId);
      this.#messages.delete(messageId);
      if (waiting === undefined) continue;
      const actives = waiting.actives.sort((a, b) => a - b);
      const labels = this.#guard.admit({ queue: waiting.queue });
      if (!Number.isNaN(waiting.created) && actives.length > 0) {
        // notBefore is absent without a delay, or a time before CREATED: the wait starts at CREATED.
        const due = Number.isNaN(waiting.notBefore) ? waiting.created : Math.max(waiting.created, waiting.notBefore);
        this.queueWait.observe(this.queueWait.series(labels), Math.max(0, actives[0]! - due) / 1000);
      }
      // The k-th RETRY announced the (k+1)-th attempt.
      const nexts = waiting.nexts.sort((a, b) => a - b);
      for (let k = 0; k < nexts.length && k + 1 < actives.length; k++) {
        this.lateness.observe(this.lateness.series(labels), Math.max(0, actives[k + 1]! - nexts[k]!) / 1000);
      }
    }
    this.#finalSeen.clear();
  }

  publish(): void {
    this.queueWait.publish();
    this.lateness.publish();
  }

  export(): WaitingState {
    return {
      queueWait: this.queueWait.export(),
      lateness: this.lateness.export(),
      messages: [...this.#messages].map(([id, w]) => [id, w.queue, nullIfNaN(w.created), nullIfNaN(w.notBefore), [...w.actives], [...w.nexts], w.final]),
    };
  }

  /** Restores a checkpoint's section; false when label names or buckets changed (those start from 0). */
  restore(state: WaitingState): boolean {
    const histograms = this.queueWait.restore(state.queueWait) && this.lateness.restore(state.lateness);
    this.#guard.restoreState([...this.queueWait.export().series, ...this.lateness.export().series].map((series) => ({ queue: series.labels[0] ?? '' })));
    for (const [id, queue, created, notBefore, actives, nexts, final] of state.messages) {
      if (this.#messages.size >= this.#capacity) break;
      this.#messages.set(id, { queue, created: created ?? Number.NaN, notBefore: notBefore ?? Number.NaN, actives: [...actives], nexts: [...nexts], final });
      if (final) this.#finalSeen.add(id);
    }
    return histograms;
  }

  #evictOldest(): void {
    const oldest = this.#messages.keys().next();
    if (oldest.done) return;
    this.#messages.delete(oldest.value);
    this.#finalSeen.delete(oldest.value);
  }
}

function nullIfNaN(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

/**
 * upstash_qstash_oldest_in_flight_message_age_seconds{queue}: the age of the oldest message the
 * exporter still sees in flight, per queue (`""`: not sent through a queue), from the tracker's
 * numbers as of the last checkpoint. At most `limit` queues (the oldest first); the rest fold
 * into `__overflow__` with the oldest age among them.
 */
export function registerOldestInFlightGauge(registry: Registry, read: () => ReadonlyMap<string, number>, now: () => number, limit: number): void {
  new Gauge({
    name: OLDEST_IN_FLIGHT_METRIC,
    help: 'Age of the oldest message seen in flight (CREATED counted, no final state yet) per queue: a message waiting long, lag in seconds',
    labelNames: ['queue'],
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
