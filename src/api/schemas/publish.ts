// Responses of the publishing endpoints: enqueue and workflow trigger.
import { z } from 'zod';
import { parseSeriesTimestamp } from '../timestamps.js';
import { optional } from './common.js';

export const enqueueResultSchema = z.looseObject({
  messageId: z.string(),
  /** The destination endpoint; present on real answers although the interface omits it. */
  url: optional(z.string()),
  deduplicated: optional(z.boolean()),
});

export type EnqueueResult = z.output<typeof enqueueResultSchema>;

/**
 * A URL destination answers one object, a URL Group a bare array (one element per endpoint).
 * The service's OpenAPI also describes `{ "messages": [...] }`; that shape is read too.
 * Always an array for the caller.
 */
export const enqueueResponseSchema = z
  .union([z.array(enqueueResultSchema), enqueueResultSchema, z.looseObject({ messages: z.array(enqueueResultSchema) })])
  .transform((value): EnqueueResult[] => {
    if (Array.isArray(value)) return value;
    if ('messageId' in value) return [value as EnqueueResult];
    return value.messages;
  });

export const triggerResultSchema = z.looseObject({
  workflowRunId: z.string(),
  // "number, format date-time": unix ms per the sibling batch endpoint. A date text is also
  // read, converted to unix ms.
  workflowCreatedAt: optional(
    z.union([
      z.number(),
      z.string().transform((text, ctx) => {
        const ms = parseSeriesTimestamp(text) ?? (/^\d+$/.test(text) ? Number(text) : undefined);
        if (ms === undefined) {
          ctx.addIssue({ code: 'custom', message: 'a timestamp (unix ms or date text)' });
          return z.NEVER;
        }
        return ms;
      }),
    ]),
  ),
});

export type TriggerResult = z.output<typeof triggerResultSchema>;
