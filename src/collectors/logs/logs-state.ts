// What the logs collector keeps in a checkpoint: the walk position (watermark, the slices being
// walked: walk/position-schema.ts), the de-duplication window and every value Prometheus must not
// see reset (counters, histogram buckets, gauges rebuilt from them), all from one consistent moment. The schema is
// strict: the file is the exporter's own, so anything unexpected is corruption.
import { z } from 'zod';
import { boundLabelValue } from '../../metrics/cardinality.js';
import { counterFamilySchema, histogramFamilySchema } from '../walk/family-schemas.js';
import { walkPositionShape } from '../walk/position-schema.js';
import { waitingStateSchema } from './waiting-state.js';

const finite = z.number().finite();
const count = z.number().finite().min(0);

/** [messageId, created ms | null, attempts, final ms | null, outcome index | -1, queue, destination] */
const trackedSchema = z.tuple([
  z.string(),
  finite.nullable(),
  count,
  finite.nullable(),
  z.number().int().min(-1).max(2),
  z.string(),
  z.string(),
]);

export const logsStateSchema = z.strictObject({
  watermark: walkPositionShape.watermark,
  watermarkReadAt: walkPositionShape.watermarkReadAt,
  dedupFrom: walkPositionShape.dedupFrom,
  anchorTime: walkPositionShape.anchorTime,
  lastEventTime: walkPositionShape.lastEventTime,
  sliceMs: walkPositionShape.sliceMs,
  /** Entries came without `state`: the slices are walked once per state (walk/slice.ts). */
  stateWalk: z.boolean(),
  gapSince: walkPositionShape.gapSince,
  rateEwma: walkPositionShape.rateEwma,
  slices: walkPositionShape.slices,
  dedup: walkPositionShape.dedup,
  /**
   * Identities that left the de-duplication window, over the lateness horizon
   * (cold-identities.ts): complete after `validFrom`; per second, entries counted and their
   * 53-bit fingerprints (base64 of little-endian float64, sorted; null behind the horizon).
   */
  cold: z.strictObject({
    validFrom: finite,
    seconds: z.array(z.tuple([z.number().int(), count, z.string().nullable()])),
  }),
  counters: z.strictObject({
    events: counterFamilySchema,
    errors: counterFamilySchema,
  }),
  histograms: z.strictObject({
    duration: histogramFamilySchema,
    attempts: histogramFamilySchema,
  }),
  tracker: z.strictObject({
    messages: z.array(trackedSchema),
    /** Recently finished message ids (late entries of them do not start a new life). */
    finished: z.array(z.string()),
  }),
  daily: z.strictObject({ day: z.number().int(), count }),
  /** Waiting-time histograms and their records (waiting-state.ts); absent before they existed. */
  waiting: waitingStateSchema.optional(),
  self: z.strictObject({
    pages: count,
    duplicates: count,
    gaps: count,
    evictions: count,
    checkpointsSuccess: count,
    checkpointsError: count,
    /** Entries counted although at or before the watermark (upstash_exporter_log_late_events_total). */
    late: count,
    /** Entries the late-entry audit found missing (upstash_exporter_log_missed_late_events_total); absent before it existed. */
    missedLate: count.default(0),
    /** Failed walk cycles by error code (upstash_exporter_log_walk_errors_total). */
    walkErrors: z.record(z.string(), count),
    /** Increments folded into overflow series, by metric name. */
    folded: z.record(z.string(), count),
  }),
});

export type LogsState = z.infer<typeof logsStateSchema>;
export type TrackedState = z.infer<typeof trackedSchema>;

/**
 * The `migrate` of the logs checkpoint (CheckpointFile), from any older version to the current
 * one (4). Version 2 held one slice in progress (`slice`, or null), version 3 a list of them
 * (`slices`, walked side by side), version 4 adds the window's cold identities (`cold`). Anything malformed is
 * passed on for the schema to reject; an unknown version gives undefined.
 */
export function migrateLogsState(version: number, payload: unknown): unknown {
  if (version === 1) return migrateV3toV4(migrateV2toV3(migrateV1toV2(payload)));
  if (version === 2) return migrateV3toV4(migrateV2toV3(payload));
  if (version === 3) return migrateV3toV4(payload);
  return undefined;
}

/**
 * Version 3 to 4: no cold identities yet. The window (`dedup`) holds every identity counted from
 * `dedupFrom` on, and they reach the cold store as they leave it, so the store is complete after
 * `dedupFrom` - 1: the audit never takes an entry counted before that for a new one.
 */
function migrateV3toV4(payload: unknown): unknown {
  if (!isRecord(payload) || 'cold' in payload) return payload;
  const validFrom = typeof payload.dedupFrom === 'number' ? payload.dedupFrom - 1 : Number.MAX_SAFE_INTEGER;
  return { ...payload, cold: { validFrom, seconds: [] } };
}

function migrateV2toV3(payload: unknown): unknown {
  if (!isRecord(payload) || !('slice' in payload)) return payload;
  const { slice, ...rest } = payload;
  return { ...rest, slices: slice === null ? [] : [slice] };
}

/**
 * Version 1 to 2: version 1 had no `self.late` nor
 * `self.walkErrors` (they start at 0) and could hold label values of any length, which are bounded as the exporter now emits
 * them (src/metrics/cardinality.ts), so restored series continue the bounded ones.
 */
function migrateV1toV2(payload: unknown): unknown {
  if (!isRecord(payload)) return payload;
  const self = isRecord(payload.self) ? { late: 0, walkErrors: {}, ...payload.self } : payload.self;
  // [label values, value]
  const counterSeries = (series: unknown): unknown =>
    isArray(series) ? [boundAll(series[0]), ...series.slice(1)] : series;
  const histogramSeries = (series: unknown): unknown =>
    isRecord(series) ? { ...series, labels: boundAll(series.labels) } : series;
  // [id, created, attempts, final, outcome, queue, destination]
  const tracked = (tuple: unknown): unknown =>
    isArray(tuple) ? [...tuple.slice(0, 5), ...tuple.slice(5).map(boundOne)] : tuple;
  const tracker = payload.tracker;
  return {
    ...payload,
    self,
    counters: mapFamilies(payload.counters, counterSeries),
    histograms: mapFamilies(payload.histograms, histogramSeries),
    tracker:
      isRecord(tracker) && isArray(tracker.messages)
        ? { ...tracker, messages: tracker.messages.map(tracked) }
        : tracker,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isArray(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

function boundOne(value: unknown): unknown {
  return typeof value === 'string' ? boundLabelValue(value) : value;
}

function boundAll(values: unknown): unknown {
  return isArray(values) ? values.map(boundOne) : values;
}

function mapFamilies(families: unknown, series: (one: unknown) => unknown): unknown {
  if (!isRecord(families)) return families;
  const out: Record<string, unknown> = {};
  for (const [name, family] of Object.entries(families)) {
    out[name] = isRecord(family) && isArray(family.series) ? { ...family, series: family.series.map(series) } : family;
  }
  return out;
}
