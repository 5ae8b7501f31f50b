// The incremental walk of the delivery logs (docs/counting.md has the reasoning).
//
// Position: the watermark W (every entry at or before W is counted) and the de-duplication
// window, complete from `dedupFrom` on. Each cycle reads up to the frontier (now minus the
// ingestion delay) in time slices oldest first, each walked newest first by cursor. After every
// page everything above the lowest time seen is read, so a walk can stop anywhere (page budget,
// the next poll due, a stall, an error, a crash) and resume with toDate = that time: entries
// read twice are recognised by the window. A complete slice moves W to its top; the window then
// keeps what the next slice re-reads: the overlap before W (cycle-clock.ts decides when) and the
// anchor's millisecond (its disappearance betrays a retention overrun). Entries found at or
// before W are late: counted, reported, and they make the overlap grow (overlap.ts). When the
// walk is behind, up to `maxParallelSlices` adjacent slices are walked at once, each by its own
// chain (chains.ts); W moves only over the complete slices at the front, and the checkpoint
// holds every slice in progress.
//
// Modules: walk-types.ts (settings, position, reports, hooks), slice.ts (pure slice helpers),
// chains.ts (parallel chains), counter.ts (counting a page), cycle-clock.ts (time and rate-limit
// budget), overlap.ts (the adaptive overlap), page-size.ts (the page size).
import type { LogsPage, LogsQuery } from '../../api/delivery.js';
import type { Logger } from '../../logging/index.js';
import type { SliceState, WalkState } from '../../state/index.js';
import { PageTally } from './counter.js';
import { CycleClock, type RateLimitFacts } from './cycle-clock.js';
import { AdaptiveOverlap } from './overlap.js';
import { advancePosition, isRejectedRequest, newSlice, nextFrom, pageSignature, sliceComplete, splitLength, splitUnread, stateWalks } from './slice.js';
import { runChains } from './chains.js';
import { guardWatermark } from './watermark-guard.js';
import { timeText } from '../../common/time-text.js';
import { DEFAULT_PAGE_SIZE, PageSizer } from './page-size.js';
import { DEFAULT_PARALLEL_SLICES, INITIAL_SLICE_MS, MIN_SLICE_MS, TARGET_PAGES_PER_SLICE } from './walk-types.js';
import type { CycleReport, GapReport, LogsSource, WalkCounter, WalkerHooks, WalkOutcome, WalkPosition, WalkSettings } from './walk-types.js';

export * from './walk-types.js';

/** A walk is split for a waiting chain when twice its slice's target pages (at least this many), and this much log time, are left. */
const MIN_SPLIT_PAGES = 8;
const MIN_SPLIT_MS = 50;
/** Slices kept at once (complete ones waiting for the front included), per parallel chain. */
const MAX_SLICES_PER_CHAIN = 2;
/** A long walk checkpoints at least this often, so a crash loses little work. */
const MID_WALK_CHECKPOINT_MS = 2_000;
/**
 * A completed slice is checkpointed once this many times the last write's duration has passed
 * since it began: in a catch-up slices complete several times a second and each write
 * serialises the window and the cold store (a fifth of the walk's CPU, and no page is counted
 * meanwhile), so writes take at most about a tenth of the walk's time.
 */
const CHECKPOINT_SPACING = 10;
/** The overlap re-read folded into a slice's walk covers at least this much (#overlapReadEnough). */
export const MIN_FOLDED_OVERLAP_MS = 1_000;

export class LogWalker {
  position: WalkPosition;
  readonly #source: LogsSource;
  readonly #counter: WalkCounter;
  readonly #settings: WalkSettings;
  readonly #logger: Logger;
  readonly #hooks: WalkerHooks;
  readonly #now: () => number;
  readonly #tally = new PageTally();
  readonly #pageSizer: PageSizer;
  #pagesLeft = 0;
  #lastCheckpoint = 0;
  /** How long the last checkpoint took to write, ms. */
  #lastCheckpointMs = 0;
  /** Dedup walk stamp of each cursor chain this process started (a chain it did not start gets a new one). */
  readonly #chainStamps = new WeakMap<WalkState, number>();
  /** The checkpoint being written (parallel chains ask for one at the same time: one write at a time). */
  #checkpointing: Promise<void> | null = null;
  readonly #overlap: AdaptiveOverlap;
  readonly #clock = new CycleClock();
  /** Late entries since the last completed slice (only the slice at the watermark can find them). */
  #sliceLate = 0;
  /** The watermark when the cycle started, and the frontier it reads up to. */
  #cycleBasis = 0;
  #cycleFrontier = 0;
  /** The chains of the running cycle: idle ones wait for a split (null: none running). */
  #chains: { idle(): number; wake(): void } | null = null;
  /** Most slices walked at once in this cycle (#chainsWorthWalking). */
  #parallel = 1;
  /** The length slices are cut to in this cycle (#splitLength). */
  #splitMs = Number.POSITIVE_INFINITY;
  /** The rate limit bounds the walk (kept to log its changes). */
  #rateLimitBound = false;
  /** When a slice last left the overlap unread because the rate limit bounds the walk (0: never): the late-entry audit looks behind it. */
  overlapSkippedAt = 0;
  /** The position came from a checkpoint. */
  readonly #restored: boolean;
  /**
   * The position came from a checkpoint, or a cycle ran knowing the upstream's clock; before,
   * it is the constructor's fresh one, taken on this machine's clock, and moving it is no reset.
   */
  #positionKnown: boolean;

  constructor(options: { source: LogsSource; counter: WalkCounter; settings: WalkSettings; logger: Logger; hooks: WalkerHooks; now: () => number; position?: WalkPosition }) {
    this.#source = options.source;
    this.#counter = options.counter;
    this.#settings = options.settings;
    this.#logger = options.logger;
    this.#hooks = options.hooks;
    this.#now = options.now;
    this.#overlap = new AdaptiveOverlap({ configuredMs: options.settings.overlapMs, ingestionDelayMs: options.settings.ingestionDelayMs, logger: options.logger, maxGrownMs: options.settings.maxGrownOverlapMs });
    this.position = options.position ?? LogWalker.freshPosition(options.now(), options.settings);
    this.#restored = options.position !== undefined;
    this.#positionKnown = this.#restored;
    this.#pageSizer = new PageSizer(options.settings.pageSize ?? DEFAULT_PAGE_SIZE, options.logger);
  }

  /** Entries a new cursor chain asks for: the configured size or the service's learnt cap. */
  get pageSize(): number {
    return this.#pageSizer.size;
  }

  /** The overlap the next slice near the frontier re-reads when the walk has time to spare. */
  get overlapMs(): number {
    return this.#overlap.currentMs;
  }

  /**
   * Without state: start at the frontier, so history is not dumped into counters. The first
   * slices' length, before any slice has measured the event rate, is shared by the chains like
   * the target pages (#targetPages): with 4 chains four slices of INITIAL_SLICE_MS each held
   * about 250,000 identities in the window at 1,000 events/s (docs/performance.md, issue 14).
   */
  static freshPosition(now: number, settings: WalkSettings): WalkPosition {
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
   * Pages a slice aims at: TARGET_PAGES_PER_SLICE shared by the chains (at least
   * MIN_SPLIT_PAGES), so the window holds about as much with parallel chains as with one.
   */
  get #targetPages(): number {
    return Math.max(MIN_SPLIT_PAGES, Math.round(TARGET_PAGES_PER_SLICE / this.#parallel));
  }

  /**
   * Most slices walked at once in this cycle: as many chains as it takes to use the request rate
   * the rate limit allows (twice what the request time says, so one slow page does not leave the
   * budget idle), at most the setting. While the limit, not the request time, bounds a chain
   * (5 requests a second of 50 ms: one chain could send 20), more chains add nothing but a
   * part-filled last page each and a watermark held back by slices that all finish late.
   */
  #chainsWorthWalking(): number {
    const configured = this.position.stateWalk ? 1 : Math.max(1, this.#settings.maxParallelSlices ?? DEFAULT_PARALLEL_SLICES);
    const allowedPerSecond = this.#source.logsRateLimit?.()?.allowedPerSecond;
    const requestMs = this.#clock.requestMs;
    if (configured === 1 || allowedPerSecond === undefined || requestMs === null) return configured;
    return Math.max(1, Math.min(configured, Math.ceil((2 * allowedPerSecond * requestMs) / 1000)));
  }

  /**
   * One cycle: walk slices up to the frontier, or until the page budget is spent, or until the
   * next request could not finish before `deadline` (when the next poll is due; null: none).
   * Up to `maxParallelSlices` slices are walked at once when the range holds that many.
   */
  async cycle(signal: AbortSignal, deadline: number | null = null): Promise<CycleReport> {
    const report: CycleReport = { pages: 0, slicesCompleted: 0, late: 0, stopped: null, gaps: [] };
    const upstreamNow = await this.#guardWatermark(signal);
    const startedAt = this.#now();
    this.#clock.begin(startedAt, this.#rateLimitFacts().held, deadline);
    this.#cycleBasis = this.position.watermark;
    this.#parallel = this.#chainsWorthWalking();
    const frontier = upstreamNow - this.#settings.ingestionDelayMs;
    this.#cycleFrontier = frontier;
    this.#pagesLeft = this.#settings.maxPagesPerCycle;
    this.#lastCheckpoint = performance.now();
    const cycleMs = this.#clock.spacingMs > 0 ? this.#clock.spacingMs : deadline === null ? 0 : deadline - startedAt;
    const left = frontier - (this.position.slices.at(-1)?.top ?? this.position.watermark);
    this.#splitMs = splitLength(left, cycleMs, this.#parallel);
    const slices = this.position.slices;
    try {
      report.stopped = await runChains({
        parallel: this.#parallel,
        signal,
        // A slice left waiting (stopped in an earlier cycle, or switched to per-state walks),
        // else a new one after the last, while fewer than `parallel` are in progress.
        next: (busy) => {
          const waiting = slices.find((slice) => !busy.has(slice) && !sliceComplete(slice));
          if (waiting !== undefined) return waiting;
          // Complete slices behind an unfinished one do not hold a chain back, up to a bound on
          // the slices (and their window entries) kept.
          const open = slices.filter((slice) => !sliceComplete(slice)).length;
          if (open >= this.#parallel || slices.length >= MAX_SLICES_PER_CHAIN * this.#parallel) return null;
          const basis = slices.at(-1)?.top ?? this.position.watermark;
          if (frontier <= basis) return null;
          const planned = this.#planSlice(frontier, basis, slices.length === 0);
          slices.push(planned);
          return planned;
        },
        walk: (slice, chainSignal) => this.#walkSlice(slice, chainSignal),
        controls: (controls) => (this.#chains = controls),
        done: async () => {
          this.#completeFront(report);
          // A write under way began less than its own duration ago: no second one is queued behind it.
          const sinceLast = performance.now() - this.#lastCheckpoint;
          if (this.#checkpointing === null && sinceLast >= Math.min(MID_WALK_CHECKPOINT_MS, CHECKPOINT_SPACING * this.#lastCheckpointMs)) await this.#checkpoint();
        },
      });
      // Stopped by the next poll while the rate limit held the cycle back: the limit bounds the
      // walk. Judged here too, as a walk that is always cut by the next poll never reaches its
      // frontier (where it is judged otherwise) and would re-read the overlap forever.
      if (report.stopped === 'time' && this.#clock.heldBack(this.#now(), this.#rateLimitFacts())) this.#setRateLimitBound(true);
    } finally {
      // A slice completed by one chain while the one before it was still walked.
      this.#completeFront(report);
      report.pages = this.#settings.maxPagesPerCycle - this.#pagesLeft;
      this.#chains = null;
    }
    return report;
  }

  /** The upstream's now (the source's clock), else the walk's own. */
  upstreamNow(): number {
    return this.#source.upstreamClock?.now() ?? this.#now();
  }

  /**
   * Before a cycle plans: moves a watermark found ahead of the upstream's now back
   * (watermark-guard.ts). A restored position is checked before anything is read: when no
   * answer has told the upstream's time yet, one small page is asked for first. A fresh one is
   * walked from this machine's clock until the first page tells it. Returns the upstream's now.
   */
  async #guardWatermark(signal: AbortSignal): Promise<number> {
    const clock = this.#source.upstreamClock;
    if (clock !== undefined && !clock.known && this.#restored) {
      // The cycle's own requests report a failure; this one only has to answer.
      await this.#source.logsPage({ count: 1 }, { signal }).catch(() => undefined);
    }
    const upstreamNow = this.upstreamNow();
    const reset = guardWatermark(this.position, upstreamNow, this.#settings.ingestionDelayMs);
    if (reset !== null) {
      // The window started beyond the upstream's now: what lies before it was never counted.
      this.#counter.dedup.rewind(this.position.dedupFrom, this.position.watermark);
      const details = { watermark: timeText(reset.found), upstreamNow: timeText(reset.upstreamNow), resumeFrom: timeText(reset.resumeFrom) };
      if (!this.#positionKnown) {
        this.#logger.info(details, 'this machine\'s clock is ahead of the upstream\'s: counting starts at the upstream\'s now');
      } else {
        this.#logger.warn(
          details,
          reset.exact
            ? 'log watermark ahead of the upstream\'s now (a clock set back, or a state file from a machine whose clock ran ahead): walking again from where the de-duplication window starts, nothing is counted twice'
            : 'log watermark ahead of the upstream\'s now, and the de-duplication window holds nothing the upstream has written: counting restarts at the frontier; entries written before it and not counted yet are missed',
        );
        this.#hooks.onWatermarkReset?.(reset);
      }
    }
    if (clock === undefined || clock.known) this.#positionKnown = true;
    return upstreamNow;
  }

  /** Completes the complete slices at the front, in order: the watermark moves over them. */
  #completeFront(report: CycleReport): void {
    const slices = this.position.slices;
    while (slices.length > 0 && sliceComplete(slices[0]!)) {
      const slice = slices.shift()!;
      report.late += this.#sliceLate;
      const gap = this.#completeSlice(slice);
      if (gap) report.gaps.push(gap);
      report.slicesCompleted += 1;
    }
  }

  /** A slice from `basis` up, cut to this cycle's split length. */
  #planSlice(frontier: number, basis: number, atWatermark: boolean): SliceState {
    const position = this.position;
    const top = Math.min(frontier, basis + Math.min(position.sliceMs, this.#splitMs));
    return newSlice({ from: atWatermark ? position.dedupFrom : basis + 1, top, basis, startedAt: this.upstreamNow(), atFrontier: top === frontier, hadAnchor: atWatermark && position.anchorTime > 0, stateWalk: position.stateWalk });
  }

  async #walkSlice(slice: SliceState, signal: AbortSignal): Promise<WalkOutcome> {
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
      // Continue the stored chain (same walk, unless this process never saw its start), or
      // start a new one below everything read.
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
      const toDate = walk.chainTo!;
      // The chain's cursor; mirrored into the walk state (kept across cycles and checkpoints)
      // only while the pages come newest first: a disordered chain has no safe resume point.
      let cursor = walk.cursor;
      const followed = new Set<string>(cursor === null ? [] : [cursor]);
      let previousSignature = '';
      let lowest = walk.resumeTo ?? Number.POSITIVE_INFINITY;
      let orderBroken = false;
      let stall = '';
      let count = this.#pageSizer.chainStart();
      let chainPages = 0;
      for (;;) {
        // Another chain switched the slices to one walk per state: this walk is gone.
        if (!slice.walks.includes(walk)) return 'switched';
        if (this.#pagesLeft <= 0) return 'budget';
        const pendingWaitMs = this.#source.pendingLogsWaitMs?.() ?? 0;
        if (!this.#clock.allows(this.#now(), pendingWaitMs)) return 'time';
        const query: LogsQuery = { fromDate: slice.from, toDate, count };
        if (cursor !== null) query.cursor = cursor;
        if (walk.state !== null) query.state = walk.state;
        let page: LogsPage;
        const sentAt = this.#now();
        try {
          page = await this.#source.logsPage(query, { signal });
        } catch (error) {
          // A stored cursor the service no longer accepts: start a new chain from the resume point.
          if (cursor !== null && isRejectedRequest(error)) {
            this.#logger.info({ status: (error as { status?: number }).status }, 'stored log cursor refused; walking again from the last entry read');
            break;
          }
          // Too large or too slow: the same cursor again, for fewer entries.
          const smaller = this.#pageSizer.shrink(count, error);
          if (smaller === null) throw error;
          count = smaller;
          continue;
        }
        // Nothing is counted while a checkpoint is written: /metrics shows, after the write, the
        // values of the snapshot it wrote, and a page counted meanwhile would show in them.
        while (this.#checkpointing !== null) await this.#checkpointing;
        if (!slice.walks.includes(walk)) return 'switched';
        this.#pageSizer.observe(count, page);
        count = Math.min(count, this.#pageSizer.size);
        // This request's own wait for its rate-limit slot, as announced before it was sent: the
        // source's total waits also hold the other chains' waits meanwhile, which would make a
        // request look nearly free and the chains worth walking too few (#chainsWorthWalking).
        this.#clock.requestDone(this.#now() - sentAt, pendingWaitMs);
        this.#pagesLeft -= 1;
        slice.pages += 1;
        chainPages += 1;
        this.#hooks.onPage();
        // The same page again (under a new cursor): its entries would read as twins. Not counted.
        const signature = pageSignature(page);
        if (signature !== '' && signature === previousSignature) {
          stall = 'the service returned the same page twice';
          break;
        }

        const tally = this.#tally;
        tally.reset(lowest);
        this.#counter.dedup.useWalk(stamp);
        this.#counter.countPage(page.logs, filterState, slice.basis, tally);
        this.#absorb(slice, tally);
        this.#clock.page(page.logs.length, tally.counted);
        if (tally.late > 0) {
          this.#sliceLate += tally.late;
          this.#hooks.onLate(tally.late);
        }
        lowest = tally.lowest;
        if (tally.orderBroken && !orderBroken) {
          orderBroken = true;
          walk.cursor = null;
          walk.chainTo = null;
          this.#logger.warn({ toDate }, 'log page not ordered newest first; this walk will not be resumed midway');
        }
        if (!orderBroken && lowest !== Number.POSITIVE_INFINITY) walk.resumeTo = lowest;

        if (tally.missingState > 0 && !this.position.stateWalk) {
          this.#switchToStateWalk(slice);
          return 'switched';
        }
        if (page.cursor === undefined || this.#overlapReadEnough(slice, lowest, orderBroken)) {
          walk.done = true;
          walk.cursor = null;
          walk.chainTo = null;
          return 'done';
        }
        if (followed.has(page.cursor)) stall = 'the service returned a cursor already followed';
        else if (page.logs.length === 0) stall = 'the service returned an empty page with a cursor';
        if (stall !== '') break;
        if (!orderBroken && this.#splitForIdle(slice, lowest, toDate, chainPages)) break;
        followed.add(page.cursor);
        cursor = page.cursor;
        if (!orderBroken) walk.cursor = cursor;
        previousSignature = signature;
        if (performance.now() - this.#lastCheckpoint >= MID_WALK_CHECKPOINT_MS) await this.#checkpoint();
      }
      walk.cursor = null;
      walk.chainTo = null;
      if (stall === '') continue;
      if (orderBroken || !(lowest < restartFloor)) {
        this.#logger.warn({ reason: stall, resumeTo: walk.resumeTo }, 'log walk stalled; it resumes on the next cycle');
        return 'stalled';
      }
      this.#logger.info({ reason: stall, resumeTo: walk.resumeTo }, 'log walk stalled; walking again from the last entry read');
      restartFloor = lowest;
    }
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

  /**
   * A chain waits for work and this walk has many pages left below `lowest` (estimated from the
   * pages read since `chainTop`): the unread part is split (slice.ts, splitUnread), the older
   * half goes to the waiting chain, and this walk starts a new chain on the newer half.
   */
  #splitForIdle(slice: SliceState, lowest: number, chainTop: number, chainPages: number): boolean {
    const leftMs = lowest - slice.from;
    const readMs = chainTop - lowest;
    if (this.#chains === null || this.#chains.idle() === 0 || slice.walks.length !== 1 || leftMs < 2 * MIN_SPLIT_MS || readMs <= 0) return false;
    if ((chainPages * leftMs) / readMs < 2 * this.#targetPages) return false;
    const slices = this.position.slices;
    const index = slices.indexOf(slice);
    if (index < 0 || slices.length >= MAX_SLICES_PER_CHAIN * this.#parallel) return false;
    const older = splitUnread(slice, lowest);
    if (older === null) return false;
    slices.splice(index, 0, older);
    this.#chains.wake();
    return true;
  }

  #absorb(slice: SliceState, tally: PageTally): void {
    slice.counted += tally.counted;
    if (tally.atOrBeforeBasis) slice.sawBoundary = true;
    if (tally.missingState > 0) slice.sawStateless = true;
    if (tally.withState > 0) slice.sawStateField = true;
    if (tally.counted > 0) {
      slice.oldestCounted = Math.min(slice.oldestCounted ?? Number.POSITIVE_INFINITY, tally.oldestCounted);
      slice.newestCounted = Math.max(slice.newestCounted ?? Number.NEGATIVE_INFINITY, tally.newestCounted);
    }
  }

  /** Entries without `state`: walk the slices in progress again, one filtered walk per state. */
  #switchToStateWalk(slice: SliceState): void {
    this.position.stateWalk = true;
    for (const other of this.position.slices) other.walks = stateWalks();
    slice.walks = stateWalks();
    this.#logger.warn('log entries come without a state field: switching to one filtered walk per state');
  }

  #completeSlice(slice: SliceState): GapReport | null {
    const position = this.position;
    // A message is observed once all its entries are read: its final entry at or before the new
    // watermark (slices ahead may hold final entries of messages with entries not read yet).
    this.#counter.tracker.finishSlice(position.slices.length === 0 ? Number.POSITIVE_INFINITY : slice.top);

    const { gap, anchorGone } = advancePosition(position, slice, this.#targetPages);
    // The newest entry counted at or before the new watermark (slices ahead may hold newer ones).
    if (slice.counted > 0) position.anchorTime = Math.max(anchorGone ? 0 : position.anchorTime, Math.min(slice.top, this.#counter.lastEventTime, slice.newestCounted ?? slice.top));
    else if (anchorGone) position.anchorTime = 0;
    if (slice.atFrontier) this.#overlap.afterSlice(this.#sliceLate);
    this.#sliceLate = 0;
    const skipOverlap = this.#rateLimitBounds();
    if (skipOverlap) this.overlapSkippedAt = this.#now();
    position.dedupFrom = nextFrom(position, this.#settings.ingestionDelayMs, skipOverlap ? 0 : this.#overlap.currentMs);
    this.#counter.dedup.prune(position.dedupFrom);

    if (position.stateWalk && slice.sawStateField && !slice.sawStateless) {
      position.stateWalk = false;
      this.#logger.info('log entries carry a state field again: back to one walk');
    }
    if (gap) this.#hooks.onGap(gap);
    return gap;
  }

  /** What the source knows of the logs endpoint's rate limit (cycle-clock.ts). */
  #rateLimitFacts(): RateLimitFacts {
    return { held: this.#source.logsRateLimitHeld?.() ?? 0, allowedPerSecond: this.#source.logsRateLimit?.()?.allowedPerSecond };
  }

  /**
   * Whether the rate limit bounds the walk (CycleClock), from what the upstream said, not from
   * durations. A slow upstream or a busy CPU is not this case: then the walk falls behind and
   * the re-read shrinks by itself (nextFrom).
   */
  #rateLimitBounds(): boolean {
    // Judged when the cycle reaches its frontier (its whole work is known then); a slice left
    // over from the previous cycle, or one on the way, keeps the last judgement.
    if (this.position.watermark < this.#cycleFrontier) return this.#rateLimitBound;
    const covered = this.position.watermark - this.#cycleBasis;
    const bound = this.#clock.rateLimitBound(this.#now(), this.#rateLimitFacts(), covered, this.#overlap.currentMs);
    this.#setRateLimitBound(bound);
    return bound;
  }

  #setRateLimitBound(bound: boolean): void {
    if (bound !== this.#rateLimitBound) {
      this.#rateLimitBound = bound;
      this.#logger.info(
        { overlapSeconds: bound ? 0 : this.#overlap.currentMs / 1000 },
        bound
          ? 'the rate limit bounds the log walk: the overlap is not re-read while it does (late entries are then counted by the late-entry audit, within the lateness horizon)'
          : 'the log walk has time to spare again: re-reading the overlap',
      );
    }
  }

  /** Writes a checkpoint; one asked while another is written waits for it and writes again (the state moved on). */
  async #checkpoint(): Promise<void> {
    while (this.#checkpointing !== null) await this.#checkpointing;
    const started = performance.now();
    this.#lastCheckpoint = started;
    const writing = this.#hooks.checkpoint();
    this.#checkpointing = writing;
    try {
      await writing;
    } finally {
      this.#checkpointing = null;
      this.#lastCheckpointMs = performance.now() - started;
    }
  }
}
