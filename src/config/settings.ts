// The table of every setting: its YAML key, flag, environment variable, default and meaning.
// The argv parser, the YAML key check, `--help` and the docs test all read this one table;
// how each value is parsed lives in load.ts.
// The rows live in settings-general.ts and settings-sections.ts, in the order --help shows them.

import { GENERAL_SETTINGS } from './settings-general.js';
import { SECTION_SETTINGS } from './settings-sections.js';
import type { SettingSpec } from './setting-spec.js';

// Collector names and their default intervals come from the one list of collectors.
export { COLLECTOR_NAMES, COLLECTOR_NEEDS, COLLECTORS_KEEPING_STATE, DEFAULT_POLL_INTERVALS, type CollectorName } from './collector-catalogue.js';
export { DEFAULT_REMEDIATION_ALERTS, LOG_FORMATS, LOG_LEVELS, OPT_IN_LOG_LABELS, VECTOR_STATS_PERIODS, YAML_SECTIONS, type SettingSpec } from './setting-spec.js';

export const SETTINGS: readonly SettingSpec[] = [...GENERAL_SETTINGS, ...SECTION_SETTINGS];

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
