// Reads the three sources of configuration into raw values keyed by setting key, each value
// remembering where it came from so error messages can name the flag, variable or YAML key.

import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import YAML, { LineCounter } from 'yaml';
import { ConfigError, quoteValue } from './errors.js';
import { isRegionalRow, readRegionalEnv } from './read-regions-sources.js';
import type { Layer } from './precedence.js';
import { SETTINGS, YAML_SECTIONS, yamlKeys, type SettingSpec } from './settings.js';
import { didYouMean, flatKeysOfSection } from './suggest.js';

export type { Layer, RawValue, SourceKind } from './precedence.js';

const fileKey = (key: string): string => `${key}_file`;

// ---- flags ----------------------------------------------------------------------------------

interface FlagTarget {
  spec: SettingSpec;
  /** Setting key the value is stored under (`<key>_file` for the file variant of a secret). */
  key: string;
  negated: boolean;
}

function flagTable(): Map<string, FlagTarget> {
  const table = new Map<string, FlagTarget>();
  for (const spec of SETTINGS) {
    table.set(spec.flag, { spec, key: spec.key, negated: false });
    if (spec.secretFile === true) table.set(`${spec.flag}-file`, { spec, key: fileKey(spec.key), negated: false });
    if (spec.switch === true) table.set(`no-${spec.flag}`, { spec, key: spec.key, negated: true });
  }
  return table;
}

/** Every flag name the exporter accepts, without dashes (for help and suggestions). */
export function knownFlags(): string[] {
  return [...flagTable().keys()];
}

const SWITCH_VALUES: Record<string, string> = { true: 'true', false: 'false' };

/** Parses `--name value`, `--name=value` and switches; repeated flags that repeat accumulate. */
export function readFlags(argv: readonly string[]): Layer {
  const table = flagTable();
  const layer: Layer = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--') || arg === '--') {
      throw new ConfigError(
        'argv',
        `unexpected argument ${quoteValue(arg)}: options are written --name value; run upstash-exporter --help for the list`,
      );
    }
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals === -1 ? undefined : equals);
    const target = table.get(name);
    if (target === undefined) {
      const hint = didYouMean(name, knownFlags(), 'run upstash-exporter --help for the list');
      throw new ConfigError('argv', `unknown flag --${name}: ${hint.replace(/^did you mean /, 'did you mean --')}`);
    }
    const origin = `--${name}`;
    let value: string;
    if (target.spec.switch === true) {
      if (equals === -1) value = target.negated ? 'false' : 'true';
      else if (target.negated)
        throw new ConfigError(target.key, `${origin} takes no value: write ${origin} or --${target.spec.flag}=false`);
      else {
        const given = arg.slice(equals + 1).toLowerCase();
        const known = SWITCH_VALUES[given];
        if (known === undefined) {
          throw new ConfigError(
            target.key,
            `${origin}: ${quoteValue(arg.slice(equals + 1))} is not true or false; write ${origin} or --no-${target.spec.flag}`,
          );
        }
        value = known;
      }
    } else if (equals !== -1) {
      value = arg.slice(equals + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        throw new ConfigError(
          target.key,
          `${origin} needs a value: write ${origin} ${target.spec.valueHint || '<value>'}`,
        );
      }
      value = next;
      i++;
    }
    if (target.spec.repeatable === true) {
      const previous = layer.get(target.key)?.value;
      const list = Array.isArray(previous) ? (previous as string[]) : [];
      layer.set(target.key, { value: [...list, value], source: 'flag', origin });
    } else {
      // Like most CLIs, a repeated single-valued flag takes its last value.
      layer.set(target.key, { value, source: 'flag', origin });
    }
  }
  return layer;
}

// ---- environment ----------------------------------------------------------------------------

export function readEnv(env: NodeJS.ProcessEnv): Layer {
  const layer: Layer = new Map();
  for (const spec of SETTINGS) {
    if (isRegionalRow(spec)) {
      readRegionalEnv(spec, env, layer);
      continue;
    }
    const value = env[spec.env];
    if (value !== undefined) layer.set(spec.key, { value, source: 'env', origin: spec.env });
    if (spec.secretFile === true) {
      const path = env[`${spec.env}_FILE`];
      if (path !== undefined) layer.set(fileKey(spec.key), { value: path, source: 'env', origin: `${spec.env}_FILE` });
    }
  }
  return layer;
}

// ---- YAML file ------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads and checks the YAML file's structure: every key must be known (a typo gets a
 * suggestion), sections must be maps. Values are checked later, like flag and env values.
 * Library messages are reduced to their first line: the longer forms quote the file's text,
 * which may hold a secret.
 */
/** The parsed content of a YAML configuration file; throws ConfigError naming the file and the fault. */
function readYamlContent(path: string, origin: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(
      'config',
      `${origin}: cannot read the configuration file ${path} (${reason}); check the path and its permissions`,
    );
  }

  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter });
  const firstError = doc.errors[0];
  if (firstError !== undefined) {
    const { line, col } = lineCounter.linePos(firstError.pos[0]);
    const what = firstError.message.split('\n')[0]?.replace(/:$/, '') ?? firstError.code;
    throw new ConfigError('config', `${path}: invalid YAML at line ${line}, column ${col}: ${what}; fix the syntax`);
  }
  let content: unknown;
  try {
    content = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new ConfigError('config', `${path}: invalid YAML: an alias has no anchor or expands too far; fix the file`);
  }
  return content;
}

export function readYamlFile(path: string, origin: string): Layer {
  const content = readYamlContent(path, origin);
  if (content === null || content === undefined) return new Map();
  if (!isPlainObject(content)) {
    throw new ConfigError(
      'config',
      `${path}: the file must be a map of settings (key: value), not a ${Array.isArray(content) ? 'list' : typeof content}`,
    );
  }

  const known = new Set(yamlKeys());
  const sections = new Set<string>(YAML_SECTIONS);
  const candidates = [...known];
  const layer: Layer = new Map();
  const baseDir = dirname(path);

  const visit = (map: Record<string, unknown>, prefix: string): void => {
    for (const [name, value] of Object.entries(map)) {
      const key = prefix === '' ? name : `${prefix}.${name}`;
      if (name.includes('.')) {
        const [section = '', ...rest] = name.split('.');
        throw new ConfigError(
          key,
          `${path}: key ${name} is written with a dot; nest it instead: ${section}: on one line, then ${rest.join('.')}: indented below it`,
        );
      }
      if (known.has(key)) {
        layer.set(key, { value, source: 'yaml', origin: `${key} in ${path}`, baseDir });
      } else if (prefix === '' && sections.has(key)) {
        if (!isPlainObject(value)) {
          const example = candidates.find((c) => c.startsWith(`${key}.`))?.slice(key.length + 1) ?? 'name';
          throw new ConfigError(
            key,
            `${key} in ${path} must be a section: ${key}: on one line, then keys such as ${example}: indented below it`,
          );
        }
        visit(value, key);
      } else {
        const flat = prefix === '' && isPlainObject(value) ? flatKeysOfSection(key, Object.keys(value), known) : [];
        if (flat.length > 0) {
          throw new ConfigError(
            key,
            `${path}: unknown section ${key}; these settings are top-level keys: write ${flat.join(', ')} (not ${key}: with keys below it)`,
          );
        }
        const prefixed = candidates.filter((candidate) => candidate.startsWith(`${key}_`));
        const hint = didYouMean(
          key,
          candidates,
          prefixed.length > 0
            ? `the keys of that group are top-level: ${prefixed.join(', ')}`
            : 'see docs/configuration.md for the keys',
        );
        throw new ConfigError(key, `${path}: unknown key ${key}; ${hint}`);
      }
    }
  };
  visit(content, '');
  return layer;
}
