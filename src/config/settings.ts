// The table of every setting: its YAML key, flag, environment variable, default and meaning.
// The argv parser, the YAML key check, `--help` and the docs test all read this one table;
// how each value is parsed lives in load.ts.

import { COLLECTOR_NAMES, DEFAULT_POLL_INTERVALS } from '../collectors/catalogue.js';

// Collector names and their default intervals come from the one list of collectors.
export { COLLECTOR_NAMES, COLLECTOR_NEEDS, DEFAULT_POLL_INTERVALS, type CollectorName } from '../collectors/catalogue.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
/** Periods of GET /v2/vector/index/{id}/stats (interface document 4.6). */
export const VECTOR_STATS_PERIODS = ['1h', '3h', '12h', '1d', '3d', '7d', '30d'] as const;
/** Log-event labels a user may opt into; each can raise cardinality a lot. */
export const OPT_IN_LOG_LABELS = ['schedule_id', 'label', 'url'] as const;

/** The section headings of the YAML file: settings whose key is `<section>.<name>`. */
export const YAML_SECTIONS = ['http', 'logs', 'vector', 'probe', 'remediation'] as const;

/** The failing-schedule alert of deploy/rules/upstash-exporter.rules.yml: remediation acts on it by default. */
export const DEFAULT_REMEDIATION_ALERTS = ['UpstashScheduleLastRunFailed'] as const;

export interface SettingSpec {
  /** YAML key; dotted for keys inside a section (`http.connect_timeout`). */
  key: string;
  /** Long flag without the leading dashes. */
  flag: string;
  env: string;
  /** Shown in --help, e.g. `<duration>`; empty for switches. */
  valueHint: string;
  /** The default as a user would write it, or a sentence when it is derived. */
  defaultText: string;
  help: string;
  /** Also readable from a file: `--<flag>-file`, `<ENV>_FILE`, YAML `<key>_file`. */
  secretFile?: boolean;
  /** Flag may repeat; the variable is a comma list; YAML takes a list. */
  repeatable?: boolean;
  /** A switch: `--flag`, `--no-flag` or `--flag=true|false`; variable true|false. */
  switch?: boolean;
  /** Not a YAML key (the config file path itself). */
  notInYaml?: boolean;
}

const DURATION = '<duration>';

export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'config',
    flag: 'config',
    env: 'CONFIG_FILE',
    valueHint: '<path>',
    defaultText: 'none',
    help: 'YAML configuration file; flags and environment variables override its values',
    notInYaml: true,
  },
  {
    key: 'listen_address',
    flag: 'listen-address',
    env: 'LISTEN_ADDRESS',
    valueHint: '<host:port>',
    defaultText: '0.0.0.0:9824',
    help: 'address of the HTTP server (/metrics, health, landing page); [::]:9824 for IPv6',
  },
  {
    key: 'qstash_url',
    flag: 'qstash-url',
    env: 'QSTASH_URL',
    valueHint: '<url>',
    defaultText: 'https://qstash.upstash.io',
    help: 'base URL of the QStash (delivery) API',
  },
  {
    key: 'qstash_token',
    flag: 'qstash-token',
    env: 'QSTASH_TOKEN',
    valueHint: '<token>',
    defaultText: 'none',
    help: 'QStash token; enables the logs and schedules collectors',
    secretFile: true,
  },
  {
    key: 'qstash_current_signing_key',
    flag: 'qstash-current-signing-key',
    env: 'QSTASH_CURRENT_SIGNING_KEY',
    valueHint: '<key>',
    defaultText: 'none',
    help: 'QStash current signing key; the probe receiver verifies Upstash-Signature with it (and the next key)',
    secretFile: true,
  },
  {
    key: 'qstash_next_signing_key',
    flag: 'qstash-next-signing-key',
    env: 'QSTASH_NEXT_SIGNING_KEY',
    valueHint: '<key>',
    defaultText: 'none',
    help: 'QStash next signing key (what the service signs with after a key rotation); needed with the current key',
    secretFile: true,
  },
  {
    key: 'management_url',
    flag: 'management-url',
    env: 'UPSTASH_MANAGEMENT_URL',
    valueHint: '<url>',
    defaultText: 'https://api.upstash.com',
    help: 'base URL of the Upstash management (developer) API',
  },
  {
    key: 'upstash_email',
    flag: 'upstash-email',
    env: 'UPSTASH_EMAIL',
    valueHint: '<email>',
    defaultText: 'none',
    help: 'account email for the management API; with the API key enables account, search and vector',
    secretFile: true,
  },
  {
    key: 'upstash_api_key',
    flag: 'upstash-api-key',
    env: 'UPSTASH_API_KEY',
    valueHint: '<key>',
    defaultText: 'none',
    help: 'management API key (used with the email as HTTP basic auth)',
    secretFile: true,
  },
  {
    key: 'poll_interval',
    flag: 'poll-interval',
    env: 'POLL_INTERVAL',
    valueHint: '<duration|name=duration,...>',
    defaultText: COLLECTOR_NAMES.map((name) => `${name}=${DEFAULT_POLL_INTERVALS[name]}`).join(', '),
    help: 'one duration for every collector, or name=duration pairs; YAML: a duration or a map by collector',
    repeatable: true,
  },
  {
    key: 'disabled_collectors',
    flag: 'disable-collector',
    env: 'DISABLED_COLLECTORS',
    valueHint: '<name>',
    defaultText: 'none',
    help: 'switch a collector off although its credentials are set: logs, schedules, account, search, vector',
    repeatable: true,
  },
  {
    key: 'state_file',
    flag: 'state-file',
    env: 'STATE_FILE',
    valueHint: '<path|none>',
    defaultText: './upstash-exporter-state.json',
    help: 'checkpoint of the log watermark and counters, so restarts neither lose nor recount events; none disables',
  },
  {
    key: 'web_config_file',
    flag: 'web-config-file',
    env: 'WEB_CONFIG_FILE',
    valueHint: '<path>',
    defaultText: 'none',
    help: 'TLS and basic auth for the HTTP server, in the Prometheus exporter-toolkit web-config format',
  },
  {
    key: 'log_level',
    flag: 'log-level',
    env: 'LOG_LEVEL',
    valueHint: '<level>',
    defaultText: 'info',
    help: `one of ${LOG_LEVELS.join(', ')}`,
  },
  {
    key: 'log_format',
    flag: 'log-format',
    env: 'LOG_FORMAT',
    valueHint: '<format>',
    defaultText: 'json',
    help: 'json (one object per line) or pretty (human-readable)',
  },
  {
    key: 'header_prefix',
    flag: 'header-prefix',
    env: 'QSTASH_HEADER_PREFIX',
    valueHint: '<prefix>',
    defaultText: 'Upstash-',
    help: 'prefix of the service-specific HTTP headers',
  },
  {
    key: 'account_path',
    flag: 'account-path',
    env: 'UPSTASH_ACCOUNT_PATH',
    valueHint: '<path>',
    defaultText: '/v2/qstash/user',
    help: 'path of the account record on the management API',
  },
  // HTTP client, for both upstream APIs.
  {
    key: 'http.connect_timeout',
    flag: 'http-connect-timeout',
    env: 'HTTP_CONNECT_TIMEOUT',
    valueHint: DURATION,
    defaultText: '5s',
    help: 'time allowed to open a TCP/TLS connection',
  },
  {
    key: 'http.headers_timeout',
    flag: 'http-headers-timeout',
    env: 'HTTP_HEADERS_TIMEOUT',
    valueHint: DURATION,
    defaultText: '10s',
    help: 'time allowed from sending a request to receiving the response headers',
  },
  {
    key: 'http.body_timeout',
    flag: 'http-body-timeout',
    env: 'HTTP_BODY_TIMEOUT',
    valueHint: DURATION,
    defaultText: '30s',
    help: 'time allowed to read a response body',
  },
  {
    key: 'http.max_retries',
    flag: 'http-max-retries',
    env: 'HTTP_MAX_RETRIES',
    valueHint: '<count>',
    defaultText: '3',
    help: 'retries of a failed request (network error, timeout, 429, 5xx); 0 disables retrying',
  },
  {
    key: 'http.retry_base_delay',
    flag: 'http-retry-base-delay',
    env: 'HTTP_RETRY_BASE_DELAY',
    valueHint: DURATION,
    defaultText: '200ms',
    help: 'backoff of the first retry; doubles on each retry (with full jitter) up to the max delay',
  },
  {
    key: 'http.retry_max_delay',
    flag: 'http-retry-max-delay',
    env: 'HTTP_RETRY_MAX_DELAY',
    valueHint: DURATION,
    defaultText: '10s',
    help: 'upper bound of one backoff delay',
  },
  {
    key: 'http.max_rate_limit_wait',
    flag: 'http-max-rate-limit-wait',
    env: 'HTTP_MAX_RATE_LIMIT_WAIT',
    valueHint: DURATION,
    defaultText: '30s',
    help: 'longest wait a 429 response, or a spent Burst-RateLimit budget the client paces on, may ask for; a longer one fails the request until the next poll',
  },
  // Walking the delivery logs.
  {
    key: 'logs.path',
    flag: 'logs-path',
    env: 'QSTASH_LOGS_PATH',
    valueHint: '<path>',
    defaultText: '/v2/events',
    help: 'path of the logs endpoint on the QStash API: /v2/events (what the SDKs call) or /v2/logs (the OpenAPI\'s); on a 404 before it ever answered, the other is tried once and kept',
  },
  {
    key: 'logs.page_size',
    flag: 'logs-page-size',
    env: 'LOGS_PAGE_SIZE',
    valueHint: '<count>',
    defaultText: '1000',
    help: 'log entries asked for per page (1-1000); a smaller cap of the service is learnt from its answers, and a page too large or too slow is asked again with half as many',
  },
  {
    key: 'logs.max_page_mib',
    flag: 'logs-max-page-mib',
    env: 'LOGS_MAX_PAGE_MIB',
    valueHint: '<count>',
    defaultText: '32',
    help: 'most MiB of a log page kept in memory; message bodies are dropped as the page streams in and do not count',
  },
  {
    key: 'logs.ingestion_delay',
    flag: 'logs-ingestion-delay',
    env: 'LOGS_INGESTION_DELAY',
    valueHint: DURATION,
    defaultText: '15s',
    help: 'read logs only up to now minus this delay (logs are written asynchronously)',
  },
  {
    key: 'logs.overlap',
    flag: 'logs-overlap',
    env: 'LOGS_OVERLAP',
    valueHint: DURATION,
    defaultText: '5s',
    help: 're-read this much before the watermark on each cycle, for entries that arrive later than the ingestion delay; it doubles (up to 1m) when late entries are found; duplicates are dropped by event identity',
  },
  {
    key: 'logs.max_pages',
    flag: 'logs-max-pages',
    env: 'LOGS_MAX_PAGES',
    valueHint: '<count>',
    defaultText: '200',
    help: 'most log pages read in one cycle; the rest is read on the next cycles',
  },
  {
    key: 'logs.labels',
    flag: 'logs-label',
    env: 'LOGS_LABELS',
    valueHint: '<label>',
    defaultText: 'none',
    help: `opt-in labels on log-event metrics: ${OPT_IN_LOG_LABELS.join(', ')} (raise cardinality)`,
    repeatable: true,
  },
  {
    key: 'logs.series_limit',
    flag: 'logs-series-limit',
    env: 'LOGS_SERIES_LIMIT',
    valueHint: '<count>',
    defaultText: '2000',
    help: 'most label sets per log metric; further ones fold into an overflow series',
  },
  {
    key: 'logs.message_tracker_size',
    flag: 'logs-message-tracker-size',
    env: 'LOGS_MESSAGE_TRACKER_SIZE',
    valueHint: '<count>',
    defaultText: '100000',
    help: 'most unfinished messages tracked for duration, attempts and in-flight metrics',
  },
  // Vector indexes.
  {
    key: 'vector.index_ids',
    flag: 'vector-index',
    env: 'UPSTASH_VECTOR_INDEX_IDS',
    valueHint: '<id>',
    defaultText: 'none',
    help: 'vector index ids to read stats for, in addition to the discovered ones',
    repeatable: true,
  },
  {
    key: 'vector.discovery',
    flag: 'vector-discovery',
    env: 'UPSTASH_VECTOR_DISCOVERY',
    valueHint: '',
    defaultText: 'true',
    help: 'add every vector index the management API lists (--no-vector-discovery to use only the given ids)',
    switch: true,
  },
  {
    key: 'vector.stats_period',
    flag: 'vector-stats-period',
    env: 'UPSTASH_VECTOR_STATS_PERIOD',
    valueHint: '<period>',
    defaultText: '1h',
    help: `period asked of the stats endpoint: ${VECTOR_STATS_PERIODS.join(', ')}`,
  },
  // Canary probe (active check, off by default).
  {
    key: 'probe.enabled',
    flag: 'probe-enabled',
    env: 'PROBE_ENABLED',
    valueHint: '',
    defaultText: 'false',
    help: 'enqueue a canary message on an interval and measure its acceptance and end-to-end delivery (needs QSTASH_TOKEN and --probe-receiver-url)',
    switch: true,
  },
  {
    key: 'probe.interval',
    flag: 'probe-interval',
    env: 'PROBE_INTERVAL',
    valueHint: DURATION,
    defaultText: '60s',
    help: 'time between the starts of two probes (a probe still waiting delays the next)',
  },
  {
    key: 'probe.timeout',
    flag: 'probe-timeout',
    env: 'PROBE_TIMEOUT',
    valueHint: DURATION,
    defaultText: '30s',
    help: 'a probe succeeds when its message arrives, signature verified, within this time of being sent',
  },
  {
    key: 'probe.queue',
    flag: 'probe-queue',
    env: 'PROBE_QUEUE',
    valueHint: '<name>',
    defaultText: 'upstash-exporter-probe',
    help: 'queue the probe messages are enqueued into (created by the service on first use)',
  },
  {
    key: 'probe.receiver_url',
    flag: 'probe-receiver-url',
    env: 'PROBE_RECEIVER_URL',
    valueHint: '<url>',
    defaultText: 'none',
    help: 'public URL the service delivers probe messages to; it must reach this exporter at --probe-receiver-path',
  },
  {
    key: 'probe.receiver_path',
    flag: 'probe-receiver-path',
    env: 'PROBE_RECEIVER_PATH',
    valueHint: '<path>',
    defaultText: '/probe/receive',
    help: 'path on this exporter where the probe receiver listens (outside basic auth: the signature protects it)',
  },
  {
    key: 'probe.workflow_url',
    flag: 'probe-workflow-url',
    env: 'PROBE_WORKFLOW_URL',
    valueHint: '<url>',
    defaultText: 'none',
    help: 'also trigger a workflow run at this public URL on each probe; it must reach this exporter at --probe-receiver-path',
  },
  {
    key: 'probe.insecure_receiver',
    flag: 'probe-insecure-receiver',
    env: 'PROBE_INSECURE_RECEIVER',
    valueHint: '',
    defaultText: 'false',
    help: 'run the probe receiver without signing keys, accepting unsigned deliveries (tests only)',
    switch: true,
  },
  // Remediation: an Alertmanager webhook receiver (off by default).
  {
    key: 'remediation.enabled',
    flag: 'remediation-enabled',
    env: 'REMEDIATION_ENABLED',
    valueHint: '',
    defaultText: 'false',
    help: 'serve POST /-/remediation/alertmanager: pause the schedule named by each firing allowlisted alert (needs QSTASH_TOKEN and a bearer token)',
    switch: true,
  },
  {
    key: 'remediation.bearer_token',
    flag: 'remediation-bearer-token',
    env: 'REMEDIATION_BEARER_TOKEN',
    valueHint: '<token>',
    defaultText: 'none',
    help: 'secret Alertmanager must send as Authorization: Bearer on the remediation webhook',
    secretFile: true,
  },
  {
    key: 'remediation.alerts',
    flag: 'remediation-alert',
    env: 'REMEDIATION_ALERTS',
    valueHint: '<alertname>',
    defaultText: DEFAULT_REMEDIATION_ALERTS.join(', '),
    help: 'alert names the webhook acts on; others are ignored',
    repeatable: true,
  },
  {
    key: 'remediation.dry_run',
    flag: 'remediation-dry-run',
    env: 'REMEDIATION_DRY_RUN',
    valueHint: '',
    defaultText: 'false',
    help: 'log and count what the webhook would pause, without pausing anything',
    switch: true,
  },
];

export function settingByKey(key: string): SettingSpec {
  const spec = SETTINGS.find((s) => s.key === key);
  if (spec === undefined) throw new Error(`no setting ${key}`);
  return spec;
}

/** Every key a YAML file may hold, with the `_file` variants of secrets. */
export function yamlKeys(): string[] {
  return SETTINGS.filter((s) => s.notInYaml !== true).flatMap((s) =>
    s.secretFile === true ? [s.key, `${s.key}_file`] : [s.key],
  );
}
