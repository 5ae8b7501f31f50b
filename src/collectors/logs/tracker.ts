// The per-message tracker behind upstash_qstash_message_duration_seconds,
// upstash_qstash_message_attempts and upstash_qstash_messages_in_flight. A message enters with
// its first counted entry and leaves when its final state (DELIVERED, FAILED, CANCELLED) has
// been counted AND the slice holding it is complete: walks go newest first, so the older
// entries of a message (its CREATED, its ACTIVE attempts) may come after its final entry, and
// only a complete slice guarantees every older entry has been seen. Duration and attempts are
// observed only for messages whose CREATED was seen. The tracker holds at most `capacity`
// messages; the oldest are evicted (and counted) beyond that.
import type { Counter, Registry } from 'prom-client';
import { OVERFLOW_LABEL_VALUE, SeriesGuard } from '../../metrics/cardinality.js';
import { HistogramFamily, type Labels } from '../walk/families.js';
import { MessagesBySecond } from '../walk/messages-by-second.js';
import { OutcomeGroups } from './outcome-groups.js';
import { ACTIVE, CREATED, RETRY, outcomeOf } from './states.js';
import type { TrackedState } from './logs-state.js';
import type { WaitingState } from './waiting-state.js';
import { MAX_WAIT_TIMES, notBeforeMs, type WaitExtra, type WaitFacts, type WaitingTimes } from './waiting.js';
import { metricOptions } from '../../metrics/families.js';
import { LOGS_FAMILIES } from './families.js';

export const DURATION_METRIC = LOGS_FAMILIES.duration.name;
export const ATTEMPTS_METRIC = LOGS_FAMILIES.attempts.name;

/** Seconds: sub-second loopback deliveries up to retries spread over a day. */
export const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 10_800, 43_200, 86_400];
/** Attempts: 1 is the common case; plans allow up to tens of retries. */
export const ATTEMPT_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30];

/** Finished ids remembered so a late entry of a finished message does not start a new life. */
const FINISHED_MEMORY = 10_000;

interface Tracked extends WaitFacts {
  created: number;
  attempts: number;
  finalTime: number;
  outcome: number;
  readonly queue: string;
  readonly destination: string;
}

export interface MessageTrackerOptions {
  registry: Registry;
  capacity: number;
  seriesLimit: number;
  dropped?: Counter<'metric'>;
  truncated?: Counter<'metric'>;
}

export class MessageTracker {
  readonly durations: HistogramFamily<'outcome' | 'queue' | 'destination'>;
  readonly attempts: HistogramFamily<'outcome' | 'queue' | 'destination'>;
  readonly capacity: number;
  /** Messages dropped before they finished, all time. */
  evictions = 0;
  /** Observes the waiting times of finished messages (waiting.ts); absent in pure use. */
  waiting: WaitingTimes | null = null;
  readonly #messages = new Map<string, Tracked>();
  /**
   * Messages held whose final entry was counted (finalSeen): they leave at the next slice
   * completion. A count, not a set of ids: the tracked record says it (three hash-table
   * operations per message fewer on the hot path).
   */
  #finalCount = 0;
  /**
   * By second (unix seconds) of their final entry, the ids of messages whose final entry was counted: a slice completion
   * visits the seconds it completes, not every message finished in slices still walked.
   */
  readonly #finalBySecond = new MessagesBySecond();
  readonly #finished = new Set<string>();
  /**
   * #finished in the order added, as a ring whose next slot holds the oldest once full. Not the
   * Set's own iterator: each delete leaves a hole at the front of its table, and values().next()
   * walks over every hole each time (thousands per message finished).
   */
  readonly #finishedOrder: string[] = [];
  #finishedNext = 0;
  readonly #durationGuard: SeriesGuard<string>;
  readonly #attemptsGuard: SeriesGuard<string>;
  readonly #groups: OutcomeGroups;
  readonly #dropped: Counter<'metric'> | undefined;
  /** Observations folded into overflow series, all time, by metric; and not yet added to `dropped`. */
  readonly #folded = new Map<string, number>([
    [DURATION_METRIC, 0],
    [ATTEMPTS_METRIC, 0],
  ]);
  #foldedPending = 0;

  constructor(options: MessageTrackerOptions) {
    this.capacity = options.capacity;
    this.#dropped = options.dropped;
    this.durations = new HistogramFamily({
      ...metricOptions(LOGS_FAMILIES.duration),
      buckets: DURATION_BUCKETS,
      registry: options.registry,
    });
    this.attempts = new HistogramFamily({
      ...metricOptions(LOGS_FAMILIES.attempts),
      buckets: ATTEMPT_BUCKETS,
      registry: options.registry,
    });
    const guard = (metric: string): SeriesGuard<string> =>
      new SeriesGuard<string>({
        metric,
        limit: options.seriesLimit,
        keep: ['outcome'],
        ...(options.dropped ? { dropped: options.dropped } : {}),
        ...(options.truncated ? { truncated: options.truncated } : {}),
      });
    this.#durationGuard = guard(DURATION_METRIC);
    this.#attemptsGuard = guard(ATTEMPTS_METRIC);
    this.#groups = new OutcomeGroups(this.#durationGuard, this.durations, this.#attemptsGuard, this.attempts);
  }

  /** Messages seen and not finished. */
  get inFlight(): number {
    return this.#messages.size - this.#finalCount;
  }

  get size(): number {
    return this.#messages.size;
  }

  /**
   * One counted entry of a message (hot path). `entry` gives the waiting times their fields,
   * read only where they matter: notBefore of CREATED, nextDeliveryTime of RETRY.
   */
  observe(
    messageId: string,
    stateIndex: number,
    time: number,
    queue: string,
    destination: string,
    entry?: { notBefore?: unknown; nextDeliveryTime?: unknown },
  ): void {
    let tracked = this.#messages.get(messageId);
    if (tracked === undefined) {
      if (this.#finished.has(messageId)) return;
      if (this.#messages.size >= this.capacity) this.#evictOldest();
      tracked = {
        created: Number.NaN,
        attempts: 0,
        finalTime: Number.NaN,
        outcome: -1,
        queue,
        destination,
        firstActive: Number.NaN,
        waitExtra: null,
      };
      this.#messages.set(messageId, tracked);
    }
    if (stateIndex === CREATED) {
      if (!(tracked.created <= time)) tracked.created = time;
      const notBefore = entry?.notBefore;
      if (notBefore !== undefined) extraOf(tracked).notBefore = notBeforeMs(notBefore);
    } else if (stateIndex === ACTIVE) {
      tracked.attempts += 1;
      // Entries come newest first: keep the earliest apart, the others in a list made on demand.
      const first = tracked.firstActive;
      if (Number.isNaN(first)) tracked.firstActive = time;
      else if (time < first) {
        tracked.firstActive = time;
        addTime(extraOf(tracked).laterActives, first);
      } else {
        addTime(extraOf(tracked).laterActives, time);
      }
    } else if (stateIndex === RETRY) {
      const next = entry?.nextDeliveryTime;
      if (typeof next === 'number') addTime(extraOf(tracked).nexts, next);
    } else {
      const outcome = outcomeOf(stateIndex);
      if (outcome >= 0) {
        if (!finalSeen(tracked)) this.#finalCount += 1;
        tracked.outcome = outcome;
        tracked.finalTime = time;
        this.#finalBySecond.add(time, messageId);
      }
    }
  }

  /**
   * At a slice completion: observes and forgets every message whose final entry was counted at or
   * before `upTo` (the new watermark: all its entries are read then; one whose final entry lies
   * in a slice ahead may have entries in slices not read yet).
   */
  finishSlice(upTo = Number.POSITIVE_INFINITY): number {
    let observed = 0;
    this.#finalBySecond.visitUpTo(upTo, (messageId) => {
      const tracked = this.#messages.get(messageId);
      // Listed again by a later final entry, or already gone (finished, evicted).
      if (tracked === undefined || !finalSeen(tracked) || tracked.finalTime > upTo) return;
      this.#finalCount -= 1;
      this.#messages.delete(messageId);
      this.#remember(messageId);
      if (Number.isNaN(tracked.created)) return;
      this.#observeFinished(messageId, tracked);
      observed += 1;
    });
    return observed;
  }

  #observeFinished(messageId: string, tracked: Tracked): void {
    const group = this.#groups.of(tracked.queue, tracked.destination);
    // The message is the bucket's exemplar (OpenMetrics only), timed at its final entry.
    this.durations.observe(group.durations[tracked.outcome]!, Math.max(0, tracked.finalTime - tracked.created) / 1000, {
      messageId,
      time: tracked.finalTime,
    });
    this.attempts.observe(group.attempts[tracked.outcome]!, tracked.attempts);
    this.waiting?.observeFinished(tracked.queue, tracked);
    if (group.folded) this.#foldedPending += 1;
  }

  /** Per queue, the CREATED time of the oldest message seen in flight (not finished). */
  oldestInFlightByQueue(): Map<string, number> {
    const oldest = new Map<string, number>();
    for (const tracked of this.#messages.values()) {
      if (Number.isNaN(tracked.created) || finalSeen(tracked)) continue;
      const known = oldest.get(tracked.queue);
      if (known === undefined || tracked.created < known) oldest.set(tracked.queue, tracked.created);
    }
    return oldest;
  }

  export(): { messages: TrackedState[]; finished: string[] } {
    const messages: TrackedState[] = [];
    for (const [id, t] of this.#messages) {
      messages.push([id, nullIfNaN(t.created), t.attempts, nullIfNaN(t.finalTime), t.outcome, t.queue, t.destination]);
    }
    return { messages, finished: [...this.#finished] };
  }

  restore(state: { messages: readonly TrackedState[]; finished: readonly string[] }): void {
    this.#messages.clear();
    this.#finalCount = 0;
    this.#finalBySecond.clear();
    this.#finished.clear();
    this.#finishedOrder.length = 0;
    this.#finishedNext = 0;
    for (const id of state.finished) this.#remember(id);
    for (const [id, created, attempts, finalTime, outcome, queue, destination] of state.messages) {
      if (this.#messages.size >= this.capacity) break;
      const prior = this.#messages.get(id);
      if (prior !== undefined && finalSeen(prior)) this.#finalCount -= 1;
      this.#messages.set(id, {
        created: created ?? Number.NaN,
        attempts,
        finalTime: finalTime ?? Number.NaN,
        outcome,
        queue,
        destination,
        firstActive: Number.NaN,
        waitExtra: null,
      });
      if (outcome >= 0 && finalTime !== null) {
        this.#finalCount += 1;
        this.#finalBySecond.add(finalTime, id);
      }
    }
  }

  /** The waiting times of the messages held, for the checkpoint's `waiting` section (only messages with any). */
  exportWaiting(): WaitingState['messages'] {
    const out: WaitingState['messages'] = [];
    for (const [id, t] of this.#messages) {
      const extra = t.waitExtra;
      if (Number.isNaN(t.firstActive) && extra === null) continue;
      out.push([
        id,
        extra === null ? null : nullIfNaN(extra.notBefore),
        nullIfNaN(t.firstActive),
        extra === null ? [] : [...extra.laterActives],
        extra === null ? [] : [...extra.nexts],
      ]);
    }
    return out;
  }

  /** After restore(): the waiting times of the messages held. */
  restoreWaiting(messages: WaitingState['messages']): void {
    for (const [id, notBefore, firstActive, later, nexts] of messages) {
      const tracked = this.#messages.get(id);
      if (tracked === undefined) continue;
      tracked.firstActive = firstActive ?? Number.NaN;
      tracked.waitExtra =
        notBefore === null && later.length === 0 && nexts.length === 0
          ? null
          : { notBefore: notBefore ?? Number.NaN, laterActives: [...later], nexts: [...nexts] };
    }
  }

  /** All-time observations folded into overflow series, by metric, flushed or not. */
  foldedTotals(): Record<string, number> {
    return {
      [DURATION_METRIC]: (this.#folded.get(DURATION_METRIC) ?? 0) + this.#foldedPending,
      [ATTEMPTS_METRIC]: (this.#folded.get(ATTEMPTS_METRIC) ?? 0) + this.#foldedPending,
    };
  }

  /** Adds the folded observations since the last flush to series_dropped_total. */
  flushFolded(): void {
    this.#fold(DURATION_METRIC, this.#foldedPending);
    this.#fold(ATTEMPTS_METRIC, this.#foldedPending);
    this.#foldedPending = 0;
  }

  /**
   * After the histogram families were restored: re-admits their label sets to the series caps
   * and carries the folded totals into series_dropped_total.
   */
  restoreGuards(folded: Record<string, number>): void {
    for (const metric of [DURATION_METRIC, ATTEMPTS_METRIC]) this.#fold(metric, folded[metric] ?? 0);
    const sets = (family: HistogramFamily<string>): Labels[] => {
      const out: Labels[] = [];
      for (const series of family.export().series) {
        if (!series.labels.includes(OVERFLOW_LABEL_VALUE))
          out.push(Object.fromEntries(family.labelNames.map((n, i) => [n, series.labels[i] ?? ''])));
      }
      return out;
    };
    this.#durationGuard.restoreState(sets(this.durations));
    this.#attemptsGuard.restoreState(sets(this.attempts));
  }

  #fold(metric: string, value: number): void {
    if (value <= 0) return;
    this.#folded.set(metric, (this.#folded.get(metric) ?? 0) + value);
    this.#dropped?.inc({ metric }, value);
  }

  #evictOldest(): void {
    const oldest = this.#messages.keys().next();
    if (oldest.done) return;
    const tracked = this.#messages.get(oldest.value);
    if (tracked !== undefined && finalSeen(tracked)) this.#finalCount -= 1;
    this.#messages.delete(oldest.value);
    this.evictions += 1;
  }

  #remember(messageId: string): void {
    if (this.#finished.has(messageId)) return;
    if (this.#finished.size >= FINISHED_MEMORY) this.#finished.delete(this.#finishedOrder[this.#finishedNext]!);
    this.#finished.add(messageId);
    this.#finishedOrder[this.#finishedNext] = messageId;
    this.#finishedNext = (this.#finishedNext + 1) % FINISHED_MEMORY;
  }
}

/** Whether the message's final entry was counted (set together by observe() and restore()). */
function finalSeen(tracked: Tracked): boolean {
  return tracked.outcome >= 0 && !Number.isNaN(tracked.finalTime);
}

/** A message's rarer waiting facts, made on first need. */
function extraOf(tracked: Tracked): WaitExtra {
  return (tracked.waitExtra ??= { notBefore: Number.NaN, laterActives: [], nexts: [] });
}

/** Adds a time to a bounded list. */
function addTime(times: number[], time: number): void {
  if (times.length < MAX_WAIT_TIMES) times.push(time);
}

function nullIfNaN(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}
