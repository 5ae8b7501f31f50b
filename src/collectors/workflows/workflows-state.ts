// What the workflows collector keeps in the `workflows` section of the checkpoint file: its
// walk position (the same walk as the delivery logs, so the same slice and de-duplication
// shapes), the runs it follows until they end, and every value Prometheus must not see reset.
// Optional in the file: files written before it existed load without it.
import { z } from 'zod';
import { counterFamilySchema, histogramFamilySchema } from '../walk/family-schemas.js';
import { walkPositionShape } from '../walk/position-schema.js';

const finite = z.number().finite();
const count = z.number().finite().min(0);

/** [workflowRunId, created ms, keys of the steps counted, created ms of the newest step counted] */
const followedRunSchema = z.tuple([z.string(), finite, z.array(z.string()), finite]);

export const workflowsStateSchema = z.strictObject({
  // The walk position and de-duplication window (no per-state walks: runs always carry a state).
  ...walkPositionShape,
  counters: z.strictObject({ runs: counterFamilySchema, steps: counterFamilySchema }),
  histograms: z.strictObject({ runDuration: histogramFamilySchema, stepDuration: histogramFamilySchema }),
  /** Runs seen in progress: asked for again until they end. */
  following: z.array(followedRunSchema),
  self: z.strictObject({
    pages: count,
    followPages: count,
    gaps: count,
    late: count,
    evictions: count,
  }),
});

export type WorkflowsState = z.infer<typeof workflowsStateSchema>;
export type FollowedRunState = z.infer<typeof followedRunSchema>;
