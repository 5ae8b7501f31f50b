// The kinds of value a setting takes. A kind bundles what the settings table needs of a value
// besides its names: how it is read from the sources (strictly, with the default when none is
// given), the check of the parsed value, and how check-config writes it back as YAML. Bounds live
// in the kind, so the parser, the check and the help text (`range`) cannot disagree.

import { X509Certificate } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { parseProxyUrl, redactProxyUrl } from '../api/proxy-choice.js';
import { formatDuration } from '../common/duration.js';
import { hostForUrl } from '../common/url.js';
import type { ExporterConfig, PemBundle } from './schema.js';
import { ConfigError, quoteValue } from './errors.js';
import { resolvePath, type RawValue, type Sources } from './precedence.js';
import { readSecret } from './read-secrets.js';
import type { SettingSpec } from './setting-spec.js';
import {
  asBoolean,
  asDuration,
  asEnum,
  asHttpUrl,
  asInteger,
  asListenAddress,
  asShare,
  asTargetUrl,
  asText,
  asUniqueList,
  asUrlPath,
  enumItem,
  MAX_TIMER_MS,
  type ListenAddress,
} from './values.js';

/** How check-config prints a secret. */
export const MASK = '***';

export interface Kind<T> {
  /** The value the sources give (or the default), parsed; throws ConfigError naming the origin. */
  read(spec: SettingSpec, sources: Sources): T;
  /** The shape the rest of the exporter relies on. */
  check: z.ZodType<T>;
  /** The value as check-config writes it in YAML; undefined leaves the key out. */
  render(value: T, config: ExporterConfig): unknown;
  /** Bounds as the help text writes them (`1-1000`). */
  range?: string;
}

const same = <T>(value: T): T => value;
const unlessNull = <T>(value: T | null): T | undefined => value ?? undefined;

/** A kind whose value is the given one (or the default) through one parser. */
function parsed<T>(
  check: z.ZodType<T>,
  parse: (key: string, raw: RawValue, spec: SettingSpec) => T,
  render: (value: T) => unknown = same,
): Kind<T> {
  return { read: (spec, sources) => parse(spec.key, sources.givenOrDefault(spec), spec), check, render };
}

/** A kind that is null when no source gives a value (no default is parsed). */
function optional<T>(check: z.ZodType<T>, parse: (key: string, raw: RawValue) => T): Kind<T | null> {
  return {
    read: (spec, sources) => {
      const raw = sources.get(spec.key);
      return raw === undefined ? null : parse(spec.key, raw);
    },
    check: check.nullable(),
    render: unlessNull,
  };
}

/** A whole number in [min, max]. */
export function count(min: number, max?: number): Kind<number> {
  const kind = parsed(
    z
      .number()
      .int()
      .min(min)
      .max(max ?? Number.MAX_SAFE_INTEGER),
    (key, raw) => asInteger(key, raw, min, max),
  );
  return max === undefined ? kind : { ...kind, range: `${min}-${max}` };
}

const MIB = 1024 * 1024;

/** A whole number of MiB in [min, max], held in bytes. */
export function mebibytes(min: number, max: number): Kind<number> {
  return parsed(
    z
      .number()
      .int()
      .min(min * MIB)
      .max(max * MIB),
    (key, raw) => asInteger(key, raw, min, max) * MIB,
    (bytes) => bytes / MIB,
  );
}

/** A duration of at least `minMs`, at most the longest timer; held in ms. */
export function duration(minMs = 0): Kind<number> {
  return parsed(
    z.number().int().min(minMs).max(MAX_TIMER_MS),
    (key, raw) => asDuration(key, raw, { minMs, maxMs: MAX_TIMER_MS }),
    formatDuration,
  );
}

/** A duration as `duration`, or null when no source gives one (no default). */
export function optionalDuration(minMs = 0): Kind<number | null> {
  const kind = optional(z.number().int().min(minMs).max(MAX_TIMER_MS), (key, raw) =>
    asDuration(key, raw, { minMs, maxMs: MAX_TIMER_MS }),
  );
  return { ...kind, render: (value) => (value === null ? undefined : formatDuration(value)) };
}

export const share: Kind<number> = parsed(z.number().gt(0).max(1), asShare);

export const boolean: Kind<boolean> = parsed(z.boolean(), asBoolean);

export function oneOf<T extends string>(allowed: readonly [T, ...T[]], what: string): Kind<T> {
  return parsed(z.enum(allowed), (key, raw) => asEnum(key, raw, allowed, what));
}

/** Text matching `pattern`; `what` names it in the message (`a queue name`), `complaint` says what is wrong and the fix. */
export function matching(what: string, pattern: RegExp, complaint: string): Kind<string> {
  return parsed(z.string().regex(pattern), (key, raw) => {
    const text = asText(key, raw, what).trim();
    if (!pattern.test(text)) throw new ConfigError(key, `${raw.origin}: ${quoteValue(text)} ${complaint}`);
    return text;
  });
}

/** An http(s) base URL; the default is the example the messages give. */
export const httpUrl: Kind<string> = parsed(z.string().regex(/^https?:\/\/[^\s]+$/), (key, raw, spec) =>
  asHttpUrl(key, raw, spec.defaultText),
);

/** A URL path such as /v2/logs; the default is the example the messages give. */
export const urlPath: Kind<string> = parsed(z.string().regex(/^\/[^\s?#]*$/), (key, raw, spec) =>
  asUrlPath(key, raw, spec.defaultText),
);

/** A URL the service will call (query allowed, no fragment); null when not given. */
export const targetUrl: Kind<string | null> = optional(z.string().regex(/^https?:\/\/[^\s#]+$/), (key, raw) =>
  asTargetUrl(key, raw, 'https://exporter.example.com/probe/receive'),
);

export const listenAddress: Kind<ListenAddress> = parsed(
  z.strictObject({ host: z.string(), port: z.number().int().min(0).max(65_535) }),
  asListenAddress,
  ({ host, port }) => `${hostForUrl(host)}:${port}`,
);

/** A list setting, each item checked by `item`, duplicates dropped; empty when not given. */
export function list<T extends string>(
  what: string,
  check: z.ZodType<T>,
  item: (key: string, text: string, raw: RawValue) => T,
): Kind<T[]> {
  return {
    read: (spec, sources) => {
      const raw = sources.get(spec.key);
      return raw === undefined ? [] : asUniqueList(spec.key, raw, what, (text) => item(spec.key, text, raw));
    },
    check: z.array(check),
    render: same,
  };
}

export function enumList<T extends string>(allowed: readonly [T, ...T[]], what: string, itemName: string): Kind<T[]> {
  return list(what, z.enum(allowed), (key, text, raw) => enumItem(key, text, raw.origin, allowed, itemName));
}

/**
 * A secret, given directly or as a file (read-secrets.ts); `what` names it in messages, and a
 * `masked` one prints as *** .
 */
export function secret(what: string, { masked }: { masked: boolean }): Kind<string | null> {
  return {
    read: (spec, sources) => readSecret(sources, spec.key, what),
    check: z.string().min(1).nullable(),
    render: (value) => (value === null ? undefined : masked ? MASK : value),
  };
}

/** The YAML file named by --config / CONFIG_FILE, as an absolute path; null when none. */
export const configFile: Kind<string | null> = {
  read: (spec, sources) => {
    const raw = sources.get(spec.key);
    if (raw === undefined) return null;
    const path = asText(spec.key, raw, 'a file path').trim();
    if (path === '') throw new ConfigError(spec.key, `${raw.origin} is empty; give the YAML file path or unset it`);
    return resolve(path);
  },
  check: z.string().nullable(),
  render: () => undefined,
};

/**
 * The checkpoint file: a path whose directory exists (relative to the YAML file's directory when
 * given there), or `none` for no state file (null).
 */
export const stateFile: Kind<string | null> = parsed(
  z.string().nullable(),
  (key, raw) => {
    const text = asText(key, raw, 'a file path or none').trim();
    if (text === '')
      throw new ConfigError(key, `${raw.origin} is empty; give a file path, or none to disable the state file`);
    if (text.toLowerCase() === 'none') return null;
    const path = resolvePath(raw, text);
    const directory = dirname(path);
    let isDirectory = false;
    try {
      isDirectory = statSync(directory).isDirectory();
    } catch {
      // Reported below.
    }
    if (!isDirectory) {
      throw new ConfigError(
        key,
        `${raw.origin}: the directory ${directory} does not exist; create it, choose another path, or write none to disable the state file`,
      );
    }
    return path;
  },
  (value) => value ?? 'none',
);

/** A readable file (relative to the YAML file's directory when given there); null when not given. */
export const webConfigFile: Kind<string | null> = optional(z.string(), (key, raw) => {
  const text = asText(key, raw, 'a file path').trim();
  if (text === '') throw new ConfigError(key, `${raw.origin} is empty; give the web-config file path or unset it`);
  const path = resolvePath(raw, text);
  try {
    accessSync(path, constants.R_OK);
    if (!statSync(path).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(key, `${raw.origin}: cannot read ${path} (${reason}); check the path or unset it`);
  }
  return path;
});

/**
 * An egress proxy URL (http.proxy_url): http(s)://[user:password@]host[:port], or host:port;
 * kept as written, printed with its password as ***; null when not given.
 */
export const proxyUrl: Kind<string | null> = {
  ...optional(z.string().min(1), (key, raw) => {
    const text = asText(key, raw, 'a proxy URL').trim();
    try {
      parseProxyUrl(text);
    } catch (error) {
      // The value is not shown: it may hold the proxy's password.
      throw new ConfigError(key, `${raw.origin} ${(error as Error).message} (value not shown)`);
    }
    return text;
  }),
  render: (value) => (value === null ? undefined : redactProxyUrl(parseProxyUrl(value))),
};

/** The PEM blocks of a file's text that hold a certificate X509Certificate can read. */
function certificateCount(pem: string): number {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  let count = 0;
  for (const block of blocks) {
    try {
      new X509Certificate(block);
      count++;
    } catch {
      // Not counted: a broken block is reported with the file if none is left.
    }
  }
  return count;
}

/**
 * A readable PEM bundle of CA certificates (relative to the YAML file's directory when given
 * there), read once here: the clients trust the text checked at start, not a second reading of
 * a file that may have changed since. null when not given; rendered as its path.
 */
export const pemFile: Kind<PemBundle | null> = {
  ...optional(z.strictObject({ path: z.string(), pem: z.string() }), (key, raw) => {
    const text = asText(key, raw, 'a file path').trim();
    if (text === '') throw new ConfigError(key, `${raw.origin} is empty; give the CA bundle's path or unset it`);
    const path = resolvePath(raw, text);
    let pem: string;
    try {
      if (!statSync(path).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
      pem = readFileSync(path, 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(
        key,
        `${raw.origin}: cannot read ${path} (${reason}); check the path and that the exporter may read it`,
      );
    }
    if (certificateCount(pem) === 0) {
      throw new ConfigError(
        key,
        `${raw.origin}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA's certificate in PEM`,
      );
    }
    return { path, pem };
  }),
  render: (value) => value?.path,
};
