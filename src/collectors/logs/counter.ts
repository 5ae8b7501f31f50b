// Counting one parsed page: the hot path. For each entry: its state, its identity key, the
// de-duplication window, then the target's series, the error class, the daily count and the
// message tracker. Nothing is allocated per entry (a new message gets its records); the
// page's summary goes into a PageTally the caller reuses.
import type { Counter, Registry } from 'prom-client';
import type { LogEntry } from '../../api/delivery.js';
import type { PageTally } from '../walk/page-tally.js';
import { DailyMessages } from './daily.js';
import { DedupWindow } from '../walk/dedup.js';
import { EventCounters, type OptInLabel } from './event-counters.js';
import { errorReasonOf } from './labels.js';
import { CREATED, ERROR, StateTable } from './states.js';
import { MessageTracker } from './tracker.js';
import { registerOldestInFlightGauge, WaitingTimes } from './waiting.js';

export interface LogCounterOptions {
  registry: Registry;
  seriesLimit: number;
  optIn: readonly OptInLabel[];
  trackerCapacity: number;
  dropped?: Counter<'metric'>;
  truncated?: Counter<'metric'>;
  /** Wall clock of the in-flight age gauge (default Date.now). */
  now?: () => number;
  /** Identities leaving the de-duplication window are kept this long as fingerprints (0 or absent: forgotten). */
  latenessHorizonMs?: number;
}

export class LogCounter {
  readonly states = new StateTable();
  readonly dedup: DedupWindow;
  readonly events: EventCounters;
  readonly tracker: MessageTracker;
  readonly waiting: WaitingTimes;
  readonly daily = new DailyMessages();
  /** Newest event time counted, unix ms (0: none yet). */
  lastEventTime = 0;
  /** Entries seen again and not counted, all time. */
  duplicates = 0;
  /** Oldest CREATED in flight per queue, as of the last publish(). */
  #oldestInFlight: ReadonlyMap<string, number> = new Map();

  constructor(options: LogCounterOptions) {
    this.dedup = new DedupWindow(
      options.latenessHorizonMs === undefined ? {} : { latenessHorizonMs: options.latenessHorizonMs },
    );
    const dropped = {
      ...(options.dropped ? { dropped: options.dropped } : {}),
      ...(options.truncated ? { truncated: options.truncated } : {}),
    };
    this.events = new EventCounters({
      registry: options.registry,
      states: this.states,
      seriesLimit: options.seriesLimit,
      optIn: options.optIn,
      ...dropped,
    });
    this.tracker = new MessageTracker({
      registry: options.registry,
      capacity: options.trackerCapacity,
      seriesLimit: options.seriesLimit,
      ...dropped,
    });
    this.waiting = new WaitingTimes({ registry: options.registry, seriesLimit: options.seriesLimit, ...dropped });
    this.tracker.waiting = this.waiting;
    registerOldestInFlightGauge(
      options.registry,
      () => this.#oldestInFlight,
      options.now ?? Date.now,
      options.seriesLimit,
    );
  }

  /**
   * Counts the entries of one page. `filterState` is the state index of a per-state walk (used
   * for entries without `state`), or -1. `basis` is the watermark before the slice.
   */
  countPage(entries: readonly LogEntry[], filterState: number, basis: number, tally: PageTally): void {
    const states = this.states;
    const dedup = this.dedup;
    const events = this.events;
    const tracker = this.tracker;
    let lowest = tally.lowest;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const time = entry.time;
      if (time > lowest) tally.orderBroken = true;
      else lowest = time;
      if (time <= basis) tally.atOrBeforeBasis = true;

      const raw = entry.state;
      let state: number;
      if (raw === undefined) {
        tally.missingState += 1;
        if (filterState < 0) continue;
        state = filterState;
      } else {
        state = states.indexOf(raw);
        tally.withState += 1;
      }

      if (!dedup.observeEvent(time, state, entry.messageId, entry.responseStatus, entry.nextDeliveryTime)) {
        tally.duplicates += 1;
        continue;
      }
      tally.counted += 1;
      if (time <= basis) tally.late += 1;
      const target = events.targetOf(entry);
      events.countEvent(target, state);
      if (state === ERROR) events.countError(target, errorReasonOf(entry.responseStatus, entry.error));
      else if (state === CREATED) this.daily.observeCreated(time);
      tracker.observe(entry.messageId, state, time, target.queue, target.destination, entry);
      if (time > this.lastEventTime) this.lastEventTime = time;
      if (time < tally.oldestCounted) tally.oldestCounted = time;
      if (time > tally.newestCounted) tally.newestCounted = time;
    }
    tally.lowest = lowest;
    this.duplicates += tally.duplicates;
  }

  /** Makes the live counter values the ones /metrics shows (at a checkpoint). */
  publish(): void {
    this.events.events.publish();
    this.events.errors.publish();
    this.tracker.durations.publish();
    this.tracker.attempts.publish();
    this.waiting.publish();
    this.#oldestInFlight = this.tracker.oldestInFlightByQueue();
    this.events.flushFolded();
    this.tracker.flushFolded();
  }
}
