// The shipped Prometheus rules files, read by the dashboards at generation: a panel's thresholds
// are the comparison constants of the alerts it shows (alertThreshold), so the two cannot drift.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { z } from 'zod';

/** The rules file, found from this module (same depth in dashboards/src and in its build output). */
export const RULES_FILE = fileURLToPath(new URL('../../deploy/rules/upstash-exporter.rules.yml', import.meta.url));
/** The SLO rules, generated from deploy/slo/upstash-slos.yaml (`upstash-exporter slo`). */
export const SLO_RULES_FILE = fileURLToPath(new URL('../../deploy/rules/upstash-slos.rules.yml', import.meta.url));
/** The rules of the Redis databases (collector redis). */
export const REDIS_RULES_FILE = fileURLToPath(new URL('../../deploy/rules/upstash-redis.rules.yml', import.meta.url));
/**
 * Every rules file shipped in deploy/rules (each `*.rules.yml` there: a product's rules file is
 * found by being there), the exporter's own first, then by name, as the PrometheusRule holds them.
 */
export const SHIPPED_RULE_FILES: readonly string[] = (() => {
  const dir = dirname(RULES_FILE);
  const names = readdirSync(dir).filter((name) => name.endsWith('.rules.yml'));
  const own = basename(RULES_FILE);
  return [own, ...names.filter((name) => name !== own).sort()].map((name) => join(dir, name));
})();

const RuleSchema = z.object({
  record: z.string().optional(),
  alert: z.string().optional(),
  expr: z.string(),
  for: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
const RulesFileSchema = z.object({
  groups: z.array(z.object({ name: z.string(), rules: z.array(RuleSchema) })),
});

export type Rule = z.infer<typeof RuleSchema>;
export type RuleGroup = z.infer<typeof RulesFileSchema>['groups'][number];

/** The rule groups of a Prometheus rules file (default: the shipped one). */
export function loadRuleGroups(file: string = RULES_FILE): RuleGroup[] {
  return RulesFileSchema.parse(parse(readFileSync(file, 'utf8'))).groups;
}

/** The groups of every shipped rules file. */
export function shippedRuleGroups(): RuleGroup[] {
  return SHIPPED_RULE_FILES.flatMap((file) => loadRuleGroups(file));
}

/** The shipped alerting rules by name, read once: dashboards ask for many of them. */
let alertsByName: Map<string, Rule> | undefined;

/** The alerting rule of that name in the shipped rules files; throws when there is none. */
export function shippedAlert(name: string): Rule {
  alertsByName ??= new Map(
    shippedRuleGroups()
      .flatMap((group) => group.rules)
      .flatMap((rule) => (rule.alert === undefined ? [] : [[rule.alert, rule] as const])),
  );
  const found = alertsByName.get(name);
  if (found === undefined) throw new Error(`no shipped alert ${name} in deploy/rules`);
  return found;
}

/** A node of lezer-promql's syntax tree. */
type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export type Comparison = '>' | '>=' | '<' | '<=' | '==' | '!=';

export interface AlertThreshold {
  alert: string;
  comparison: Comparison;
  value: number;
  /** The expression compared with the constant, as written in the rule. */
  compared: string;
}

const COMPARISONS: Record<string, Comparison> = {
  Gtr: '>',
  Gte: '>=',
  Lss: '<',
  Lte: '<=',
  EqlSingle: '==',
  Neq: '!=',
};
const SET_OPERATORS = new Set(['And', 'Or', 'Unless']);

/**
 * The constant an alert compares its value with: the comparison `<expr> <op> <number>` at the top
 * of its expression, or the left operand of a top-level `and`/`or`/`unless` (a minimum volume or a
 * guard after it). `upstash_qstash_destination:delivery_failure_ratio:rate5m > 0.1 and ... >= 10`
 * gives 0.1. Throws when the expression has no such comparison, so a reworded rule fails the
 * generation instead of a panel silently losing its threshold.
 */
export function alertThreshold(name: string, expr: string = shippedAlert(name).expr): AlertThreshold {
  const tree = parser.parse(expr);
  let node: SyntaxNode | null = tree.topNode.firstChild;
  while (node !== null) {
    while (node.name === 'ParenExpr' && node.firstChild !== null) node = node.firstChild;
    if (node.name !== 'BinaryExpr') break;
    const operator = binaryOperator(node);
    if (operator !== null && SET_OPERATORS.has(operator.name)) {
      node = node.firstChild;
      continue;
    }
    const comparison = operator === null ? undefined : COMPARISONS[operator.name];
    const right = node.lastChild;
    if (comparison !== undefined && right !== null && right.name === 'NumberDurationLiteral') {
      const left = node.firstChild!;
      return {
        alert: name,
        comparison,
        value: Number(expr.slice(right.from, right.to)),
        compared: expr.slice(left.from, left.to).trim(),
      };
    }
    break;
  }
  throw new Error(`alert ${name}: no top-level comparison with a number in: ${expr}`);
}

/** The operator token of a binary expression (Gtr, And, Div, ...). */
function binaryOperator(node: SyntaxNode): SyntaxNode | null {
  for (let child = node.firstChild?.nextSibling ?? null; child !== null; child = child.nextSibling) {
    if (child.name !== 'MatchingModifierClause' && child.name !== 'BoolModifier') return child;
  }
  return null;
}

/** The burn-rate factors of the SLO alerts (`(<factor> * slo:error_budget:ratio{...})`) by severity. */
export interface BurnFactors {
  /** Factors of the critical (page) alerts, ascending: 6 and 14.4 by default. */
  page: number[];
  /** Factors of the warning (ticket) alerts, ascending: 1 and 3 by default. */
  ticket: number[];
}

/**
 * Reads the burn-rate factors every SLO alert of the SLO rules compares with, so the SLO
 * dashboard's colours follow the rules (`upstash-exporter slo` and the mixin's sloBurnRates).
 * Throws when an SLO alert has none or the pages and tickets disagree between SLOs.
 */
export function sloBurnFactors(file: string = SLO_RULES_FILE): BurnFactors {
  const bySeverity = new Map<string, string>();
  for (const rule of loadRuleGroups(file).flatMap((group) => group.rules)) {
    if (rule.alert === undefined) continue;
    const factors = [...rule.expr.matchAll(/\(\s*([0-9.]+)\s*\*\s*slo:error_budget:ratio\b/g)].map((m) => Number(m[1]));
    if (factors.length === 0) throw new Error(`SLO alert ${rule.alert}: no burn-rate factor in its expression`);
    const severity = rule.labels?.severity === 'critical' ? 'page' : 'ticket';
    const distinct = JSON.stringify([...new Set(factors)].sort((a, b) => a - b));
    const seen = bySeverity.get(severity);
    if (seen !== undefined && seen !== distinct)
      throw new Error(`SLO alert ${rule.alert}: ${severity} factors ${distinct}, another SLO's are ${seen}`);
    bySeverity.set(severity, distinct);
  }
  const parse = (severity: string): number[] => JSON.parse(bySeverity.get(severity) ?? '[]') as number[];
  return { page: parse('page'), ticket: parse('ticket') };
}

/**
 * The one shipped recording rule named `<level>:<metric>:<operations>` with the given
 * `:<metric>:<operations>` ending, e.g. ':message_events:rate5m'. A panel that reads a record by
 * its metric and operations keeps working when the rules rename its level.
 */
export function shippedRecord(ending: string): string {
  const names = new Set(
    shippedRuleGroups()
      .flatMap((group) => group.rules)
      .flatMap((rule) => (rule.record?.endsWith(ending) === true ? [rule.record] : [])),
  );
  if (names.size !== 1)
    throw new Error(`expected one recording rule ending in ${ending}, found: ${[...names].join(', ')}`);
  return [...names][0]!;
}
