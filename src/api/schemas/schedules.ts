// Schedule list (GET /v2/schedules): a JSON array of schedules.
import { z } from 'zod';
import { jsonObject, optional } from './common.js';

export const scheduleSchema = z.looseObject({
  scheduleId: z.string(),
  cron: z.string(),
  destination: z.string(),
  /** Unix milliseconds. */
  createdAt: z.number(),
  method: z.string(),
  // Required by the interface, but a Go `omitempty` bool vanishes when false: absent = not
  // paused, rather than failing the whole list over a field that carries no news.
  isPaused: z.boolean().optional().default(false),
  header: optional(jsonObject),
  body: optional(z.string()),
  retries: optional(z.number()),
  /** Seconds. */
  delay: optional(z.number()),
  callback: optional(z.string()),
  failureCallback: optional(z.string()),
  // The interface says callerIp; the docs example and the SDKs say callerIP. Both are read.
  callerIp: optional(z.string()),
  callerIP: optional(z.string()),
  queueName: optional(z.string()),
  flowControlKey: optional(z.string()),
  parallelism: optional(z.number()),
  rate: optional(z.number()),
  /** Seconds. */
  period: optional(z.number()),
  retryDelayExpression: optional(z.string()),
  label: optional(z.string()),
  labels: optional(z.array(z.string())),
  /** Unix milliseconds. */
  lastScheduleTime: optional(z.number()),
  /** Unix milliseconds. */
  nextScheduleTime: optional(z.number()),
  /** messageId → IN_PROGRESS | SUCCESS | FAIL (not log states). */
  lastScheduleStates: optional(z.record(z.string(), z.string())),
});

export const scheduleListSchema = z.array(scheduleSchema);

export type Schedule = z.output<typeof scheduleSchema>;
