// Test knobs: fault injection on the read endpoints a poller uses, log retention and
// visibility, where the real service's behaviour is split (paths, shapes, page size, bodies,
// verbs, daily limit, cursors), and the time scale. Settable at start (options, CLI flags) and at run time
// (setKnobs(), PATCH /__emulator/knobs). Input is validated strictly: unknown keys are errors.
import { z } from 'zod';
import { EmulatorKnobError } from './errors.js';
import { MANAGEMENT_API_VERSIONS, type ManagementApiVersion } from './management/index.js';

/**
 * Groups of endpoints the fault knobs apply to: the read endpoints a poller uses, and `publish`
 * (enqueue, publish, trigger: what an active probe measures), which is off unless asked for.
 */
export const FAULT_SCOPES = ['logs', 'schedules', 'management', 'publish', 'inventory', 'workflows'] as const;
export type FaultScope = (typeof FAULT_SCOPES)[number];
/**
 * Scopes faulted by default: the read endpoints; writes stay clean unless `publish` is asked for,
 * and the reads of queues, URL Groups, DLQ, flow control and global parallelism unless
 * `inventory` is (added after the others: the default stays what older tests expect).
 */
export const DEFAULT_FAULT_SCOPES: readonly FaultScope[] = ['logs', 'schedules', 'management'];

/** Which log paths answer; the other answers 404 (the SDKs call /v2/events, the OpenAPI documents /v2/logs). */
export const LOGS_PATHS = ['both', 'events', 'logs'] as const;
/** `grouped`: `{cursor, messages:[{messageId, events:[...]}]}`, the `groupBy=messageId` answer. */
export const LOGS_SHAPES = ['flat', 'grouped'] as const;
/** Which workflow runs paths answer; the other answers 404 (the workflow SDK calls /v2/workflows/events?groupBy=workflowRunId, the OpenAPI documents /v2/workflows/logs). */
export const WORKFLOW_RUNS_PATHS = ['both', 'events', 'logs'] as const;
/**
 * Optional endpoint groups a service may lack (each then answers 404): every `/v2/workflows/*`
 * route, `/v2/globalParallelism`, every `/v2/flowControl*` route, the management `/v2/qstash/stats*`.
 */
export const ABSENT_ENDPOINT_GROUPS = ['workflows', 'globalParallelism', 'flowControl', 'qstashStats'] as const;
export type AbsentEndpointGroup = (typeof ABSENT_ENDPOINT_GROUPS)[number];
/** How log cursors are written: opaque text `<time>-<seq>`, or digits beyond 2^53 as a JSON string or a bare JSON number. */
export const CURSOR_FORMS = ['text', 'digits', 'number'] as const;
/** Verbs schedule pause/resume accept (the SDKs send PATCH, the OpenAPI documents POST); the other answers 405. */
export const SCHEDULE_VERBS = ['both', 'patch', 'post'] as const;

/** Retention by age of the plans, in milliseconds (pricing table: 3, 7, 14 days). */
export const PLAN_LOG_RETENTION_MS = Object.freeze({
  free: 3 * 86_400_000,
  payg: 7 * 86_400_000,
  fixed: 14 * 86_400_000,
});

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
  /** Log entries older than this (divided by timeScale) are dropped, beside `logRetention`; null = count only. */
  logRetentionAgeMs: number | null;
  /** Each entry becomes visible after a random extra lag in [0, this], so entries appear out of time order. */
  logVisibilityLagMaxMs: number;
  /** Which of /v2/events and /v2/logs exist. */
  logsPaths: (typeof LOGS_PATHS)[number];
  /** Shape of log pages (a `groupBy=messageId` query is always answered grouped). */
  logsShape: (typeof LOGS_SHAPES)[number];
  /** Most entries a log page holds; a larger `count` is clamped (SDK docs: 1000; OpenAPI: 100). */
  maxPageSize: number;
  /** Whether `trimBody=n` cuts `body`/`responseBody` to n bytes (-1 drops them); unsettled for the QStash logs. */
  honourTrimBody: boolean;
  /** Share of messages whose log entries carry a body of `largeBodyBytes` (and ERROR entries such a responseBody). */
  largeBodyRatio: number;
  /** Size in bytes of a large body before base64 (message size limits: 1 MB, 10 MB, 50 MB by plan). */
  largeBodyBytes: number;
  /** Verbs of schedule pause/resume. */
  scheduleVerbs: (typeof SCHEDULE_VERBS)[number];
  /** The next N faulted requests answer the daily-limit 429 (`RateLimit-*` headers). */
  dailyLimitNext: number;
  /**
   * Log cursors: `text` (`<time>-<seq>`), or numbers beyond Number.MAX_SAFE_INTEGER (the SDK
   * warns of these) written as a JSON string of digits (`digits`) or a bare JSON number (`number`).
   * `numericCursor: true` in a patch is `number`, `false` is `text`.
   */
  numericCursor: (typeof CURSOR_FORMS)[number];
  /** Which of /v2/workflows/events (with groupBy=workflowRunId) and /v2/workflows/logs exist. */
  workflowRunsPaths: (typeof WORKFLOW_RUNS_PATHS)[number];
  /** Optional endpoint groups answering 404 as on a service without them. */
  absentEndpoints: AbsentEndpointGroup[];
  /** Whether `GET /v2/flowControl` (the docs' list; the SDK only has `/v2/flowControl/{key}`) answers; off: 404. */
  flowControlList: boolean;
  /** Management API version: `legacy` serves only GET /v2/qstash/user and /v2/qstash/stats (no users list, no ids), the older record. */
  managementApi: ManagementApiVersion;
  /**
   * A storm: every faulted request answered with this status while set (401: the token refused,
   * 429: the burst limit with `Burst-RateLimit-*` headers, 5xx); null: off.
   */
  stormStatus: (typeof STORM_STATUSES)[number] | null;
  /** `Retry-After` (seconds) of the storm's 429 answers; 0: none. */
  stormRetryAfterSeconds: number;
  /** Every faulted request is held without an answer while set (a hung region); turned off, they go on. */
  hang: boolean;
}

/** Statuses a storm (`stormStatus`) answers with. */
export const STORM_STATUSES = [401, 403, 429, 500, 502, 503] as const;

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
  logRetentionAgeMs: null,
  logVisibilityLagMaxMs: 0,
  logsPaths: 'both',
  logsShape: 'flat',
  maxPageSize: 1000,
  honourTrimBody: false,
  largeBodyRatio: 0,
  largeBodyBytes: 1_048_576,
  scheduleVerbs: 'both',
  dailyLimitNext: 0,
  numericCursor: 'text',
  workflowRunsPaths: 'both',
  absentEndpoints: [],
  flowControlList: false,
  managementApi: 'current',
  stormStatus: null,
  stormRetryAfterSeconds: 0,
  hang: false,
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
    logRetentionAgeMs: z
      .number()
      .int()
      .min(1)
      .max(366 * 86_400_000)
      .nullable(),
    logVisibilityLagMaxMs: z.number().int().min(0).max(86_400_000),
    logsPaths: z.enum(LOGS_PATHS),
    logsShape: z.enum(LOGS_SHAPES),
    maxPageSize: z.number().int().min(1).max(100_000),
    honourTrimBody: z.boolean(),
    largeBodyRatio: ratio,
    largeBodyBytes: z
      .number()
      .int()
      .min(0)
      .max(50 * 1_048_576),
    scheduleVerbs: z.enum(SCHEDULE_VERBS),
    dailyLimitNext: count,
    numericCursor: z.union([z.enum(CURSOR_FORMS), z.boolean().transform((on) => (on ? 'number' : 'text'))]),
    workflowRunsPaths: z.enum(WORKFLOW_RUNS_PATHS),
    absentEndpoints: z.array(z.enum(ABSENT_ENDPOINT_GROUPS)),
    flowControlList: z.boolean(),
    managementApi: z.enum(MANAGEMENT_API_VERSIONS),
    stormStatus: z
      .number()
      .int()
      .refine((status) => (STORM_STATUSES as readonly number[]).includes(status), {
        message: `one of ${STORM_STATUSES.join(', ')}`,
      })
      .transform((status) => status as (typeof STORM_STATUSES)[number])
      .nullable(),
    stormRetryAfterSeconds: z.number().int().min(0).max(86_400),
    hang: z.boolean(),
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
  merged.absentEndpoints = [...new Set(merged.absentEndpoints)];
  return merged;
}
