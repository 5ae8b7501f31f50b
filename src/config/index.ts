// Public surface of the configuration module.
export { loadConfig } from './load.js';
export { ConfigError, isConfigError } from './errors.js';
export { maskConfig, configSecrets, renderConfigYaml, MASK } from './mask.js';
export { settingsTableMarkdown } from './docs-table.js';
export type {
  ExporterConfig,
  CollectorConfig,
  LogLevel,
  LogFormat,
  VectorStatsPeriod,
  OptInLogLabel,
  ProbeConfig,
  RemediationConfig,
  QStashRegionConfig,
  RegionNameSource,
} from './schema.js';
export { KNOWN_QSTASH_REGIONS, DEFAULT_QSTASH_REGION } from './qstash-regions.js';
export {
  COLLECTOR_NAMES,
  DEFAULT_POLL_INTERVALS,
  LOG_LEVELS,
  LOG_FORMATS,
  VECTOR_STATS_PERIODS,
  OPT_IN_LOG_LABELS,
  DEFAULT_REMEDIATION_ALERTS,
  SETTINGS,
  type CollectorName,
  type Setting,
  type SettingSpec,
} from './settings.js';
export { knownFlags } from './sources.js';
export { probeRegionUrl, probeWorkflowUrl } from './probe-urls.js';
