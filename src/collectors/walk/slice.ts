// Pure pieces of slice bookkeeping and cursor-chain checks used by the walker: fresh walk
// states, the next slice's length, the retention-gap estimate, and the tests a page or an
// error must pass for a cursor chain to go on.
import type { LogsPage } from '../../api/delivery.js';
import { ApiNotFoundError, ApiUpstreamError } from '../../api/errors.js';
import type { PageTally } from './page-tally.js';
import type { SliceState, WalkState } from './position-schema.js';
import { MAX_SLICE_MS, MIN_SLICE_MS, TARGET_PAGES_PER_SLICE, type GapReport, type WalkPosition } from './walk-types.js';

/** Weight of the newest slice in the smoothed event rate. */
const RATE_WEIGHT = 0.3;

export function newWalk(state: string | null): WalkState {
  return { state, resumeTo: null, cursor: null, chainTo: null, done: false };
}

/** One walk per state filter (the counter's `walkFilters`). */
export function stateWalks(filters: readonly string[]): WalkState[] {
  return filters.map((state) => newWalk(state));
}

/** A slice to walk: `[from, top]`, after the watermark or slice top `basis`; one walk per state of `stateFilters` (null: one plain walk). */
export function newSlice(options: {
  from: number;
  top: number;
  basis: number;
  startedAt: number;
  atFrontier: boolean;
  hadAnchor: boolean;
  stateFilters: readonly string[] | null;
}): SliceState {
  return {
    from: options.from,
    top: options.top,
    startedAt: options.startedAt,
    atFrontier: options.atFrontier,
    basis: options.basis,
    hadAnchor: options.hadAnchor,
    pages: 0,
    counted: 0,
    oldestCounted: null,
    newestCounted: null,
    sawBoundary: false,
    sawStateless: false,
    sawStateField: false,
    walks: options.stateFilters === null ? [newWalk(null)] : stateWalks(options.stateFilters),
  };
}

/** Adds what a page contributed (its tally) to the slice's record. */
export function absorbTally(slice: SliceState, tally: PageTally): void {
  slice.counted += tally.counted;
  if (tally.atOrBeforeBasis) slice.sawBoundary = true;
  if (tally.missingState > 0) slice.sawStateless = true;
  if (tally.withState > 0) slice.sawStateField = true;
  if (tally.counted > 0) {
    slice.oldestCounted = Math.min(slice.oldestCounted ?? Number.POSITIVE_INFINITY, tally.oldestCounted);
    slice.newestCounted = Math.max(slice.newestCounted ?? Number.NEGATIVE_INFINITY, tally.newestCounted);
  }
}

/** All walks of the slice are done. */
export function sliceComplete(slice: SliceState): boolean {
  return slice.walks.every((walk) => walk.done);
}

/**
 * The length slices are cut to in a cycle, so that the range left to read (`leftMs`) is walked
 * by up to `parallel` chains at once: when more than two cycles' worth (`cycleMs`) is left (a
 * backlog, or a walk that fell behind), the range divided by `parallel` (at least MIN_SLICE_MS);
 * otherwise no cut (one slice, one chain, as long as it takes fewer than about 50 pages).
 */
export function splitLength(leftMs: number, cycleMs: number, parallel: number): number {
  if (parallel <= 1 || cycleMs <= 0 || leftMs <= 2 * cycleMs) return Number.POSITIVE_INFINITY;
  return Math.max(MIN_SLICE_MS, Math.ceil(leftMs / parallel));
}

/** The length of the next slice so it takes about `targetPages` pages per walk (null: keep). */
export function adaptedSliceMs(slice: SliceState, targetPages = TARGET_PAGES_PER_SLICE): number | null {
  const pagesPerWalk = slice.pages / slice.walks.length;
  const span = slice.top - slice.basis;
  if (pagesPerWalk < 1 || span <= 0) return null;
  const wanted = (span * targetPages) / pagesPerWalk;
  return Math.round(Math.min(MAX_SLICE_MS, Math.max(MIN_SLICE_MS, wanted)));
}

/**
 * Entries lost between `since` and the oldest entry still there, at the event rate seen in
 * the entries that remain (or the smoothed rate before the gap).
 */
export function estimateGap(since: number, slice: SliceState, rateEwma: number | null): GapReport {
  const until = slice.oldestCounted!;
  const interval = Math.max(0, until - since);
  let rate = rateEwma;
  const newest = slice.newestCounted ?? until;
  if (slice.counted >= 10 && newest > until) rate = (slice.counted - 1) / (newest - until);
  const estimatedEvents = rate === null ? 0 : Math.round(rate * interval);
  return { since, until, estimatedEvents };
}

export /** The service refused the request itself (a 4xx other than auth and rate limit). */
function isRejectedRequest(error: unknown): boolean {
  return (
    error instanceof ApiNotFoundError ||
    (error instanceof ApiUpstreamError && error.status !== undefined && error.status >= 400 && error.status < 500)
  );
}

/** Cheap identity of a page: its size and its first and last entries. */
export function pageSignature(page: LogsPage): string {
  const first = page.logs[0];
  const last = page.logs[page.logs.length - 1];
  if (first === undefined || last === undefined) return '';
  return `${page.logs.length}|${first.time}|${first.messageId}|${first.state ?? ''}|${last.time}|${last.messageId}|${last.state ?? ''}`;
}

/**
 * After `slice` completed (the front one): the retention check (docs/counting.md, "Gaps"), the
 * smoothed event rate, the watermark and the next slice's length. The anchor is the caller's.
 */
export function advancePosition(
  position: WalkPosition,
  slice: SliceState,
  targetPages = TARGET_PAGES_PER_SLICE,
): { gap: GapReport | null; anchorGone: boolean } {
  // Retention overrun: entries counted at or before the watermark (the anchor) are gone, so
  // the service dropped everything up to some point after it.
  const anchorGone = slice.hadAnchor && !slice.sawBoundary;
  if (anchorGone && position.gapSince === null) position.gapSince = slice.basis;
  let gap: GapReport | null = null;
  if (position.gapSince !== null) {
    if (slice.oldestCounted !== null) {
      gap = estimateGap(position.gapSince, slice, position.rateEwma);
      position.gapSince = null;
    } else if (slice.atFrontier) {
      // Up to the frontier and nothing there: the anchor aged out of a quiet log, nothing lost.
      position.gapSince = null;
    }
  }
  const span = slice.top - slice.basis;
  if (gap === null && span > 0) {
    const rate = slice.counted / span;
    position.rateEwma = position.rateEwma === null ? rate : RATE_WEIGHT * rate + (1 - RATE_WEIGHT) * position.rateEwma;
  }
  position.watermark = slice.top;
  position.watermarkReadAt = slice.startedAt;
  const sliceMs = adaptedSliceMs(slice, targetPages);
  if (sliceMs !== null) position.sliceMs = sliceMs;
  return { gap, anchorGone };
}

/**
 * Where the next slice at the watermark starts reading, given the overlap to re-read (0 while
 * the rate limit bounds the walk). Near the frontier, the overlap before the watermark: entries
 * written late (after the ingestion delay) are caught there. Deep in a backlog the entries were
 * long visible when read: then only the watermark's millisecond is re-read. The anchor's
 * millisecond is always re-read (retention check), and never anything below the window's start.
 */
export function nextFrom(position: WalkPosition, ingestionDelayMs: number, overlapMs: number): number {
  const { watermark, watermarkReadAt, anchorTime, dedupFrom } = position;
  const settled = Math.min(watermark, watermarkReadAt - ingestionDelayMs - overlapMs);
  const base = Math.max(watermark - overlapMs, settled);
  const from = anchorTime > 0 ? Math.min(base, anchorTime) : base;
  return Math.max(from, dedupFrom);
}

/**
 * Splits the unread part of a slice being walked (everything below `lowest`, the lowest time
 * its chain has read) in two: the returned slice takes the older half with the slice's start,
 * watermark and anchor check (all of the slice at or before its basis); `slice` keeps the newer
 * half and must start a new chain from its resume point (its cursor belongs to the old bounds).
 * No millisecond is in both. Null when the unread part after the basis is too short.
 */
export function splitUnread(slice: SliceState, lowest: number): SliceState | null {
  // The older half keeps everything at or before the watermark (the re-read, the anchor).
  const mid = Math.max(slice.basis + 1, lowest - Math.floor((lowest - slice.from) / 2));
  if (mid >= lowest) return null;
  // The retention check goes with the older half, unless an entry at or before the watermark was seen already.
  const older = newSlice({
    from: slice.from,
    top: mid - 1,
    basis: slice.basis,
    startedAt: slice.startedAt,
    atFrontier: false,
    hadAnchor: slice.hadAnchor && !slice.sawBoundary,
    stateFilters: null,
  });
  slice.from = mid;
  slice.basis = mid - 1;
  slice.hadAnchor = false;
  return older;
}
