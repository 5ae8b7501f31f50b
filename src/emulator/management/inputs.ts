// Strict schemas of what tests may ask the emulator to change of the account (admin routes and
// the in-process API share them; each resource folder has its own): unknown fields and wrong
// types are refused, not ignored.
import { z } from 'zod';
import { ManagementError } from './errors.js';
import { PLAN_PROFILES } from './plans.js';

/** A count: a non-negative integer. */
export const count = z.number().int().min(0);
/** A limit: a non-negative integer, or -1 for unlimited. */
export const limit = z.number().int().min(-1);
const unixSeconds = z.number().int().min(0);

export const accountPatchSchema = z.strictObject({
  /** Switch to another plan profile: every limit is reset to that profile first. */
  plan: z.enum(PLAN_PROFILES).optional(),
  customer_id: z.string().optional(),
  password: z.string().optional(),
  token: z.string().optional(),
  active: z.boolean().optional(),
  state: z.enum(['active', 'passive']).optional(),
  last_plan_upgrade_time: unixSeconds.optional(),
  max_message_size: limit.optional(),
  max_requests_per_day: limit.optional(),
  max_requests_per_day_hard: limit.optional(),
  max_endpoints_per_topic: limit.optional(),
  max_requests_per_second: limit.optional(),
  max_dlq_size: limit.optional(),
  max_retries: limit.optional(),
  max_topics: limit.optional(),
  max_schedules: limit.optional(),
  max_events_size: limit.optional(),
  max_dlq_retention_time_milis: limit.optional(),
  max_delay: limit.optional(),
  max_parallelism: limit.optional(),
  max_global_parallelism: limit.optional(),
  max_queues: limit.optional(),
  prod_pack_enabled: z.boolean().optional(),
  timeout: limit.optional(),
  type: z.enum(['free', 'paid']).optional(),
  reserved_type: z.string().optional(),
  reserved_price: z.number().min(0).optional(),
  created_by: z.string().optional(),
  creation_time: unixSeconds.optional(),
  read_only_token: z.string().optional(),
  region: z.string().optional(),
  budget: z.number().min(0).optional(),
  max_bandwidth_per_second: limit.optional(),
  prometheus_enabled: z.enum(['true', 'false']).optional(),
});
export type AccountPatch = z.infer<typeof accountPatchSchema>;

/** Parses user input strictly; the error names the first offending field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
  throw new ManagementError('ERR_EMULATOR_INPUT', `invalid ${what}: ${path}: ${issue?.message ?? 'invalid'}`);
}

/** Drops keys whose value is undefined, so spreading an input never blanks a default. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
