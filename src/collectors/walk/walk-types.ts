// The walk's vocabulary: its settings, its persisted position, what a cycle reports, the
// hooks the collector gives it, the source it reads from, and the sizes it works with.
import type { LogEntry, LogsPage, LogsQuery } from '../../api/delivery.js';
import type { PageTally } from './page-tally.js';
import type { SliceState } from './position-schema.js';

/** Pages a slice aims at; its length in time adapts to the event rate to stay near this. */
export const TARGET_PAGES_PER_SLICE = 50;
export const MIN_SLICE_MS = 1_000;
export const MAX_SLICE_MS = 3_600_000;
export const INITIAL_SLICE_MS = 60_000;

export interface LogsSource {
  logsPage(query: LogsQuery, call?: { signal?: AbortSignal }): Promise<LogsPage>;
  /** How long the next logsPage would wait for its rate-limit window (absent: never waits). */
  pendingLogsWaitMs?(): number;
  /**
   * The logs endpoint's announced burst limit and the requests per second the source allows
   * itself there (its share of the limit); undefined while no limit was announced. Absent: the
   * source knows of none.
   */
  logsRateLimit?(): { limit: number; allowedPerSecond: number } | undefined;
  /** Requests the burst limit held back, all time: 429 answers and waits for a window announced spent (absent: none). */
  logsRateLimitHeld?(): number;
  /**
   * The upstream's clock, learnt from its answers (src/api/upstream-clock.ts): the walk's
   * frontier is the upstream's now minus the ingestion delay. Absent: the walk's own clock.
   */
  readonly upstreamClock?: { readonly known: boolean; now(): number };
}

/**
 * What the walk needs of its counter: LogCounter (counter.ts) for the delivery logs; the
 * workflows collector (src/collectors/workflows) gives its own, counting runs.
 */
export interface WalkCounter {
  /**
   * The states of entries: `indexOf` gives the filter index a page is counted with, and
   * `walkFilters` the states walked one by one when entries come without a state (PageTally's
   * `missingState`).
   */
  readonly states: { indexOf(raw: string): number; readonly walkFilters: readonly string[] };
  readonly dedup: {
    readonly stamp: number;
    beginWalk(): void;
    useWalk(stamp: number): void;
    prune(from: number): void;
    rewind(from: number, watermark: number): void;
  };
  readonly tracker: { finishSlice(upTo: number): unknown };
  readonly lastEventTime: number;
  countPage(entries: readonly LogEntry[], filterState: number, basis: number, tally: PageTally): void;
}

export interface WalkSettings {
  ingestionDelayMs: number;
  overlapMs: number;
  maxPagesPerCycle: number;
  /** Entries asked for per page (default DEFAULT_PAGE_SIZE); the service's cap is learnt. */
  pageSize?: number;
  /** Most the overlap grows to while late entries show (default MAX_GROWN_OVERLAP_MS; tests lower it). */
  maxGrownOverlapMs?: number;
  /** Most time slices walked at once, each by its own cursor chain (default DEFAULT_PARALLEL_SLICES). */
  maxParallelSlices?: number;
}

export const DEFAULT_PARALLEL_SLICES = 4;

export interface WalkPosition {
  watermark: number;
  /** When the slice that set the watermark started reading, unix ms. */
  watermarkReadAt: number;
  dedupFrom: number;
  /** Time of the newest counted entry as of the watermark; 0 when unknown or gone. */
  anchorTime: number;
  sliceMs: number;
  stateWalk: boolean;
  gapSince: number | null;
  rateEwma: number | null;
  /**
   * The slices in progress, oldest first and adjacent (each starts after the previous one's
   * top); the first starts at the watermark. A slice is complete when all its walks are done;
   * the watermark moves over the complete ones at the front only.
   */
  slices: SliceState[];
}

export interface GapReport {
  /** Watermark after which entries went missing. */
  since: number;
  /** Oldest entry still there. */
  until: number;
  estimatedEvents: number;
}

export interface CycleReport {
  pages: number;
  slicesCompleted: number;
  /** Entries counted although at or before the watermark (visible late). */
  late: number;
  /** Why the cycle stopped before the frontier, if it did ('time': the next poll is due). */
  stopped: 'budget' | 'time' | 'stalled' | null;
  gaps: GapReport[];
  /** Cursor chains the cycle walked at once, at most (slice-plan.ts, chainsWorthWalking). */
  chains: number;
  /** The smoothed request time the chains were chosen on, ms (null: no request timed yet). */
  requestMs: number | null;
}

export interface WalkerHooks {
  /** After every page fetched. */
  onPage(): void;
  /** Persist the position and counters (between pages, so they are consistent). */
  checkpoint(): Promise<void>;
  /** A retention overrun was detected and estimated. */
  onGap(gap: GapReport): void;
  /** Entries were counted at or before the watermark: they became visible after the walk passed them. */
  onLate(count: number): void;
  /** The watermark was found ahead of the upstream's now and moved back (watermark-guard.ts). */
  onWatermarkReset?(reset: WatermarkReset): void;
}

export type WalkOutcome = 'done' | 'budget' | 'time' | 'stalled' | 'switched';

/** A watermark found ahead of the upstream's now, and where the walk reads from again (watermark-guard.ts). */
export interface WatermarkReset {
  /** The watermark (or top of the slices in progress) found, unix ms. */
  found: number;
  upstreamNow: number;
  /** Where the walk reads from again. */
  resumeFrom: number;
  /** The de-duplication window covers the re-read: nothing is counted twice or missed. */
  exact: boolean;
}

/** A cursor chain being followed in one walk of a slice: where it started and what it has read. */
export interface CursorChain {
  /** The de-duplication window's walk stamp of the chain. */
  readonly stamp: number;
  /** toDate of its requests. */
  readonly toDate: number;
  cursor: string | null;
  readonly followed: Set<string>;
  previousSignature: string;
  /** Lowest entry time read so far (in this walk, across its chains). */
  lowest: number;
  /** A page came not newest first: the walk has no safe resume point. */
  orderBroken: boolean;
  /** Entries asked for per page. */
  count: number;
  pages: number;
}
