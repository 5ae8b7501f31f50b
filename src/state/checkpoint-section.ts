// An optional top-level section of the checkpoint file, owned by another collector than the
// file's owner (the logs collector): read from the same file at start, written with the owner's
// newest payload (checkpoint-file.ts, writeShared), so both survive every write of either.
// An invalid or foreign section is ignored (the collector starts from scratch), never set aside:
// the owner's part of the file is still good.
import type { z } from 'zod';
import {
  keepSections,
  recordOnDisk,
  sharedFileOf,
  STATE_FORMAT,
  STATE_VERSION,
  withoutSections,
  writeShared,
} from './checkpoint-file.js';
import { readTextSync } from './file-io.js';

export type SectionLoad<T> =
  { status: 'loaded'; value: T; savedAt: number } | { status: 'missing' } | { status: 'ignored'; detail: string };

export interface CheckpointSectionOptions<T> {
  path: string;
  upstream: string;
  /** Top-level key (one of OPTIONAL_SECTIONS). */
  name: string;
  schema: z.ZodType<T>;
  now?: () => number;
}

export class CheckpointSection<T> {
  readonly path: string;
  readonly #options: CheckpointSectionOptions<T>;

  constructor(options: CheckpointSectionOptions<T>) {
    this.path = options.path;
    this.#options = options;
  }

  loadSync(): SectionLoad<T> {
    let json: unknown;
    try {
      json = JSON.parse(readTextSync(this.path));
    } catch (error) {
      if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT') {
        sharedFileOf(this.path).onDisk ??= 'absent';
        return { status: 'missing' };
      }
      return { status: 'ignored', detail: 'unreadable or not JSON' };
    }
    const envelope = json as {
      format?: unknown;
      version?: unknown;
      upstream?: unknown;
      savedAt?: unknown;
      payload?: unknown;
    };
    if (typeof envelope !== 'object' || envelope === null || envelope.format !== STATE_FORMAT)
      return { status: 'ignored', detail: 'not a state file of this exporter' };
    if (envelope.upstream !== this.#options.upstream)
      return { status: 'ignored', detail: 'written for another QStash URL or token' };
    const shared = sharedFileOf(this.path);
    // This file's counts are carried by this process's writes from now on: it may replace it.
    recordOnDisk(this.path);
    // The owner's part is the base of this section's writes until the owner writes (only a
    // payload of the current version: an older one is the owner's to upgrade).
    if (envelope.version === STATE_VERSION && shared.main === null) {
      const { rest, empty } = withoutSections(envelope.payload);
      if (!empty && typeof rest === 'object' && rest !== null && !Array.isArray(rest))
        shared.main = JSON.stringify(rest);
    }
    keepSections(this.path, envelope.payload);
    const raw =
      typeof envelope.payload === 'object' && envelope.payload !== null
        ? (envelope.payload as Record<string, unknown>)[this.#options.name]
        : undefined;
    if (raw === undefined) return { status: 'missing' };
    const parsed = this.#options.schema.safeParse(raw);
    if (!parsed.success) {
      shared.sections.delete(this.#options.name);
      const issue = parsed.error.issues[0];
      return {
        status: 'ignored',
        detail: `invalid ${this.#options.name} section (${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'unknown problem'})`,
      };
    }
    return {
      status: 'loaded',
      value: parsed.data,
      savedAt: typeof envelope.savedAt === 'number' ? envelope.savedAt : 0,
    };
  }

  /**
   * Saves the section. While the owner lives in this process and has no payload of the current
   * version yet, the section waits for the owner's first write, which carries it (writing now
   * would replace an owner's file of an older version before the owner upgraded it).
   * Rejects with StateFileError.
   */
  async save(value: T): Promise<void> {
    const shared = sharedFileOf(this.path);
    // Its text as of now (see CheckpointFile.save): the owner's write may write it later.
    shared.sections.set(this.#options.name, JSON.stringify(value));
    if (shared.owned && shared.main === null) return;
    await writeShared(this.path, this.#options.upstream, this.#options.now ?? Date.now);
  }
}
