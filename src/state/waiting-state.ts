// The optional `waiting` section of the logs checkpoint: the waiting-time histograms and the
// waiting times of the messages the tracker holds (src/collectors/logs/waiting.ts, tracker.ts). Files written before it
// existed load without it (the histograms then start at 0).
import { z } from 'zod';

const finite = z.number().finite();
const count = z.number().finite().min(0);

export const histogramFamilySchema = z.strictObject({
  labelNames: z.array(z.string()),
  buckets: z.array(finite),
  series: z.array(z.strictObject({ labels: z.array(z.string()), counts: z.array(count), sum: finite, count })),
});

/** [messageId, notBefore ms | null, first ACTIVE ms | null, other ACTIVE times, RETRY nextDeliveryTimes] of tracked messages */
const waitingMessageSchema = z.tuple([z.string(), finite.nullable(), finite.nullable(), z.array(finite), z.array(finite)]);

export const waitingStateSchema = z.strictObject({
  queueWait: histogramFamilySchema,
  lateness: histogramFamilySchema,
  messages: z.array(waitingMessageSchema),
});

export type WaitingState = z.infer<typeof waitingStateSchema>;
