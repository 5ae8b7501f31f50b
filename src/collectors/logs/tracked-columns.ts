// The per-message records of the tracker (tracker.ts) in columns: one slot per message held.
import type { TrackedState } from './logs-state.js';
import type { WaitingState } from './waiting-state.js';
import type { WaitExtra } from './waiting.js';

/**
 * The messages held, one slot each in columns of plain numbers (and of the strings they share
 * with the event series), not one object each: a message lives for a slice or more, long
 * enough to be promoted to the old generation, and an object per message with its three boxed
 * times was that much more for the garbage collector to copy, promote and mark (issue 38).
 */
export class TrackedColumns {
  readonly created: number[] = [];
  readonly attempts: number[] = [];
  readonly finalTime: number[] = [];
  readonly outcome: number[] = [];
  /** The earliest ACTIVE (NaN: none yet). */
  readonly firstActive: number[] = [];
  readonly queue: string[] = [];
  readonly destination: string[] = [];
  /** The rarer waiting facts, made on first need. */
  readonly waitExtra: Array<WaitExtra | null> = [];
  /** Free slots (a stack). */
  readonly #free: number[] = [];

  add(queue: string, destination: string): number {
    const free = this.#free.pop();
    if (free === undefined) {
      this.created.push(Number.NaN);
      this.attempts.push(0);
      this.finalTime.push(Number.NaN);
      this.outcome.push(-1);
      this.firstActive.push(Number.NaN);
      this.queue.push(queue);
      this.destination.push(destination);
      this.waitExtra.push(null);
      return this.created.length - 1;
    }
    this.created[free] = Number.NaN;
    this.attempts[free] = 0;
    this.finalTime[free] = Number.NaN;
    this.outcome[free] = -1;
    this.firstActive[free] = Number.NaN;
    this.queue[free] = queue;
    this.destination[free] = destination;
    this.waitExtra[free] = null;
    return free;
  }

  release(slot: number): void {
    this.queue[slot] = '';
    this.destination[slot] = '';
    this.waitExtra[slot] = null;
    this.#free.push(slot);
  }

  /** Whether the message's final entry was counted (set together by observe() and restore()). */
  finalSeen(slot: number): boolean {
    return this.outcome[slot]! >= 0 && !Number.isNaN(this.finalTime[slot]!);
  }

  extraOf(slot: number): WaitExtra {
    return (this.waitExtra[slot] ??= { notBefore: Number.NaN, laterActives: [], nexts: [] });
  }

  clear(): void {
    for (const column of [
      this.created,
      this.attempts,
      this.finalTime,
      this.outcome,
      this.firstActive,
      this.queue,
      this.destination,
      this.waitExtra,
      this.#free,
    ])
      column.length = 0;
  }

  /** A held message as the checkpoint keeps it. */
  stateOf(id: string, slot: number): TrackedState {
    return [
      id,
      nullIfNaN(this.created[slot]!),
      this.attempts[slot]!,
      nullIfNaN(this.finalTime[slot]!),
      this.outcome[slot]!,
      this.queue[slot]!,
      this.destination[slot]!,
    ];
  }

  /** A held message's waiting times as the checkpoint's `waiting` section keeps them (null: none). */
  waitingOf(id: string, slot: number): WaitingState['messages'][number] | null {
    const extra = this.waitExtra[slot]!;
    const firstActive = this.firstActive[slot]!;
    if (Number.isNaN(firstActive) && extra === null) return null;
    return [
      id,
      extra === null ? null : nullIfNaN(extra.notBefore),
      nullIfNaN(firstActive),
      extra === null ? [] : [...extra.laterActives],
      extra === null ? [] : [...extra.nexts],
    ];
  }

  restoreWaiting(slot: number, [, notBefore, firstActive, later, nexts]: WaitingState['messages'][number]): void {
    this.firstActive[slot] = firstActive ?? Number.NaN;
    this.waitExtra[slot] =
      notBefore === null && later.length === 0 && nexts.length === 0
        ? null
        : { notBefore: notBefore ?? Number.NaN, laterActives: [...later], nexts: [...nexts] };
  }
}

export function nullIfNaN(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}
