// Deterministic identifiers and fake secrets: the same seed always gives the same value, so an
// emulator started twice serves the same ids and tests can name them.
import { createHash } from 'node:crypto';

function digest(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

/** A version-4-shaped uuid derived from `seed`. */
export function deterministicUuid(seed: string): string {
  const bytes = digest(`uuid:${seed}`);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A base64 token shaped like the service's (`base64(<owner>:<random>)`), derived from `seed`. */
export function deterministicSecret(owner: string, seed: string): string {
  const random = digest(`secret:${seed}`).toString('base64url').slice(0, 32);
  return Buffer.from(`${owner}:${random}`).toString('base64');
}

const ADJECTIVES = ['glowing', 'quiet', 'brave', 'sunny', 'clever', 'steady', 'lucky', 'swift'];
const ANIMALS = ['baboon', 'otter', 'falcon', 'lynx', 'heron', 'walrus', 'gecko', 'bison'];

/** A host label like the service's `glowing-baboon-15797`, derived from `seed`. */
export function deterministicHostLabel(seed: string): string {
  const bytes = digest(`host:${seed}`);
  const adjective = ADJECTIVES[(bytes[0] ?? 0) % ADJECTIVES.length] ?? 'quiet';
  const animal = ANIMALS[(bytes[1] ?? 0) % ANIMALS.length] ?? 'otter';
  const number = (bytes.readUInt16BE(2) % 90_000) + 10_000;
  return `${adjective}-${animal}-${number}`;
}
