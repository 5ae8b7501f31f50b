// Jumps of the wall clock (set by hand, a VM restored, NTP stepping): the wall clock measured
// against the monotonic one. Timers run on the monotonic clock; schedules that name wall-clock
// times (node-cron) must be rearmed after a jump, and the slots a forward jump skipped are not
// missed runs.

/** A change of (wall − monotonic) beyond this between two checks is a jump (drift is microseconds). */
const JUMP_TOLERANCE_MS = 1_000;
/** Forward jumps remembered, to tell the slots they skipped. */
const MAX_SKIPPED = 8;

export class WallClockWatch {
  readonly #wallNow: () => number;
  readonly #monotonicNow: () => number;
  #offset: number;
  /** Wall-clock ranges jumped over, [from, to]. */
  readonly #skipped: Array<[number, number]> = [];

  constructor(wallNow: () => number = Date.now, monotonicNow: () => number = () => performance.now()) {
    this.#wallNow = wallNow;
    this.#monotonicNow = monotonicNow;
    this.#offset = wallNow() - monotonicNow();
  }

  /** How far the wall clock jumped since the last check, ms (0: no jump). */
  check(): number {
    const wall = this.#wallNow();
    const offset = wall - this.#monotonicNow();
    const jump = offset - this.#offset;
    this.#offset = offset;
    if (Math.abs(jump) <= JUMP_TOLERANCE_MS) return 0;
    if (jump > 0) {
      this.#skipped.push([wall - jump, wall]);
      if (this.#skipped.length > MAX_SKIPPED) this.#skipped.shift();
    }
    return jump;
  }

  /** Whether a forward jump went over wall time `at` (unix ms). */
  skipped(at: number): boolean {
    return this.#skipped.some(([from, to]) => at >= from - JUMP_TOLERANCE_MS && at <= to);
  }
}
