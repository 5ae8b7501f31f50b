// What one page contributed to a walk, filled by the walk's counter (WalkCounter.countPage) and
// read by the walker; one instance is reused for every page.

/** What one page contributed; reset by the caller before each page. */
export class PageTally {
  counted = 0;
  duplicates = 0;
  /** Entries without `state`; in a walk without a state filter they are not counted. */
  missingState = 0;
  withState = 0;
  /** Some entry is at or before the basis time (the watermark before the slice). */
  atOrBeforeBasis = false;
  oldestCounted = Number.POSITIVE_INFINITY;
  newestCounted = Number.NEGATIVE_INFINITY;
  /** Lowest entry time of the walk so far (carried across pages by the caller). */
  lowest = Number.POSITIVE_INFINITY;
  /** An entry was newer than one before it: the service did not answer newest first. */
  orderBroken = false;
  /** Entries counted at or before the basis: they became visible after the walk had passed them. */
  late = 0;

  reset(lowest: number): void {
    this.counted = 0;
    this.duplicates = 0;
    this.missingState = 0;
    this.withState = 0;
    this.atOrBeforeBasis = false;
    this.oldestCounted = Number.POSITIVE_INFINITY;
    this.newestCounted = Number.NEGATIVE_INFINITY;
    this.lowest = lowest;
    this.orderBroken = false;
    this.late = 0;
  }
}
