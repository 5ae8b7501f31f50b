// upstash_qstash_message_events_total and upstash_qstash_delivery_errors_total. Entries are
// grouped by "target" (queue, URL Group, endpoint, URL and the opt-in fields): a target is
// resolved once, with every state's series pre-set to 0, and counting an entry is then one map
// lookup and an addition. The series cap (SeriesGuard) admits a target's label sets together;
// a target that no longer fits goes to the overflow series (`__overflow__`, state kept), and
// every increment it receives is counted in upstash_exporter_series_dropped_total.
import type { Counter, Registry } from 'prom-client';
import type { LogEntry } from '../../api/delivery.js';
import { OVERFLOW_LABEL_VALUE, SeriesGuard } from '../../metrics/cardinality.js';
import { hostOf } from '../../common/url.js';
import { CounterFamily, type CounterSeries, type Labels } from '../walk/families.js';
import { cleanLabel, ERROR_REASONS, safeUrlOf } from './labels.js';
import { metricOptions } from '../../metrics/families.js';
import type { StateTable } from './states.js';

import { LOGS_FAMILIES, OPT_IN_LABELS, type OptInLabel } from './families.js';

export { OPT_IN_LABELS, TARGET_LABELS, type OptInLabel } from './families.js';
export const EVENTS_METRIC = LOGS_FAMILIES.events.name;
export const ERRORS_METRIC = LOGS_FAMILIES.errors.name;

/** Most targets remembered for fast lookup; beyond it the cache starts over (series stay). */
const TARGET_CACHE_LIMIT = 20_000;

export interface Target {
  /** By state index; unknown states are added on first use. */
  readonly events: Array<CounterSeries | undefined>;
  /** By reason index; created with the target's first ERROR entry. */
  errors: CounterSeries[] | null;
  /** Label values without state (default and opt-in). */
  readonly labels: Readonly<Record<string, string>>;
  readonly queue: string;
  readonly destination: string;
  eventsFolded: boolean;
  errorsFolded: boolean;
}

export interface EventCountersOptions {
  registry: Registry;
  states: StateTable;
  seriesLimit: number;
  optIn: readonly OptInLabel[];
  /** upstash_exporter_series_dropped_total. */
  dropped?: Counter<'metric'>;
  /** upstash_exporter_label_values_truncated_total. */
  truncated?: Counter<'metric'>;
}

export class EventCounters {
  readonly events: CounterFamily<string>;
  readonly errors: CounterFamily<string>;
  readonly #states: StateTable;
  readonly #optIn: ReadonlySet<OptInLabel>;
  readonly #eventsGuard: SeriesGuard<string>;
  readonly #errorsGuard: SeriesGuard<string>;
  readonly #dropped: Counter<'metric'> | undefined;
  readonly #targets = new Map<string, Target>();
  /** Increments folded into overflow series: all time, and not yet added to `dropped`. */
  readonly #foldedTotal = new Map<string, number>();
  #foldedEventsPending = 0;
  #foldedErrorsPending = 0;

  constructor(options: EventCountersOptions) {
    this.#states = options.states;
    this.#optIn = new Set(options.optIn);
    this.#dropped = options.dropped;
    const optInNames = OPT_IN_LABELS.filter((name) => this.#optIn.has(name));
    const events = metricOptions(LOGS_FAMILIES.events);
    this.events = new CounterFamily({
      ...events,
      labelNames: [...events.labelNames, ...optInNames],
      registry: options.registry,
    });
    this.errors = new CounterFamily({ ...metricOptions(LOGS_FAMILIES.errors), registry: options.registry });
    const guard = (metric: string, keep: string): SeriesGuard<string> =>
      new SeriesGuard<string>({
        metric,
        limit: options.seriesLimit,
        keep: [keep],
        ...(options.dropped ? { dropped: options.dropped } : {}),
        ...(options.truncated ? { truncated: options.truncated } : {}),
      });
    this.#eventsGuard = guard(EVENTS_METRIC, 'state');
    this.#errorsGuard = guard(ERRORS_METRIC, 'reason');
    for (const metric of [EVENTS_METRIC, ERRORS_METRIC]) this.#foldedTotal.set(metric, 0);
  }

  /** The target of an entry (hot path: one string and one map lookup when known). */
  targetOf(entry: LogEntry): Target {
    const queue = entry.queueName ?? '';
    const group = entry.topicName ?? '';
    const endpoint = entry.endpointName ?? '';
    const url = entry.url ?? '';
    // The common case (a plain URL, default labels) is keyed by the URL itself: no concatenation.
    // Composite keys start with \u0001, which a URL does not, so the two kinds never collide.
    let key = url;
    if (queue !== '' || group !== '' || endpoint !== '')
      key = `\u0001${queue}\u0000${group}\u0000${endpoint}\u0000${url}`;
    if (this.#optIn.size > 0) key += `\u0000\u0000${entry.scheduleId ?? ''}\u0000${firstLabel(entry)}`;
    const known = this.#targets.get(key);
    if (known !== undefined) return known;
    if (this.#targets.size >= TARGET_CACHE_LIMIT) this.#targets.clear();
    const target = this.#createTarget(entry, queue, group, endpoint, url);
    this.#targets.set(key, target);
    return target;
  }

  countEvent(target: Target, stateIndex: number): void {
    const series = target.events[stateIndex] ?? this.#addState(target, stateIndex);
    series.value += 1;
    if (target.eventsFolded) this.#foldedEventsPending += 1;
  }

  countError(target: Target, reasonIndex: number): void {
    const errors = target.errors ?? this.#addErrors(target);
    errors[reasonIndex]!.value += 1;
    if (target.errorsFolded) this.#foldedErrorsPending += 1;
  }

  /** Adds the folded increments counted since the last flush to series_dropped_total. */
  flushFolded(): void {
    this.#flush(EVENTS_METRIC, this.#foldedEventsPending);
    this.#flush(ERRORS_METRIC, this.#foldedErrorsPending);
    this.#foldedEventsPending = 0;
    this.#foldedErrorsPending = 0;
  }

  /** All-time folded increments by metric, flushed or not, for the checkpoint. */
  foldedTotals(): Record<string, number> {
    return {
      [EVENTS_METRIC]: (this.#foldedTotal.get(EVENTS_METRIC) ?? 0) + this.#foldedEventsPending,
      [ERRORS_METRIC]: (this.#foldedTotal.get(ERRORS_METRIC) ?? 0) + this.#foldedErrorsPending,
    };
  }

  /**
   * Restores both families and re-admits their label sets to the series cap (before any new
   * admission). Folded totals are added to series_dropped_total so it continues too.
   */
  restore(
    state: {
      events: Parameters<CounterFamily<string>['restore']>[0];
      errors: Parameters<CounterFamily<string>['restore']>[0];
    },
    folded: Record<string, number>,
  ): { events: boolean; errors: boolean } {
    const events = this.events.restore(state.events);
    const errors = this.errors.restore(state.errors);
    this.#eventsGuard.restoreState(admittedSets(this.events.all()));
    this.#errorsGuard.restoreState(admittedSets(this.errors.all()));
    for (const metric of [EVENTS_METRIC, ERRORS_METRIC]) {
      const value = folded[metric] ?? 0;
      if (value > 0) this.#flush(metric, value);
    }
    return { events, errors };
  }

  #flush(metric: string, value: number): void {
    if (value <= 0) return;
    this.#foldedTotal.set(metric, (this.#foldedTotal.get(metric) ?? 0) + value);
    this.#dropped?.inc({ metric }, value);
  }

  #createTarget(entry: LogEntry, queue: string, group: string, endpoint: string, url: string): Target {
    const labels: Record<string, string> = {
      queue: cleanLabel(queue),
      url_group: cleanLabel(group),
      endpoint: cleanLabel(endpoint),
      destination: cleanLabel(hostOf(url)),
    };
    if (this.#optIn.has('schedule_id')) labels.schedule_id = cleanLabel(entry.scheduleId ?? '');
    if (this.#optIn.has('label')) labels.label = cleanLabel(firstLabel(entry));
    if (this.#optIn.has('url')) labels.url = cleanLabel(safeUrlOf(url));
    const names = this.#states.names;
    const sets = names.map((state) => ({ state, ...labels }));
    const admitted = admitGroup(this.#eventsGuard, this.events, sets);
    return {
      events: admitted.series,
      errors: null,
      labels,
      queue: labels.queue!,
      destination: labels.destination!,
      eventsFolded: admitted.folded,
      errorsFolded: false,
    };
  }

  #addState(target: Target, stateIndex: number): CounterSeries {
    const labels = { state: this.#states.names[stateIndex] ?? 'UNKNOWN', ...target.labels };
    const admitted = admitGroup(this.#eventsGuard, this.events, [labels]);
    // A target keeps one fate: if it was folded, so is its new state.
    const series = target.eventsFolded ? this.events.series(this.#eventsGuard.overflowOf(labels)) : admitted.series[0]!;
    target.events[stateIndex] = series;
    return series;
  }

  #addErrors(target: Target): CounterSeries[] {
    const defaults = {
      queue: target.labels.queue!,
      url_group: target.labels.url_group!,
      endpoint: target.labels.endpoint!,
      destination: target.destination,
    };
    const admitted = admitGroup(
      this.#errorsGuard,
      this.errors,
      ERROR_REASONS.map((reason) => ({ reason, ...defaults })),
    );
    target.errors = admitted.series;
    target.errorsFolded = admitted.folded;
    return admitted.series;
  }
}

/** Admits label sets together, or folds them all into the overflow series. */
function admitGroup(
  guard: SeriesGuard<string>,
  family: CounterFamily<string>,
  sets: ReadonlyArray<Labels>,
): { series: CounterSeries[]; folded: boolean } {
  // Far from the cap there is room whatever is known already; near it, count what is new.
  let missing = sets.length;
  if (guard.size + missing > guard.limit) {
    missing = 0;
    for (const set of sets) if (!guard.has(set)) missing += 1;
  }
  if (guard.size + missing <= guard.limit) {
    // Increment 0: admission never folds here, room was checked.
    return { series: sets.map((set) => family.series(guard.admit(set, 0))), folded: false };
  }
  return { series: sets.map((set) => family.series(guard.overflowOf(set))), folded: true };
}

function admittedSets(series: Iterable<CounterSeries>): Labels[] {
  const sets: Labels[] = [];
  for (const item of series) {
    if (!Object.values(item.labels).includes(OVERFLOW_LABEL_VALUE)) sets.push(item.labels);
  }
  return sets;
}

/** The opt-in `label` label: the first label of the message (the deprecated `label` field). */
function firstLabel(entry: LogEntry): string {
  return entry.label ?? entry.labels?.[0] ?? '';
}
