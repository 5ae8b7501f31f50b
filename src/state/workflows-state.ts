// What the workflows collector keeps in the `workflows` section of the checkpoint file: its
// walk position (the same walk as the delivery logs, so the same slice and de-duplication
// shapes), the runs it follows until they end, and every value Prometheus must not see reset.
// Optional in the file: files written before it existed load without it.
import { z } from 'zod';
import { logsStateSchema } from './logs-state.js';

const finite = z.number().finite();
const count = z.number().finite().min(0);
const counterFamily = logsStateSchema.shape.counters.shape.events;
const histogramFamily = logsStateSchema.shape.histograms.shape.duration;

/** [workflowRunId, created ms, keys of the steps counted, created ms of the newest step counted] */
const followedRunSchema = z.tuple([z.string(), finite, z.array(z.string()), finite]);

export const workflowsStateSchema = z.strictObject({
  watermark: finite,
  watermarkReadAt: finite,
  dedupFrom: finite,
  anchorTime: finite,
  lastEventTime: finite,
  sliceMs: z.number().finite().min(1),
  gapSince: finite.nullable(),
  rateEwma: finite.nullable(),
  slices: logsStateSchema.shape.slices,
  dedup: logsStateSchema.shape.dedup,
  counters: z.strictObject({ runs: counterFamily, steps: counterFamily }),
  histograms: z.strictObject({ runDuration: histogramFamily, stepDuration: histogramFamily }),
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
