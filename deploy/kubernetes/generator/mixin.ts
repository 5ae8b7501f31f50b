// The monitoring mixin (mixin/) reads the shipped rules and dashboards as JSON, which jsonnet
// imports natively (Debian's jsonnet 0.18 has no working std.parseYaml): mixin/generated/ holds
// the rules files converted to JSON and every dashboard, so the mixin stays self-contained when
// jsonnet-bundler vendors the mixin/ folder alone. Written by `npm run deploy:generate`; a test
// fails while they differ from the shipped files. (Its one other file,
// dashboard-alert-thresholds.json, is written by `npm run dashboards`, which knows the panels.)
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

/** An alert's threshold: the literal it compares against, where it stands in the expression. */
export interface AlertThreshold {
  /** The comparison operator before the literal. */
  op: '>' | '>=' | '<' | '<=';
  value: number;
  /** The literal as written (the mixin replaces exactly these characters). */
  text: string;
  /** Offset of the literal in the expression. */
  index: number;
}

/**
 * The threshold of an alert expression: its first comparison against a non-zero literal that
 * ends a condition (followed by the end of a line or of the expression), as the rules state
 * them (`... > 0.1`). A `> 0` guard, a literal inside parentheses or one multiplied into the
 * other side (`> 0.8 * max(...)`) is not a threshold. Undefined when the alert has none.
 */
export function alertThreshold(expr: string): AlertThreshold | undefined {
  for (const match of expr.matchAll(/(>=|<=|>|<) (-?\d+(?:\.\d+)?)(?=\n|$)/g)) {
    const value = Number(match[2]);
    if (value === 0) continue;
    return { op: match[1] as AlertThreshold['op'], value, text: match[2]!, index: match.index + match[1]!.length + 1 };
  }
  return undefined;
}

interface RulesFile {
  groups: { rules: { alert?: string; expr: string; labels?: Record<string, string> }[] }[];
}

/**
 * { alertname: threshold } of every alert of the rules files that has one; not the SLO burn-rate
 * alerts (their objective and burn rates are settings of their own).
 */
export function alertThresholds(files: readonly string[] = RULES_FILES): Record<string, AlertThreshold> {
  const thresholds: Record<string, AlertThreshold> = {};
  for (const file of files)
    for (const group of (parse(readFileSync(file, 'utf8')) as RulesFile).groups)
      for (const rule of group.rules) {
        if (rule.alert === undefined || rule.labels?.sloth_severity !== undefined) continue;
        const threshold = alertThreshold(rule.expr);
        const known = thresholds[rule.alert];
        if (known !== undefined && (threshold === undefined || threshold.value !== known.value))
          throw new Error(`alert ${rule.alert}: its rules state different thresholds`);
        if (threshold !== undefined) thresholds[rule.alert] = threshold;
      }
  return thresholds;
}

/**
 * mixin/generated/rules.json (every rules file's groups, in order), alert-thresholds.json (the shipped
 * threshold of each alert, which the mixin's _config.alertThresholds replaces) and
 * dashboards.json ({ "<uid>.json": dashboard }).
 */
export function renderMixinFiles(): GeneratedFile[] {
  // One file for every rules file, in order: the mixin imports it whatever rules files there are.
  const files = RULES_FILES.map((file) => ({ file: basename(file), ...(parse(readFileSync(file, 'utf8')) as object) }));
  const rules = [
    { name: 'rules.json', text: json(files) },
    { name: 'alert-thresholds.json', text: json(alertThresholds()) },
  ];
  const dashboards: Record<string, unknown> = {};
  for (const name of readdirSync(DASHBOARDS_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()) {
    dashboards[name] = JSON.parse(readFileSync(join(DASHBOARDS_DIR, name), 'utf8'));
  }
  return [...rules, { name: 'dashboards.json', text: json(dashboards) }];
}
