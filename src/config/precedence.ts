// The configuration's sources in precedence order (flags > environment > YAML file > the
// settings table's defaults), and where a value came from.
import { isAbsolute, resolve } from 'node:path';
import { settingByKey } from './settings.js';
import type { Layer, RawValue } from './sources.js';

/** A setting's default from the settings table, parsed like any given value. */
export function defaultValue(key: string): RawValue {
  return { value: settingByKey(key).defaultText, source: 'default', origin: `the default of ${key}` };
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
