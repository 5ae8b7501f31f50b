// The series cap: a metric accepts at most `limit` distinct label sets. Once full, a new label set
// is folded into one overflow series whose values are `__overflow__` (labels listed in `keep`,
// e.g. `state`, keep their value), and each folded increment is counted in
// upstash_exporter_series_dropped_total{metric}. A label set seen before is always admitted, so
// existing series keep counting exactly.
//
// The guard is also where label values are bounded, since every guarded family's label sets pass
// through admit(): a value longer than LABEL_VALUE_MAX_BYTES (UTF-8 bytes, what Prometheus's
// `label_value_length_limit` measures) is cut and given a hash suffix (boundLabelValue), so one
// 10 KB queue name cannot make Prometheus reject the whole scrape, and two long values sharing a
// prefix stay two series. Each value cut is counted in
// upstash_exporter_label_values_truncated_total{metric}.

import { createHash } from 'node:crypto';
import type { Counter } from 'prom-client';

export const OVERFLOW_LABEL_VALUE = '__overflow__';

/** Longest label value the exporter emits, in UTF-8 bytes (docs/metrics.md, "Label values"). */
export const LABEL_VALUE_MAX_BYTES = 256;
/** Hex digits of the SHA-256 of the whole value appended to a cut value, after a `~`. */
const HASH_DIGITS = 12;

/**
 * `value` when it fits in `maxBytes` UTF-8 bytes; otherwise its longest prefix that leaves room
 * for `~` and HASH_DIGITS hex digits of the SHA-256 of the whole value (cut on a character
 * boundary). The result is at most `maxBytes` bytes and depends only on `value`.
 */
export function boundLabelValue(value: string, maxBytes = LABEL_VALUE_MAX_BYTES): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no byte count (the hot case).
  if (value.length * 3 <= maxBytes) return value;
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length <= maxBytes) return value;
  let end = Math.max(0, maxBytes - HASH_DIGITS - 1);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1; // not inside a multi-byte character
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, HASH_DIGITS);
  return `${bytes.subarray(0, end).toString('utf8')}~${hash}`;
}

const CUT_SUFFIX = new RegExp(`~[0-9a-f]{${HASH_DIGITS}}$`);

/**
 * Whether `value` is what boundLabelValue makes of a longer value: within `maxBytes`, less than
 * a character short of it, ending in the hash suffix. Restored series are recognised by it, so
 * label_values_truncated_total continues across a restart without a place in the checkpoint (a
 * natural value of that exact shape is not a realistic label).
 */
export function isCutLabelValue(value: string, maxBytes = LABEL_VALUE_MAX_BYTES): boolean {
  if (value.length < HASH_DIGITS + 1 || !CUT_SUFFIX.test(value)) return false;
  const length = Buffer.byteLength(value, 'utf8');
  return length <= maxBytes && length > maxBytes - 4;
}

export type LabelSet<L extends string = string> = Readonly<Record<L, string>>;

/** The self-counters a guard reports to (SelfMetrics.seriesCounters); absent in pure use. */
export interface SeriesCounters {
  /** upstash_exporter_series_dropped_total. */
  dropped?: Counter<'metric'>;
  /** upstash_exporter_label_values_truncated_total. */
  truncated?: Counter<'metric'>;
}

export interface SeriesGuardOptions<L extends string> {
  /** Name of the guarded metric family, the `metric` label of series_dropped_total. */
  metric: string;
  /** Most distinct label sets admitted (the overflow series not included). */
  limit: number;
  /** Labels whose values survive folding (their value space is small and known). */
  keep?: readonly L[];
  /** upstash_exporter_series_dropped_total (SelfMetrics.seriesDropped); omitted in pure use. */
  dropped?: Counter<'metric'>;
  /** upstash_exporter_label_values_truncated_total (SelfMetrics.labelValuesTruncated). */
  truncated?: Counter<'metric'>;
  /** Longest label value in UTF-8 bytes (LABEL_VALUE_MAX_BYTES unless a test sets it). */
  maxValueBytes?: number;
}

export class SeriesGuard<L extends string = string> {
  readonly metric: string;
  readonly limit: number;
  readonly #keep: ReadonlySet<string>;
  readonly #dropped: Counter<'metric'> | undefined;
  readonly #truncated: Counter<'metric'> | undefined;
  readonly #maxValueBytes: number;
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
    this.#truncated = options.truncated;
    this.#maxValueBytes = options.maxValueBytes ?? LABEL_VALUE_MAX_BYTES;
    // Pre-set to 0 so "nothing dropped" is visible rather than absent.
    this.#dropped?.inc({ metric: this.metric }, 0);
    this.#truncated?.inc({ metric: this.metric }, 0);
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
    return this.#admitted.has(canonicalKey(this.#bound(labels, false)));
  }

  /**
   * The label set to record `increment` under: `labels` itself when known or when there is
   * room, otherwise the overflow set (and `increment` is counted as dropped). Use the result
   * for the metric call: `counter.inc(guard.admit(labels), n)`.
   */
  admit(labels: LabelSet<L>, increment = 1): LabelSet<L> {
    const bounded = this.#bound(labels, false);
    const key = canonicalKey(bounded);
    const known = this.#admitted.get(key);
    if (known !== undefined) return known;
    if (this.#admitted.size < this.limit) {
      // Counted once per new series: the same long value seen again reuses its series.
      const copy = bounded === labels ? { ...labels } : this.#bound(labels, true);
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
   * number of sets actually admitted is returned. Values cut before the restart (or cut now: a
   * checkpoint of an older version may hold long ones) are counted again, so
   * label_values_truncated_total comes back to its value rather than resetting.
   */
  restoreState(sets: readonly Readonly<Record<string, string>>[]): number {
    let restored = 0;
    for (const set of sets) {
      if (this.#admitted.size >= this.limit) break;
      const bounded = this.#bound(set, false);
      const key = canonicalKey(bounded);
      if (this.#admitted.has(key)) continue;
      this.#admitted.set(key, { ...bounded });
      const cut = Object.values<string>(bounded).filter((value) => isCutLabelValue(value, this.#maxValueBytes)).length;
      if (cut > 0) this.#truncated?.inc({ metric: this.metric }, cut);
      restored += 1;
    }
    return restored;
  }

  /**
   * `labels` itself when every value fits, else a copy with the long values bounded; `count`
   * adds the values cut to upstash_exporter_label_values_truncated_total.
   */
  #bound(labels: LabelSet<L>, count: boolean): LabelSet<L> {
    let out: Record<string, string> | undefined;
    let cut = 0;
    for (const name of Object.keys(labels)) {
      const value = labels[name as L] ?? '';
      const bounded = boundLabelValue(value, this.#maxValueBytes);
      if (bounded === value) continue;
      out ??= { ...labels };
      out[name] = bounded;
      cut += 1;
    }
    if (out === undefined) return labels;
    if (count) this.#truncated?.inc({ metric: this.metric }, cut);
    return out as LabelSet<L>;
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
