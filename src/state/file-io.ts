// Reading and writing the state file through one small buffer, its temporary files (created
// exclusively, under names nobody can guess, never through a link), and making a rename durable.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, lstatSync, openSync, readdirSync, readSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/**
 * The state file is read and written through buffers of this size, below glibc's initial mmap
 * threshold of 128 KiB. A buffer the size of the file (megabytes with a large de-duplication
 * window) is served by mmap, and freeing it raises glibc's mmap threshold to that size for the
 * life of the process: from then on every allocation below it (response chunks, V8's zones)
 * comes from the main malloc heap, which gives memory back to the system only from its top,
 * and the process stayed tens of MiB larger (docs/performance.md, "Memory").
 */
const IO_CHUNK_BYTES = 64 * 1024;

/** Writes the texts as UTF-8 through one small buffer (IO_CHUNK_BYTES). */
export async function writeTexts(handle: FileHandle, texts: readonly string[]): Promise<void> {
  const buffer = new Uint8Array(IO_CHUNK_BYTES);
  const encoder = new TextEncoder();
  for (const text of texts) {
    // encodeInto stops before a character that does not fit: no pair of surrogates is split.
    for (let from = 0; from < text.length;) {
      const { read, written } = encoder.encodeInto(from === 0 ? text : text.slice(from), buffer);
      for (let done = 0; done < written;) done += (await handle.write(buffer, done, written - done)).bytesWritten;
      from += read;
    }
  }
}

/** A file's text read as UTF-8 through one small buffer (IO_CHUNK_BYTES); throws as readFileSync does. */
export function readTextSync(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(IO_CHUNK_BYTES);
    const decoder = new StringDecoder('utf8');
    const pieces: string[] = [];
    for (let read: number; (read = readSync(fd, buffer, 0, buffer.length, null)) > 0;)
      pieces.push(decoder.write(buffer.subarray(0, read)));
    pieces.push(decoder.end());
    return pieces.join('');
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename durable. Some platforms cannot open a directory for fsync; the rename stands anyway. */
export function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, 'r');
    fsyncSync(fd);
  } catch {
    // Best effort.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Open flags of a temporary file: created here or not at all. O_EXCL refuses any name that exists,
 * a symbolic link included (even one pointing nowhere), so a link planted in a directory others
 * can write (a shared volume, a group-writable folder) never makes this process truncate the
 * file it points at; O_NOFOLLOW says the same where O_EXCL alone would not be honoured.
 */
const EXCLUSIVE_CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** The prefix of the temporary files written beside `path`. */
function tempPrefix(path: string): string {
  return `.${basename(path)}.tmp-`;
}

/**
 * A leftover temporary file of `path`: the current names (128 random bits in hex) and the names
 * earlier versions used (the PID and a counter). Nothing else is ever removed.
 */
function isTempName(path: string, name: string): boolean {
  const prefix = tempPrefix(path);
  if (!name.startsWith(prefix)) return false;
  return /^(?:[0-9a-f]{32}|\d+-\d+)$/.test(name.slice(prefix.length));
}

/**
 * Creates a new temporary file beside `path`, mode 0600, under a name that cannot be guessed
 * (crypto random: no one can plant a name before it is used), exclusively and never through a
 * link. Returns its path and handle; the caller writes it and renames it over `path`.
 */
export async function createTempBeside(path: string): Promise<{ temp: string; handle: FileHandle }> {
  for (let attempt = 1; ; attempt++) {
    const temp = join(dirname(path), `${tempPrefix(path)}${randomBytes(16).toString('hex')}`);
    try {
      return { temp, handle: await open(temp, EXCLUSIVE_CREATE, 0o600) };
    } catch (error) {
      // A random name taken twice is someone planting names faster than chance: give up loudly.
      const taken = typeof error === 'object' && error !== null && 'code' in error && error.code === 'EEXIST';
      if (!taken || attempt >= 3) throw error;
    }
  }
}

/**
 * Removes the temporary files beside `path` left by a writer killed before its rename: only names
 * of our pattern, only regular files (a link is left alone, and unlink never follows one anyway),
 * only files this process's user owns (another user's files in a shared directory are theirs).
 * Best effort: an unreadable directory shows up at the first write.
 */
export function removeLeftoverTemps(path: string): string[] {
  const removed: string[] = [];
  const uid = process.geteuid?.();
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!isTempName(path, name)) continue;
    const temp = join(dirname(path), name);
    try {
      const stats = lstatSync(temp);
      if (!stats.isFile() || (uid !== undefined && stats.uid !== uid)) continue;
      unlinkSync(temp);
      removed.push(temp);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}
