// Printing the configuration without its secrets, and the list of secrets the logger scrubs.

import YAML from 'yaml';
import { cronForInterval, CRON_STEP_RULE } from '../common/cron-step.js';
import { formatDuration } from '../common/duration.js';
import { hostForUrl } from '../common/url.js';
import type { ExporterConfig } from './schema.js';
import { COLLECTOR_NAMES } from './settings.js';

export const MASK = '***';

/** A copy with the token, the API key, the signing keys and the bearer token replaced by `***` (unset ones stay null). */
export function maskConfig(config: ExporterConfig): ExporterConfig {
  const mask = (secret: string | null): string | null => (secret === null ? null : MASK);
  return {
    ...structuredClone(config),
    qstash: {
      ...config.qstash,
      token: mask(config.qstash.token),
      currentSigningKey: mask(config.qstash.currentSigningKey),
      nextSigningKey: mask(config.qstash.nextSigningKey),
    },
    management: { ...config.management, apiKey: mask(config.management.apiKey) },
    remediation: { ...config.remediation, alerts: [...config.remediation.alerts], bearerToken: mask(config.remediation.bearerToken) },
  };
}

/**
 * Every value that must never reach a log line: the token, the API key, the Basic
 * credentials the management client sends (base64 of `email:apiKey`), the signing keys and the
 * remediation bearer token.
 */
export function configSecrets(config: ExporterConfig): string[] {
  const { token } = config.qstash;
  const { email, apiKey } = config.management;
  const secrets: string[] = [];
  if (token !== null) secrets.push(token);
  if (apiKey !== null) {
    secrets.push(apiKey);
    if (email !== null) secrets.push(Buffer.from(`${email}:${apiKey}`).toString('base64'));
  }
  for (const secret of [config.qstash.currentSigningKey, config.qstash.nextSigningKey, config.remediation.bearerToken]) {
    if (secret !== null) secrets.push(secret);
  }
  return secrets;
}

function formatListen({ host, port }: ExporterConfig['listen']): string {
  return `${hostForUrl(host)}:${port}`;
}

/**
 * A collector's poll interval as the runner schedules it (cronForInterval, as PollSchedule), and
 * when that is not the interval asked, the note saying so.
 */
function pollInterval(requestedMs: number): { effective: string; note: string | null } {
  const plan = cronForInterval(requestedMs);
  const effective = formatDuration(plan.intervalMs);
  return { effective, note: plan.exact ? null : `${formatDuration(requestedMs)} asked, rounded to ${effective}: ${CRON_STEP_RULE}` };
}

/**
 * The effective configuration as YAML in the config file's own keys (durations written back as
 * durations), secrets masked, with the collectors' state as a leading comment. Poll intervals
 * are the ones the runner uses, with a comment where that is not the interval asked. Apart from
 * the masked secrets, the output is itself a valid configuration file.
 */
export function renderConfigYaml(config: ExporterConfig): string {
  const masked = maskConfig(config);
  const { qstash, management, http, logs, vector, dlq, flowControl, probe, remediation } = masked;
  const optional = <T>(key: string, value: T | null): Record<string, T> => (value === null ? {} : { [key]: value });

  const document = {
    listen_address: formatListen(masked.listen),
    qstash_url: qstash.url,
    ...optional('qstash_token', qstash.token),
    ...optional('qstash_current_signing_key', qstash.currentSigningKey),
    ...optional('qstash_next_signing_key', qstash.nextSigningKey),
    management_url: management.url,
    ...optional('upstash_email', management.email),
    ...optional('upstash_api_key', management.apiKey),
    poll_interval: Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, pollInterval(masked.collectors[name].intervalMs).effective])),
    disabled_collectors: COLLECTOR_NAMES.filter((name) => masked.collectors[name].disabledReason?.startsWith('switched off') === true),
    state_file: masked.stateFile ?? 'none',
    ...optional('web_config_file', masked.webConfigFile),
    openmetrics: masked.openMetrics,
    log_level: masked.log.level,
    log_format: masked.log.format,
    header_prefix: qstash.headerPrefix,
    account_path: management.accountPath,
    web: { max_connections: masked.web.maxConnections },
    http: {
      connect_timeout: formatDuration(http.timeouts.connectMs),
      headers_timeout: formatDuration(http.timeouts.headersMs),
      body_timeout: formatDuration(http.timeouts.bodyMs),
      max_retries: http.retry.maxRetries,
      retry_base_delay: formatDuration(http.retry.baseDelayMs),
      retry_max_delay: formatDuration(http.retry.maxDelayMs),
      max_rate_limit_wait: formatDuration(http.retry.maxRateLimitWaitMs),
      rate_limit_share: http.retry.rateLimitShare,
    },
    logs: {
      path: qstash.logsPath,
      ingestion_delay: formatDuration(logs.ingestionDelayMs),
      overlap: formatDuration(logs.overlapMs),
      lateness_horizon: formatDuration(logs.latenessHorizonMs),
      max_pages: logs.maxPagesPerCycle,
      parallel_slices: logs.maxParallelSlices,
      page_size: logs.pageSize,
      max_page_mib: logs.maxPageBytes / (1024 * 1024),
      labels: logs.labels,
      series_limit: logs.seriesLimit,
      message_tracker_size: logs.messageTrackerSize,
    },
    vector: {
      index_ids: vector.indexIds,
      discovery: vector.discovery,
      stats_period: vector.statsPeriod,
    },
    dlq: { max_pages: dlq.maxPages },
    flow_control: { keys: flowControl.keys, max_keys: flowControl.maxKeys },
    probe: {
      enabled: probe.enabled,
      interval: formatDuration(probe.intervalMs),
      timeout: formatDuration(probe.timeoutMs),
      queue: probe.queue,
      ...optional('receiver_url', probe.receiverUrl),
      receiver_path: probe.receiverPath,
      ...optional('workflow_url', probe.workflowUrl),
      insecure_receiver: probe.insecureReceiver,
    },
    remediation: {
      enabled: remediation.enabled,
      ...optional('bearer_token', remediation.bearerToken),
      alerts: remediation.alerts,
      dry_run: remediation.dryRun,
    },
  };

  const doc = new YAML.Document(document);
  for (const name of COLLECTOR_NAMES) {
    const { note } = pollInterval(masked.collectors[name].intervalMs);
    const node = doc.getIn(['poll_interval', name], true);
    if (note !== null && YAML.isScalar(node)) node.comment = ` ${note}`;
  }
  const collectorLines = COLLECTOR_NAMES.map((name) => {
    const { enabled, intervalMs, disabledReason } = masked.collectors[name];
    const { effective, note } = pollInterval(intervalMs);
    return ` ${name}: ${enabled ? `on, every ${effective}${note === null ? '' : ` (${note})`}` : `off (${disabledReason ?? 'disabled'})`}`;
  });
  doc.commentBefore = [
    ` effective configuration${masked.configFile === null ? '' : ` (file ${masked.configFile})`}; secrets shown as ${MASK}`,
    ' collectors:',
    ...collectorLines.map((line) => ` ${line}`),
  ].join('\n');
  return doc.toString();
}
