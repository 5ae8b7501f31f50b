// The text form of an entry's identity (time|state|messageId|s<status>|n<next>): what checkpoints
// hold and what DedupWindow.observe accepts, and its parsing back into numbers (dedup.ts).

/** An absent responseStatus or nextDeliveryTime (present values are finite). */
export const ABSENT = Number.NEGATIVE_INFINITY;

/** A status or next delivery time as the entry gave it: undefined where the window holds ABSENT. */
export function present(value: number): number | undefined {
  return value === ABSENT ? undefined : value;
}

/** Identity key of an entry; `time` first so the window can be pruned by time. */
export function eventKey(
  time: number,
  stateIndex: number,
  messageId: string,
  responseStatus: unknown,
  nextDeliveryTime: unknown,
): string {
  let key = `${time}|${stateIndex}|${messageId}`;
  if (responseStatus !== undefined) key += `|s${responseStatus as number}`;
  if (nextDeliveryTime !== undefined) key += `|n${nextDeliveryTime as number}`;
  return key;
}

export interface Identity {
  time: number;
  state: number;
  messageId: string;
  status: number;
  next: number;
}

const NUMBER_TEXT = '-?\\d+(?:\\.\\d+)?(?:e[+-]\\d+)?';
const SUFFIXES = new RegExp(`^(.*?)(?:\\|s(${NUMBER_TEXT}))?(?:\\|n(${NUMBER_TEXT}))?$`, 's');

/** The identity an eventKey text stands for; null when the text is not one. */
export function parseKey(key: string): Identity | null {
  const first = key.indexOf('|');
  const second = first < 0 ? -1 : key.indexOf('|', first + 1);
  if (second < 0) return null;
  const time = Number(key.slice(0, first));
  const state = Number(key.slice(first + 1, second));
  const rest = SUFFIXES.exec(key.slice(second + 1));
  if (!Number.isFinite(time) || !Number.isInteger(state) || rest === null) return null;
  return {
    time,
    state,
    messageId: rest[1]!,
    status: rest[2] === undefined ? ABSENT : Number(rest[2]),
    next: rest[3] === undefined ? ABSENT : Number(rest[3]),
  };
}

/** The identity without messageId, as the key of a message's map. */
export function restKey(time: number, state: number, status: number, next: number): string {
  return `${time}|${state}|${status}|${next}`;
}
