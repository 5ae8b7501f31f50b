// Gauges of the inventory collectors (schedules, account, search, vector). Each poll registers
// its families into a fresh Registry (src/metrics/snapshot.ts); these helpers keep the HELP text
// uniform: what the value is, where it comes from (field and endpoint), and that it is a cached
// poll result, as the exporter guidelines ask of a background poller.

import { Gauge, type LabelValues, type Registry } from 'prom-client';
import { formatDuration } from '../../common/duration.js';
import { SeriesGuard, type LabelSet, type SeriesCounters } from '../../metrics/cardinality.js';
import type { CollectorName } from '../collector.js';

export interface GaugeSpec<L extends string> {
  name: string;
  /** What the value is, with its unit where the name does not carry one. */
  meaning: string;
  /** Where the value comes from: the upstream field(s) and endpoint. */
  source: string;
  labelNames: readonly L[];
  /** Labels whose values survive folding into the overflow series (a small known set). */
  keep?: readonly L[];
}

/**
 * Most series one inventory family holds per poll. Far above a real account (schedules, indexes),
 * it only stops a runaway list from flooding Prometheus; docs/metrics.md, "Series caps".
 */
export const INVENTORY_SERIES_LIMIT = 5000;

/** What every family of a collector is registered with (SnapshotCollector.families). */
export interface FamilyContext extends SeriesCounters {
  /** The sentence that ends every HELP text of the collector (cadenceNote). */
  cadence: string;
  /** Most series per family and poll. */
  seriesLimit: number;
}

/**
 * The sentence that ends every HELP of a collector: values are served from the last
 * successful poll, so they are as fresh as the collector's interval. `polledEveryMs` is the
 * interval the runner really polls at (polledIntervalMs, from the poll schedule).
 */
export function cadenceNote(collector: CollectorName, polledEveryMs: number): string {
  return `Cached: polled every ${formatDuration(polledEveryMs)} by the ${collector} collector, scrapes serve the last successful poll`;
}

/** `meaning. Source: source. cadence` — one line, identical for every series of the family. */
export function helpText(spec: Pick<GaugeSpec<string>, 'meaning' | 'source'>, cadence: string): string {
  return `${spec.meaning}. Source: ${spec.source}. ${cadence}`;
}

/**
 * Registers one gauge family of `spec` in `registry` (the snapshot being built). Its label sets
 * pass through a SeriesGuard: long values are bounded, and beyond the series cap a label set is
 * folded into the overflow series, whose value is the number of series folded this poll.
 */
export function registerGauge<L extends string>(
  registry: Registry,
  spec: GaugeSpec<L>,
  families: FamilyContext,
): Gauge<L> {
  const guard =
    spec.labelNames.length === 0
      ? undefined
      : new SeriesGuard<L>({
          metric: spec.name,
          limit: families.seriesLimit,
          ...(spec.keep ? { keep: spec.keep } : {}),
          ...(families.dropped ? { dropped: families.dropped } : {}),
          ...(families.truncated ? { truncated: families.truncated } : {}),
        });
  return new GuardedGauge<L>(
    { name: spec.name, help: helpText(spec, families.cadence), labelNames: spec.labelNames, registers: [registry] },
    guard,
  );
}

/** A prom-client Gauge whose labelled set() goes through a SeriesGuard. */
class GuardedGauge<L extends string> extends Gauge<L> {
  readonly #guard: SeriesGuard<L> | undefined;

  constructor(configuration: ConstructorParameters<typeof Gauge<L>>[0], guard: SeriesGuard<L> | undefined) {
    super(configuration);
    this.#guard = guard;
  }

  override set(value: number): void;
  override set(labels: LabelValues<L>, value: number): void;
  override set(labelsOrValue: LabelValues<L> | number, value?: number): void {
    if (typeof labelsOrValue === 'number' || this.#guard === undefined) {
      super.set(labelsOrValue as never, value as never);
      return;
    }
    const guard = this.#guard;
    const folded = guard.folded;
    const labels = guard.admit(labelsOrValue as LabelSet<L>) as LabelValues<L>;
    if (guard.folded > folded) super.inc(labels, 1);
    else super.set(labels, value ?? 0);
  }
}

/** One gauge per numeric field of an index record (a usage counter or a limit). */
export interface IndexFieldSpec<F extends string> {
  name: string;
  field: F;
  meaning: string;
}

/**
 * Registers one gauge per spec, labelled by index_id, its source `<field> of <endpoint>`; returns
 * the setter for one index. A field the record lacks leaves that index's series out. Limits
 * (`kind: 'limit'`) go through limitValue and say so in HELP.
 */
export function registerIndexFieldGauges<F extends string>(
  registry: Registry,
  specs: readonly IndexFieldSpec<F>[],
  options: { endpoint: string; families: FamilyContext; kind: 'value' | 'limit' },
): (indexId: string, record: { readonly [K in F]?: number }) => void {
  const note = options.kind === 'limit' ? `; ${UNLIMITED_NOTE}` : '';
  const gauges = specs.map((spec) => ({
    field: spec.field,
    gauge: registerGauge(
      registry,
      {
        name: spec.name,
        meaning: spec.meaning,
        source: `${spec.field} of ${options.endpoint}${note}`,
        labelNames: ['index_id'],
      },
      options.families,
    ),
  }));
  const value = options.kind === 'limit' ? (raw: number): number => limitValue(raw) : (raw: number): number => raw;
  return (indexId, record) => {
    for (const { field, gauge } of gauges) {
      const raw = record[field];
      if (raw !== undefined) gauge.set({ index_id: indexId }, value(raw));
    }
  };
}

/** The sentence HELP texts use for limits that may be `-1`. */
export const UNLIMITED_NOTE = '-1 (unlimited) is exported as +Inf';

/**
 * A plan or index limit as a gauge value: `-1`, the API's "unlimited", becomes +Inf so that
 * `usage / limit` is 0 rather than negative; `divisor` converts to base units (ms -> s: 1000;
 * a division, so whole milliseconds give exact decimal seconds).
 */
export function limitValue(limit: number, divisor = 1): number {
  return limit === -1 ? Number.POSITIVE_INFINITY : limit / divisor;
}

/** A boolean flag as a gauge value. */
export function flagValue(flag: boolean): number {
  return flag ? 1 : 0;
}
