// The optional `waiting` section of the logs checkpoint: the waiting-time histograms and the
// waiting times of the messages the tracker holds (src/collectors/logs/waiting.ts, tracker.ts). Files written before it
// existed load without it (the histograms then start at 0).
import { z } from 'zod';
import { histogramFamilySchema } from '../walk/family-schemas.js';

const finite = z.number().finite();

/** [messageId, notBefore ms | null, first ACTIVE ms | null, other ACTIVE times, RETRY nextDeliveryTimes] of tracked messages */
const waitingMessageSchema = z.tuple([
  z.string(),
  finite.nullable(),
  finite.nullable(),
  z.array(finite),
  z.array(finite),
]);

export const waitingStateSchema = z.strictObject({
  queueWait: histogramFamilySchema,
  lateness: histogramFamilySchema,
  messages: z.array(waitingMessageSchema),
});

export type WaitingState = z.infer<typeof waitingStateSchema>;
