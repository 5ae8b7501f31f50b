// The table of every setting, one row each (setting.ts): names, help, default, the kind of
// value with its bounds, and the field of ExporterConfig it fills. The argv parser, the YAML key
// check, loading, validation, check-config's YAML, --help and the docs table all loop over it.
// The rows live in settings-general.ts, settings-http-logs.ts and settings-sections.ts, in the
// order --help shows them.

import { GENERAL_SETTINGS } from './settings-general.js';
import { HTTP_AND_LOGS_SETTINGS } from './settings-http-logs.js';
import { SECTION_SETTINGS } from './settings-sections.js';
import type { Setting } from './setting.js';

export {
  COLLECTOR_NAMES,
  COLLECTOR_NEEDS,
  COLLECTORS_KEEPING_STATE,
  DEFAULT_POLL_INTERVALS,
  type CollectorName,
} from './collector-catalogue.js';
export {
  DEFAULT_REMEDIATION_ALERTS,
  LOG_FORMATS,
  LOG_LEVELS,
  OPT_IN_LOG_LABELS,
  VECTOR_STATS_PERIODS,
  YAML_SECTIONS,
  type SettingSpec,
} from './setting-spec.js';
export type { Setting } from './setting.js';

export const SETTINGS: readonly Setting[] = [...GENERAL_SETTINGS, ...HTTP_AND_LOGS_SETTINGS, ...SECTION_SETTINGS];

export function settingByKey(key: string): Setting {
  const spec = SETTINGS.find((s) => s.key === key);
  if (spec === undefined) throw new Error(`no setting ${key}`);
  return spec;
}

/** Every key a YAML file may hold, with the `_file` variants of secrets. */
export function yamlKeys(): string[] {
  // A repeated secret (a region's token) names its file inside its YAML list instead.
  return SETTINGS.filter((s) => s.notInYaml !== true).flatMap((s) =>
    s.secretFile === true && s.repeatable !== true ? [s.key, `${s.key}_file`] : [s.key],
  );
}
