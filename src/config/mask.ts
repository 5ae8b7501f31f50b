// Printing the configuration without its secrets, and the list of secrets the logger scrubs.

import YAML from 'yaml';
import { proxyUrlSecrets, redactProxyUrl } from '../api/proxy-choice.js';
import { MASK } from './kinds.js';
import { scheduledInterval } from './read-collectors.js';
import type { ExporterConfig, RegionNameSource } from './schema.js';
import { COLLECTOR_NAMES, SETTINGS } from './settings.js';
import { setValueAt, valueAt } from './validate.js';

export { MASK } from './kinds.js';

/** How check-config says where a region's name came from. */
const REGION_NAMED_BY: Record<RegionNameSource, string> = {
  variable: 'its <REGION>_QSTASH_TOKEN variable',
  setting: 'the qstash_regions setting',
  url: "the URL's host",
  qstash_region: 'QSTASH_REGION / --qstash-region',
  assumed:
    'assumed: the URL names no region; learnt from the account record at start when the management API is configured',
};

/** A copy with every secret that check-config masks replaced by `***` (unset ones stay null). */
export function maskConfig(config: ExporterConfig): ExporterConfig {
  const masked = structuredClone(config);
  for (const region of masked.qstash.regions) {
    region.token = MASK;
    if (region.currentSigningKey !== null) region.currentSigningKey = MASK;
    if (region.nextSigningKey !== null) region.nextSigningKey = MASK;
  }
  for (const row of SETTINGS) {
    if (row.field === undefined || row.kind.render(valueAt(config, row.field), config) !== MASK) continue;
    setValueAt(masked as unknown as Record<string, unknown>, row.field, MASK);
  }
  return masked;
}

/**
 * Every value that must never reach a log line: every region's token, the API key, the Basic
 * credentials the management client sends (base64 of `email:apiKey`), the signing keys, the
 * remediation bearer token, and the password of a proxy URL (http.proxy_url, HTTPS_PROXY,
 * HTTP_PROXY) with the Proxy-Authorization credentials made of it.
 */
export function configSecrets(config: ExporterConfig): string[] {
  const { email, apiKey } = config.management;
  const secrets: string[] = [];
  for (const region of config.qstash.regions) {
    for (const secret of [region.token, region.currentSigningKey, region.nextSigningKey])
      if (secret !== null) secrets.push(secret);
  }
  if (apiKey !== null) {
    secrets.push(apiKey);
    if (email !== null) secrets.push(Buffer.from(`${email}:${apiKey}`).toString('base64'));
  }
  if (config.remediation.bearerToken !== null) secrets.push(config.remediation.bearerToken);
  const { url, environment } = config.http.proxy;
  for (const proxy of [url, environment.httpsProxy?.value, environment.httpProxy?.value]) {
    if (proxy !== null && proxy !== undefined) secrets.push(...proxyUrlSecrets(proxy));
  }
  return secrets;
}

/**
 * The YAML document in the config file's own keys, one entry per row in --help's order (a row
 * with yamlAfter follows that key in its section), each value as its kind renders it.
 */
function yamlDocument(config: ExporterConfig): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  const placeLater: { key: string; after: string; value: unknown }[] = [];
  for (const row of SETTINGS) {
    if (row.notInYaml === true) continue;
    const value = row.kind.render(row.field === undefined ? undefined : valueAt(config, row.field), config);
    if (value === undefined) continue;
    if (row.yamlAfter === undefined) setValueAt(document, row.key, value);
    else placeLater.push({ key: row.key, after: row.yamlAfter, value });
  }
  for (const { key, after, value } of placeLater) {
    const section = key.slice(0, key.indexOf('.'));
    const entries = Object.entries(document[section] as Record<string, unknown>);
    const at = entries.findIndex(([name]) => `${section}.${name}` === after) + 1;
    entries.splice(at, 0, [key.slice(section.length + 1), value]);
    document[section] = Object.fromEntries(entries);
  }
  return document;
}

/**
 * The effective configuration as YAML in the config file's own keys (durations written back as
 * durations), secrets masked, with the collectors' state as a leading comment. Poll intervals
 * are the ones the runner uses, with a comment where that is not the interval asked. Apart from
 * the masked secrets, the output is itself a valid configuration file.
 */
export function renderConfigYaml(config: ExporterConfig): string {
  const doc = new YAML.Document(yamlDocument(config));
  for (const name of COLLECTOR_NAMES) {
    const { note } = scheduledInterval(config.collectors[name].intervalMs);
    const node = doc.getIn(['poll_interval', name], true);
    if (note !== null && YAML.isScalar(node)) node.comment = ` ${note}`;
  }
  const collectorLines = COLLECTOR_NAMES.map((name) => {
    const { enabled, intervalMs, disabledReason } = config.collectors[name];
    const { effective, note } = scheduledInterval(intervalMs);
    return ` ${name}: ${enabled ? `on, every ${effective}${note === null ? '' : ` (${note})`}` : `off (${disabledReason ?? 'disabled'})`}`;
  });
  const { httpsProxy, httpProxy, noProxy } = config.http.proxy.environment;
  const proxyLines = [httpsProxy, httpProxy, noProxy].flatMap((variable) =>
    variable === null
      ? []
      : [`  ${variable.name}=${variable === noProxy ? variable.value : redactProxyUrl(variable.value)}`],
  );
  const regionLines = config.qstash.regions.map(
    (region) => `  ${region.name}: ${region.url} (${REGION_NAMED_BY[region.nameFrom]})`,
  );
  doc.commentBefore = [
    ` effective configuration${config.configFile === null ? '' : ` (file ${config.configFile})`}; secrets shown as ${MASK}`,
    ...(regionLines.length === 0 ? [] : [' qstash regions:', ...regionLines]),
    ...(proxyLines.length === 0 ? [] : [' proxy from the environment:', ...proxyLines]),
    ' collectors:',
    ...collectorLines.map((line) => ` ${line}`),
  ].join('\n');
  return doc.toString();
}
