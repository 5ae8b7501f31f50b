// One row of the settings table: a setting's names and help (SettingSpec), the kind of value it
// takes (parser, bounds, check, YAML rendering) and the field of ExporterConfig it fills, all
// declared once. Loading, validation, check-config's YAML, --help and the docs table are loops
// over these rows.
import type { Kind } from './kinds.js';
import type { ConfigPath, ExporterConfig, ValueAt } from './schema.js';
import type { SettingSpec } from './setting-spec.js';

export interface Setting extends SettingSpec {
  kind: Kind<unknown>;
  /**
   * Where the value goes in ExporterConfig. Absent for poll_interval and disabled_collectors:
   * with the credentials they make ExporterConfig.collectors (read-collectors.ts); absent for the
   * QStash credentials, which make ExporterConfig.qstash.regions (read-regions.ts).
   */
  field?: ConfigPath;
  /** Key after which check-config writes this one in its section, when not in --help's order. */
  yamlAfter?: string;
}

/** A row whose kind's value type is the type of its field (checked when compiling). */
export function setting<P extends ConfigPath>(
  row: SettingSpec & { field: P; kind: Kind<ValueAt<ExporterConfig, P>>; yamlAfter?: string },
): Setting {
  return row;
}

/** A row that feeds the collectors' table instead of one field. */
export function collectorsSetting<T>(row: SettingSpec & { kind: Kind<T> }): Setting {
  return row;
}

/** A row that, with others, makes one assembled field (the QStash regions, read-regions.ts). */
export function assembledSetting<T>(row: SettingSpec & { kind: Kind<T> }): Setting {
  return row;
}
