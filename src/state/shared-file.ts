// What every writer of one state file in this process shares: each region's newest part (the
// owner's payload and other collectors' sections, as JSON text) and the one write queue, so each
// write, whichever region's collector makes it, holds the newest of every part. Written
// atomically (temp file in the same directory, fsync, rename, fsync of the directory); nothing
// replaces a file this process has not read or written.
import { statSync, type Stats } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoText, isErrno } from '../config/state-file-access.js';
import {
  OPTIONAL_SECTIONS,
  STATE_FORMAT,
  STATE_VERSION,
  StateFileError,
  TOP_PART,
  type Envelope,
  type RawPart,
} from './envelope.js';
import { createTempBeside, syncDirectory, writeTexts } from './file-io.js';

/**
 * One region's checkpoint in this process: the owner's payload and the sections of other
 * collectors. Each part is kept as its JSON text, made when it was saved or read: a write of
 * another part serializes none of the live objects it came from (the walk's slices move on after
 * the owner's save), and the text is the one copy, smaller than the objects and built once.
 */
export interface RegionPart {
  /** upstreamIdentity() it is written for; null while no writer of it exists. */
  upstream: string | null;
  /** The owner's payload (sections stripped), a JSON object's text, as last written or read; null before either. */
  main: string | null;
  /** The owner's CheckpointFile exists in this process (it will write). */
  owned: boolean;
  /** Each section's JSON text. */
  readonly sections: Map<string, string>;
  /** When its newest content was saved (unix ms; 0: never). */
  savedAt: number;
  /**
   * The part of a region no longer configured, as read: written back as it is, untouched, so
   * the region resumes from it when it is watched again.
   */
  kept?: { version: number; upstream: string; savedAt: number; payload: string };
}

/** What every writer of one path in this process shares: each region's newest part and the write queue. */
interface SharedFile {
  /** By region (TOP_PART for an instance without a region). */
  readonly parts: Map<string, RegionPart>;
  /** The region whose part was at the top level when the file was read: it stays there while it is written. */
  home: string | undefined;
  /** The region the unnamed top level of a file of a build without regions belongs to (claimStateFile). */
  unnamedTopOwner: string | undefined;
  /**
   * A region's own file written by the previous build (`<name>.<region>.json` beside the state
   * file), read instead of the state file while the state file has no part of that region, and
   * removed once a write of the state file carries it.
   */
  readonly sideFiles: Map<string, string>;
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
    shared = {
      parts: new Map(),
      home: undefined,
      unnamedTopOwner: undefined,
      sideFiles: new Map(),
      queue: Promise.resolve(),
      onDisk: undefined,
    };
    SHARED_FILES.set(path, shared);
  }
  return shared;
}

/**
 * Starts the file's shared state afresh, for an exporter starting on it (a restart in the same
 * process reads the file as a new process would, nothing kept from the one before).
 */
export function forgetSharedFile(path: string): void {
  SHARED_FILES.delete(path);
}

/** A region's part of the file in this process, created empty on first use. */
export function partOf(path: string, region: string): RegionPart {
  const parts = sharedFileOf(path).parts;
  let part = parts.get(region);
  if (part === undefined) {
    part = { upstream: null, main: null, owned: false, sections: new Map(), savedAt: 0 };
    parts.set(region, part);
  }
  return part;
}

/**
 * Writes the envelope with every region's part (its owner's payload and every section),
 * atomically, after the writes queued before it: the last write always holds the newest of
 * every part, whichever region's collector wrote it.
 */
export function writeShared(path: string): Promise<void> {
  const shared = sharedFileOf(path);
  const write = shared.queue.then(async () => {
    const refused = replacementProblem(path, shared.onDisk);
    if (refused !== null) throw new StateFileError(`cannot write the state file ${path}: ${refused}`);
    const { texts, regions } = envelopeParts(shared);
    let temp: string | undefined;
    try {
      const created = await createTempBeside(path);
      temp = created.temp;
      const handle = created.handle;
      try {
        await writeTexts(handle, texts);
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
    // The previous build's file of a region is carried by the state file from now on.
    for (const region of regions) {
      const side = shared.sideFiles.get(region);
      if (side === undefined) continue;
      shared.sideFiles.delete(region);
      await unlink(side).catch(() => undefined);
    }
  });
  shared.queue = write.catch(() => undefined);
  return write;
}

/** Whether a part has anything to write: a region kept as read, or content with the upstream it belongs to. */
function writable(part: RegionPart): boolean {
  return part.kept !== undefined || (part.upstream !== null && (part.main !== null || part.sections.size > 0));
}

/**
 * The envelope's JSON text in parts, as JSON.stringify would write it, and the regions it holds.
 * The top level holds the part of the region that had it when the file was read while that
 * region is watched (a file of one region is the file of builds before regions, plus `region`),
 * else the first watched region's (in the configuration's order; another's until that one has
 * written); every other region's part is under `regions`, each with its
 * own version, upstream and savedAt.
 */
function envelopeParts(shared: SharedFile): { texts: string[]; regions: string[] } {
  const parts = [...shared.parts].filter(([, part]) => writable(part));
  const active = parts.filter(([, part]) => part.kept === undefined);
  // Not pinned by the first write: a fresh file's first write may come from any region, and the
  // file settles on the first watched region at the top once that one has written.
  const firstWatched = [...shared.parts].find(([, part]) => part.owned)?.[0];
  const home = active.find(([name]) => name === (shared.home ?? firstWatched)) ?? active[0] ?? parts[0];
  if (home === undefined) throw new StateFileError('nothing to write');
  const texts = [
    `{"format":${JSON.stringify(STATE_FORMAT)},"version":${home[1].kept?.version ?? STATE_VERSION},`,
    home[0] === TOP_PART ? '' : `"region":${JSON.stringify(home[0])},`,
    `"upstream":${JSON.stringify(home[1].kept?.upstream ?? home[1].upstream)},"savedAt":${JSON.stringify(home[1].kept?.savedAt ?? home[1].savedAt)},"payload":`,
    ...payloadTexts(home[1]),
  ];
  const others = parts.filter((entry) => entry !== home && entry[0] !== TOP_PART);
  if (others.length > 0) {
    texts.push(',"regions":{');
    others.forEach(([name, part], index) => {
      texts.push(
        `${index === 0 ? '' : ','}${JSON.stringify(name)}:{"version":${part.kept?.version ?? STATE_VERSION},"upstream":${JSON.stringify(part.kept?.upstream ?? part.upstream)},"savedAt":${JSON.stringify(part.kept?.savedAt ?? part.savedAt)},"payload":`,
        ...payloadTexts(part),
        '}',
      );
    });
    texts.push('}');
  }
  texts.push('}');
  return { texts, regions: [home, ...others].map(([name]) => name) };
}

/** A part's payload as JSON text in parts: the owner's object, reopened for the sections (a section's key never is in the owner's part). */
function payloadTexts(part: RegionPart): string[] {
  if (part.kept !== undefined) return [part.kept.payload];
  const sections = [...part.sections].map(([name, text]) => `${JSON.stringify(name)}:${text}`);
  const main = part.main ?? '{}';
  if (sections.length === 0) return [main];
  const joined = sections.join(',');
  return main === '{}' ? ['{', joined, '}'] : [main.slice(0, -1), ',', joined, '}'];
}

/** Sections found in the part read are kept for the owner's writes until their collector saves its own. */
export function keepSections(part: RegionPart, payload: unknown): void {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return;
  for (const name of OPTIONAL_SECTIONS) {
    const value = (payload as Record<string, unknown>)[name];
    if (value !== undefined && !part.sections.has(name)) part.sections.set(name, JSON.stringify(value));
  }
}

/**
 * Where a region's checkpoint is read from at start: the previous build's file of that region
 * while the state file has no part of it (claimStateFile found it), else the state file.
 */
export function sourceOf(path: string, region: string): { file: string; side: boolean } {
  const side = sharedFileOf(path).sideFiles.get(region);
  return side === undefined ? { file: path, side: false } : { file: side, side: true };
}

/**
 * The part of `region` in an envelope: the top level when it names the region, the entry of
 * `regions` by that name, or the unnamed top level of a file written by a build without regions
 * when it is this region's (the region claimStateFile gave it to, else the one whose upstream it
 * was written for). TOP_PART reads the top level whatever it names.
 */
export function partIn(envelope: Envelope, region: string, upstream: string, path: string): RawPart | undefined {
  const top: RawPart = {
    version: envelope.version,
    upstream: envelope.upstream,
    savedAt: envelope.savedAt,
    payload: envelope.payload,
  };
  if (region === TOP_PART || envelope.region === region) return top;
  const entry = envelope.regions?.[region];
  if (entry !== undefined) return entry;
  if (envelope.region !== undefined) return undefined;
  const owner = sharedFileOf(path).unnamedTopOwner;
  return owner === region || (owner === undefined && envelope.upstream === upstream) ? top : undefined;
}
