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
import { constants, copyFileSync, renameSync } from 'node:fs';
import type { z } from 'zod';
import { errnoText, isErrno, stateFileProblem } from '../config/state-file-access.js';
import {
  firstIssue,
  parseEnvelope,
  partsIn,
  STATE_VERSION,
  StateFileError,
  TOP_PART,
  withoutSections,
  type SetAsideReason,
  type LoadResult,
} from './envelope.js';
import { readTextSync, removeLeftoverTemps } from './file-io.js';
import { keepSections, partIn, partOf, recordOnDisk, sharedFileOf, sourceOf, writeShared } from './shared-file.js';

export interface CheckpointFileOptions<T> {
  path: string;
  /** upstreamIdentity() of the configured upstream. */
  upstream: string;
  /** The QStash region whose part of the file this is (absent: the file's top level, as without regions). */
  region?: string;
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

type Verdict<T> =
  | { ok: true; payload: T; savedAt: number }
  | {
      ok: false;
      reason: SetAsideReason | 'sections-only' | 'absent';
      detail: string;
      /** The problem is this part's only: the file holds other regions' parts, which stay. */
      partOnly: boolean;
    };

export class CheckpointFile<T> {
  readonly path: string;
  readonly #upstream: string;
  readonly #region: string;
  readonly #schema: z.ZodType<T>;
  readonly #now: () => number;
  readonly #migrate: ((version: number, payload: unknown) => unknown) | undefined;

  constructor(options: CheckpointFileOptions<T>) {
    this.path = options.path;
    this.#upstream = options.upstream;
    this.#region = options.region ?? TOP_PART;
    this.#schema = options.schema;
    this.#now = options.now ?? Date.now;
    this.#migrate = options.migrate;
    const part = partOf(this.path, this.#region);
    part.owned = true;
    part.upstream = this.#upstream;
  }

  /**
   * Reads the checkpoint (this region's part of the file). Synchronous on purpose: it runs once
   * at start, before anything is served, so /metrics never shows counters at 0 before the
   * restore (Prometheus would see a reset). A missing file or part is `missing`; a file whose
   * content cannot be used is renamed aside and `set-aside` (a part that cannot be used in a
   * file holding other regions' parts: the file is copied aside, and the part is left out of
   * the next write). Throws StateFileError when the file cannot be read, or cannot be renamed
   * or copied aside: starting fresh would then replace it.
   */
  loadSync(): LoadResult<T> {
    removeLeftoverTemps(this.path);
    const shared = sharedFileOf(this.path);
    const source = sourceOf(this.path, this.#region);
    let text: string;
    try {
      text = readTextSync(source.file);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) {
        if (source.side) {
          shared.sideFiles.delete(this.#region);
          return this.loadSync();
        }
        shared.onDisk = 'absent';
        return { status: 'missing' };
      }
      throw new StateFileError(
        stateFileProblem(source.file) ?? `the state file ${source.file} cannot be read (${errnoText(error)})`,
        { cause: error },
      );
    }
    if (!source.side) recordOnDisk(this.path);
    const verdict = this.#check(text, source.side);
    const part = partOf(this.path, this.#region);
    if (verdict.ok) {
      // As text: the caller walks on with the loaded objects (the slices), and a section's write
      // before the owner's first save must carry the part as loaded (see save()).
      part.main ??= JSON.stringify(verdict.payload);
      if (part.savedAt === 0) part.savedAt = verdict.savedAt;
      return { status: 'loaded', payload: verdict.payload, savedAt: verdict.savedAt };
    }
    // Only other collectors' sections (this one never wrote), or no part of this region yet.
    if (verdict.reason === 'sections-only' || verdict.reason === 'absent') return { status: 'missing' };
    const reason = verdict.reason;
    if (source.side) {
      shared.sideFiles.delete(this.#region);
      const movedTo = setAside(source.file, reason, this.#now());
      return { status: 'set-aside', reason, detail: verdict.detail, movedTo };
    }
    if (verdict.partOnly) {
      // The other regions' parts stay in the file; this one is kept in the copy only.
      const movedTo = copyAside(this.path, this.#region, reason, this.#now());
      part.sections.clear();
      return { status: 'set-aside', reason, detail: verdict.detail, movedTo };
    }
    const movedTo = setAside(this.path, reason, this.#now());
    shared.onDisk = 'absent';
    return { status: 'set-aside', reason, detail: verdict.detail, movedTo };
  }

  /**
   * Writes a checkpoint atomically, with the newest optional sections of other collectors and
   * the newest parts of the other regions. Rejects with StateFileError; the previous file stays intact.
   */
  async save(payload: T): Promise<void> {
    // Its text as of now: the payload may hold the collector's live objects (the walk's slices),
    // and another collector's write of its section writes this part later, when the walk has
    // moved on past what the payload's counters hold.
    const part = partOf(this.path, this.#region);
    part.main = JSON.stringify(payload);
    part.savedAt = this.#now();
    await writeShared(this.path);
  }

  #check(text: string, side: boolean): Verdict<T> {
    const parsed = parseEnvelope(text);
    if (!parsed.ok) return { ok: false, reason: 'corrupt', detail: parsed.detail, partOnly: false };
    const envelope = parsed.envelope;
    // A newer build's file: every part of it is in a format this one cannot read.
    if (envelope.version > STATE_VERSION)
      return {
        ok: false,
        reason: 'version',
        detail: `format version ${envelope.version}, this exporter reads ${STATE_VERSION}`,
        partOnly: false,
      };
    const found = side
      ? partIn(envelope, TOP_PART, this.#upstream, this.path)
      : partIn(envelope, this.#region, this.#upstream, this.path);
    if (found === undefined) return { ok: false, reason: 'absent', detail: '', partOnly: true };
    if (
      !side &&
      this.#region !== TOP_PART &&
      (envelope.region === this.#region || envelope.regions?.[this.#region] === undefined)
    )
      sharedFileOf(this.path).home ??= this.#region;
    const partOnly = !side && partsIn(envelope).size > 1;
    const { version } = found;
    let raw = found.payload;
    if (version !== STATE_VERSION) {
      const migrated = version < STATE_VERSION ? this.#migrate?.(version, raw) : undefined;
      if (migrated === undefined) {
        return {
          ok: false,
          reason: 'version',
          detail: `format version ${version}, this exporter reads ${STATE_VERSION}`,
          partOnly,
        };
      }
      raw = migrated;
    }
    if (found.upstream !== this.#upstream) {
      return { ok: false, reason: 'foreign', detail: 'written for another QStash URL or token', partOnly };
    }
    // Other collectors' sections as written (an upgrade of the owner's payload may not carry them).
    keepSections(partOf(this.path, this.#region), found.payload);
    const { rest, empty } = withoutSections(raw);
    if (empty) return { ok: false, reason: 'sections-only', detail: '', partOnly };
    const payload = this.#schema.safeParse(rest);
    if (!payload.success)
      return { ok: false, reason: 'corrupt', detail: `invalid content (${firstIssue(payload.error)})`, partOnly };
    return { ok: true, payload: payload.data, savedAt: found.savedAt };
  }
}

/** Renames a file aside; throws StateFileError when it cannot (it would be overwritten). */
function setAside(path: string, reason: SetAsideReason, now: number): string {
  const suffix = reason === 'foreign' ? 'foreign' : 'corrupt';
  const target = `${path}.${suffix}-${now}`;
  try {
    renameSync(path, target);
    return target;
  } catch (error) {
    throw new StateFileError(
      `the state file ${path} cannot be used (${reason}) and cannot be renamed aside (${errnoText(error)}): move it away or choose another path`,
      { cause: error },
    );
  }
}

/**
 * Copies the file aside, for a region's part that cannot be used in a file that holds other
 * regions' parts (they stay): the copy keeps the part as it was. Throws StateFileError when it
 * cannot (the next write would drop the part).
 */
function copyAside(path: string, region: string, reason: SetAsideReason, now: number): string {
  const suffix = reason === 'foreign' ? 'foreign' : 'corrupt';
  const target = `${path}.${suffix}-${region}-${now}`;
  try {
    copyFileSync(path, target, constants.COPYFILE_EXCL);
    return target;
  } catch (error) {
    throw new StateFileError(
      `the part of ${region} in the state file ${path} cannot be used (${reason}) and the file cannot be copied aside (${errnoText(error)}): move it away or choose another path`,
      { cause: error },
    );
  }
}
