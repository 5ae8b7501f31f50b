// Settings rows of the YAML sections vector, redis, dlq, flow_control, probe and remediation.
import { z } from 'zod';
import { ConfigError, quoteValue } from './errors.js';
import { boolean, count, duration, list, matching, oneOf, secret, targetUrl, urlPath } from './kinds.js';
import { remediationAlerts } from './read-active-checks.js';
import { MIN_POLL_INTERVAL_MS } from './read-collectors.js';
import { setting, type Setting } from './setting.js';
import { DEFAULT_REMEDIATION_ALERTS, DURATION, VECTOR_STATS_PERIODS } from './setting-spec.js';

const VECTOR_INDEX_ID = /^[A-Za-z0-9._-]+$/;
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;

const VECTOR_INDEX_IDS = list('a list of index ids', z.string().regex(VECTOR_INDEX_ID), (key, id, raw) => {
  if (!VECTOR_INDEX_ID.test(id)) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(id)} is not a vector index id; ids use letters, digits, dots, dashes and underscores`,
    );
  }
  return id;
});

const REDIS_DATABASE_ID = /^[A-Za-z0-9._-]+$/;
const REDIS_DATABASE_IDS = list('a list of database ids', z.string().regex(REDIS_DATABASE_ID), (key, id, raw) => {
  if (!REDIS_DATABASE_ID.test(id)) {
    throw new ConfigError(
      key,
      `${raw.origin}: ${quoteValue(id)} is not a Redis database id; ids use letters, digits, dots, dashes and underscores`,
    );
  }
  return id;
});

export const SECTION_SETTINGS: readonly Setting[] = [
  // Vector indexes.
  setting({
    key: 'vector.index_ids',
    flag: 'vector-index',
    env: 'UPSTASH_VECTOR_INDEX_IDS',
    valueHint: '<id>',
    defaultText: 'none',
    help: 'vector index ids to read stats for, in addition to the discovered ones',
    repeatable: true,
    field: 'vector.indexIds',
    kind: VECTOR_INDEX_IDS,
  }),
  setting({
    key: 'vector.discovery',
    flag: 'vector-discovery',
    env: 'UPSTASH_VECTOR_DISCOVERY',
    valueHint: '',
    defaultText: 'true',
    help: 'add every vector index the management API lists (--no-vector-discovery to use only the given ids)',
    switch: true,
    field: 'vector.discovery',
    kind: boolean,
  }),
  setting({
    key: 'vector.stats_period',
    flag: 'vector-stats-period',
    env: 'UPSTASH_VECTOR_STATS_PERIOD',
    valueHint: '<period>',
    defaultText: '1h',
    help: `period asked of the stats endpoint: ${VECTOR_STATS_PERIODS.join(', ')}`,
    field: 'vector.statsPeriod',
    kind: oneOf(VECTOR_STATS_PERIODS, 'stats period'),
  }),
  // Redis databases.
  setting({
    key: 'redis.database_ids',
    flag: 'redis-database',
    env: 'UPSTASH_REDIS_DATABASE_IDS',
    valueHint: '<id>',
    defaultText: 'none',
    help: 'Redis database ids to read stats for, in addition to the discovered ones',
    repeatable: true,
    field: 'redis.databaseIds',
    kind: REDIS_DATABASE_IDS,
  }),
  setting({
    key: 'redis.discovery',
    flag: 'redis-discovery',
    env: 'UPSTASH_REDIS_DISCOVERY',
    valueHint: '',
    defaultText: 'true',
    help: 'add every Redis database the management API lists (--no-redis-discovery to use only the given ids)',
    switch: true,
    field: 'redis.discovery',
    kind: boolean,
  }),
  // Dead-letter queue and flow control (collectors dlq and flow_control).
  setting({
    key: 'dlq.max_pages',
    flag: 'dlq-max-pages',
    env: 'DLQ_MAX_PAGES',
    valueHint: '<count>',
    defaultText: '10',
    help: 'most DLQ pages (100 messages each) read per poll; beyond them the DLQ figures are lower bounds (upstash_qstash_dlq_complete 0)',
    field: 'dlq.maxPages',
    kind: count(1, 10_000),
  }),
  setting({
    key: 'flow_control.keys',
    flag: 'flow-control-key',
    env: 'FLOW_CONTROL_KEYS',
    valueHint: '<key>',
    defaultText: 'none',
    help: 'flow-control keys to read, in addition to those GET /v2/flowControl lists (the only ones read where the service has no list)',
    repeatable: true,
    field: 'flowControl.keys',
    kind: list('a list of flow-control keys', z.string().min(1), (_key, text) => text),
  }),
  setting({
    key: 'flow_control.max_keys',
    flag: 'flow-control-max-keys',
    env: 'FLOW_CONTROL_MAX_KEYS',
    valueHint: '<count>',
    defaultText: '100',
    help: 'most flow-control keys read per poll (one request each); configured keys first, then listed ones by wait list size',
    field: 'flowControl.maxKeys',
    kind: count(1, 10_000),
  }),
  // Canary probe (active check, off by default).
  setting({
    key: 'probe.enabled',
    flag: 'probe-enabled',
    env: 'PROBE_ENABLED',
    valueHint: '',
    defaultText: 'false',
    help: 'enqueue a canary message on an interval and measure its acceptance and end-to-end delivery (needs QSTASH_TOKEN and --probe-receiver-url)',
    switch: true,
    field: 'probe.enabled',
    kind: boolean,
  }),
  setting({
    key: 'probe.interval',
    flag: 'probe-interval',
    env: 'PROBE_INTERVAL',
    valueHint: DURATION,
    defaultText: '60s',
    help: 'time between the starts of two probes (a probe still waiting delays the next)',
    field: 'probe.intervalMs',
    kind: duration(MIN_POLL_INTERVAL_MS),
  }),
  setting({
    key: 'probe.timeout',
    flag: 'probe-timeout',
    env: 'PROBE_TIMEOUT',
    valueHint: DURATION,
    defaultText: '30s',
    help: 'a probe succeeds when its message arrives, signature verified, within this time of being sent',
    field: 'probe.timeoutMs',
    kind: duration(MIN_POLL_INTERVAL_MS),
  }),
  setting({
    key: 'probe.queue',
    flag: 'probe-queue',
    env: 'PROBE_QUEUE',
    valueHint: '<name>',
    defaultText: 'upstash-exporter-probe',
    help: 'queue the probe messages are enqueued into (created by the service on first use)',
    field: 'probe.queue',
    kind: matching(
      'a queue name',
      QUEUE_NAME,
      'is not a queue name; use letters, digits, dots, dashes and underscores',
    ),
  }),
  setting({
    key: 'probe.receiver_url',
    flag: 'probe-receiver-url',
    env: 'PROBE_RECEIVER_URL',
    valueHint: '<url>',
    defaultText: 'none',
    help: 'public URL the service delivers probe messages to; it must reach this exporter at --probe-receiver-path',
    field: 'probe.receiverUrl',
    kind: targetUrl,
  }),
  setting({
    key: 'probe.receiver_path',
    flag: 'probe-receiver-path',
    env: 'PROBE_RECEIVER_PATH',
    valueHint: '<path>',
    defaultText: '/probe/receive',
    help: 'path on this exporter where the probe receiver listens (outside basic auth: the signature protects it)',
    field: 'probe.receiverPath',
    kind: urlPath,
  }),
  setting({
    key: 'probe.workflow_url',
    flag: 'probe-workflow-url',
    env: 'PROBE_WORKFLOW_URL',
    valueHint: '<url>',
    defaultText: 'none',
    help: 'also trigger a workflow run at this public URL on each probe; it must reach this exporter at --probe-receiver-path',
    field: 'probe.workflowUrl',
    kind: targetUrl,
  }),
  setting({
    key: 'probe.insecure_receiver',
    flag: 'probe-insecure-receiver',
    env: 'PROBE_INSECURE_RECEIVER',
    valueHint: '',
    defaultText: 'false',
    help: 'run the probe receiver without signing keys, accepting unsigned deliveries (tests only)',
    switch: true,
    field: 'probe.insecureReceiver',
    kind: boolean,
  }),
  // Remediation: an Alertmanager webhook receiver (off by default).
  setting({
    key: 'remediation.enabled',
    flag: 'remediation-enabled',
    env: 'REMEDIATION_ENABLED',
    valueHint: '',
    defaultText: 'false',
    help: 'serve POST /-/remediation/alertmanager: pause the schedule named by each firing allowlisted alert (needs QSTASH_TOKEN and a bearer token)',
    switch: true,
    field: 'remediation.enabled',
    kind: boolean,
  }),
  setting({
    key: 'remediation.bearer_token',
    flag: 'remediation-bearer-token',
    env: 'REMEDIATION_BEARER_TOKEN',
    valueHint: '<token>',
    defaultText: 'none',
    help: 'secret Alertmanager must send as Authorization: Bearer on the remediation webhook',
    secretFile: true,
    field: 'remediation.bearerToken',
    kind: secret('remediation bearer token', { masked: true }),
  }),
  setting({
    key: 'remediation.alerts',
    flag: 'remediation-alert',
    env: 'REMEDIATION_ALERTS',
    valueHint: '<alertname>',
    defaultText: DEFAULT_REMEDIATION_ALERTS.join(', '),
    help: 'alert names the webhook acts on; others are ignored',
    repeatable: true,
    field: 'remediation.alerts',
    kind: remediationAlerts,
  }),
  setting({
    key: 'remediation.dry_run',
    flag: 'remediation-dry-run',
    env: 'REMEDIATION_DRY_RUN',
    valueHint: '',
    defaultText: 'false',
    help: 'log and count what the webhook would pause, without pausing anything',
    switch: true,
    field: 'remediation.dryRun',
    kind: boolean,
  }),
];
