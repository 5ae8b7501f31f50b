// Whether a file the exporter keeps (the state file) can be used: read, written, and replaced
// by a rename beside it. Asked before anything is served, so that a file that exists but cannot
// be used stops the start with one line, instead of being replaced by a fresh, less complete one.
import { accessSync, closeSync, constants, openSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage } from '../common/errors.js';

const STICKY_BIT = 0o1000;

/** Words for the errno codes of a file that cannot be used, with the code for searching. */
function causeText(error: unknown): string {
  const code = errnoText(error);
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
  };
  const word = words[code];
  return word === undefined ? code : `${word}, ${code}`;
}

/**
 * Why this process cannot keep its checkpoint at `path`, as one sentence naming the path and the
 * cause, or null when it can: the file (if any) must be a regular file it can read and write,
 * and its directory must take new files, since each write is a temporary file renamed over it.
 * Checked before anything is served: a state file that cannot be read would be replaced by a
 * fresh, less complete one, and one that cannot be written loses the counts at every restart.
 */
export function stateFileProblem(path: string): string | null {
  const directory = dirname(path);
  let stats: Stats | undefined;
  try {
    stats = statSync(path);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) return `the state file ${path} cannot be reached (${causeText(error)})`;
  }
  if (stats !== undefined) {
    if (stats.isDirectory()) return `the state file ${path} is a directory`;
    if (!stats.isFile()) return `the state file ${path} is not a regular file`;
    for (const [flags, what] of [
      ['r', 'read'],
      ['r+', 'written'],
    ] as const) {
      try {
        // Opening neither reads nor changes the file; it asks the kernel for the access.
        closeSync(openSync(path, flags));
      } catch (error) {
        return `the state file ${path} cannot be ${what} (${causeText(error)})`;
      }
    }
  }
  try {
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `the directory ${directory} of the state file cannot take new files (${causeText(error)}); each checkpoint is written beside the file and renamed over it`;
  }
  if (stats !== undefined && process.geteuid !== undefined && process.geteuid() !== 0) {
    // In a sticky directory (such as /tmp) only the owner may rename over another user's file.
    const uid = process.geteuid();
    const folder = statSync(directory);
    if ((folder.mode & STICKY_BIT) !== 0 && stats.uid !== uid && folder.uid !== uid) {
      return `the state file ${path} cannot be replaced (permission denied: it belongs to another user in a sticky directory)`;
    }
  }
  return null;
}

/** Whether `error` is a Node system error with this errno code. */
export function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

/** The errno code of a system error, else its message. */
export function errnoText(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string')
    return error.code;
  return errorMessage(error);
}
