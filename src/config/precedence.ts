// The configuration's sources in precedence order (flags > environment > YAML file > the
// settings table's defaults), the raw values they give, and where a value came from.
import { isAbsolute, resolve } from 'node:path';
import type { SettingSpec } from './setting-spec.js';

export type SourceKind = 'flag' | 'env' | 'yaml' | 'default';

export interface RawValue {
  /** A string from flags and env (string[] for repeated flags); any YAML value from the file. */
  value: unknown;
  source: SourceKind;
  /** How the user wrote the name: `--log-level`, `LOG_LEVEL`, `log_level in ./x.yaml`. */
  origin: string;
  /** Directory that relative paths are resolved against (the YAML file's), when not the cwd. */
  baseDir?: string;
}

/** One source's raw values, keyed by setting key (`<key>_file` for the file variant of a secret). */
export type Layer = Map<string, RawValue>;

/** A setting's default from the settings table, parsed like any given value. */
export function defaultValue(spec: Pick<SettingSpec, 'key' | 'defaultText'>): RawValue {
  return { value: spec.defaultText, source: 'default', origin: `the default of ${spec.key}` };
}

/** The three sources in precedence order, highest first. */
export class Sources {
  constructor(private readonly layers: readonly Layer[]) {}

  /** The value that wins for a key, if any source gives one. */
  get(key: string): RawValue | undefined {
    for (const layer of this.layers) {
      const raw = layer.get(key);
      if (raw !== undefined) return raw;
    }
    return undefined;
  }

  /** The given value of a setting, or its default. */
  givenOrDefault(spec: Pick<SettingSpec, 'key' | 'defaultText'>): RawValue {
    return this.get(spec.key) ?? defaultValue(spec);
  }

  /** Every value given for a key, lowest precedence first (for settings that merge). */
  all(key: string): RawValue[] {
    return this.layers.flatMap((layer) => layer.get(key) ?? []).reverse();
  }

  /** The winning layer among those giving the value or its file variant (secrets). */
  firstLayerWith(keys: readonly string[]): Layer | undefined {
    return this.layers.find((layer) => keys.some((key) => layer.has(key)));
  }
}

/**
 * Relative paths in the YAML file are relative to the file, others to the working directory;
 * the effective configuration holds absolute paths, so printing it loses nothing.
 */
export function resolvePath(raw: RawValue, path: string): string {
  return raw.baseDir !== undefined && !isAbsolute(path) ? resolve(raw.baseDir, path) : resolve(path);
}

export function originOf(sources: Sources, key: string): string {
  return sources.get(key)?.origin ?? sources.get(`${key}_file`)?.origin ?? key;
}
