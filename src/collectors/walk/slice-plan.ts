// How a cycle shares the walk out among its chains: the starting position, how many chains are
// worth walking, the pages a slice aims at, and when a chain's unread part is split for a
// chain left waiting.
import type { SliceState } from './position-schema.js';
import { splitUnread } from './slice.js';
import {
  DEFAULT_PARALLEL_SLICES,
  INITIAL_SLICE_MS,
  MIN_SLICE_MS,
  TARGET_PAGES_PER_SLICE,
  type WalkPosition,
  type WalkSettings,
} from './walk-types.js';

/** A walk is split for a waiting chain when twice its slice's target pages (at least this many), and this much log time, are left. */
const MIN_SPLIT_PAGES = 8;
const MIN_SPLIT_MS = 50;
/** Slices kept at once (complete ones waiting for the front included), per parallel chain. */
export const MAX_SLICES_PER_CHAIN = 2;

/**
 * Without state: start at the frontier, so history is not dumped into counters. The first
 * slices' length, before any slice has measured the event rate, is shared by the chains like
 * the target pages (targetPages): with 4 chains four slices of INITIAL_SLICE_MS each held
 * about 250,000 identities in the window at 1,000 events/s (docs/performance.md, "Memory").
 */
export function freshPosition(now: number, settings: WalkSettings): WalkPosition {
  const start = now - settings.ingestionDelayMs;
  const parallel = Math.max(1, settings.maxParallelSlices ?? DEFAULT_PARALLEL_SLICES);
  return {
    watermark: start,
    watermarkReadAt: now,
    dedupFrom: start + 1,
    anchorTime: 0,
    sliceMs: Math.max(MIN_SLICE_MS, Math.round(INITIAL_SLICE_MS / parallel)),
    stateWalk: false,
    gapSince: null,
    rateEwma: null,
    slices: [],
  };
}

/**
 * Pages a slice aims at: TARGET_PAGES_PER_SLICE shared by the `parallel` chains (at least
 * MIN_SPLIT_PAGES), so the window holds about as much with parallel chains as with one.
 */
export function targetPages(parallel: number): number {
  return Math.max(MIN_SPLIT_PAGES, Math.round(TARGET_PAGES_PER_SLICE / parallel));
}

/**
 * Most slices walked at once in a cycle: as many chains as it takes to use the request rate
 * the rate limit allows (twice what the request time says, so one slow page does not leave the
 * budget idle), at most `configured`. While the limit, not the request time, bounds a chain
 * (5 requests a second of 50 ms: one chain could send 20), more chains add nothing but a
 * part-filled last page each and a watermark held back by slices that all finish late.
 */
export function chainsWorthWalking(
  configured: number,
  allowedPerSecond: number | undefined,
  requestMs: number | null,
): number {
  if (configured === 1 || allowedPerSecond === undefined || requestMs === null) return configured;
  return Math.max(1, Math.min(configured, Math.ceil((2 * allowedPerSecond * requestMs) / 1000)));
}

/**
 * When a chain waits for work and the walk of `slice` has many pages left below `lowest`
 * (estimated from the `chainPages` read since `chainTop`): the unread part is split (slice.ts,
 * splitUnread) and the older half goes into `slices` before it, for the waiting chain; the walk
 * starts a new chain on the newer half. False when not worth it.
 */
export function splitForIdle(
  slices: SliceState[],
  slice: SliceState,
  read: { lowest: number; chainTop: number; chainPages: number; parallel: number },
): boolean {
  const { lowest, chainTop, chainPages, parallel } = read;
  const leftMs = lowest - slice.from;
  const readMs = chainTop - lowest;
  if (slice.walks.length !== 1 || leftMs < 2 * MIN_SPLIT_MS || readMs <= 0) return false;
  if ((chainPages * leftMs) / readMs < 2 * targetPages(parallel)) return false;
  const index = slices.indexOf(slice);
  if (index < 0 || slices.length >= MAX_SLICES_PER_CHAIN * parallel) return false;
  const older = splitUnread(slice, lowest);
  if (older === null) return false;
  slices.splice(index, 0, older);
  return true;
}
