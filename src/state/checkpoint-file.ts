// The state file: one JSON document written atomically (temp file in the same directory, fsync,
// rename, fsync of the directory), so a reader sees either the previous checkpoint or the new
// one, never half of one, even after SIGKILL or a power cut. The envelope names the format, its
// version and the upstream it belongs to (a hash of base URL and token, never the token), so a
// file of another account or of an incompatible version is recognised. A file whose content
// cannot be used (corrupt, foreign, other version) is renamed aside and reported: the exporter
// starts fresh. A file that cannot be read or written (permissions, a directory, a read-only file
// system) is refused at start (stateFileProblem): starting fresh would replace it.
// Nothing replaces a file this process has not read or written: a file that appeared or changed
// since (another exporter on the same path, a restored copy) is left alone and the write fails.
import { createHash } from 'node:crypto';
import { renameSync, statSync, type Stats } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { errnoText, isErrno, stateFileProblem } from '../config/state-file-access.js';
import { createTempBeside, readTextSync, removeLeftoverTemps, syncDirectory, writeTexts } from './file-io.js';

export const STATE_FORMAT = 'upstash-exporter-state';
/**
 * Version of the envelope and payload written. 2: `self.late` (late log entries), `self.walkErrors`
 * (failed walk cycles by code) and label values
 * bounded to LABEL_VALUE_MAX_BYTES. 3: the slices in progress as a list (`slices`, walked side by
 * side) instead of one (`slice`). 4: the window's cold identities (`cold`: per-second fingerprints
 * of the entries counted over the lateness horizon). An older version is upgraded by the
 * reader's `migrate`.
 */
export const STATE_VERSION = 4;

/** Why a state file was set aside. */
export type SetAsideReason = 'corrupt' | 'foreign' | 'version';

export type LoadResult<T> =
  | { status: 'loaded'; payload: T; savedAt: number }
  | { status: 'missing' }
  | { status: 'set-aside'; reason: SetAsideReason; detail: string; movedTo: string };

/** Error of a checkpoint write; the path is the user's own, the message never holds a secret. */
export class StateFileError extends Error {
  readonly code = 'ERR_STATE_FILE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StateFileError';
  }
}

/**
 * Identity of an upstream account: sha256 of the normalised base URL and the token, shortened.
 * The token cannot be recovered from it, and a state file of another account does not match.
 */
export function upstreamIdentity(baseUrl: string, token: string): string {
  const normalised = baseUrl.trim().replace(/\/+$/, '').toLowerCase();
  const digest = createHash('sha256').update(normalised).update('\n').update(token).digest('hex');
  return `sha256:${digest.slice(0, 32)}`;
}

/** The upstream identity a state file was written for (its envelope's), undefined when unreadable. */
export function writtenFor(path: string): string | undefined {
  try {
    const envelope = JSON.parse(readTextSync(path)) as { upstream?: unknown } | null;
    return typeof envelope?.upstream === 'string' ? envelope.upstream : undefined;
  } catch {
    return undefined;
  }
}

const envelopeSchema = z.object({
  format: z.literal(STATE_FORMAT),
  version: z.number().int(),
  upstream: z.string(),
  savedAt: z.number().finite(),
  payload: z.unknown(),
});

/**
 * Optional top-level sections of the payload that belong to other collectors than the file's
 * owner (the logs collector): each is written and read by its own CheckpointSection
 * (checkpoint-section.ts). The owner's schema never sees them; its writes carry their newest values.
 */
export const OPTIONAL_SECTIONS: readonly string[] = ['workflows'];

/**
 * What every writer of one path in this process shares: the newest payload parts and the write
 * queue. Each part is kept as its JSON text, made when it was saved or read: a write of another
 * part serializes none of the live objects it came from (the walk's slices move on after the
 * owner's save), and the text is the one copy, smaller than the objects and built once.
 */
interface SharedFile {
  /** The owner's payload (sections stripped), a JSON object's text, as last written or read; null before either. */
  main: string | null;
  /** The owner's CheckpointFile exists in this process (it will write). */
  owned: boolean;
  /** Each section's JSON text. */
  readonly sections: Map<string, string>;
  queue: Promise<void>;
  /**
   * The file on disk as this process last read or wrote it (`absent`: there was none), so a write
   * replaces only that one; undefined while nothing was read (a writer that never loads).
   */
  onDisk: FileIdentity | 'absent' | undefined;
}

/** What tells one version of the file from another without reading it. */
interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

function identityOf(stats: Stats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
}

/** Records the file as this process sees it now (after reading or writing it). */
export function recordOnDisk(path: string): void {
  const shared = sharedFileOf(path);
  try {
    shared.onDisk = identityOf(statSync(path));
  } catch (error) {
    shared.onDisk = isErrno(error, 'ENOENT') ? 'absent' : undefined;
  }
}

/**
 * Why a write must not replace the file now on disk, or null: a file that appeared where there
 * was none, or another file than the one last read or written, holds counts this process never
 * saw (another exporter's, a copy put back by hand). Replacing it would lose them.
 */
function replacementProblem(path: string, onDisk: FileIdentity | 'absent' | undefined): string | null {
  if (onDisk === undefined) return null;
  let now: FileIdentity;
  try {
    now = identityOf(statSync(path));
  } catch {
    // Gone (nothing to lose), or not reachable: the write itself reports that.
    return null;
  }
  if (onDisk === 'absent')
    return 'a file appeared there after this process started; it is left as it is (restart the exporter to read it)';
  const same =
    now.dev === onDisk.dev && now.ino === onDisk.ino && now.size === onDisk.size && now.mtimeMs === onDisk.mtimeMs;
  return same
    ? null
    : 'the file was replaced or changed by someone else since this process last read or wrote it (another exporter on the same file?); it is left as it is (restart the exporter to read it)';
}

const SHARED_FILES = new Map<string, SharedFile>();

export function sharedFileOf(path: string): SharedFile {
  let shared = SHARED_FILES.get(path);
  if (shared === undefined) {
    shared = { main: null, owned: false, sections: new Map(), queue: Promise.resolve(), onDisk: undefined };
    SHARED_FILES.set(path, shared);
  }
  return shared;
}

/**
 * Writes the envelope with the owner's payload and every section, atomically, after the writes
 * queued before it (so the last write always holds the newest of every part).
 */
export function writeShared(path: string, upstream: string, now: () => number): Promise<void> {
  const shared = sharedFileOf(path);
  const write = shared.queue.then(async () => {
    const refused = replacementProblem(path, shared.onDisk);
    if (refused !== null) throw new StateFileError(`cannot write the state file ${path}: ${refused}`);
    const parts = envelopeParts(shared, upstream, now());
    let temp: string | undefined;
    try {
      const created = await createTempBeside(path);
      temp = created.temp;
      const handle = created.handle;
      try {
        await writeTexts(handle, parts);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
    } catch (error) {
      if (temp !== undefined) await unlink(temp).catch(() => undefined);
      throw new StateFileError(`cannot write the state file ${path}: ${errnoText(error)}`, { cause: error });
    }
    recordOnDisk(path);
    syncDirectory(dirname(path));
  });
  shared.queue = write.catch(() => undefined);
  return write;
}

/**
 * The envelope's JSON text in parts, as JSON.stringify would write it: the owner's part first,
 * then the sections (a section's key never is in the owner's part).
 */
function envelopeParts(shared: SharedFile, upstream: string, savedAt: number): string[] {
  const head = `{"format":${JSON.stringify(STATE_FORMAT)},"version":${STATE_VERSION},"upstream":${JSON.stringify(upstream)},"savedAt":${JSON.stringify(savedAt)},"payload":`;
  const sections = [...shared.sections].map(([name, text]) => `${JSON.stringify(name)}:${text}`);
  const main = shared.main ?? '{}';
  if (sections.length === 0) return [head, main, '}'];
  const joined = sections.join(',');
  // The owner's object, reopened for the sections.
  return main === '{}' ? [head, '{', joined, '}}'] : [head, main.slice(0, -1), ',', joined, '}}'];
}

/** The payload without the optional sections; `empty` when only sections were in it. */
export function withoutSections(payload: unknown): { rest: unknown; empty: boolean } {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { rest: payload, empty: false };
  const rest: Record<string, unknown> = {};
  let sections = 0;
  for (const [key, value] of Object.entries(payload)) {
    if (OPTIONAL_SECTIONS.includes(key)) sections += 1;
    else rest[key] = value;
  }
  return { rest, empty: sections > 0 && Object.keys(rest).length === 0 };
}

/** Sections found in the file are kept for the owner's writes until their collector saves its own. */
export function keepSections(path: string, payload: unknown): void {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return;
  const shared = sharedFileOf(path);
  for (const name of OPTIONAL_SECTIONS) {
    const value = (payload as Record<string, unknown>)[name];
    if (value !== undefined && !shared.sections.has(name)) shared.sections.set(name, JSON.stringify(value));
  }
}

export interface CheckpointFileOptions<T> {
  path: string;
  /** upstreamIdentity() of the configured upstream. */
  upstream: string;
  /** Strict schema of the payload (the file is ours: anything unexpected means corruption). */
  schema: z.ZodType<T>;
  /** Wall clock, for the set-aside suffix. */
  now?: () => number;
  /**
   * Upgrades the payload of an older format version to the current one (before the schema
   * check); undefined means the version cannot be read. Without it, only STATE_VERSION is read.
   */
  migrate?: (version: number, payload: unknown) => unknown;
}

export class CheckpointFile<T> {
  readonly path: string;
  readonly #upstream: string;
  readonly #schema: z.ZodType<T>;
  readonly #now: () => number;
  readonly #migrate: ((version: number, payload: unknown) => unknown) | undefined;

  constructor(options: CheckpointFileOptions<T>) {
    this.path = options.path;
    this.#upstream = options.upstream;
    this.#schema = options.schema;
    this.#now = options.now ?? Date.now;
    this.#migrate = options.migrate;
    sharedFileOf(this.path).owned = true;
  }

  /**
   * Reads the checkpoint. Synchronous on purpose: it runs once at start, before anything is
   * served, so /metrics never shows counters at 0 before the restore (Prometheus would see a
   * reset). A missing file is `missing`; one whose content cannot be used is renamed aside and
   * `set-aside`. Throws StateFileError when the file cannot be read, or cannot be renamed aside:
   * starting fresh would then replace it.
   */
  loadSync(): LoadResult<T> {
    removeLeftoverTemps(this.path);
    let text: string;
    try {
      text = readTextSync(this.path);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) {
        sharedFileOf(this.path).onDisk = 'absent';
        return { status: 'missing' };
      }
      throw new StateFileError(
        stateFileProblem(this.path) ?? `the state file ${this.path} cannot be read (${errnoText(error)})`,
        { cause: error },
      );
    }
    recordOnDisk(this.path);
    const verdict = this.#check(text);
    if (verdict.ok) {
      // As text: the caller walks on with the loaded objects (the slices), and a section's write
      // before the owner's first save must carry the part as loaded (see save()).
      sharedFileOf(this.path).main ??= JSON.stringify(verdict.payload);
      return { status: 'loaded', payload: verdict.payload, savedAt: verdict.savedAt };
    }
    // Only other collectors' sections (this one never wrote): nothing of its own yet.
    if (verdict.reason === 'sections-only') return { status: 'missing' };
    const movedTo = this.#setAside(verdict.reason);
    sharedFileOf(this.path).onDisk = 'absent';
    return { status: 'set-aside', reason: verdict.reason, detail: verdict.detail, movedTo };
  }

  /**
   * Writes a checkpoint atomically, with the newest optional sections of other collectors.
   * Rejects with StateFileError; the previous file stays intact.
   */
  async save(payload: T): Promise<void> {
    // Its text as of now: the payload may hold the collector's live objects (the walk's slices),
    // and another collector's write of its section writes this part later, when the walk has
    // moved on past what the payload's counters hold.
    sharedFileOf(this.path).main = JSON.stringify(payload);
    await writeShared(this.path, this.#upstream, this.#now);
  }

  #check(
    text: string,
  ):
    | { ok: true; payload: T; savedAt: number }
    | { ok: false; reason: SetAsideReason | 'sections-only'; detail: string } {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, reason: 'corrupt', detail: 'not JSON' };
    }
    const envelope = envelopeSchema.safeParse(json);
    if (!envelope.success)
      return {
        ok: false,
        reason: 'corrupt',
        detail: `not a state file of this exporter (${firstIssue(envelope.error)})`,
      };
    const { version } = envelope.data;
    let raw = envelope.data.payload;
    if (version !== STATE_VERSION) {
      const migrated = version < STATE_VERSION ? this.#migrate?.(version, raw) : undefined;
      if (migrated === undefined) {
        return {
          ok: false,
          reason: 'version',
          detail: `format version ${version}, this exporter reads ${STATE_VERSION}`,
        };
      }
      raw = migrated;
    }
    if (envelope.data.upstream !== this.#upstream) {
      return { ok: false, reason: 'foreign', detail: 'written for another QStash URL or token' };
    }
    // Other collectors' sections as written (an upgrade of the owner's payload may not carry them).
    keepSections(this.path, envelope.data.payload);
    const { rest, empty } = withoutSections(raw);
    if (empty) return { ok: false, reason: 'sections-only', detail: '' };
    const payload = this.#schema.safeParse(rest);
    if (!payload.success)
      return { ok: false, reason: 'corrupt', detail: `invalid content (${firstIssue(payload.error)})` };
    return { ok: true, payload: payload.data, savedAt: envelope.data.savedAt };
  }

  /** Renames the file aside; throws StateFileError when it cannot (it would be overwritten). */
  #setAside(reason: SetAsideReason | 'sections-only'): string {
    const suffix = reason === 'foreign' ? 'foreign' : 'corrupt';
    const target = `${this.path}.${suffix}-${this.#now()}`;
    try {
      renameSync(this.path, target);
      return target;
    } catch (error) {
      throw new StateFileError(
        `the state file ${this.path} cannot be used (${reason}) and cannot be renamed aside (${errnoText(error)}): move it away or choose another path`,
        { cause: error },
      );
    }
  }
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'unknown problem';
  const path = issue.path.map(String).join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
