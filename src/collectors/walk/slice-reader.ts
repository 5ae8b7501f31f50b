// Reading one slice of the walk: each of its walks (one, or one per state when entries come
// without one) down to the slice's start by cursor chains, page by page, each page counted by
// the walk's counter (WalkCounter) into a PageTally. The walker (walker.ts) plans the slices
// and completes them; a reader is shared by the cycle's parallel chains (chains.ts).
import type { LogsPage, LogsQuery } from '../../api/delivery.js';
import type { Logger } from '../../logging/index.js';
import type { CheckpointGate } from './chains.js';
import type { CycleClock } from './cycle-clock.js';
import type { AdaptiveOverlap } from './overlap.js';
import { PageTally } from './page-tally.js';
import type { PageSizer } from './page-size.js';
import type { SliceState, WalkState } from './position-schema.js';
import { absorbTally, isRejectedRequest, pageSignature, stateWalks } from './slice.js';
import { splitForIdle } from './slice-plan.js';
import type { CursorChain, LogsSource, WalkCounter, WalkerHooks, WalkOutcome, WalkPosition } from './walk-types.js';

/** The overlap re-read folded into a slice's walk covers at least this much (#overlapReadEnough). */
export const MIN_FOLDED_OVERLAP_MS = 1_000;

export interface SliceReaderParts {
  source: LogsSource;
  counter: WalkCounter;
  logger: Logger;
  hooks: Pick<WalkerHooks, 'onPage' | 'onLate'>;
  now: () => number;
  clock: CycleClock;
  overlap: AdaptiveOverlap;
  pageSizer: PageSizer;
  gate: CheckpointGate;
  /** The walk's position: its slices in progress, and whether it walks per state. */
  position: () => WalkPosition;
}

export class SliceReader {
  /** Pages left in the cycle's budget. */
  pagesLeft = 0;
  /** Late entries since the last completed slice (only the slice at the watermark can find them). */
  sliceLate = 0;
  /** The chains of the running cycle: idle ones wait for a split (null: none running). */
  chains: { idle(): number; wake(): void } | null = null;
  /** Most slices walked at once in this cycle (slice-plan.ts, chainsWorthWalking). */
  parallel = 1;
  readonly #source: LogsSource;
  readonly #counter: WalkCounter;
  readonly #logger: Logger;
  readonly #hooks: Pick<WalkerHooks, 'onPage' | 'onLate'>;
  readonly #now: () => number;
  readonly #clock: CycleClock;
  readonly #overlap: AdaptiveOverlap;
  readonly #pageSizer: PageSizer;
  readonly #gate: CheckpointGate;
  readonly #position: () => WalkPosition;
  readonly #tally = new PageTally();
  /** Dedup walk stamp of each cursor chain this process started (a chain it did not start gets a new one). */
  readonly #chainStamps = new WeakMap<WalkState, number>();

  constructor(parts: SliceReaderParts) {
    this.#source = parts.source;
    this.#counter = parts.counter;
    this.#logger = parts.logger;
    this.#hooks = parts.hooks;
    this.#now = parts.now;
    this.#clock = parts.clock;
    this.#overlap = parts.overlap;
    this.#pageSizer = parts.pageSizer;
    this.#gate = parts.gate;
    this.#position = parts.position;
  }

  /** Walks the slice's walks in turn (one, or one per state): how it ended. */
  async read(slice: SliceState, signal: AbortSignal): Promise<WalkOutcome> {
    const walks = slice.walks;
    for (const walk of walks) {
      if (walk.done) continue;
      const outcome = await this.#walk(slice, walk, signal);
      if (outcome !== 'done') return outcome;
      if (slice.walks !== walks) return 'switched';
    }
    return 'done';
  }

  /**
   * Walks one filter of a slice down to `slice.from`. The chain of cursors in progress is kept
   * in the walk state, so a walk stopped by the page budget continues where it was (even inside
   * a millisecond holding more than a page of entries). A chain that stalls (a cursor seen
   * before, an empty page that still has a cursor, the same page twice) is abandoned and a
   * fresh chain starts from the resume point, as long as that point keeps moving down.
   */
  async #walk(slice: SliceState, walk: WalkState, signal: AbortSignal): Promise<WalkOutcome> {
    const filterState = walk.state === null ? -1 : this.#counter.states.indexOf(walk.state);
    let restartFloor = Number.POSITIVE_INFINITY;
    for (;;) {
      const chain = this.#startChain(slice, walk);
      const end = await this.#followChain(slice, walk, chain, filterState, signal);
      if (typeof end === 'string') return end;
      walk.cursor = null;
      walk.chainTo = null;
      if (end.stall === '') continue;
      if (chain.orderBroken || !(chain.lowest < restartFloor)) {
        this.#logger.warn(
          { reason: end.stall, resumeTo: walk.resumeTo },
          'log walk stalled; it resumes on the next cycle',
        );
        return 'stalled';
      }
      this.#logger.info(
        { reason: end.stall, resumeTo: walk.resumeTo },
        'log walk stalled; walking again from the last entry read',
      );
      restartFloor = chain.lowest;
    }
  }

  /** Continues the stored chain (same walk, unless this process never saw its start), or starts a new one below everything read. */
  #startChain(slice: SliceState, walk: WalkState): CursorChain {
    const continuing = walk.cursor !== null && walk.chainTo !== null;
    let stamp = this.#chainStamps.get(walk);
    if (!continuing || stamp === undefined) {
      this.#counter.dedup.beginWalk();
      stamp = this.#counter.dedup.stamp;
      this.#chainStamps.set(walk, stamp);
    }
    if (!continuing) {
      walk.cursor = null;
      walk.chainTo = walk.resumeTo ?? slice.top;
    }
    // The chain's cursor; mirrored into the walk state (kept across cycles and checkpoints)
    // only while the pages come newest first: a disordered chain has no safe resume point.
    const cursor = walk.cursor;
    return {
      stamp,
      toDate: walk.chainTo!,
      cursor,
      followed: new Set<string>(cursor === null ? [] : [cursor]),
      previousSignature: '',
      lowest: walk.resumeTo ?? Number.POSITIVE_INFINITY,
      orderBroken: false,
      count: this.#pageSizer.chainStart(),
      pages: 0,
    };
  }

  /**
   * Follows a chain page by page: how the walk ends (done, or stopped), or the stall that ends
   * the chain ('': none, a new chain starts from the resume point).
   */
  async #followChain(
    slice: SliceState,
    walk: WalkState,
    chain: CursorChain,
    filterState: number,
    signal: AbortSignal,
  ): Promise<WalkOutcome | { stall: string }> {
    for (;;) {
      // Another chain switched the slices to one walk per state: this walk is gone.
      if (!slice.walks.includes(walk)) return 'switched';
      if (this.pagesLeft <= 0) return 'budget';
      const pendingWaitMs = this.#source.pendingLogsWaitMs?.() ?? 0;
      if (!this.#clock.allows(this.#now(), pendingWaitMs)) return 'time';
      const sentAt = this.#now();
      const page = await this.#request(slice, walk, chain, signal);
      if (page === 'refused') return { stall: '' };
      if (page === 'smaller') continue;
      // Nothing is counted while a checkpoint is written: /metrics shows, after the write, the
      // values of the snapshot it wrote, and a page counted meanwhile would show in them.
      while (this.#gate.writing !== null) await this.#gate.writing;
      if (!slice.walks.includes(walk)) return 'switched';
      this.#pageSizer.observe(chain.count, page);
      chain.count = Math.min(chain.count, this.#pageSizer.size);
      // This request's own wait for its rate-limit slot, as announced before it was sent: the
      // source's total waits also hold the other chains' waits meanwhile, which would make a
      // request look nearly free and the chains worth walking too few (slice-plan.ts, chainsWorthWalking).
      this.#clock.requestDone(this.#now() - sentAt, pendingWaitMs);
      this.pagesLeft -= 1;
      slice.pages += 1;
      chain.pages += 1;
      this.#hooks.onPage();
      // The same page again (under a new cursor): its entries would read as twins. Not counted.
      const signature = pageSignature(page);
      if (signature !== '' && signature === chain.previousSignature)
        return { stall: 'the service returned the same page twice' };

      this.#countPage(slice, walk, chain, page, filterState);
      if (this.#tally.missingState > 0 && !this.#position().stateWalk) {
        this.#switchToStateWalk(slice);
        return 'switched';
      }
      if (page.cursor === undefined || this.#overlapReadEnough(slice, chain.lowest, chain.orderBroken)) {
        walk.done = true;
        walk.cursor = null;
        walk.chainTo = null;
        return 'done';
      }
      if (chain.followed.has(page.cursor)) return { stall: 'the service returned a cursor already followed' };
      if (page.logs.length === 0) return { stall: 'the service returned an empty page with a cursor' };
      if (!chain.orderBroken && this.#splitForIdle(slice, chain.lowest, chain.toDate, chain.pages))
        return { stall: '' };
      chain.followed.add(page.cursor);
      chain.cursor = page.cursor;
      if (!chain.orderBroken) walk.cursor = chain.cursor;
      chain.previousSignature = signature;
      if (this.#gate.due) await this.#gate.write();
    }
  }

  /** The chain's next page; 'refused': its stored cursor is no longer accepted; 'smaller': ask again, for fewer entries. */
  async #request(
    slice: SliceState,
    walk: WalkState,
    chain: CursorChain,
    signal: AbortSignal,
  ): Promise<LogsPage | 'refused' | 'smaller'> {
    const query: LogsQuery = { fromDate: slice.from, toDate: chain.toDate, count: chain.count };
    if (chain.cursor !== null) query.cursor = chain.cursor;
    if (walk.state !== null) query.state = walk.state;
    try {
      return await this.#source.logsPage(query, { signal });
    } catch (error) {
      // A stored cursor the service no longer accepts: start a new chain from the resume point.
      if (chain.cursor !== null && isRejectedRequest(error)) {
        this.#logger.info(
          { status: (error as { status?: number }).status },
          'stored log cursor refused; walking again from the last entry read',
        );
        return 'refused';
      }
      // Too large or too slow: the same cursor again, for fewer entries.
      const smaller = this.#pageSizer.shrink(chain.count, error);
      if (smaller === null) throw error;
      chain.count = smaller;
      return 'smaller';
    }
  }

  /** Counts a page into the slice, and into the chain's lowest time, its order and the walk's resume point. */
  #countPage(slice: SliceState, walk: WalkState, chain: CursorChain, page: LogsPage, filterState: number): void {
    const tally = this.#tally;
    tally.reset(chain.lowest);
    this.#counter.dedup.useWalk(chain.stamp);
    this.#counter.countPage(page.logs, filterState, slice.basis, tally);
    absorbTally(slice, tally);
    // New log time only: late entries found in the overlap would inflate the rate of arrival.
    this.#clock.page(page.logs.length, tally.counted - tally.late);
    if (tally.late > 0) {
      this.sliceLate += tally.late;
      this.#hooks.onLate(tally.late);
    }
    chain.lowest = tally.lowest;
    if (tally.orderBroken && !chain.orderBroken) {
      chain.orderBroken = true;
      walk.cursor = null;
      walk.chainTo = null;
      this.#logger.warn(
        { toDate: chain.toDate },
        'log page not ordered newest first; this walk will not be resumed midway',
      );
    }
    if (!chain.orderBroken && chain.lowest !== Number.POSITIVE_INFINITY) walk.resumeTo = chain.lowest;
  }

  /**
   * The re-read folded into the slice's own walk (docs/counting.md, "Ingestion delay and
   * overlap"): once a page has reached below the watermark the slice started from, every new
   * entry is read, and what is left of the chain is the overlap re-read. While the service shows
   * no late entries (the overlap at its configured length) and one walk reads the slice, the
   * re-read takes what the pages of new entries leave room for, at least MIN_FOLDED_OVERLAP_MS:
   * a request is not spent on re-read entries alone. A grown overlap is read in full.
   */
  #overlapReadEnough(slice: SliceState, lowest: number, orderBroken: boolean): boolean {
    if (orderBroken || slice.walks.length !== 1 || this.#overlap.grown) return false;
    const floor = Math.max(slice.from, slice.basis - Math.min(MIN_FOLDED_OVERLAP_MS, this.#overlap.currentMs));
    return lowest < floor;
  }

  /** A chain waits for work and this walk has many pages left: the older half of its unread part goes to it (slice-plan.ts). */
  #splitForIdle(slice: SliceState, lowest: number, chainTop: number, chainPages: number): boolean {
    if (this.chains === null || this.chains.idle() === 0) return false;
    if (!splitForIdle(this.#position().slices, slice, { lowest, chainTop, chainPages, parallel: this.parallel }))
      return false;
    this.chains.wake();
    return true;
  }

  /** Entries without `state`: walk the slices in progress again, one filtered walk per state. */
  #switchToStateWalk(slice: SliceState): void {
    this.#position().stateWalk = true;
    const filters = this.#counter.states.walkFilters;
    for (const other of this.#position().slices) other.walks = stateWalks(filters);
    slice.walks = stateWalks(filters);
    this.#logger.warn('log entries come without a state field: switching to one filtered walk per state');
  }
}
