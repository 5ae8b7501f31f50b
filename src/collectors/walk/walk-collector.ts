// The shell the walk's users share (the logs and workflows collectors), as SnapshotCollector is
// the inventory collectors': one long-lived registry fed by a LogWalker, cycles that stop when
// the next poll is due, and a checkpoint of the position and counters, written when pages were
// read since the last one (a failure logged once per streak, never thrown), after which the
// values it holds are published.

import type { Registry } from 'prom-client';
import { errorMessage } from '../../common/errors.js';
import type { Logger } from '../../logging/index.js';
import { createRegistry } from '../../metrics/snapshot.js';
import type { Collector, CollectorName, PollContext } from '../collector.js';
import type { PositionState } from './position-schema.js';
import {
  LogWalker,
  type GapReport,
  type LogsSource,
  type WalkCounter,
  type WalkPosition,
  type WalkSettings,
} from './walker.js';

export interface WalkCollectorOptions {
  logger: Logger;
  now?: () => number;
  /**
   * When the next scheduled poll is due, given the time a poll starts. A cycle stops before a
   * request that could not finish by then (the runner would skip that poll); absent: no limit.
   */
  nextPollAt?: (now: number) => number;
}

/** Where the checkpoint is written: the state file (CheckpointFile) or a section of it (CheckpointSection). */
export interface CheckpointStore<State> {
  readonly path: string;
  save(state: State): Promise<void>;
}

export abstract class WalkCollector<Name extends CollectorName, State> implements Collector {
  readonly name: Name;
  /** Its cycles stop when the next poll is due; a poll that runs past that is followed at once. */
  readonly deferOverlappingTick = true;
  readonly registry: Registry = createRegistry();
  protected readonly logger: Logger;
  protected readonly now: () => number;
  readonly #nextPollAt: ((now: number) => number) | undefined;
  /** Built by startWalk, once the checkpoint is restored. */
  protected walker!: LogWalker;
  /** Walk pages read, events estimated lost to retention overruns, late entries counted (kept in the checkpoint). */
  protected pages = 0;
  protected gaps = 0;
  protected late = 0;
  protected checkpointsOk = 0;
  protected checkpointsFailed = 0;
  /** Pages were read since the last checkpoint (otherwise the file is current). */
  protected dirty = false;
  #saveFailing = false;

  protected constructor(name: Name, options: WalkCollectorOptions) {
    this.name = name;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.#nextPollAt = options.nextPollAt;
  }

  /** The walk position (read-only view for tests and the landing page). */
  get position(): Readonly<WalkPosition> {
    return this.walker.position;
  }

  abstract poll(ctx: PollContext): Promise<void>;

  async close(): Promise<void> {
    await this.checkpoint();
  }

  /** Where the checkpoint goes (null: persistence disabled). */
  protected abstract readonly store: CheckpointStore<State> | null;
  /** Logged when a checkpoint cannot be written, once per streak of failures. */
  protected abstract readonly saveFailedMessage: string;
  /** Everything the checkpoint holds, from one moment between two pages. */
  protected abstract snapshot(): State;
  /** Copies what /metrics shows from the values the last checkpoint holds. */
  protected abstract publish(): void;
  /** Says a retention overrun (its events are counted in `gaps` already). */
  protected abstract reportGap(gap: GapReport): void;

  /** A checkpoint is written again after failures. */
  protected savedAgain(_path: string): void {}

  /** The watermark was found ahead of the upstream's now and moved back. */
  protected watermarkReset(): void {}

  /** Starts the walk from the restored `position` (undefined: from now). */
  protected startWalk(options: {
    source: LogsSource;
    counter: WalkCounter;
    settings: WalkSettings;
    position: WalkPosition | undefined;
  }): void {
    const { position } = options;
    this.walker = new LogWalker({
      source: options.source,
      counter: options.counter,
      settings: options.settings,
      logger: this.logger,
      now: this.now,
      hooks: {
        onPage: () => {
          this.pages += 1;
          this.dirty = true;
        },
        checkpoint: () => this.checkpoint(),
        onGap: (gap) => {
          this.gaps += gap.estimatedEvents;
          this.reportGap(gap);
        },
        onLate: (count) => {
          this.late += count;
        },
        onWatermarkReset: () => this.watermarkReset(),
      },
      ...(position ? { position } : {}),
    });
  }

  /** When the cycle of a poll starting now must end (the next poll is due), null: no limit. */
  protected deadline(): number | null {
    return this.#nextPollAt?.(this.now()) ?? null;
  }

  /**
   * Writes the checkpoint, then publishes the values it holds. A failure is counted and logged
   * (once per streak), never thrown; the values are published anyway (the process still has them).
   */
  protected async checkpoint(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    const store = this.store;
    if (store !== null) {
      this.checkpointsOk += 1;
      try {
        await store.save(this.snapshot());
        if (this.#saveFailing) this.savedAgain(store.path);
        this.#saveFailing = false;
      } catch (error) {
        this.checkpointsOk -= 1;
        this.checkpointsFailed += 1;
        // Try again at the next opportunity, new pages or not.
        this.dirty = true;
        if (!this.#saveFailing) this.logger.error({ err: errorMessage(error) }, this.saveFailedMessage);
        this.#saveFailing = true;
      }
    }
    this.publish();
  }

  /** The walk position's part of the checkpoint, in the order the file keeps. */
  protected positionState(lastEventTime: number, dedup: PositionState['dedup']): PositionState {
    const position = this.walker.position;
    return {
      watermark: position.watermark,
      watermarkReadAt: position.watermarkReadAt,
      dedupFrom: position.dedupFrom,
      anchorTime: position.anchorTime,
      lastEventTime,
      sliceMs: position.sliceMs,
      gapSince: position.gapSince,
      rateEwma: position.rateEwma,
      slices: position.slices,
      dedup,
    };
  }
}

/** The walk position a checkpoint holds (`stateWalk`: the logs collector's per-state walks). */
export function restoredPosition(state: PositionState, stateWalk: boolean): WalkPosition {
  return {
    watermark: state.watermark,
    watermarkReadAt: state.watermarkReadAt,
    dedupFrom: state.dedupFrom,
    anchorTime: state.anchorTime,
    sliceMs: state.sliceMs,
    stateWalk,
    gapSince: state.gapSince,
    rateEwma: state.rateEwma,
    slices: state.slices,
  };
}
