// The effective configuration, as the rest of the exporter sees it. Durations are milliseconds
// (`...Ms`); secrets are plain strings here and are masked only when printed (mask.ts).

import { z } from 'zod';
import { COLLECTOR_NAMES, LOG_FORMATS, LOG_LEVELS, OPT_IN_LOG_LABELS, VECTOR_STATS_PERIODS } from './settings.js';

/** setTimeout's upper bound: longer timers fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

const durationMs = z.number().int().min(0).max(MAX_TIMER_MS);
const positiveDurationMs = z.number().int().min(1).max(MAX_TIMER_MS);
const httpUrl = z.string().regex(/^https?:\/\/[^\s]+$/);
const urlPath = z.string().regex(/^\/[^\s?#]*$/);
/** A destination URL as the service will call it (query allowed, no fragment). */
const targetUrl = z.string().regex(/^https?:\/\/[^\s#]+$/);

const CollectorSchema = z.strictObject({
  enabled: z.boolean(),
  intervalMs: positiveDurationMs,
  /** Why a collector is off (missing credentials, switched off), for the landing page; null when on. */
  disabledReason: z.string().nullable(),
});

export const ExporterConfigSchema = z.strictObject({
  /** The YAML file read, if any. */
  configFile: z.string().nullable(),
  listen: z.strictObject({
    host: z.string(),
    port: z.number().int().min(0).max(65_535),
  }),
  webConfigFile: z.string().nullable(),
  /** Negotiate OpenMetrics on /metrics (false: text 0.0.4 whatever the Accept header). */
  openMetrics: z.boolean(),
  /** null when persistence is off (`--state-file none`). */
  stateFile: z.string().nullable(),
  log: z.strictObject({
    level: z.enum(LOG_LEVELS),
    format: z.enum(LOG_FORMATS),
  }),
  web: z.strictObject({
    /** Connections the HTTP server serves at once. */
    maxConnections: z.number().int().min(1),
  }),
  qstash: z.strictObject({
    url: httpUrl,
    token: z.string().min(1).nullable(),
    headerPrefix: z.string().min(1),
    logsPath: urlPath,
    /** Signing keys the probe receiver verifies deliveries with; both or neither. */
    currentSigningKey: z.string().min(1).nullable(),
    nextSigningKey: z.string().min(1).nullable(),
  }),
  management: z.strictObject({
    url: httpUrl,
    email: z.string().min(1).nullable(),
    apiKey: z.string().min(1).nullable(),
    accountPath: urlPath,
  }),
  collectors: z.strictObject(
    Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, CollectorSchema])) as Record<
      (typeof COLLECTOR_NAMES)[number],
      typeof CollectorSchema
    >,
  ),
  http: z.strictObject({
    timeouts: z.strictObject({
      connectMs: positiveDurationMs,
      headersMs: positiveDurationMs,
      bodyMs: positiveDurationMs,
    }),
    retry: z.strictObject({
      maxRetries: z.number().int().min(0),
      baseDelayMs: durationMs,
      maxDelayMs: durationMs,
      maxRateLimitWaitMs: durationMs,
      rateLimitShare: z.number().gt(0).max(1),
    }),
  }),
  logs: z.strictObject({
    ingestionDelayMs: durationMs,
    overlapMs: durationMs,
    latenessHorizonMs: durationMs,
    maxPagesPerCycle: z.number().int().min(1),
    maxParallelSlices: z.number().int().min(1).max(32),
    pageSize: z.number().int().min(1).max(1000),
    maxPageBytes: z.number().int().min(1),
    labels: z.array(z.enum(OPT_IN_LOG_LABELS)),
    seriesLimit: z.number().int().min(1),
    messageTrackerSize: z.number().int().min(1),
  }),
  vector: z.strictObject({
    indexIds: z.array(z.string().min(1)),
    discovery: z.boolean(),
    statsPeriod: z.enum(VECTOR_STATS_PERIODS),
  }),
  dlq: z.strictObject({
    maxPages: z.number().int().min(1),
  }),
  flowControl: z.strictObject({
    keys: z.array(z.string().min(1)),
    maxKeys: z.number().int().min(1),
  }),
  probe: z.strictObject({
    enabled: z.boolean(),
    intervalMs: positiveDurationMs,
    timeoutMs: positiveDurationMs,
    queue: z.string().min(1),
    /** Where the service delivers probe messages; null only while the probe is off. */
    receiverUrl: targetUrl.nullable(),
    receiverPath: urlPath,
    workflowUrl: targetUrl.nullable(),
    insecureReceiver: z.boolean(),
  }),
  remediation: z.strictObject({
    enabled: z.boolean(),
    bearerToken: z.string().min(1).nullable(),
    alerts: z.array(z.string().min(1)),
    dryRun: z.boolean(),
  }),
});

export type ExporterConfig = z.infer<typeof ExporterConfigSchema>;
export type CollectorConfig = z.infer<typeof CollectorSchema>;
export type LogLevel = ExporterConfig['log']['level'];
export type LogFormat = ExporterConfig['log']['format'];
export type VectorStatsPeriod = ExporterConfig['vector']['statsPeriod'];
export type OptInLogLabel = ExporterConfig['logs']['labels'][number];
export type ProbeConfig = ExporterConfig['probe'];
export type RemediationConfig = ExporterConfig['remediation'];
