// The effective configuration, as the rest of the exporter sees it. Durations are milliseconds
// (`...Ms`); secrets are plain strings here and are masked only when printed (mask.ts).
// Each field is filled by one row of the settings table (settings.ts), which also holds its
// check; validate.ts runs those checks over the assembled configuration.

import type { ProxySettings } from '../api/proxy-choice.js';
import type { CollectorName } from './collector-catalogue.js';
import type { LOG_FORMATS, LOG_LEVELS, OPT_IN_LOG_LABELS, VECTOR_STATS_PERIODS } from './setting-spec.js';

export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];
export type VectorStatsPeriod = (typeof VECTOR_STATS_PERIODS)[number];
export type OptInLogLabel = (typeof OPT_IN_LOG_LABELS)[number];

export interface CollectorConfig {
  enabled: boolean;
  intervalMs: number;
  /** Why a collector is off (missing credentials, switched off), for the landing page; null when on. */
  disabledReason: string | null;
}

export interface ProbeConfig {
  enabled: boolean;
  intervalMs: number;
  timeoutMs: number;
  queue: string;
  /** Where the service delivers probe messages; null only while the probe is off. */
  receiverUrl: string | null;
  receiverPath: string;
  workflowUrl: string | null;
  insecureReceiver: boolean;
}

export interface RemediationConfig {
  enabled: boolean;
  bearerToken: string | null;
  alerts: string[];
  dryRun: boolean;
}

/** How a region's name was found (check-config and the start log say it). */
export type RegionNameSource = 'variable' | 'setting' | 'url' | 'qstash_region' | 'assumed';

/** One watched QStash region: its own URL, token and signing keys (docs/configuration.md#regions). */
export interface QStashRegionConfig {
  /** As the account records spell it (`eu-central-1`): the value of the `qstash_region` label. */
  name: string;
  /**
   * `variable`/`setting`: named by `<REGION>_QSTASH_TOKEN` or the regions list; `url`: by the
   * URL's host; `qstash_region`: by QSTASH_REGION / --qstash-region; `assumed`: the SDKs' default
   * region, to be learnt from the account record when the management API is configured.
   */
  nameFrom: RegionNameSource;
  url: string;
  token: string;
  /** Signing keys the probe receiver verifies this region's deliveries with; both or neither. */
  currentSigningKey: string | null;
  nextSigningKey: string | null;
}

/** A PEM file of CA certificates: its path (what check-config prints) and the text read at start. */
export interface PemBundle {
  path: string;
  pem: string;
}

export interface ExporterConfig {
  /** The YAML file read, if any. */
  configFile: string | null;
  listen: { host: string; port: number };
  webConfigFile: string | null;
  /** Negotiate OpenMetrics on /metrics (false: text 0.0.4 whatever the Accept header). */
  openMetrics: boolean;
  /** null when persistence is off (`--state-file none`). */
  stateFile: string | null;
  log: { level: LogLevel; format: LogFormat };
  web: {
    /** Connections the HTTP server serves at once. */
    maxConnections: number;
  };
  qstash: {
    /** Every watched QStash region, each with its own credentials; empty without any QStash token. */
    regions: QStashRegionConfig[];
    headerPrefix: string;
    logsPath: string;
  };
  management: { url: string; email: string | null; apiKey: string | null; accountPath: string };
  collectors: Record<CollectorName, CollectorConfig>;
  http: {
    timeouts: { connectMs: number; headersMs: number; bodyMs: number };
    retry: {
      maxRetries: number;
      baseDelayMs: number;
      maxDelayMs: number;
      maxRateLimitWaitMs: number;
      /** http.max_retry_after; null (0s): a 429's wait is honoured whole. */
      maxRetryAfterMs: number | null;
      rateLimitShare: number;
    };
    /** The egress proxy (api/proxy-choice.ts); `environment` is read by loadConfig, not a setting. */
    proxy: ProxySettings;
    /** PEM bundle of extra CAs for the upstream, as read once at start; null when not given. */
    caFile: PemBundle | null;
  };
  logs: {
    ingestionDelayMs: number;
    overlapMs: number;
    latenessHorizonMs: number;
    maxPagesPerCycle: number;
    maxParallelSlices: number;
    pageSize: number;
    maxPageBytes: number;
    labels: OptInLogLabel[];
    seriesLimit: number;
    messageTrackerSize: number;
  };
  vector: { indexIds: string[]; discovery: boolean; statsPeriod: VectorStatsPeriod };
  redis: { databaseIds: string[]; discovery: boolean };
  dlq: { maxPages: number };
  flowControl: { keys: string[]; maxKeys: number };
  probe: ProbeConfig;
  remediation: RemediationConfig;
}

type Leaf = string | number | boolean | null | readonly unknown[];

/** Every dotted path into T (`logs.pageSize`, `listen`, `listen.port`). */
export type PathOf<T> = { [K in keyof T & string]: T[K] extends Leaf ? K : K | `${K}.${PathOf<T[K]>}` }[keyof T &
  string];

/** The type found at a dotted path of T. */
export type ValueAt<T, P extends string> = P extends `${infer Head}.${infer Rest}`
  ? Head extends keyof T
    ? ValueAt<T[Head], Rest>
    : never
  : P extends keyof T
    ? T[P]
    : never;

export type ConfigPath = PathOf<ExporterConfig>;
