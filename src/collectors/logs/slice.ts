// Pure pieces of slice bookkeeping and cursor-chain checks used by the walker: fresh walk
// states, the next slice's length, the retention-gap estimate, and the tests a page or an
// error must pass for a cursor chain to go on.
import type { LogsPage } from '../../api/delivery.js';
import { ApiNotFoundError, ApiUpstreamError } from '../../api/errors.js';
import type { SliceState, WalkState } from '../../state/index.js';
import { KNOWN_STATES } from './states.js';
import { MAX_SLICE_MS, MIN_SLICE_MS, TARGET_PAGES_PER_SLICE, type GapReport } from './walk-types.js';

export function newWalk(state: string | null): WalkState {
  return { state, resumeTo: null, cursor: null, chainTo: null, done: false };
}

export function stateWalks(): WalkState[] {
  return KNOWN_STATES.map((state) => newWalk(state));
}

/** The length of the next slice so it takes about TARGET_PAGES_PER_SLICE pages per walk (null: keep). */
export function adaptedSliceMs(slice: SliceState): number | null {
  const pagesPerWalk = slice.pages / slice.walks.length;
  const span = slice.top - slice.basis;
  if (pagesPerWalk < 1 || span <= 0) return null;
  const wanted = (span * TARGET_PAGES_PER_SLICE) / pagesPerWalk;
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
  return error instanceof ApiNotFoundError || (error instanceof ApiUpstreamError && error.status !== undefined && error.status >= 400 && error.status < 500);
}

/** Cheap identity of a page: its size and its first and last entries. */
export function pageSignature(page: LogsPage): string {
  const first = page.logs[0];
  const last = page.logs[page.logs.length - 1];
  if (first === undefined || last === undefined) return '';
  return `${page.logs.length}|${first.time}|${first.messageId}|${first.state ?? ''}|${last.time}|${last.messageId}|${last.state ?? ''}`;
}
