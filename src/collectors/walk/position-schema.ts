// How a walk's position is kept in a checkpoint: the watermark, the slices in progress with
// their cursor chains, and the de-duplication window. Each user of the walk (the logs and
// workflows collectors) spreads `walkPositionShape` into its own strict schema.
import { z } from 'zod';

const finite = z.number().finite();
const count = z.number().finite().min(0);

const walkSchema = z.strictObject({
  /** State filter of a per-state walk, null for the plain walk. */
  state: z.string().nullable(),
  /** toDate of the next request of this walk: everything above it in the slice is read. */
  resumeTo: finite.nullable(),
  /** Cursor of the chain in progress, to continue it (it belongs to toDate = chainTo). */
  cursor: z.string().nullable(),
  chainTo: finite.nullable(),
  done: z.boolean(),
});

const sliceSchema = z.strictObject({
  from: finite,
  top: finite,
  startedAt: finite,
  atFrontier: z.boolean(),
  /** Watermark before the slice. */
  basis: finite,
  hadAnchor: z.boolean(),
  pages: count,
  counted: count,
  oldestCounted: finite.nullable(),
  newestCounted: finite.nullable(),
  sawBoundary: z.boolean(),
  sawStateless: z.boolean(),
  sawStateField: z.boolean(),
  walks: z.array(walkSchema).min(1),
});

/**
 * The position's fields, in the order the checkpoint writes them; `stateWalk` (per-state walks)
 * is the logs collector's own and goes after `sliceMs` there.
 */
export const walkPositionShape = {
  watermark: finite,
  watermarkReadAt: finite,
  dedupFrom: finite,
  anchorTime: finite,
  lastEventTime: finite,
  sliceMs: z.number().finite().min(1),
  gapSince: finite.nullable(),
  /** Events per millisecond of event time, smoothed over completed slices. */
  rateEwma: finite.nullable(),
  /** The slices in progress, oldest first, each walked by its own cursor chain (one before version 3). */
  slices: z.array(sliceSchema),
  dedup: z.strictObject({
    /** Identity keys counted once. */
    keys: z.array(z.string()),
    /** Keys counted more than once (identical entries, see docs/counting.md). */
    repeats: z.array(z.tuple([z.string(), z.number().int().min(2)])),
  }),
};

export type SliceState = z.infer<typeof sliceSchema>;
export type WalkState = z.infer<typeof walkSchema>;

/** The walk position's part of a checkpoint. */
export type PositionState = z.infer<z.ZodObject<typeof walkPositionShape>>;
