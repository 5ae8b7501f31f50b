// Message states of log entries. The eight documented states have fixed indexes; `CANCELED`
// (the SDKs' spelling) is the same state as `CANCELLED`. A state the service invents later is
// counted under its own name (a few at most), so nothing is silently dropped.

export const KNOWN_STATES = [
  'CREATED',
  'ACTIVE',
  'RETRY',
  'ERROR',
  'DELIVERED',
  'FAILED',
  'CANCEL_REQUESTED',
  'CANCELLED',
] as const;
export type KnownState = (typeof KNOWN_STATES)[number];

export const CREATED = 0;
export const ACTIVE = 1;
export const RETRY = 2;
export const ERROR = 3;
export const DELIVERED = 4;
export const FAILED = 5;
export const CANCEL_REQUESTED = 6;
export const CANCELLED = 7;

/** Outcome of a final state: index into OUTCOMES, or -1 when the state is not final. */
export const OUTCOMES = ['delivered', 'failed', 'cancelled'] as const;
export function outcomeOf(stateIndex: number): number {
  if (stateIndex === DELIVERED) return 0;
  if (stateIndex === FAILED) return 1;
  if (stateIndex === CANCELLED) return 2;
  return -1;
}

/** Unknown states admitted under their own name; further ones share `UNKNOWN`. */
const MAX_EXTRA_STATES = 8;
const STATE_NAME = /^[A-Z][A-Z0-9_]{0,39}$/;

export class StateTable {
  readonly #index = new Map<string, number>();
  readonly #names: string[] = [...KNOWN_STATES];

  constructor() {
    KNOWN_STATES.forEach((name, index) => this.#index.set(name, index));
    this.#index.set('CANCELED', CANCELLED);
  }

  /** The states a walk filtered by state asks for, one walk each: the documented ones. */
  readonly walkFilters: readonly string[] = KNOWN_STATES;

  /** Every state name, by index. */
  get names(): readonly string[] {
    return this.#names;
  }

  /** Index of a state as written in an entry. */
  indexOf(raw: string): number {
    const known = this.#index.get(raw);
    if (known !== undefined) return known;
    return this.#slow(raw);
  }

  #slow(raw: string): number {
    const upper = raw.trim().toUpperCase();
    const known = this.#index.get(upper);
    if (known !== undefined) {
      this.#remember(raw, known);
      return known;
    }
    const extras = this.#names.length - KNOWN_STATES.length;
    const name = STATE_NAME.test(upper) && extras < MAX_EXTRA_STATES ? upper : 'UNKNOWN';
    let index = this.#index.get(name);
    if (index === undefined) {
      index = this.#names.length;
      this.#names.push(name);
      this.#index.set(name, index);
    }
    this.#remember(raw, index);
    return index;
  }

  // Spellings are cached for speed, but only a bounded number of them.
  #remember(raw: string, index: number): void {
    if (this.#index.size < 256) this.#index.set(raw, index);
  }
}
