// GET /v2/workflows/logs: workflow runs with their steps ({cursor, runs}, as the official
// SDK reads it and the OpenAPI's response schema says). Lenient: unknown fields pass, states
// and step types are any text (the collector bounds them), null reads as absent; a wrong type
// is schema drift naming the field. docs/service-fidelity.md has where the evidence is split.
import { z } from 'zod';
import { optional } from './common.js';

/** Unix ms; a numeric text is read as a number. */
const epochMs = z.union([
  z.number(),
  z
    .string()
    .regex(/^\d{1,16}$/)
    .transform(Number),
]);

export const workflowStepSchema = z.looseObject({
  stepId: optional(z.number()),
  stepName: optional(z.string()),
  stepType: optional(z.string()),
  callType: optional(z.string()),
  messageId: optional(z.string()),
  state: optional(z.string()),
  createdAt: optional(epochMs),
  nextDeliveryTime: optional(epochMs),
});

export const workflowRunSchema = z.looseObject({
  workflowRunId: z.string(),
  workflowUrl: optional(z.string()),
  workflowState: z.string(),
  workflowRunCreatedAt: epochMs,
  workflowRunCompletedAt: optional(epochMs),
  steps: optional(z.array(z.looseObject({ type: optional(z.string()), steps: optional(z.array(workflowStepSchema)) }))),
});

export const workflowLogsPageSchema = z
  .looseObject({
    // "Empty if no more results": an empty cursor is read as none; a numeric one as its text.
    cursor: optional(z.union([z.string(), z.number()])),
    runs: optional(z.array(workflowRunSchema)),
  })
  .superRefine((page, ctx) => {
    // The OpenAPI's "event mode" (flat WorkflowEvent entries) is not read: counting runs needs
    // runs. Refused as drift at `runs`, so the poll fails visibly instead of counting nothing.
    if (page.runs === undefined && (Array.isArray(page.events) || Array.isArray(page.logs))) {
      ctx.addIssue({
        code: 'custom',
        path: ['runs'],
        message: 'runs (workflow runs; the flat event shape is not read)',
      });
    }
  })
  .transform((page) => {
    const cursor = page.cursor === undefined || page.cursor === '' ? undefined : String(page.cursor);
    return { ...(cursor === undefined ? {} : { cursor }), runs: page.runs ?? [] };
  });

export type WorkflowStep = z.output<typeof workflowStepSchema>;
export type WorkflowRun = z.output<typeof workflowRunSchema>;
export type WorkflowLogsPage = z.output<typeof workflowLogsPageSchema>;

export interface WorkflowLogsQuery {
  cursor?: string;
  count?: number;
  fromDate?: number;
  toDate?: number;
  state?: string;
  /** Exactly these runs (`workflowRuns=ID@TS,...`; the service then ignores other filters). */
  runs?: ReadonlyArray<{ id: string; createdAt: number }>;
}
