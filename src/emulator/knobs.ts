// Test knobs: fault injection on the read endpoints a poller uses, log retention and
// visibility, and the time scale. Settable at start (options, CLI flags) and at run time
// (setKnobs(), PATCH /__emulator/knobs). Input is validated strictly: unknown keys are errors.
import { z } from 'zod';
import { EmulatorKnobError } from './errors.js';

/**
 * Groups of endpoints the fault knobs apply to: the read endpoints a poller uses, and `publish`
 * (enqueue, publish, trigger: what an active probe measures), which is off unless asked for.
 */
export const FAULT_SCOPES = ['logs', 'schedules', 'management', 'publish'] as const;
export type FaultScope = (typeof FAULT_SCOPES)[number];
/** Scopes faulted by default: the read endpoints; writes stay clean unless `publish` is asked for. */
export const DEFAULT_FAULT_SCOPES: readonly FaultScope[] = ['logs', 'schedules', 'management'];

export interface Knobs {
  /** Every wait the emulator imposes (retry delays, Delay/Not-Before, cron, dedup window) runs this many times faster. */
  timeScale: number;
  /** Log entries kept (the newest N); older ones are dropped and counted in the ground truth. */
  logRetention: number;
  /** Entries younger than this many milliseconds are hidden from log reads. */
  logVisibilityDelayMs: number;
  /** Added latency before every faulted endpoint answers, in milliseconds. */
  latencyMs: number;
  /** Requests per one-second window on faulted endpoints; 0 = unlimited. Excess gets 429. */
  rateLimitPerSecond: number;
  /** Share of faulted requests answered with a 5xx (0..1), drawn from the seeded PRNG. */
  errorRatio: number;
  /** Share answered 200 with a body that is not JSON. */
  malformedRatio: number;
  /** Share answered with a body cut in the middle (the connection is closed early). */
  truncatedRatio: number;
  /** Deterministic one-shot counters: the next N faulted requests get that fault. */
  failNext: number;
  malformedNext: number;
  truncatedNext: number;
  /** The next N log pages asked with a cursor answer with that same cursor again. */
  repeatCursorNext: number;
  /** Log entries are served without their `state` field (filters still work). */
  omitState: boolean;
  /** Which endpoint groups the fault knobs (latency, rate limit, ratios, counters) apply to. */
  faultScope: FaultScope[];
}

export const DEFAULT_KNOBS: Readonly<Knobs> = Object.freeze({
  timeScale: 1,
  logRetention: 10_000,
  logVisibilityDelayMs: 0,
  latencyMs: 0,
  rateLimitPerSecond: 0,
  errorRatio: 0,
  malformedRatio: 0,
  truncatedRatio: 0,
  failNext: 0,
  malformedNext: 0,
  truncatedNext: 0,
  repeatCursorNext: 0,
  omitState: false,
  faultScope: [...DEFAULT_FAULT_SCOPES],
});

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const ratio = z.number().min(0).max(1);

const knobsPatchSchema = z
  .object({
    timeScale: z.number().positive().max(1_000_000).finite(),
    logRetention: z.number().int().min(1).max(10_000_000),
    logVisibilityDelayMs: count,
    latencyMs: z.number().int().min(0).max(600_000),
    rateLimitPerSecond: count,
    errorRatio: ratio,
    malformedRatio: ratio,
    truncatedRatio: ratio,
    failNext: count,
    malformedNext: count,
    truncatedNext: count,
    repeatCursorNext: count,
    omitState: z.boolean(),
    faultScope: z.array(z.enum(FAULT_SCOPES)),
  })
  .partial()
  .strict();

/** Validates a knob patch (from JSON or code); throws EmulatorKnobError naming the knob. */
export function parseKnobsPatch(input: unknown): Partial<Knobs> {
  const result = knobsPatchSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new EmulatorKnobError('(body)', 'not an object of knobs');
  if (issue.code === 'unrecognized_keys') {
    throw new EmulatorKnobError(issue.keys.join(', '), 'unknown knob');
  }
  const knob = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
  return fail(knob, issue.message);
}

function fail(knob: string, problem: string): never {
  throw new EmulatorKnobError(knob, problem);
}

/** Applies a validated patch to a knob set, returning a new object. */
export function mergeKnobs(base: Knobs, patch: Partial<Knobs>): Knobs {
  const merged: Knobs = { ...base, ...patch };
  merged.faultScope = [...new Set(merged.faultScope)];
  return merged;
}
