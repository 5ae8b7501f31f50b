// The duration and attempts histogram series of one (queue, destination) for every outcome,
// admitted to the series caps together and found again by queue, then destination: no key is
// built per message finished (tracker.ts).
import type { SeriesGuard } from '../../metrics/cardinality.js';
import type { HistogramFamily, HistogramSeries, Labels } from '../walk/families.js';
import { OUTCOMES } from './states.js';

/** Most groups remembered; beyond it the cache starts over (series stay). */
const GROUP_CACHE_LIMIT = 10_000;

export interface OutcomeGroup {
  durations: HistogramSeries[];
  attempts: HistogramSeries[];
  folded: boolean;
}

export class OutcomeGroups {
  readonly #groups = new Map<string, Map<string, OutcomeGroup>>();
  #count = 0;

  constructor(
    private readonly durationGuard: SeriesGuard<string>,
    private readonly durations: HistogramFamily<string>,
    private readonly attemptsGuard: SeriesGuard<string>,
    private readonly attempts: HistogramFamily<string>,
  ) {}

  of(queue: string, destination: string): OutcomeGroup {
    let byDestination = this.#groups.get(queue);
    let group = byDestination?.get(destination);
    if (group === undefined) {
      const sets = OUTCOMES.map((outcome) => ({ outcome, queue, destination }));
      const durations = admit(this.durationGuard, this.durations, sets);
      const attempts = admit(this.attemptsGuard, this.attempts, sets);
      group = { durations: durations.series, attempts: attempts.series, folded: durations.folded || attempts.folded };
      if (this.#count >= GROUP_CACHE_LIMIT) {
        this.#groups.clear();
        this.#count = 0;
        byDestination = undefined;
      }
      if (byDestination === undefined) {
        byDestination = new Map();
        this.#groups.set(queue, byDestination);
      }
      byDestination.set(destination, group);
      this.#count += 1;
    }
    return group;
  }
}

/** Admits the outcomes of one (queue, destination) together, or folds them all. */
function admit(
  guard: SeriesGuard<string>,
  family: HistogramFamily<string>,
  sets: ReadonlyArray<Labels>,
): { series: HistogramSeries[]; folded: boolean } {
  let missing = sets.length;
  if (guard.size + missing > guard.limit) {
    missing = 0;
    for (const set of sets) if (!guard.has(set)) missing += 1;
  }
  if (guard.size + missing <= guard.limit)
    return { series: sets.map((set) => family.series(guard.admit(set, 0))), folded: false };
  return { series: sets.map((set) => family.series(guard.overflowOf(set))), folded: true };
}
