// The monitoring mixin (mixin/) reads the shipped rules and dashboards as JSON, which jsonnet
// imports natively (Debian's jsonnet 0.18 has no working std.parseYaml): mixin/generated/ holds
// the rules files converted to JSON and every dashboard, so the mixin stays self-contained when
// jsonnet-bundler vendors the mixin/ folder alone. Written by `npm run deploy:generate`; a test
// fails while they differ from the shipped files.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { RULES_FILES } from './prometheus-rule.js';

const ROOT = new URL('../../../', import.meta.url);
const DASHBOARDS_DIR = fileURLToPath(new URL('dashboards/', ROOT));
/** Where the JSON forms are committed. */
export const MIXIN_GENERATED_DIR = fileURLToPath(new URL('mixin/generated/', ROOT));

export interface GeneratedFile {
  /** File name under mixin/generated/. */
  name: string;
  text: string;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** mixin/generated/<rules file>.json for each rules file, and dashboards.json ({ "<uid>.json": dashboard }). */
export function renderMixinFiles(): GeneratedFile[] {
  const rules = RULES_FILES.map((file) => ({
    name: `${basename(file, '.yml')}.json`,
    text: json(parse(readFileSync(file, 'utf8'))),
  }));
  const dashboards: Record<string, unknown> = {};
  for (const name of readdirSync(DASHBOARDS_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()) {
    dashboards[name] = JSON.parse(readFileSync(join(DASHBOARDS_DIR, name), 'utf8'));
  }
  return [...rules, { name: 'dashboards.json', text: json(dashboards) }];
}
