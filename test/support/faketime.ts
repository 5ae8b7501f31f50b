// libfaketime for tests that move a child process's wall clock (LD_PRELOAD; the monotonic clock
// left alone, as a clock set by hand or by NTP leaves it), its offset read from a file at every
// clock read so a test can jump it while the child runs.
import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { requireBinaries, type RequiredBinaries } from './prometheus.js';

/** libfaketime of Debian's faketime package, next to the binary's multiarch directory. */
export const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((path) => existsSync(path));

/** The faketime package, skipped (or, under CI=true, failed) with a clear message when missing. */
export function requireFaketime(suite: string): RequiredBinaries {
  return requireBinaries(suite, LIBFAKETIME === undefined ? ['faketime', 'libfaketime.so.1'] : ['faketime']);
}

/** The child's environment that makes its wall clock read `offsetFile`'s offset at every read. */
export function faketimeEnvironment(offsetFile: string): Record<string, string> {
  return {
    LD_PRELOAD: LIBFAKETIME!,
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/**
 * Sets the offset libfaketime reads: written beside and renamed over, so no clock read sees a
 * half-written file (an empty one reads as no offset: two jumps instead of one).
 */
export async function setOffset(offsetFile: string, offset: string): Promise<void> {
  await writeFile(`${offsetFile}.new`, `${offset}\n`);
  await rename(`${offsetFile}.new`, offsetFile);
}
