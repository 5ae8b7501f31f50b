// An optional top-level section of the checkpoint file, owned by another collector than the
// file's owner (the logs collector): read from the same file at start, written with the owner's
// newest payload (checkpoint-file.ts, writeShared), so both survive every write of either.
// An invalid or foreign section is ignored (the collector starts from scratch), never set aside:
// the owner's part of the file is still good.
import type { z } from 'zod';
import { parseEnvelope, STATE_VERSION, TOP_PART, withoutSections } from './envelope.js';
import { keepSections, partIn, partOf, recordOnDisk, sharedFileOf, sourceOf, writeShared } from './shared-file.js';
import { readTextSync } from './file-io.js';

export type SectionLoad<T> =
  { status: 'loaded'; value: T; savedAt: number } | { status: 'missing' } | { status: 'ignored'; detail: string };

export interface CheckpointSectionOptions<T> {
  path: string;
  upstream: string;
  /** The QStash region whose part of the file holds the section (absent: the file's top level). */
  region?: string;
  /** Top-level key of the region's payload (one of OPTIONAL_SECTIONS). */
  name: string;
  schema: z.ZodType<T>;
  now?: () => number;
}

export class CheckpointSection<T> {
  readonly path: string;
  readonly #options: CheckpointSectionOptions<T>;
  readonly #region: string;

  constructor(options: CheckpointSectionOptions<T>) {
    this.path = options.path;
    this.#options = options;
    this.#region = options.region ?? TOP_PART;
    partOf(this.path, this.#region).upstream = options.upstream;
  }

  loadSync(): SectionLoad<T> {
    const shared = sharedFileOf(this.path);
    const source = sourceOf(this.path, this.#region);
    let text: string;
    try {
      text = readTextSync(source.file);
    } catch (error) {
      if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT') {
        if (source.side) {
          shared.sideFiles.delete(this.#region);
          return this.loadSync();
        }
        shared.onDisk ??= 'absent';
        return { status: 'missing' };
      }
      return { status: 'ignored', detail: 'unreadable' };
    }
    const parsed = parseEnvelope(text);
    if (!parsed.ok) return { status: 'ignored', detail: parsed.detail };
    const envelope = parsed.envelope;
    const found = partIn(envelope, source.side ? TOP_PART : this.#region, this.#options.upstream, this.path);
    if (found === undefined) {
      if (!source.side) recordOnDisk(this.path);
      return { status: 'missing' };
    }
    if (found.upstream !== this.#options.upstream)
      return { status: 'ignored', detail: 'written for another QStash URL or token' };
    const part = partOf(this.path, this.#region);
    // This file's counts are carried by this process's writes from now on: it may replace it.
    if (!source.side) recordOnDisk(this.path);
    // The owner's part is the base of this section's writes until the owner writes (only a
    // payload of the current version: an older one is the owner's to upgrade).
    if (found.version === STATE_VERSION && part.main === null) {
      const { rest, empty } = withoutSections(found.payload);
      if (!empty && typeof rest === 'object' && rest !== null && !Array.isArray(rest)) part.main = JSON.stringify(rest);
    }
    if (part.savedAt === 0) part.savedAt = found.savedAt;
    keepSections(part, found.payload);
    const raw =
      typeof found.payload === 'object' && found.payload !== null
        ? (found.payload as Record<string, unknown>)[this.#options.name]
        : undefined;
    if (raw === undefined) return { status: 'missing' };
    const checked = this.#options.schema.safeParse(raw);
    if (!checked.success) {
      part.sections.delete(this.#options.name);
      const issue = checked.error.issues[0];
      return {
        status: 'ignored',
        detail: `invalid ${this.#options.name} section (${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'unknown problem'})`,
      };
    }
    return { status: 'loaded', value: checked.data, savedAt: found.savedAt };
  }

  /**
   * Saves the section. While the owner lives in this process and has no payload of the current
   * version yet, the section waits for the owner's first write, which carries it (writing now
   * would replace an owner's file of an older version before the owner upgraded it).
   * Rejects with StateFileError.
   */
  async save(value: T): Promise<void> {
    const part = partOf(this.path, this.#region);
    // Its text as of now (see CheckpointFile.save): the owner's write may write it later.
    part.sections.set(this.#options.name, JSON.stringify(value));
    part.savedAt = (this.#options.now ?? Date.now)();
    if (part.owned && part.main === null) return;
    await writeShared(this.path);
  }
}
