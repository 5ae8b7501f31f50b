// The series cap: a metric accepts at most `limit` distinct label sets. Once full, a new label set
// is folded into one overflow series whose values are `__overflow__` (labels listed in `keep`,
// e.g. `state`, keep their value), and each folded increment is counted in
// upstash_exporter_series_dropped_total{metric}. A label set seen before is always admitted, so
// existing series keep counting exactly.

import type { Counter } from 'prom-client';

export const OVERFLOW_LABEL_VALUE = '__overflow__';

export type LabelSet<L extends string = string> = Readonly<Record<L, string>>;

export interface SeriesGuardOptions<L extends string> {
  /** Name of the guarded metric family, the `metric` label of series_dropped_total. */
  metric: string;
  /** Most distinct label sets admitted (the overflow series not included). */
  limit: number;
  /** Labels whose values survive folding (their value space is small and known). */
  keep?: readonly L[];
  /** upstash_exporter_series_dropped_total (SelfMetrics.seriesDropped); omitted in pure use. */
  dropped?: Counter<'metric'>;
}

export class SeriesGuard<L extends string = string> {
  readonly metric: string;
  readonly limit: number;
  readonly #keep: ReadonlySet<string>;
  readonly #dropped: Counter<'metric'> | undefined;
  /** Canonical key -> the label set as first admitted. Insertion order is admission order. */
  readonly #admitted = new Map<string, LabelSet<L>>();
  #folded = 0;

  constructor(options: SeriesGuardOptions<L>) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new RangeError(`series limit of ${options.metric} must be a positive integer, got ${options.limit}`);
    }
    this.metric = options.metric;
    this.limit = options.limit;
    this.#keep = new Set(options.keep ?? []);
    this.#dropped = options.dropped;
    // Pre-set to 0 so "nothing dropped" is visible rather than absent.
    this.#dropped?.inc({ metric: this.metric }, 0);
  }

  /** Distinct label sets admitted so far. */
  get size(): number {
    return this.#admitted.size;
  }

  /** Increments folded into the overflow series since this guard was created. */
  get folded(): number {
    return this.#folded;
  }

  /** True when this exact label set already has its own series. */
  has(labels: LabelSet<L>): boolean {
    return this.#admitted.has(canonicalKey(labels));
  }

  /**
   * The label set to record `increment` under: `labels` itself when known or when there is
   * room, otherwise the overflow set (and `increment` is counted as dropped). Use the result
   * for the metric call: `counter.inc(guard.admit(labels), n)`.
   */
  admit(labels: LabelSet<L>, increment = 1): LabelSet<L> {
    const key = canonicalKey(labels);
    const known = this.#admitted.get(key);
    if (known !== undefined) return known;
    if (this.#admitted.size < this.limit) {
      const copy = { ...labels };
      this.#admitted.set(key, copy);
      return copy;
    }
    this.#folded += increment;
    this.#dropped?.inc({ metric: this.metric }, increment);
    return this.overflowOf(labels);
  }

  /** The overflow label set `labels` would fold into. */
  overflowOf(labels: LabelSet<L>): LabelSet<L> {
    const out: Record<string, string> = {};
    for (const name of Object.keys(labels)) {
      out[name] = this.#keep.has(name) ? (labels[name as L] ?? '') : OVERFLOW_LABEL_VALUE;
    }
    return out as LabelSet<L>;
  }

  /** The admitted label sets in admission order, for a checkpoint. */
  exportState(): LabelSet<L>[] {
    return [...this.#admitted.values()].map((set) => ({ ...set }));
  }

  /**
   * Re-admits label sets from a checkpoint (before any new admission, so restored series keep
   * their own series). Sets beyond the limit (the limit was lowered since) are ignored; the
   * number of sets actually admitted is returned.
   */
  restoreState(sets: readonly Readonly<Record<string, string>>[]): number {
    let restored = 0;
    for (const set of sets) {
      if (this.#admitted.size >= this.limit) break;
      const key = canonicalKey(set);
      if (this.#admitted.has(key)) continue;
      this.#admitted.set(key, { ...set } as LabelSet<L>);
      restored += 1;
    }
    return restored;
  }
}

// Label order must not matter: {a,b} and {b,a} are the same series. Each name and value is
// written with its length in front, so no value can imitate a separator (no escaping needed,
// and much cheaper than JSON of the pairs: admission runs for every new target of the logs).
function canonicalKey(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  let key = '';
  for (const name of names) {
    const value = labels[name] ?? '';
    key += `${name.length}:${name}${value.length}:${value}`;
  }
  return key;
}
