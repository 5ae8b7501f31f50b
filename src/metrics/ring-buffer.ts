// A fixed-size ring of samples, each a time and a few numbers, kept in preallocated
// Float64Arrays: its memory is set at construction (capacity × (columns + 1) × 8 bytes) and
// never grows, however long the process runs. The landing page's history uses it.

export class SampleRing<C extends string> {
  readonly capacity: number;
  readonly columns: readonly C[];
  readonly #times: Float64Array;
  readonly #values: Record<C, Float64Array>;
  /** Slot the next push writes. */
  #next = 0;
  #size = 0;

  constructor(capacity: number, columns: readonly C[]) {
    if (!Number.isInteger(capacity) || capacity < 2)
      throw new RangeError(`ring capacity must be an integer of at least 2, got ${capacity}`);
    this.capacity = capacity;
    this.columns = columns;
    this.#times = new Float64Array(capacity);
    this.#values = Object.fromEntries(columns.map((column) => [column, new Float64Array(capacity)])) as Record<
      C,
      Float64Array
    >;
  }

  /** Bytes held by the arrays (what the ring costs, whatever it holds). */
  get bytes(): number {
    return this.#times.byteLength * (this.columns.length + 1);
  }

  get size(): number {
    return this.#size;
  }

  /** Adds a sample, overwriting the oldest once full. A missing value is stored as NaN. */
  push(time: number, values: Partial<Record<C, number>>): void {
    const slot = this.#next;
    this.#times[slot] = time;
    for (const column of this.columns) this.#values[column][slot] = values[column] ?? Number.NaN;
    this.#next = (slot + 1) % this.capacity;
    this.#size = Math.min(this.#size + 1, this.capacity);
  }

  /** Slot of the i-th sample, 0 the oldest. */
  #slot(i: number): number {
    return (this.#next - this.#size + i + this.capacity) % this.capacity;
  }

  timeAt(i: number): number {
    return this.#times[this.#slot(i)]!;
  }

  valueAt(i: number, column: C): number {
    return this.#values[column][this.#slot(i)]!;
  }

  /** Index (0 = oldest) of the newest sample taken at or before `time`, or -1 when none is that old. */
  indexAtOrBefore(time: number): number {
    for (let i = this.#size - 1; i >= 0; i--) if (this.timeAt(i) <= time) return i;
    return -1;
  }
}
