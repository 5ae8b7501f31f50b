// The optional `waiting` section of the logs checkpoint: the waiting-time histograms and the
// per-message records behind them (src/collectors/logs/waiting.ts). Files written before it
// existed load without it (the histograms then start at 0).
import { z } from 'zod';

const finite = z.number().finite();
const count = z.number().finite().min(0);

export const histogramFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  buckets: z.array(finite),
  series: z.array(z.strictObject({ labels: z.array(z.string()), counts: z.array(count), sum: finite, count })),
});

/** [messageId, queue, created ms | null, notBefore ms | null, ACTIVE times, RETRY nextDeliveryTimes, final seen] */
const waitingMessageSchema = z.tuple([z.string(), z.string(), finite.nullable(), finite.nullable(), z.array(finite), z.array(finite), z.boolean()]);

export const waitingStateSchema = z.strictObject({
  queueWait: histogramFamilySchema,
  lateness: histogramFamilySchema,
  messages: z.array(waitingMessageSchema),
});

export type WaitingState = z.infer<typeof waitingStateSchema>;
