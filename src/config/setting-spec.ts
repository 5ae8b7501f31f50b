// What a setting is (SettingSpec) and the fixed value lists the settings table and the parser
// share. Leaf module: the rows (settings-*.ts) and the table (settings.ts) import it.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
/** Periods of GET /v2/vector/index/{id}/stats, as the management API accepts them. */
export const VECTOR_STATS_PERIODS = ['1h', '3h', '12h', '1d', '3d', '7d', '30d'] as const;
/** Log-event labels a user may opt into; each can raise cardinality a lot. */
export const OPT_IN_LOG_LABELS = ['schedule_id', 'label', 'url'] as const;

/** The section headings of the YAML file: settings whose key is `<section>.<name>`. */
export const YAML_SECTIONS = [
  'web',
  'http',
  'logs',
  'vector',
  'redis',
  'probe',
  'remediation',
  'dlq',
  'flow_control',
] as const;

/** The sustained failing-schedule alert of deploy/rules/upstash-exporter.rules.yml (never one failed run): remediation acts on it by default. */
export const DEFAULT_REMEDIATION_ALERTS = ['UpstashScheduleRunsFailing'] as const;

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

export const DURATION = '<duration>';
