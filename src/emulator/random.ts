// Seeded pseudo-random numbers (mulberry32), so fault ratios repeat from run to run with the
// same --seed; and unique ids, which are NOT seeded (a restarted emulator must not reuse ids).
import { randomBytes } from 'node:crypto';

export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** True with probability `ratio`. Draws nothing when the ratio is 0, so a zero knob never shifts the sequence. */
  chance(ratio: number): boolean {
    if (ratio <= 0) return false;
    if (ratio >= 1) return true;
    return this.next() < ratio;
  }
}

// Base58 alphabet (no 0, O, I, l), like the service's message ids.
const ID_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Generates ids such as `msg_7YoJxFpwk...`, `scd_...`, `wfr_...`. */
export function makeId(prefix: string, length = 22): string {
  const bytes = randomBytes(length);
  let id = `${prefix}_`;
  for (const byte of bytes) id += ID_ALPHABET[byte % ID_ALPHABET.length];
  return id;
}
