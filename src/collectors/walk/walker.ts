// The incremental walk of a log served newest first by cursor: the delivery logs and the workflow
// runs are its users (src/collectors/logs, workflows); docs/counting.md has the reasoning.
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
// slice-plan.ts (chains worth walking, slice targets, splits), slice-reader.ts (reading a slice
// by cursor chains), chains.ts (parallel chains, one checkpoint write at a time),
// page-tally.ts (what a page contributed; the user's WalkCounter counts it), cycle-clock.ts (time
// and rate-limit budget), rate-limit-bound.ts (whether the limit bounds the walk), overlap.ts (the
// adaptive overlap), page-size.ts (the page size), watermark-guard.ts (a watermark ahead of the
// upstream), dedup.ts and cold-identities.ts (the de-duplication window), position-schema.ts
// (the position in a checkpoint).
import type { Logger } from '../../logging/index.js';
import type { SliceState } from './position-schema.js';
import { CycleClock } from './cycle-clock.js';
import { AdaptiveOverlap } from './overlap.js';
import { RateLimitBound } from './rate-limit-bound.js';
import { advancePosition, newSlice, nextFrom, sliceComplete, splitLength } from './slice.js';
import { chainsWorthWalking, freshPosition, MAX_SLICES_PER_CHAIN, targetPages } from './slice-plan.js';
import { SliceReader } from './slice-reader.js';
import { CheckpointGate, runChains } from './chains.js';
import { guardWatermark, reportWatermarkReset } from './watermark-guard.js';
import { DEFAULT_PAGE_SIZE, PageSizer } from './page-size.js';
import { DEFAULT_PARALLEL_SLICES } from './walk-types.js';
import type {
  CycleReport,
  GapReport,
  LogsSource,
  WalkCounter,
  WalkerHooks,
  WalkPosition,
  WalkSettings,
} from './walk-types.js';

export * from './walk-types.js';

export class LogWalker {
  position: WalkPosition;
  readonly #source: LogsSource;
  readonly #counter: WalkCounter;
  readonly #settings: WalkSettings;
  readonly #logger: Logger;
  readonly #hooks: WalkerHooks;
  readonly #now: () => number;
  readonly #pageSizer: PageSizer;
  readonly #gate: CheckpointGate;
  readonly #overlap: AdaptiveOverlap;
  readonly #clock = new CycleClock();
  /** Reads the slices; holds the cycle's page budget, chains and late entries (slice-reader.ts). */
  readonly #reader: SliceReader;
  /** The watermark when the cycle started, and the frontier it reads up to. */
  #cycleBasis = 0;
  #cycleFrontier = 0;
  /** The length slices are cut to in this cycle (splitLength). */
  #splitMs = Number.POSITIVE_INFINITY;
  readonly #rateLimit: RateLimitBound;
  /** When a slice last left the overlap unread because the rate limit bounds the walk (0: never): the late-entry audit looks behind it. */
  overlapSkippedAt = 0;
  /** The position came from a checkpoint. */
  /**
   * The position came from a checkpoint, or a cycle ran knowing the upstream's clock; before,
   * it is the constructor's fresh one, taken on this machine's clock, and moving it is no reset.
   */
  #positionKnown: boolean;

  constructor(options: {
    source: LogsSource;
    counter: WalkCounter;
    settings: WalkSettings;
    logger: Logger;
    hooks: WalkerHooks;
    now: () => number;
    position?: WalkPosition;
  }) {
    this.#source = options.source;
    this.#counter = options.counter;
    this.#settings = options.settings;
    this.#logger = options.logger;
    this.#hooks = options.hooks;
    this.#now = options.now;
    this.#overlap = new AdaptiveOverlap({
      configuredMs: options.settings.overlapMs,
      ingestionDelayMs: options.settings.ingestionDelayMs,
      logger: options.logger,
      maxGrownMs: options.settings.maxGrownOverlapMs,
    });
    this.#rateLimit = new RateLimitBound(options.source, this.#clock, options.logger);
    this.position = options.position ?? freshPosition(options.now(), options.settings);
    this.#positionKnown = options.position !== undefined;
    this.#pageSizer = new PageSizer(options.settings.pageSize ?? DEFAULT_PAGE_SIZE, options.logger);
    this.#gate = new CheckpointGate(() => this.#hooks.checkpoint());
    this.#reader = new SliceReader({
      source: options.source,
      counter: options.counter,
      logger: options.logger,
      hooks: options.hooks,
      now: options.now,
      clock: this.#clock,
      overlap: this.#overlap,
      pageSizer: this.#pageSizer,
      gate: this.#gate,
      position: () => this.position,
    });
  }

  /** Entries a new cursor chain asks for: the configured size or the service's learnt cap. */
  get pageSize(): number {
    return this.#pageSizer.size;
  }

  /** The overlap the next slice near the frontier re-reads when the walk has time to spare. */
  get overlapMs(): number {
    return this.#overlap.currentMs;
  }

  /** Pages a slice aims at in this cycle (slice-plan.ts). */
  get #targetPages(): number {
    return targetPages(this.#reader.parallel);
  }

  /** Most slices walked at once in this cycle (slice-plan.ts): at most the setting, one while walking per state. */
  #chainsWorthWalking(): number {
    const configured = this.position.stateWalk
      ? 1
      : Math.max(1, this.#settings.maxParallelSlices ?? DEFAULT_PARALLEL_SLICES);
    return chainsWorthWalking(configured, this.#source.logsRateLimit?.()?.allowedPerSecond, this.#clock.requestMs);
  }

  /**
   * One cycle: walk slices up to the frontier, or until the page budget is spent, or until the
   * next request could not finish before `deadline` (when the next poll is due; null: none).
   * Up to `maxParallelSlices` slices are walked at once when the range holds that many.
   */
  async cycle(signal: AbortSignal, deadline: number | null = null): Promise<CycleReport> {
    const upstreamNow = await this.#guardWatermark(signal);
    const startedAt = this.#now();
    this.#clock.begin(startedAt, this.#rateLimit.facts().held, deadline);
    this.#cycleBasis = this.position.watermark;
    const parallel = this.#chainsWorthWalking();
    const report: CycleReport = {
      pages: 0,
      slicesCompleted: 0,
      late: 0,
      stopped: null,
      gaps: [],
      chains: parallel,
      requestMs: this.#clock.requestMs,
    };
    this.#reader.parallel = parallel;
    const frontier = upstreamNow - this.#settings.ingestionDelayMs;
    this.#cycleFrontier = frontier;
    this.#reader.pagesLeft = this.#settings.maxPagesPerCycle;
    this.#gate.restartClock();
    const cycleMs = this.#clock.spacingMs > 0 ? this.#clock.spacingMs : deadline === null ? 0 : deadline - startedAt;
    const left = frontier - (this.position.slices.at(-1)?.top ?? this.position.watermark);
    this.#splitMs = splitLength(left, cycleMs, parallel);
    const slices = this.position.slices;
    try {
      report.stopped = await runChains({
        parallel,
        signal,
        // A slice left waiting (stopped in an earlier cycle, or switched to per-state walks),
        // else a new one after the last, while fewer than `parallel` are in progress.
        next: (busy) => {
          const waiting = slices.find((slice) => !busy.has(slice) && !sliceComplete(slice));
          if (waiting !== undefined) return waiting;
          // Complete slices behind an unfinished one do not hold a chain back, up to a bound on
          // the slices (and their window entries) kept.
          const open = slices.filter((slice) => !sliceComplete(slice)).length;
          if (open >= parallel || slices.length >= MAX_SLICES_PER_CHAIN * parallel) return null;
          const basis = slices.at(-1)?.top ?? this.position.watermark;
          if (frontier <= basis) return null;
          const planned = this.#planSlice(frontier, basis, slices.length === 0);
          slices.push(planned);
          return planned;
        },
        walk: (slice, chainSignal) => this.#reader.read(slice, chainSignal),
        controls: (controls) => (this.#reader.chains = controls),
        done: async () => {
          this.#completeFront(report);
          await this.#gate.writeSpaced();
        },
      });
      // Stopped by the next poll while the rate limit held the cycle back: the limit bounds the
      // walk. Judged here too, as a walk that is always cut by the next poll never reaches its
      // frontier (where it is judged otherwise) and would re-read the overlap forever.
      // Held back means the upstream's word (429s, a window announced spent) or a cycle that sent
      // at the paced rate over its whole time (CycleClock.heldBack): a CPU stall lengthens that
      // time without requests, so it does not pass for the limit.
      if (report.stopped === 'time' && this.#rateLimit.heldBack(this.#now()))
        this.#rateLimit.set(true, this.#overlap.currentMs);
    } finally {
      // A slice completed by one chain while the one before it was still walked.
      this.#completeFront(report);
      report.pages = this.#settings.maxPagesPerCycle - this.#reader.pagesLeft;
      this.#reader.chains = null;
    }
    return report;
  }

  /** The upstream's now (the source's clock), else the walk's own. */
  upstreamNow(): number {
    return this.#source.upstreamClock?.now() ?? this.#now();
  }

  /**
   * Before a cycle plans: moves a watermark found ahead of the upstream's now back
   * (watermark-guard.ts). The position is checked before anything is read: when no answer has
   * told the upstream's time yet, one small page is asked for first. A fresh position, taken on
   * this machine's clock, moves to the upstream's now before the first walk, not after it: a
   * machine whose clock runs ahead would otherwise walk its first cycle into the upstream's
   * future and miss what was written until the next one. Returns the upstream's now.
   */
  async #guardWatermark(signal: AbortSignal): Promise<number> {
    const clock = this.#source.upstreamClock;
    if (clock !== undefined && !clock.known) {
      // The cycle's own requests report a failure; this one only has to answer.
      await this.#source.logsPage({ count: 1 }, { signal }).catch(() => undefined);
    }
    const upstreamNow = this.upstreamNow();
    const reset = guardWatermark(this.position, upstreamNow, this.#settings.ingestionDelayMs);
    if (reset !== null) {
      // The window started beyond the upstream's now: what lies before it was never counted.
      this.#counter.dedup.rewind(this.position.dedupFrom, this.position.watermark);
      reportWatermarkReset(this.#logger, reset, this.#positionKnown);
      if (this.#positionKnown) this.#hooks.onWatermarkReset?.(reset);
    }
    if (clock === undefined || clock.known) this.#positionKnown = true;
    return upstreamNow;
  }

  /** Completes the complete slices at the front, in order: the watermark moves over them. */
  #completeFront(report: CycleReport): void {
    const slices = this.position.slices;
    while (slices.length > 0 && sliceComplete(slices[0]!)) {
      const slice = slices.shift()!;
      report.late += this.#reader.sliceLate;
      const gap = this.#completeSlice(slice);
      if (gap) report.gaps.push(gap);
      report.slicesCompleted += 1;
    }
  }

  /** A slice from `basis` up, cut to this cycle's split length. */
  #planSlice(frontier: number, basis: number, atWatermark: boolean): SliceState {
    const position = this.position;
    const top = Math.min(frontier, basis + Math.min(position.sliceMs, this.#splitMs));
    return newSlice({
      from: atWatermark ? position.dedupFrom : basis + 1,
      top,
      basis,
      startedAt: this.upstreamNow(),
      atFrontier: top === frontier,
      hadAnchor: atWatermark && position.anchorTime > 0,
      stateFilters: position.stateWalk ? this.#counter.states.walkFilters : null,
    });
  }

  #completeSlice(slice: SliceState): GapReport | null {
    const position = this.position;
    // A message is observed once all its entries are read: its final entry at or before the new
    // watermark (slices ahead may hold final entries of messages with entries not read yet).
    this.#counter.tracker.finishSlice(position.slices.length === 0 ? Number.POSITIVE_INFINITY : slice.top);

    const { gap, anchorGone } = advancePosition(position, slice, this.#targetPages);
    // The newest entry counted at or before the new watermark (slices ahead may hold newer ones).
    if (slice.counted > 0)
      position.anchorTime = Math.max(
        anchorGone ? 0 : position.anchorTime,
        Math.min(slice.top, this.#counter.lastEventTime, slice.newestCounted ?? slice.top),
      );
    else if (anchorGone) position.anchorTime = 0;
    if (slice.atFrontier) this.#overlap.afterSlice(this.#reader.sliceLate);
    this.#reader.sliceLate = 0;
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

  /**
   * Whether the rate limit bounds the walk (rate-limit-bound.ts). Judged when the cycle reaches
   * its frontier (its whole work is known then); a slice left over from the previous cycle, or
   * one on the way, keeps the last judgement.
   */
  #rateLimitBounds(): boolean {
    if (this.position.watermark < this.#cycleFrontier) return this.#rateLimit.bound;
    return this.#rateLimit.judge(this.#now(), this.position.watermark - this.#cycleBasis, this.#overlap.currentMs);
  }
}
