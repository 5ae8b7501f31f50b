// What the logs collector keeps in a checkpoint: the walk position (watermark, the slice being
// walked), the de-duplication window and every value Prometheus must not see reset (counters,
// histogram buckets, gauges rebuilt from them), all from one consistent moment. The schema is
// strict: the file is the exporter's own, so anything unexpected is corruption.
import { z } from 'zod';

const finite = z.number().finite();
const count = z.number().finite().min(0);
const labelValues = z.array(z.string());

const counterFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  /** [label values in labelNames order, value] */
  series: z.array(z.tuple([labelValues, count])),
});

const histogramFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  buckets: z.array(finite),
  series: z.array(
    z.strictObject({
      labels: labelValues,
      /** Per bucket (not cumulative), then the +Inf overflow: buckets.length + 1 numbers. */
      counts: z.array(count),
      sum: finite,
      count,
    }),
  ),
});

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

/** [messageId, created ms | null, attempts, final ms | null, outcome index | -1, queue, destination] */
const trackedSchema = z.tuple([z.string(), finite.nullable(), count, finite.nullable(), z.number().int().min(-1).max(2), z.string(), z.string()]);

export const logsStateSchema = z.strictObject({
  watermark: finite,
  watermarkReadAt: finite,
  dedupFrom: finite,
  anchorTime: finite,
  lastEventTime: finite,
  sliceMs: z.number().finite().min(1),
  stateWalk: z.boolean(),
  gapSince: finite.nullable(),
  /** Events per millisecond of event time, smoothed over completed slices. */
  rateEwma: finite.nullable(),
  slice: sliceSchema.nullable(),
  dedup: z.strictObject({
    /** Identity keys counted once. */
    keys: z.array(z.string()),
    /** Keys counted more than once (identical entries, see docs/counting.md). */
    repeats: z.array(z.tuple([z.string(), z.number().int().min(2)])),
  }),
  counters: z.strictObject({
    events: counterFamilySchema,
    errors: counterFamilySchema,
  }),
  histograms: z.strictObject({
    duration: histogramFamilySchema,
    attempts: histogramFamilySchema,
  }),
  tracker: z.strictObject({
    messages: z.array(trackedSchema),
    /** Recently finished message ids (late entries of them do not start a new life). */
    finished: z.array(z.string()),
  }),
  daily: z.strictObject({ day: z.number().int(), count }),
  self: z.strictObject({
    pages: count,
    duplicates: count,
    gaps: count,
    evictions: count,
    checkpointsSuccess: count,
    checkpointsError: count,
    /** Increments folded into overflow series, by metric name. */
    folded: z.record(z.string(), count),
  }),
});

export type LogsState = z.infer<typeof logsStateSchema>;
export type CounterFamilyState = z.infer<typeof counterFamilySchema>;
export type HistogramFamilyState = z.infer<typeof histogramFamilySchema>;
export type SliceState = z.infer<typeof sliceSchema>;
export type WalkState = z.infer<typeof walkSchema>;
export type TrackedState = z.infer<typeof trackedSchema>;
