// How a counter or histogram family is kept in a checkpoint (the logs and workflows collectors'
// families, and the waiting-time histograms): label values in labelNames order, the values, and
// the optional created time (unix ms) behind OpenMetrics' `_created` samples.
import { z } from 'zod';

const finite = z.number().finite();
const count = z.number().finite().min(0);
const labelValues = z.array(z.string());

export const counterFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  /**
   * [label values in labelNames order, value, created (unix ms)]. The created time is optional
   * (no version bump): files written before it existed load without one, and their series get
   * no `_created` sample in OpenMetrics (see src/metrics/openmetrics.ts).
   */
  series: z.array(z.tuple([labelValues, count, finite.optional()])),
});

export const histogramFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  buckets: z.array(finite),
  series: z.array(
    z.strictObject({
      labels: labelValues,
      /** Per bucket (not cumulative), then the +Inf overflow: buckets.length + 1 numbers. */
      counts: z.array(count),
      sum: finite,
      count,
      /** When the series was created, unix ms; optional like the counters' (older files). */
      created: finite.optional(),
    }),
  ),
});

export type CounterFamilyState = z.infer<typeof counterFamilySchema>;
export type HistogramFamilyState = z.infer<typeof histogramFamilySchema>;
