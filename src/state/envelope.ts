// The state file's envelope: the format, its version, the upstream each part belongs to (a hash
// of base URL and token, never the token) and the parts, one per QStash region: the top level of
// the envelope is one region's part (a file of one region reads as the file of builds before
// regions), `regions` holds the others', each with its own version, upstream and savedAt.
import { createHash } from 'node:crypto';
import { z } from 'zod';

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

/** A region's part under the envelope's `regions` (the top-level part is the envelope's own fields). */
const regionPartSchema = z.object({
  version: z.number().int(),
  upstream: z.string(),
  savedAt: z.number().finite(),
  payload: z.unknown(),
});

const envelopeSchema = z.object({
  format: z.literal(STATE_FORMAT),
  version: z.number().int(),
  /** The QStash region of the top-level part; absent in a file of a build without regions (or without a region). */
  region: z.string().optional(),
  upstream: z.string(),
  savedAt: z.number().finite(),
  payload: z.unknown(),
  /** The other regions' parts, by region (a file of several regions). */
  regions: z.record(z.string(), regionPartSchema).optional(),
});

export type Envelope = z.infer<typeof envelopeSchema>;

/** One region's checkpoint as read from a file: its payload, the version it is in, the upstream it was written for. */
export interface RawPart {
  version: number;
  upstream: string;
  savedAt: number;
  payload: unknown;
}

/**
 * The part of the state file of an instance without a region (a collector built on its own, the
 * tests): the envelope's top level, as in the files of builds before regions.
 */
export const TOP_PART = '';

/** The envelope of a state file, or why it is not one (the file's text as read). */
export function parseEnvelope(text: string): { ok: true; envelope: Envelope } | { ok: false; detail: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, detail: 'not JSON' };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, detail: `not a state file of this exporter (${firstIssue(envelope.error)})` };
  return { ok: true, envelope: envelope.data };
}

/** Every part of an envelope by region (TOP_PART: an unnamed top level). */
export function partsIn(envelope: Envelope): Map<string, RawPart> {
  const parts = new Map<string, RawPart>(Object.entries(envelope.regions ?? {}));
  parts.set(envelope.region ?? TOP_PART, {
    version: envelope.version,
    upstream: envelope.upstream,
    savedAt: envelope.savedAt,
    payload: envelope.payload,
  });
  return parts;
}

/**
 * Optional top-level sections of the payload that belong to other collectors than the file's
 * owner (the logs collector): each is written and read by its own CheckpointSection
 * (checkpoint-section.ts). The owner's schema never sees them; its writes carry their newest values.
 */
export const OPTIONAL_SECTIONS: readonly string[] = ['workflows'];

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

export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'unknown problem';
  const path = issue.path.map(String).join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
