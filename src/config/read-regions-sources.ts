// Reading the per-region settings from each source: the SDKs' variables (one per region,
// `<REGION>_QSTASH_TOKEN`), the flags `--qstash-region-token <region>=<token>` and their kin,
// and the YAML list `qstash_regions`. read-regions.ts makes the regions of them.

import { ConfigError, quoteValue } from './errors.js';
import type { Layer, RawValue, Sources } from './precedence.js';
import { KNOWN_QSTASH_REGIONS, knownQStashRegion, regionVariable, type KnownQStashRegion } from './qstash-regions.js';
import { checkedSecret, readSecretFile } from './read-secrets.js';
import type { SettingSpec } from './setting-spec.js';
import { asText } from './values.js';

export type RegionField = 'url' | 'token' | 'current_signing_key' | 'next_signing_key';

/** The per-region rows: their setting key, the field they give, the SDK's variable. */
export const REGIONAL = [
  { key: 'qstash_regions', field: 'token', variable: 'QSTASH_TOKEN', what: 'QStash token' },
  { key: 'qstash_region_urls', field: 'url', variable: 'QSTASH_URL', what: 'QStash URL' },
  {
    key: 'qstash_region_current_signing_keys',
    field: 'current_signing_key',
    variable: 'QSTASH_CURRENT_SIGNING_KEY',
    what: 'QStash current signing key',
  },
  {
    key: 'qstash_region_next_signing_keys',
    field: 'next_signing_key',
    variable: 'QSTASH_NEXT_SIGNING_KEY',
    what: 'QStash next signing key',
  },
] as const satisfies readonly { key: string; field: RegionField; variable: string; what: string }[];

export const REGION_NAMES = KNOWN_QSTASH_REGIONS.map((region) => region.name).join(', ');
const YAML_KEY = 'qstash_regions';
const YAML_FIELDS = ['name', 'url', 'token', 'current_signing_key', 'next_signing_key'] as const;

/** A known region by either spelling; else the one-line error listing the known ones. */
export function regionNamed(key: string, text: string, origin: string): KnownQStashRegion {
  const region = knownQStashRegion(text);
  if (region === undefined) {
    throw new ConfigError(
      key,
      `${origin}: ${quoteValue(text)} is not a known QStash region; use one of ${REGION_NAMES}`,
    );
  }
  return region;
}

/** True for the per-region rows, whose variable is one per region (`<REGION>_QSTASH_TOKEN`). */
export function isRegionalRow(spec: SettingSpec): boolean {
  return spec.env.startsWith('<REGION>_');
}

/** The per-region variables of the environment, as one value per row (by region name). */
export function readRegionalEnv(spec: SettingSpec, env: NodeJS.ProcessEnv, layer: Layer): void {
  const variable = spec.env.slice('<REGION>_'.length);
  for (const [suffix, key] of [
    ['', spec.key],
    ['_FILE', `${spec.key}_file`],
  ] as const) {
    const byRegion: Record<string, string> = {};
    for (const region of KNOWN_QSTASH_REGIONS) {
      const value = env[regionVariable(region, variable + suffix)];
      if (value !== undefined) byRegion[region.name] = value;
    }
    if (Object.keys(byRegion).length > 0) layer.set(key, { value: byRegion, source: 'env', origin: spec.env + suffix });
  }
}

export interface Given {
  value: string;
  origin: string;
}
export type RegionValues = Partial<Record<RegionField, Given>>;

/** One layer's values of a per-region row (or its `_file` variant), region by region. */
function valuesOf(key: string, raw: RawValue, fromFile: boolean, what: string): Map<KnownQStashRegion, Given> {
  const values = new Map<KnownQStashRegion, Given>();
  const settingKey = fromFile ? key.replace(/_file$/, '') : key;
  const take = (region: KnownQStashRegion, text: string, origin: string): void => {
    values.set(
      region,
      fromFile
        ? (({ secret: read, origin: at }) => ({ value: checkedSecret(settingKey, read, at, what), origin: at }))(
            readSecretFile(key, { ...raw, origin }, text, what),
          )
        : { value: text, origin },
    );
  };
  if (raw.source === 'env') {
    for (const [name, text] of Object.entries(raw.value as Record<string, string>)) {
      const region = regionNamed(key, name, raw.origin);
      take(region, text, raw.origin.replace('<REGION>', region.envPrefix));
    }
    return values;
  }
  // Flags: `<region>=<value>`, repeated.
  for (const item of Array.isArray(raw.value) ? (raw.value as unknown[]) : [raw.value]) {
    const text = asText(key, { ...raw, value: item }, '<region>=<value>');
    const equals = text.indexOf('=');
    if (equals <= 0) {
      throw new ConfigError(key, `${raw.origin} takes <region>=<value> (e.g. us-east-1=...); the value is not shown`);
    }
    take(regionNamed(key, text.slice(0, equals), raw.origin), text.slice(equals + 1), raw.origin);
  }
  return values;
}

/** The YAML list `qstash_regions`: [{ name, url, token, ... }], each secret also as `<key>_file`. */
function yamlRegions(raw: RawValue): Map<KnownQStashRegion, RegionValues> {
  const regions = new Map<KnownQStashRegion, RegionValues>();
  if (!Array.isArray(raw.value)) {
    throw new ConfigError(YAML_KEY, `${raw.origin} must be a list of regions, each a map with name, url and token`);
  }
  raw.value.forEach((item: unknown, index) => {
    const at = `${YAML_KEY}[${index}]${raw.origin.slice(YAML_KEY.length)}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new ConfigError(YAML_KEY, `${at} must be a map with name, url and token`);
    }
    const entry = item as Record<string, unknown>;
    const allowed = YAML_FIELDS.flatMap((name) =>
      name === 'name' || name === 'url' ? [name] : [name, `${name}_file`],
    );
    const unknown = Object.keys(entry).find((name) => !allowed.includes(name));
    if (unknown !== undefined)
      throw new ConfigError(YAML_KEY, `${at}: unknown key ${unknown}; a region takes ${allowed.join(', ')}`);
    if (typeof entry.name !== 'string')
      throw new ConfigError(YAML_KEY, `${at} has no name; give name: ${REGION_NAMES}`);
    const region = regionNamed(YAML_KEY, entry.name, at);
    if (regions.has(region)) throw new ConfigError(YAML_KEY, `${at}: region ${region.name} is listed twice; keep one`);
    const values: RegionValues = {};
    for (const field of YAML_FIELDS) {
      if (field === 'name') continue;
      const what = REGIONAL.find((row) => row.field === field)!.what;
      const direct = entry[field];
      const file = entry[`${field}_file`];
      if (direct !== undefined && file !== undefined)
        throw new ConfigError(YAML_KEY, `${at}: ${field} and ${field}_file are both set; keep only one of them`);
      if (direct !== undefined) {
        const text = asText(YAML_KEY, { ...raw, value: direct, origin: `${field} of ${at}` }, `a ${what}`);
        values[field] = {
          value: field === 'url' ? text : checkedSecret(YAML_KEY, text, `${field} of ${at}`, what),
          origin: `${field} of ${at}`,
        };
      } else if (file !== undefined) {
        const origin = `${field}_file of ${at}`;
        const read = readSecretFile(
          YAML_KEY,
          { ...raw, origin },
          asText(YAML_KEY, { ...raw, value: file, origin }, 'a path'),
          what,
        );
        values[field] = { value: checkedSecret(YAML_KEY, read.secret, read.origin, what), origin: read.origin };
      }
    }
    regions.set(region, values);
  });
  return regions;
}

/** Every region's values given by the per-region rows, the highest source winning per field. */
export function regionalValues(sources: Sources): Map<KnownQStashRegion, RegionValues> {
  const regions = new Map<KnownQStashRegion, RegionValues>();
  const valuesFor = (region: KnownQStashRegion): RegionValues => {
    const found = regions.get(region) ?? {};
    regions.set(region, found);
    return found;
  };
  // Lowest precedence first, so that a higher source overwrites.
  const keys = REGIONAL.flatMap((row) => [
    { row, key: row.key, fromFile: false },
    { row, key: `${row.key}_file`, fromFile: true },
  ]);
  const layers = new Map<string, RawValue[]>(keys.map(({ key }) => [key, sources.all(key)]));
  for (const source of ['yaml', 'env', 'flag'] as const) {
    for (const { row, key, fromFile } of keys) {
      for (const raw of layers.get(key)!.filter((value) => value.source === source)) {
        if (source === 'yaml') {
          for (const [region, values] of yamlRegions(raw)) Object.assign(valuesFor(region), values);
          continue;
        }
        for (const [region, given] of valuesOf(key, raw, fromFile, row.what)) valuesFor(region)[row.field] = given;
      }
    }
  }
  return regions;
}
