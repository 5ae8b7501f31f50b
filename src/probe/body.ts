// The probe message: a small JSON body that names the probe and carries its send time, so the
// receiver can compute the end-to-end latency from the body alone (the signature covers it).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

export const PROBE_KINDS = ['message', 'workflow'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** Value of the body's `probe` field and of the label the probe messages carry. */
export const PROBE_MARK = 'upstash-exporter-probe';

const probeBodySchema = z.strictObject({
  probe: z.literal(PROBE_MARK),
  id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  kind: z.enum(PROBE_KINDS),
  /** When the exporter started the enqueue, unix ms. */
  sentAt: z.number().int().positive(),
});

export type ProbeBody = z.infer<typeof probeBodySchema>;

/** A fresh id; also the de-duplication id of the message (or the workflow run id). */
export function newProbeId(kind: ProbeKind, nowMs: number): string {
  return `probe_${kind}_${nowMs}_${randomBytes(6).toString('hex')}`;
}

export function encodeProbeBody(body: ProbeBody): string {
  return JSON.stringify(body);
}

/** The probe body of a delivery, or undefined when the bytes are not one (strict: user input). */
export function parseProbeBody(raw: Buffer): ProbeBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = probeBodySchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
