// Public surface of the configuration module.
export { loadConfig } from './load.js';
export { ConfigError, isConfigError } from './errors.js';
export { maskConfig, configSecrets, renderConfigYaml, MASK } from './mask.js';
export {
  ExporterConfigSchema,
  type ExporterConfig,
  type CollectorConfig,
  type LogLevel,
  type LogFormat,
  type VectorStatsPeriod,
  type OptInLogLabel,
  type ProbeConfig,
  type RemediationConfig,
} from './schema.js';
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
  type SettingSpec,
} from './settings.js';
export { knownFlags } from './sources.js';
