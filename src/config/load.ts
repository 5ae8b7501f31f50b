// loadConfig: flags > environment > YAML file > defaults, validated strictly into ExporterConfig.

import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDuration } from '../common/duration.js';
import { ConfigError, quoteValue } from './errors.js';
import { ExporterConfigSchema, MAX_TIMER_MS, type ExporterConfig } from './schema.js';
import {
  COLLECTOR_NAMES,
  COLLECTOR_NEEDS,
  DEFAULT_POLL_INTERVALS,
  DEFAULT_REMEDIATION_ALERTS,
  LOG_FORMATS,
  LOG_LEVELS,
  OPT_IN_LOG_LABELS,
  VECTOR_STATS_PERIODS,
  settingByKey,
  type CollectorName,
} from './settings.js';
import { readEnv, readFlags, readYamlFile, type Layer, type RawValue } from './sources.js';
import {
  asBoolean,
  asDuration,
  asEnum,
  asHttpUrl,
  asInteger,
  asList,
  asListenAddress,
  asTargetUrl,
  asText,
  asUniqueList,
  asUrlPath,
  enumItem,
  parseDurationText,
} from './values.js';

/** Polling faster than this only burns the rate limit. */
const MIN_POLL_INTERVAL_MS = 100;
const HEADER_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const VECTOR_INDEX_ID = /^[A-Za-z0-9._-]+$/;
const SECRET_NAMES: Record<string, string> = {
  qstash_token: 'QStash token',
  upstash_email: 'account email',
  upstash_api_key: 'management API key',
  qstash_current_signing_key: 'QStash current signing key',
  qstash_next_signing_key: 'QStash next signing key',
  'remediation.bearer_token': 'remediation bearer token',
};
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;
/** What Prometheus accepts as an alert name (a metric name). */
const ALERT_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;

/** A setting's default from the settings table, parsed like any given value. */
function defaultValue(key: string): RawValue {
  return { value: settingByKey(key).defaultText, source: 'default', origin: `the default of ${key}` };
}

/** The three sources in precedence order, highest first. */
class Sources {
  constructor(private readonly layers: readonly Layer[]) {}

  /** The value that wins for a key, if any source gives one. */
  get(key: string): RawValue | undefined {
    for (const layer of this.layers) {
      const raw = layer.get(key);
      if (raw !== undefined) return raw;
    }
    return undefined;
  }

  /** Every value given for a key, lowest precedence first (for settings that merge). */
  all(key: string): RawValue[] {
    return this.layers.flatMap((layer) => layer.get(key) ?? []).reverse();
  }

  /** The winning layer among those giving the value or its file variant (secrets). */
  firstLayerWith(keys: readonly string[]): Layer | undefined {
    return this.layers.find((layer) => keys.some((key) => layer.has(key)));
  }
}

/**
 * Relative paths in the YAML file are relative to the file, others to the working directory;
 * the effective configuration holds absolute paths, so printing it loses nothing.
 */
function resolvePath(raw: RawValue, path: string): string {
  return raw.baseDir !== undefined && !isAbsolute(path) ? resolve(raw.baseDir, path) : resolve(path);
}

function readSecret(sources: Sources, key: string): string | null {
  const fileKey = `${key}_file`;
  const layer = sources.firstLayerWith([key, fileKey]);
  if (layer === undefined) return null;
  const direct = layer.get(key);
  const file = layer.get(fileKey);
  const what = SECRET_NAMES[key] ?? 'secret';
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(key, `${direct.origin} and ${file.origin} are both set; keep only one of them`);
  }

  let secret: string;
  let origin: string;
  if (file !== undefined) {
    const path = resolvePath(file, asText(fileKey, file, 'a file path').trim());
    origin = `${file.origin} (${path})`;
    if (path === '') throw new ConfigError(fileKey, `${file.origin} is empty; give the path of the file holding the ${what}`);
    try {
      // Docker and Kubernetes secrets usually end with a newline: it is not part of the secret.
      secret = readFileSync(path, 'utf8').replace(/[\r\n]+$/, '');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(fileKey, `${file.origin}: cannot read ${path} (${reason}); check the path and that the exporter may read it`);
    }
  } else if (direct !== undefined) {
    if (direct.value === null || typeof direct.value !== 'string') {
      throw new ConfigError(key, `${direct.origin} must be a text value (quote it in YAML); the value is not shown`);
    }
    secret = direct.value;
    origin = direct.origin;
  } else {
    return null;
  }

  if (secret.trim() === '') {
    throw new ConfigError(key, `${origin} is empty; set it to your ${what} or unset it`);
  }
  // Stray whitespace or control characters break the Authorization header in confusing ways.
  if (/[\s\p{Cc}]/u.test(secret)) {
    throw new ConfigError(key, `${origin} contains whitespace or control characters (value not shown); check that the ${what} was copied whole`);
  }
  return secret;
}

function readPollIntervals(sources: Sources): Record<CollectorName, number> {
  const key = 'poll_interval';
  const intervals = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => [name, parseDuration(DEFAULT_POLL_INTERVALS[name])]),
  ) as Record<CollectorName, number>;
  const bounds = { minMs: MIN_POLL_INTERVAL_MS, maxMs: MAX_TIMER_MS };
  const collectorName = (text: string, origin: string): CollectorName =>
    enumItem(key, text.trim(), origin, COLLECTOR_NAMES, 'collector');

  // Lowest precedence first: each source overrides the collectors it names.
  for (const raw of sources.all(key)) {
    if (typeof raw.value === 'object' && raw.value !== null && !Array.isArray(raw.value)) {
      for (const [name, value] of Object.entries(raw.value as Record<string, unknown>)) {
        const collector = collectorName(name, raw.origin);
        intervals[collector] = asDuration(`${key}.${collector}`, { ...raw, value, origin: raw.origin.replace(key, `${key}.${name}`) }, bounds);
      }
      continue;
    }
    const parts = asList(key, raw, 'a duration or name=duration pairs');
    if (parts.length === 0) {
      throw new ConfigError(key, `${raw.origin} is empty; write one duration (e.g. 30s) or name=duration pairs (e.g. logs=15s,account=5m)`);
    }
    for (const part of parts) {
      const equals = part.indexOf('=');
      if (equals === -1) {
        const ms = parseDurationText(key, part, raw.origin, bounds);
        for (const name of COLLECTOR_NAMES) intervals[name] = ms;
      } else {
        const collector = collectorName(part.slice(0, equals), raw.origin);
        intervals[collector] = parseDurationText(`${key}.${collector}`, part.slice(equals + 1).trim(), raw.origin, bounds);
      }
    }
  }
  return intervals;
}

function readStateFile(sources: Sources): string | null {
  const raw = sources.get('state_file') ?? defaultValue('state_file');
  const text = asText('state_file', raw, 'a file path or none').trim();
  if (text === '') throw new ConfigError('state_file', `${raw.origin} is empty; give a file path, or none to disable the state file`);
  if (text.toLowerCase() === 'none') return null;
  const path = resolvePath(raw, text);
  const directory = dirname(path);
  let isDirectory = false;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch {
    // Reported below.
  }
  if (!isDirectory) {
    throw new ConfigError('state_file', `${raw.origin}: the directory ${directory} does not exist; create it, choose another path, or write none to disable the state file`);
  }
  return path;
}

function readWebConfigFile(sources: Sources): string | null {
  const raw = sources.get('web_config_file');
  if (raw === undefined) return null;
  const text = asText('web_config_file', raw, 'a file path').trim();
  if (text === '') throw new ConfigError('web_config_file', `${raw.origin} is empty; give the web-config file path or unset it`);
  const path = resolvePath(raw, text);
  try {
    accessSync(path, constants.R_OK);
    if (!statSync(path).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError('web_config_file', `${raw.origin}: cannot read ${path} (${reason}); check the path or unset it`);
  }
  return path;
}

function readCollectors(
  sources: Sources,
  credentials: { token: string | null; management: boolean },
  intervals: Record<CollectorName, number>,
): ExporterConfig['collectors'] {
  const disabledRaw = sources.get('disabled_collectors');
  const disabled = new Set<CollectorName>(
    disabledRaw === undefined
      ? []
      : asList('disabled_collectors', disabledRaw, 'a list of collector names').map((name) =>
          enumItem('disabled_collectors', name, disabledRaw.origin, COLLECTOR_NAMES, 'collector'),
        ),
  );
  const collectors = Object.fromEntries(
    COLLECTOR_NAMES.map((name) => {
      const needsToken = COLLECTOR_NEEDS[name] === 'qstash';
      const hasCredentials = needsToken ? credentials.token !== null : credentials.management;
      let disabledReason: string | null = null;
      if (!hasCredentials) disabledReason = needsToken ? 'no QSTASH_TOKEN' : 'no UPSTASH_EMAIL + UPSTASH_API_KEY';
      else if (disabled.has(name)) disabledReason = `switched off by ${disabledRaw?.origin ?? 'disabled_collectors'}`;
      return [name, { enabled: disabledReason === null, intervalMs: intervals[name], disabledReason }];
    }),
  ) as ExporterConfig['collectors'];

  if (!COLLECTOR_NAMES.some((name) => collectors[name].enabled)) {
    throw new ConfigError('disabled_collectors', `${disabledRaw?.origin ?? 'disabled_collectors'} switches off every collector the credentials enable; leave at least one on`);
  }
  return collectors;
}

/**
 * Paths the exporter's own server answers, and everything under `/-/` (its admin paths, the
 * remediation webhook included): the probe receiver must not shadow them.
 */
function isReservedServerPath(path: string): boolean {
  return ['/', '/metrics', '/healthz', '/readyz'].includes(path.replace(/\/+$/, '') || '/') || path.startsWith('/-/');
}

function originOf(sources: Sources, key: string): string {
  return sources.get(key)?.origin ?? sources.get(`${key}_file`)?.origin ?? key;
}

/** Two secrets that only work together, as [key, value] pairs: both or neither, else `why`. */
function requireBoth(sources: Sources, pair: readonly [[string, string | null], [string, string | null]], why: string): void {
  const [[firstKey, first], [secondKey, second]] = pair;
  if ((first === null) === (second === null)) return;
  const [given, missing] = first === null ? [secondKey, firstKey] : [firstKey, secondKey];
  const { env, flag } = settingByKey(missing);
  throw new ConfigError(missing, `${originOf(sources, given)} is set but ${env} is not: ${why}; set ${env} (or ${env}_FILE, --${flag})`);
}

/** The signing keys, both or neither: a receiver verifies with the pair. */
function readSigningKeys(sources: Sources): { currentSigningKey: string | null; nextSigningKey: string | null } {
  const currentSigningKey = readSecret(sources, 'qstash_current_signing_key');
  const nextSigningKey = readSecret(sources, 'qstash_next_signing_key');
  requireBoth(
    sources,
    [
      ['qstash_current_signing_key', currentSigningKey],
      ['qstash_next_signing_key', nextSigningKey],
    ],
    'signatures are verified with both keys (the service signs with the next one after a rotation)',
  );
  return { currentSigningKey, nextSigningKey };
}

/** Checks of the active checks that need the whole configuration (credentials, keys). */
function checkActiveChecks(sources: Sources, config: Pick<ExporterConfig, 'qstash' | 'probe' | 'remediation'>): void {
  const { qstash, probe, remediation } = config;
  const tokenHint = 'set QSTASH_TOKEN (or QSTASH_TOKEN_FILE, --qstash-token)';
  if (probe.enabled) {
    const origin = originOf(sources, 'probe.enabled');
    if (qstash.token === null) throw new ConfigError('probe.enabled', `${origin} turns the probe on, but enqueueing needs the QStash token; ${tokenHint} or turn the probe off`);
    if (probe.receiverUrl === null) {
      throw new ConfigError('probe.receiver_url', `${origin} turns the probe on without PROBE_RECEIVER_URL; set it (or --probe-receiver-url) to the public URL at which the service reaches this exporter's ${probe.receiverPath}`);
    }
    if (qstash.currentSigningKey === null && !probe.insecureReceiver) {
      throw new ConfigError('qstash_current_signing_key', `${origin}: the probe receiver is reachable without basic auth, so it verifies the service's signature; set QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY (console: QStash > Signing keys), or --probe-insecure-receiver for a test setup`);
    }
    if (isReservedServerPath(probe.receiverPath)) {
      throw new ConfigError('probe.receiver_path', `${originOf(sources, 'probe.receiver_path')}: ${quoteValue(probe.receiverPath)} is one of the exporter's own paths; choose another, e.g. /probe/receive`);
    }
  }
  if (remediation.enabled) {
    const origin = originOf(sources, 'remediation.enabled');
    if (qstash.token === null) throw new ConfigError('remediation.enabled', `${origin} turns remediation on, but pausing schedules needs the QStash token; ${tokenHint} or turn remediation off`);
    if (remediation.bearerToken === null) {
      throw new ConfigError('remediation.bearer_token', `${origin} turns remediation on without REMEDIATION_BEARER_TOKEN; set it (or REMEDIATION_BEARER_TOKEN_FILE, --remediation-bearer-token-file) to the secret Alertmanager sends`);
    }
  }
}

function readRemediationAlerts(sources: Sources): string[] {
  const key = 'remediation.alerts';
  const raw = sources.get(key) ?? defaultValue(key);
  const alerts = asUniqueList(key, raw, 'a list of alert names', (name) => {
    if (!ALERT_NAME.test(name)) throw new ConfigError(key, `${raw.origin}: ${quoteValue(name)} is not an alert name; alert names use letters, digits, _ and :, e.g. ${DEFAULT_REMEDIATION_ALERTS[0]}`);
    return name;
  });
  if (alerts.length === 0) throw new ConfigError(key, `${raw.origin} is empty; list the alert names remediation acts on, e.g. ${DEFAULT_REMEDIATION_ALERTS[0]}`);
  return alerts;
}

function noCredentialsError(): ConfigError {
  return new ConfigError(
    'credentials',
    'no credentials: set QSTASH_TOKEN (logs and schedules collectors) or UPSTASH_EMAIL + UPSTASH_API_KEY (account, search and vector collectors), as variables, *_FILE variables or flags; to try the exporter without an account run: upstash-exporter demo',
  );
}

/**
 * Builds the effective configuration from command-line flags (without the command word),
 * environment variables and the optional YAML file named by --config / CONFIG_FILE.
 * Throws ConfigError with a one-line message on any invalid or missing input.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ExporterConfig {
  const flags = readFlags(argv);
  const environment = readEnv(env);
  const configRaw = flags.get('config') ?? environment.get('config');
  let configFile: string | null = null;
  let yaml: Layer = new Map();
  if (configRaw !== undefined) {
    const path = asText('config', configRaw, 'a file path').trim();
    if (path === '') throw new ConfigError('config', `${configRaw.origin} is empty; give the YAML file path or unset it`);
    configFile = resolve(path);
    yaml = readYamlFile(configFile, configRaw.origin);
  }
  const sources = new Sources([flags, environment, yaml]);

  // The given value, or the table's default, through the same parser.
  const value = <T>(key: string, parse: (raw: RawValue) => T): T => parse(sources.get(key) ?? defaultValue(key));
  const defaultOf = (key: string): string => settingByKey(key).defaultText;
  const duration = (key: string, minMs = 0): number => value(key, (raw) => asDuration(key, raw, { minMs, maxMs: MAX_TIMER_MS }));
  const count = (key: string, min: number, max?: number): number => value(key, (raw) => asInteger(key, raw, min, max));
  const urlPath = (key: string): string => value(key, (raw) => asUrlPath(key, raw, defaultOf(key)));
  const httpUrl = (key: string): string => value(key, (raw) => asHttpUrl(key, raw, defaultOf(key)));

  const token = readSecret(sources, 'qstash_token');
  const email = readSecret(sources, 'upstash_email');
  const apiKey = readSecret(sources, 'upstash_api_key');

  const headerPrefix = value('header_prefix', (raw) => {
    const text = asText('header_prefix', raw, 'a header name prefix').trim();
    if (!HEADER_TOKEN.test(text)) {
      throw new ConfigError('header_prefix', `${raw.origin}: ${quoteValue(text)} is not a valid HTTP header name prefix; use letters, digits and dashes, e.g. Upstash-`);
    }
    return text;
  });

  const retry = {
    maxRetries: count('http.max_retries', 0, 100),
    baseDelayMs: duration('http.retry_base_delay'),
    maxDelayMs: duration('http.retry_max_delay'),
    maxRateLimitWaitMs: duration('http.max_rate_limit_wait'),
  };
  if (retry.baseDelayMs > retry.maxDelayMs) {
    const origin = sources.get('http.retry_base_delay')?.origin ?? sources.get('http.retry_max_delay')?.origin ?? 'http';
    throw new ConfigError('http.retry_base_delay', `${origin}: the retry base delay is longer than the retry max delay; make the base delay shorter or the max delay longer`);
  }

  const labelsRaw = sources.get('logs.labels');
  const labels =
    labelsRaw === undefined
      ? []
      : asUniqueList('logs.labels', labelsRaw, 'a list of labels', (label) =>
          enumItem('logs.labels', label, labelsRaw.origin, OPT_IN_LOG_LABELS, 'opt-in label'),
        );

  const indexIdsRaw = sources.get('vector.index_ids');
  const indexIds =
    indexIdsRaw === undefined
      ? []
      : asUniqueList('vector.index_ids', indexIdsRaw, 'a list of index ids', (id) => {
          if (!VECTOR_INDEX_ID.test(id)) {
            throw new ConfigError('vector.index_ids', `${indexIdsRaw.origin}: ${quoteValue(id)} is not a vector index id; ids use letters, digits, dots, dashes and underscores`);
          }
          return id;
        });

  const listen = value('listen_address', (raw) => asListenAddress('listen_address', raw));
  const webConfigFile = readWebConfigFile(sources);
  const stateFile = readStateFile(sources);
  const log = {
    level: value('log_level', (raw) => asEnum('log_level', raw, LOG_LEVELS, 'log level')),
    format: value('log_format', (raw) => asEnum('log_format', raw, LOG_FORMATS, 'log format')),
  };
  const qstash = { url: httpUrl('qstash_url'), token, headerPrefix, logsPath: urlPath('logs.path') };
  const management = { url: httpUrl('management_url'), email, apiKey, accountPath: urlPath('account_path') };
  const http = {
    timeouts: {
      connectMs: duration('http.connect_timeout', 1),
      headersMs: duration('http.headers_timeout', 1),
      bodyMs: duration('http.body_timeout', 1),
    },
    retry,
  };
  const logs = {
    ingestionDelayMs: duration('logs.ingestion_delay'),
    overlapMs: duration('logs.overlap'),
    maxPagesPerCycle: count('logs.max_pages', 1),
    pageSize: count('logs.page_size', 1, 1000),
    maxPageBytes: count('logs.max_page_mib', 1, 4096) * 1024 * 1024,
    labels,
    seriesLimit: count('logs.series_limit', 1),
    messageTrackerSize: count('logs.message_tracker_size', 1),
  };
  const vector = {
    indexIds,
    discovery: value('vector.discovery', (raw) => asBoolean('vector.discovery', raw)),
    statsPeriod: value('vector.stats_period', (raw) => asEnum('vector.stats_period', raw, VECTOR_STATS_PERIODS, 'stats period')),
  };
  const pollIntervals = readPollIntervals(sources);
  const optionalTarget = (key: string): string | null => {
    const raw = sources.get(key);
    return raw === undefined ? null : asTargetUrl(key, raw, 'https://exporter.example.com/probe/receive');
  };
  const probe = {
    enabled: value('probe.enabled', (raw) => asBoolean('probe.enabled', raw)),
    intervalMs: duration('probe.interval', MIN_POLL_INTERVAL_MS),
    timeoutMs: duration('probe.timeout', MIN_POLL_INTERVAL_MS),
    queue: value('probe.queue', (raw) => {
      const text = asText('probe.queue', raw, 'a queue name').trim();
      if (!QUEUE_NAME.test(text)) throw new ConfigError('probe.queue', `${raw.origin}: ${quoteValue(text)} is not a queue name; use letters, digits, dots, dashes and underscores`);
      return text;
    }),
    receiverUrl: optionalTarget('probe.receiver_url'),
    receiverPath: urlPath('probe.receiver_path'),
    workflowUrl: optionalTarget('probe.workflow_url'),
    insecureReceiver: value('probe.insecure_receiver', (raw) => asBoolean('probe.insecure_receiver', raw)),
  };
  const remediation = {
    enabled: value('remediation.enabled', (raw) => asBoolean('remediation.enabled', raw)),
    bearerToken: readSecret(sources, 'remediation.bearer_token'),
    alerts: readRemediationAlerts(sources),
    dryRun: value('remediation.dry_run', (raw) => asBoolean('remediation.dry_run', raw)),
  };
  const signingKeys = readSigningKeys(sources);

  // Credentials last: a typo elsewhere is the more specific message.
  if (token === null && email === null && apiKey === null) throw noCredentialsError();
  requireBoth(
    sources,
    [
      ['upstash_email', email],
      ['upstash_api_key', apiKey],
    ],
    'the management API needs both',
  );
  const collectors = readCollectors(sources, { token, management: email !== null && apiKey !== null }, pollIntervals);
  const qstashWithKeys = { ...qstash, ...signingKeys };
  checkActiveChecks(sources, { qstash: qstashWithKeys, probe, remediation });

  const candidate: ExporterConfig = {
    configFile,
    listen,
    webConfigFile,
    stateFile,
    log,
    qstash: qstashWithKeys,
    management,
    collectors,
    http,
    logs,
    vector,
    probe,
    remediation,
  };

  // The checks above give the friendly messages; the schema guards the shape the rest relies on.
  const checked = ExporterConfigSchema.safeParse(candidate);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new ConfigError(path, `internal configuration check failed at ${path}: ${issue?.message ?? 'invalid'}; please report this`);
  }
  return checked.data;
}
