// Alertmanager's webhook payload, version 4 (prometheus/alertmanager notify/webhook). Strict on
// what remediation relies on (version, each alert's status and labels), lenient on the rest so
// fields a later Alertmanager adds pass through.
import { z } from 'zod';

export const alertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()).optional(),
  startsAt: z.string().optional(),
  endsAt: z.string().optional(),
  generatorURL: z.string().optional(),
  fingerprint: z.string().optional(),
});

export const webhookSchema = z.looseObject({
  version: z.literal('4'),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  groupKey: z.string().optional(),
  truncatedAlerts: z.number().optional(),
  // Alertmanager sends at most max_alerts (0 = all) per notification; a bound keeps a bad
  // sender from making one request pause thousands of schedules.
  alerts: z.array(alertSchema).max(1000),
});

export type WebhookAlert = z.infer<typeof alertSchema>;
export type WebhookPayload = z.infer<typeof webhookSchema>;

/** The payload, or the first problem as `path: message`. */
export function parseWebhook(value: unknown): { payload: WebhookPayload } | { problem: string } {
  const parsed = webhookSchema.safeParse(value);
  if (parsed.success) return { payload: parsed.data };
  const issue = parsed.error.issues[0];
  return { problem: `${issue?.path.map(String).join('.') || 'body'}: ${issue?.message ?? 'invalid'}` };
}
