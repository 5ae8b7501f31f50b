// What the QStash delivery API says about its queues, URL Groups, dead-letter queue, flow-control
// keys and global parallelism (field names of @upstash/qstash 2.12: QueueResponse, UrlGroup,
// DlqMessage, FlowControlInfo, GlobalParallelismInfo). Lenient like every upstream schema:
// unknown fields pass, Go nils read as absent, a wrong type is schema drift naming the field.
import { z } from 'zod';
import { optional } from './common.js';

/** GET /v2/queues: `[{name, lag, paused, parallelism, createdAt, updatedAt}]`. */
export const queueSchema = z.looseObject({
  name: z.string(),
  /** Messages waiting in the queue. */
  lag: optional(z.number()),
  // A Go omitempty false vanishes: absent = not paused.
  paused: z.boolean().optional().default(false),
  parallelism: optional(z.number()),
  createdAt: optional(z.number()),
  updatedAt: optional(z.number()),
});
export const queueListSchema = z.array(queueSchema);
export type QueueInfo = z.output<typeof queueSchema>;

/** GET /v2/topics: `[{name, endpoints: [{name?, url}]}]`. */
export const urlGroupSchema = z.looseObject({
  name: z.string(),
  endpoints: optional(z.array(z.looseObject({ name: optional(z.string()), url: optional(z.string()) }))),
  createdAt: optional(z.number()),
  updatedAt: optional(z.number()),
});
export const urlGroupListSchema = z.array(urlGroupSchema);
export type UrlGroupInfo = z.output<typeof urlGroupSchema>;

/**
 * One DLQ message, reduced to what the collector counts by: where it was going and when it was
 * created. Bodies, headers and response bodies are never kept (they pass unread).
 */
export const dlqMessageSchema = z.looseObject({
  dlqId: optional(z.string()),
  messageId: optional(z.string()),
  /** Unix milliseconds. */
  createdAt: optional(z.number()),
  queueName: optional(z.string()),
  topicName: optional(z.string()),
  url: optional(z.string()),
  responseStatus: optional(z.number()),
});
/** GET /v2/dlq: `{messages, cursor}`; no cursor (or an empty one) on the last page. */
export const dlqPageSchema = z.looseObject({
  messages: optional(z.array(dlqMessageSchema)).transform((messages) => messages ?? []),
  cursor: optional(z.union([z.string(), z.number()])).transform((cursor) =>
    cursor === undefined || cursor === '' ? undefined : String(cursor),
  ),
});
export type DlqMessage = z.output<typeof dlqMessageSchema>;
export type DlqPage = z.output<typeof dlqPageSchema>;

/**
 * GET /v2/flowControl/{key} (the SDK's FlowControlInfo). The list endpoint's records may carry
 * only the key and the wait list size, under `waitListSize` (docs page) or `waitlistSize`
 * (OpenAPI); both are read.
 */
export const flowControlSchema = z.looseObject({
  flowControlKey: z.string(),
  waitListSize: optional(z.number()),
  waitlistSize: optional(z.number()),
  parallelismMax: optional(z.number()),
  parallelismCount: optional(z.number()),
  rateMax: optional(z.number()),
  rateCount: optional(z.number()),
  /** Seconds. */
  ratePeriod: optional(z.number()),
  /** Unix time of the start of the current rate period. */
  ratePeriodStart: optional(z.number()),
  isPaused: optional(z.boolean()),
  isPinnedParallelism: optional(z.boolean()),
  isPinnedRate: optional(z.boolean()),
});
/** GET /v2/flowControl: a bare array, or `{flowControls: [...]}` as the docs page shows it. */
export const flowControlListSchema = z.union([
  z.array(flowControlSchema),
  z
    .looseObject({ flowControls: optional(z.array(flowControlSchema)).transform((list) => list ?? []) })
    .transform((body) => body.flowControls),
]);
export type FlowControlInfo = z.output<typeof flowControlSchema>;

/** GET /v2/globalParallelism: `{parallelismMax, parallelismCount}` (the SDK reads absent as 0). */
export const globalParallelismSchema = z.looseObject({
  parallelismMax: optional(z.number()),
  parallelismCount: optional(z.number()),
});
export type GlobalParallelism = z.output<typeof globalParallelismSchema>;
