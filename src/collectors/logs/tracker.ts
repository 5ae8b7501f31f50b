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
import { TrackedColumns } from './tracked-columns.js';
import { MAX_WAIT_TIMES, notBeforeMs, type WaitFacts, type WaitingTimes } from './waiting.js';
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
  /**
   * Every message known by id: a held message's slot in #columns (0 or more), or a finished
   * one's place in #finishedOrder as -(place + 1). One map for both, so a new message costs one
   * lookup, and a finished one moves from held to remembered without leaving the map.
   */
  readonly #ids = new Map<string, number>();
  readonly #columns = new TrackedColumns();
  /** Messages held (slots in use). */
  #held = 0;
  /**
   * Messages held whose final entry was counted (finalSeen): they leave at the next slice
   * completion.
   */
  #finalCount = 0;
  /**
   * By second (unix seconds) of their final entry, the ids of messages whose final entry was counted: a slice completion
   * visits the seconds it completes, not every message finished in slices still walked.
   */
  readonly #finalBySecond = new MessagesBySecond();
  /** The finished ids remembered, as a ring whose next place holds the oldest once full. */
  readonly #finishedOrder: string[] = [];
  #finishedNext = 0;
  /** The facts of one finished message, handed to the waiting times (one object, reused). */
  readonly #facts: WaitFacts = { created: Number.NaN, firstActive: Number.NaN, waitExtra: null };
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
    return this.#held - this.#finalCount;
  }

  get size(): number {
    return this.#held;
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
    const columns = this.#columns;
    let slot = this.#ids.get(messageId);
    if (slot === undefined) {
      if (this.#held >= this.capacity) this.#evictOldest();
      slot = columns.add(queue, destination);
      this.#held += 1;
      this.#ids.set(messageId, slot);
    } else if (slot < 0) {
      return; // a late entry of a finished message
    }
    if (stateIndex === CREATED) {
      if (!(columns.created[slot]! <= time)) columns.created[slot] = time;
      const notBefore = entry?.notBefore;
      if (notBefore !== undefined) columns.extraOf(slot).notBefore = notBeforeMs(notBefore);
    } else if (stateIndex === ACTIVE) {
      columns.attempts[slot]! += 1;
      // Entries come newest first: keep the earliest apart, the others in a list made on demand.
      const first = columns.firstActive[slot]!;
      if (Number.isNaN(first)) columns.firstActive[slot] = time;
      else if (time < first) {
        columns.firstActive[slot] = time;
        addTime(columns.extraOf(slot).laterActives, first);
      } else {
        addTime(columns.extraOf(slot).laterActives, time);
      }
    } else if (stateIndex === RETRY) {
      const next = entry?.nextDeliveryTime;
      if (typeof next === 'number') addTime(columns.extraOf(slot).nexts, next);
    } else {
      const outcome = outcomeOf(stateIndex);
      if (outcome >= 0) {
        if (!columns.finalSeen(slot)) this.#finalCount += 1;
        columns.outcome[slot] = outcome;
        columns.finalTime[slot] = time;
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
    const columns = this.#columns;
    this.#finalBySecond.visitUpTo(upTo, (messageId) => {
      const slot = this.#ids.get(messageId);
      // Listed again by a later final entry, or already gone (finished, evicted).
      if (slot === undefined || slot < 0 || !columns.finalSeen(slot) || columns.finalTime[slot]! > upTo) return;
      this.#finalCount -= 1;
      if (!Number.isNaN(columns.created[slot]!)) {
        this.#observeFinished(messageId, slot);
        observed += 1;
      }
      this.#release(slot);
      this.#remember(messageId);
    });
    return observed;
  }

  #observeFinished(messageId: string, slot: number): void {
    const columns = this.#columns;
    const queue = columns.queue[slot]!;
    const outcome = columns.outcome[slot]!;
    const created = columns.created[slot]!;
    const finalTime = columns.finalTime[slot]!;
    const group = this.#groups.of(queue, columns.destination[slot]!);
    // The message is the bucket's exemplar (OpenMetrics only), timed at its final entry.
    this.durations.observe(group.durations[outcome]!, Math.max(0, finalTime - created) / 1000, {
      messageId,
      time: finalTime,
    });
    this.attempts.observe(group.attempts[outcome]!, columns.attempts[slot]!);
    if (this.waiting !== null) {
      const facts = this.#facts;
      facts.created = created;
      facts.firstActive = columns.firstActive[slot]!;
      facts.waitExtra = columns.waitExtra[slot]!;
      this.waiting.observeFinished(queue, facts);
      facts.waitExtra = null;
    }
    if (group.folded) this.#foldedPending += 1;
  }

  /** Per queue, the CREATED time of the oldest message seen in flight (not finished). */
  oldestInFlightByQueue(): Map<string, number> {
    const oldest = new Map<string, number>();
    const columns = this.#columns;
    for (const slot of this.#ids.values()) {
      if (slot < 0) continue;
      const created = columns.created[slot]!;
      if (Number.isNaN(created) || columns.finalSeen(slot)) continue;
      const queue = columns.queue[slot]!;
      const known = oldest.get(queue);
      if (known === undefined || created < known) oldest.set(queue, created);
    }
    return oldest;
  }

  export(): { messages: TrackedState[]; finished: string[] } {
    const messages: TrackedState[] = [];
    for (const [id, slot] of this.#ids) if (slot >= 0) messages.push(this.#columns.stateOf(id, slot));
    return { messages, finished: this.#finishedIds() };
  }

  restore(state: { messages: readonly TrackedState[]; finished: readonly string[] }): void {
    this.#ids.clear();
    this.#columns.clear();
    this.#held = 0;
    this.#finalCount = 0;
    this.#finalBySecond.clear();
    this.#finishedOrder.length = 0;
    this.#finishedNext = 0;
    for (const id of state.finished) this.#remember(id);
    const columns = this.#columns;
    for (const [id, created, attempts, finalTime, outcome, queue, destination] of state.messages) {
      if (this.#held >= this.capacity) break;
      let slot = this.#ids.get(id);
      if (slot !== undefined && slot >= 0) {
        if (columns.finalSeen(slot)) this.#finalCount -= 1;
      } else {
        slot = columns.add(queue, destination);
        this.#held += 1;
        this.#ids.set(id, slot);
      }
      columns.created[slot] = created ?? Number.NaN;
      columns.attempts[slot] = attempts;
      columns.finalTime[slot] = finalTime ?? Number.NaN;
      columns.outcome[slot] = outcome;
      columns.queue[slot] = queue;
      columns.destination[slot] = destination;
      columns.firstActive[slot] = Number.NaN;
      columns.waitExtra[slot] = null;
      if (outcome >= 0 && finalTime !== null) {
        this.#finalCount += 1;
        this.#finalBySecond.add(finalTime, id);
      }
    }
  }

  /** The waiting times of the messages held, for the checkpoint's `waiting` section (only messages with any). */
  exportWaiting(): WaitingState['messages'] {
    const out: WaitingState['messages'] = [];
    for (const [id, slot] of this.#ids) {
      const row = slot < 0 ? null : this.#columns.waitingOf(id, slot);
      if (row !== null) out.push(row);
    }
    return out;
  }

  /** After restore(): the waiting times of the messages held. */
  restoreWaiting(messages: WaitingState['messages']): void {
    for (const row of messages) {
      const slot = this.#ids.get(row[0]);
      if (slot !== undefined && slot >= 0) this.#columns.restoreWaiting(slot, row);
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

  /** A held message's slot back to the columns (its id stays in #ids for the caller to change or drop). */
  #release(slot: number): void {
    this.#columns.release(slot);
    this.#held -= 1;
  }

  /**
   * Drops the oldest message held (first in the map's order). Finished ids met on the way are
   * moved to the back, so the next eviction does not walk over them again.
   */
  #evictOldest(): void {
    // With none held, the loop would only move finished ids around.
    if (this.#held === 0) return;
    for (const [id, slot] of this.#ids) {
      if (slot < 0) {
        this.#ids.delete(id);
        this.#ids.set(id, slot);
        continue;
      }
      if (this.#columns.finalSeen(slot)) this.#finalCount -= 1;
      this.#ids.delete(id);
      this.#release(slot);
      this.evictions += 1;
      return;
    }
  }

  /** Remembers a finished id (its held slot, if any, already released): the oldest remembered is forgotten beyond FINISHED_MEMORY. */
  #remember(messageId: string): void {
    const known = this.#ids.get(messageId);
    if (known !== undefined && known < 0 && this.#finishedOrder[-known - 1] === messageId) return;
    const place = this.#finishedNext;
    if (this.#finishedOrder.length >= FINISHED_MEMORY) {
      const oldest = this.#finishedOrder[place]!;
      if (this.#ids.get(oldest) === -place - 1) this.#ids.delete(oldest);
    }
    this.#finishedOrder[place] = messageId;
    this.#ids.set(messageId, -place - 1);
    this.#finishedNext = (place + 1) % FINISHED_MEMORY;
  }

  /** The finished ids remembered, oldest first. */
  #finishedIds(): string[] {
    const order = this.#finishedOrder;
    const out: string[] = [];
    const full = order.length >= FINISHED_MEMORY;
    for (let k = 0; k < order.length; k++) {
      const place = full ? (this.#finishedNext + k) % FINISHED_MEMORY : k;
      const id = order[place]!;
      if (this.#ids.get(id) === -place - 1) out.push(id);
    }
    return out;
  }
}

/** Adds a time to a bounded list. */
function addTime(times: number[], time: number): void {
  if (times.length < MAX_WAIT_TIMES) times.push(time);
}
