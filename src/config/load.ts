// loadConfig: flags > environment > YAML file > defaults, validated strictly into ExporterConfig.
// The reading of secrets, collectors and the active checks' settings lives in read-*.ts.

import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, quoteValue } from './errors.js';
import { stateFileProblem } from './state-file-access.js';
import { loadWebConfig } from './web-config-file.js';
import { ExporterConfigSchema, MAX_TIMER_MS, type ExporterConfig } from './schema.js';
import { COLLECTORS_KEEPING_STATE, LOG_FORMATS, LOG_LEVELS, OPT_IN_LOG_LABELS, VECTOR_STATS_PERIODS, settingByKey } from './settings.js';
import { defaultValue, resolvePath, Sources } from './precedence.js';
import { checkActiveChecks, readRemediationAlerts } from './read-active-checks.js';
import { MIN_POLL_INTERVAL_MS, noCredentialsError, readCollectors, readPollIntervals } from './read-collectors.js';
import { readSecret, readSigningKeys, requireBoth } from './read-secrets.js';
import { readEnv, readFlags, readYamlFile, type Layer, type RawValue } from './sources.js';
import {
  asBoolean,
  asDuration,
  asEnum,
  asHttpUrl,
  asInteger,
  asShare,
  asListenAddress,
  asTargetUrl,
  asText,
  asUniqueList,
  asUrlPath,
  enumItem,
} from './values.js';

const HEADER_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const VECTOR_INDEX_ID = /^[A-Za-z0-9._-]+$/;
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * The state file must be usable before anything is served when a collector keeps its counters
 * there: one that cannot be read would be replaced by a fresh, less complete checkpoint, and one
 * that cannot be written loses the counts at every restart.
 */
function checkStateFile(sources: Sources, stateFile: string | null, collectors: ExporterConfig['collectors']): void {
  if (stateFile === null || !COLLECTORS_KEEPING_STATE.some((name) => collectors[name].enabled)) return;
  const problem = stateFileProblem(stateFile);
  if (problem === null) return;
  const origin = (sources.get('state_file') ?? defaultValue('state_file')).origin;
  throw new ConfigError('state_file', `${origin}: ${problem}; give the exporter's user read and write access, choose another path, or write none to disable the state file`);
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
    rateLimitShare: value('http.rate_limit_share', (raw) => asShare('http.rate_limit_share', raw)),
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
  const web = { maxConnections: count('web.max_connections', 1, 65_535) };
  const webConfigFile = readWebConfigFile(sources);
  const stateFile = readStateFile(sources);
  const openMetrics = value('openmetrics', (raw) => asBoolean('openmetrics', raw));
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
    latenessHorizonMs: duration('logs.lateness_horizon'),
    maxPagesPerCycle: count('logs.max_pages', 1),
    maxParallelSlices: count('logs.parallel_slices', 1, 32),
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
  const flowKeysRaw = sources.get('flow_control.keys');
  const flowControl = {
    keys: flowKeysRaw === undefined ? [] : asUniqueList('flow_control.keys', flowKeysRaw, 'a list of flow-control keys', (key) => key),
    maxKeys: count('flow_control.max_keys', 1, 10_000),
  };
  const dlq = { maxPages: count('dlq.max_pages', 1, 10_000) };
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
    web,
    webConfigFile,
    openMetrics,
    stateFile,
    log,
    qstash: qstashWithKeys,
    management,
    collectors,
    http,
    logs,
    vector,
    dlq,
    flowControl,
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
  // The files the server and the collectors open at start, checked here so that check-config
  // refuses whatever run would refuse, with the same line.
  if (webConfigFile !== null) loadWebConfig(webConfigFile);
  checkStateFile(sources, stateFile, collectors);
  return checked.data;
}
