// Reading and writing the state file through one small buffer, and making a rename durable.
import { closeSync, fsyncSync, openSync, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
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
