// The watched QStash regions (ExporterConfig.qstash.regions), from the SDKs' own environment
// (`<REGION>_QSTASH_TOKEN`, `<REGION>_QSTASH_URL`, `<REGION>_QSTASH_CURRENT_SIGNING_KEY`, ...),
// the flags `--qstash-region-token <region>=<token>` and their kin, the YAML list
// `qstash_regions`, and the single-region settings of before (QSTASH_TOKEN, QSTASH_URL,
// QSTASH_REGION, the signing keys); read-regions-sources.ts reads each source. Per region and field the usual precedence holds: flags >
// environment > YAML.

import { z } from 'zod';
import { qstashRegionOfUrl } from '../api/management.js';
import { ConfigError, quoteValue } from './errors.js';
import { REGIONAL, regionalValues, regionNamed, type Given, type RegionValues } from './read-regions-sources.js';
import type { Kind } from './kinds.js';
import { httpUrl, MASK } from './kinds.js';
import type { Sources } from './precedence.js';
import {
  DEFAULT_QSTASH_REGION,
  KNOWN_QSTASH_REGIONS,
  knownQStashRegion,
  regionVariable,
  type KnownQStashRegion,
} from './qstash-regions.js';
import { readSecret } from './read-secrets.js';
import { assembledSetting, type Setting } from './setting.js';
import type { SettingSpec } from './setting-spec.js';
import type { ExporterConfig, QStashRegionConfig } from './schema.js';
import { asHttpUrl, asText } from './values.js';

/**
 * The one region the single-region settings (QSTASH_TOKEN, QSTASH_URL, ...) gave, which
 * check-config prints with those keys again; undefined when the regions came as a list.
 */
function plainlyGiven(config: ExporterConfig): QStashRegionConfig | undefined {
  const { regions } = config.qstash;
  const [only] = regions;
  return regions.length === 1 && only !== undefined && only.nameFrom !== 'variable' && only.nameFrom !== 'setting'
    ? only
    : undefined;
}

/**
 * A single-region setting's kind, printed by check-config from the region it gave (`pick`);
 * with several regions, the `qstash_regions` list carries them instead.
 */
export function fromPlainRegion<T>(kind: Kind<T>, pick: (region: QStashRegionConfig) => unknown): Kind<T> {
  return {
    ...kind,
    render: (_value, config) => {
      const region = plainlyGiven(config);
      return region === undefined ? undefined : pick(region);
    },
  };
}

/** QSTASH_REGION / --qstash-region: a known region's name, null when not given. */
export const optionalRegionName: Kind<string | null> = {
  read: (spec, sources) => {
    const raw = sources.get(spec.key);
    return raw === undefined ? null : regionNamed(spec.key, asText(spec.key, raw, 'a region name'), raw.origin).name;
  },
  check: z.string().nullable(),
  render: (value) => value ?? undefined,
};

/** The per-region rows are read together by readRegions; their own value is unused. */
const readTogether = (render: Kind<null>['render']): Kind<null> => ({ read: () => null, check: z.null(), render });

/** check-config's `qstash_regions`: every region, secrets masked. */
function renderRegions(_value: null, config: ExporterConfig): unknown {
  if (config.qstash.regions.length === 0 || plainlyGiven(config) !== undefined) return undefined;
  return config.qstash.regions.map((region) => ({
    name: region.name,
    url: region.url,
    token: MASK,
    ...(region.currentSigningKey === null ? {} : { current_signing_key: MASK, next_signing_key: MASK }),
  }));
}

export const REGION_SETTINGS: readonly Setting[] = REGIONAL.map(({ key, field, variable, what }) =>
  assembledSetting({
    key,
    flag: `qstash-region-${field.replaceAll('_', '-')}`,
    env: `<REGION>_${variable}`,
    valueHint: `<region>=<${field === 'url' ? 'url' : field === 'token' ? 'token' : 'key'}>`,
    defaultText: field === 'url' ? "the region's public URL" : 'none',
    help:
      field === 'token'
        ? `a region to watch and its ${what} (repeat for each region; <REGION> is EU_CENTRAL_1 or US_EAST_1, as the SDKs write it); YAML: a list of {name, url, token, current_signing_key, next_signing_key}`
        : `the ${what} of a region given by --qstash-region-token (YAML: in the qstash_regions list)`,
    repeatable: true,
    secretFile: field !== 'url',
    notInYaml: field !== 'token',
    kind: readTogether(field === 'token' ? renderRegions : () => undefined),
  }),
);

/** A region's URL, checked, and refused when its host names another region. */
function regionUrl(region: KnownQStashRegion, given: Given | undefined): string {
  if (given === undefined) return region.publicUrl;
  const url = asHttpUrl(
    'qstash_region_urls',
    { value: given.value, source: 'flag', origin: given.origin },
    region.publicUrl,
  );
  const named = qstashRegionOfUrl(url);
  if (named !== null && named !== region.name) {
    throw new ConfigError(
      'qstash_region_urls',
      `${given.origin}: ${quoteValue(url)} is the URL of ${named}, given as ${region.name}'s; give each region its own URL`,
    );
  }
  return url;
}

function signingKeys(
  values: RegionValues,
  name: string,
): Pick<QStashRegionConfig, 'currentSigningKey' | 'nextSigningKey'> {
  const current = values.current_signing_key;
  const next = values.next_signing_key;
  if ((current === undefined) !== (next === undefined)) {
    const [given, missing] = current === undefined ? [next!, 'current'] : [current, 'next'];
    throw new ConfigError(
      `qstash_region_${missing}_signing_keys`,
      `${given.origin} is set but ${name}'s ${missing} signing key is not: signatures are verified with both keys (the service signs with the next one after a rotation); set both`,
    );
  }
  return { currentSigningKey: current?.value ?? null, nextSigningKey: next?.value ?? null };
}

/** The single-region settings of before: QSTASH_TOKEN with its URL, region and signing keys. */
function plainRegion(
  sources: Sources,
  regional: boolean,
): {
  region: (QStashRegionConfig & { origin: string }) | null;
  keys: Pick<QStashRegionConfig, 'currentSigningKey' | 'nextSigningKey'>;
} {
  const token = readSecret(sources, 'qstash_token', 'QStash token');
  const current = readSecret(sources, 'qstash_current_signing_key', 'QStash current signing key');
  const next = readSecret(sources, 'qstash_next_signing_key', 'QStash next signing key');
  if ((current === null) !== (next === null)) {
    const [given, missing] =
      current === null
        ? ['qstash_next_signing_key', 'QSTASH_CURRENT_SIGNING_KEY']
        : ['qstash_current_signing_key', 'QSTASH_NEXT_SIGNING_KEY'];
    const origin = sources.get(given)?.origin ?? sources.get(`${given}_file`)?.origin ?? given;
    throw new ConfigError(
      missing === 'QSTASH_CURRENT_SIGNING_KEY' ? 'qstash_current_signing_key' : 'qstash_next_signing_key',
      `${origin} is set but ${missing} is not: signatures are verified with both keys (the service signs with the next one after a rotation); set ${missing} (or ${missing}_FILE)`,
    );
  }
  const keys = { currentSigningKey: current, nextSigningKey: next };
  if (token === null) return { region: null, keys };
  const origin = sources.get('qstash_token')?.origin ?? sources.get('qstash_token_file')?.origin ?? 'QSTASH_TOKEN';
  const urlRaw = sources.get('qstash_url');
  const spec = { key: 'qstash_url', defaultText: 'https://qstash.upstash.io' } as SettingSpec;
  // With the per-region variables, QSTASH_REGION is the SDKs' choice of the region to publish to,
  // not the region of QSTASH_TOKEN.
  const regionRaw = regional ? undefined : sources.get('qstash_region');
  const setRegion =
    regionRaw === undefined
      ? null
      : regionNamed('qstash_region', asText('qstash_region', regionRaw, 'a region name'), regionRaw.origin).name;
  if (urlRaw === undefined) {
    // No URL: the SDKs' default (eu-central-1's), or the public URL of the region named.
    const region = setRegion === null ? knownQStashRegion(DEFAULT_QSTASH_REGION)! : knownQStashRegion(setRegion)!;
    const nameFrom = setRegion === null ? 'url' : 'qstash_region';
    return { region: { name: region.name, nameFrom, url: region.publicUrl, token, ...keys, origin }, keys };
  }
  const url = httpUrl.read(spec, sources);
  const named = qstashRegionOfUrl(url);
  if (named !== null) {
    if (setRegion !== null && setRegion !== named) {
      throw new ConfigError(
        'qstash_region',
        `${urlRaw.origin}: ${quoteValue(url)} is the URL of ${named}, but ${regionRaw!.origin} says ${setRegion}; correct one of them`,
      );
    }
    return { region: { name: named, nameFrom: 'url', url, token, ...keys, origin }, keys };
  }
  if (setRegion !== null)
    return { region: { name: setRegion, nameFrom: 'qstash_region', url, token, ...keys, origin }, keys };
  return { region: { name: DEFAULT_QSTASH_REGION, nameFrom: 'assumed', url, token, ...keys, origin }, keys };
}

/**
 * Every watched region, in the order of KNOWN_QSTASH_REGIONS. Refused with one line: a region
 * without a token, an unknown region name, a URL naming another region, one token for two regions.
 */
export function readRegions(sources: Sources): QStashRegionConfig[] {
  const given = regionalValues(sources);
  const regions: (QStashRegionConfig & { origin: string })[] = [];
  for (const known of KNOWN_QSTASH_REGIONS) {
    const values = given.get(known);
    if (values === undefined) continue;
    if (values.token === undefined) {
      const other = Object.values(values)[0]!;
      throw new ConfigError(
        'qstash_regions',
        `${other.origin} is set but ${known.name} has no token: set ${regionVariable(known, 'QSTASH_TOKEN')} (or --qstash-region-token ${known.name}=<token>, token in qstash_regions)`,
      );
    }
    regions.push({
      name: known.name,
      nameFrom: given.size > 0 && values.token.origin.includes(known.envPrefix) ? 'variable' : 'setting',
      url: regionUrl(known, values.url),
      token: values.token.value,
      ...signingKeys(values, known.name),
      origin: values.token.origin,
    });
  }
  const { region: plain, keys } = plainRegion(sources, regions.length > 0);
  if (plain === null && keys.currentSigningKey !== null && regions.length > 0) {
    // QSTASH_*_SIGNING_KEY beside per-region tokens: the keys of the one region without its own.
    const keyless = regions.filter((region) => region.currentSigningKey === null);
    if (keyless.length !== 1) {
      throw new ConfigError(
        'qstash_current_signing_key',
        `${sources.get('qstash_current_signing_key')?.origin ?? 'QSTASH_CURRENT_SIGNING_KEY'} is set without QSTASH_TOKEN, and it is not clear which region's key it is; set <REGION>_QSTASH_CURRENT_SIGNING_KEY and <REGION>_QSTASH_NEXT_SIGNING_KEY for each region`,
      );
    }
    Object.assign(keyless[0]!, keys);
  }
  if (plain !== null) {
    const same = regions.find((region) => region.token === plain.token);
    if (same !== undefined) {
      // The SDKs' fallback credentials repeating a region's: one region, its own keys first.
      same.currentSigningKey ??= plain.currentSigningKey;
      same.nextSigningKey ??= plain.nextSigningKey;
    } else {
      const clash = regions.find((region) => region.name === plain.name);
      if (clash !== undefined) {
        throw new ConfigError(
          'qstash_token',
          `${plain.origin} and ${clash.origin} are both tokens of ${plain.name}, and differ; keep the one of the QStash user to watch`,
        );
      }
      regions.push(plain);
    }
  }
  for (const [index, region] of regions.entries()) {
    const twin = regions.slice(index + 1).find((other) => other.token === region.token);
    if (twin !== undefined) {
      throw new ConfigError(
        'qstash_regions',
        `${region.origin} and ${twin.origin} hold the same token for ${region.name} and ${twin.name}; each region has its own token (Upstash console, QStash, that region)`,
      );
    }
  }
  const order = (name: string): number => KNOWN_QSTASH_REGIONS.findIndex((known) => known.name === name);
  return regions.sort((a, b) => order(a.name) - order(b.name)).map(({ origin: _origin, ...region }) => region);
}
