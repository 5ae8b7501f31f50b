// Every PromQL expression the project ships, from the dashboards and from the rules file, both as
// written and ready to send to Prometheus. Tests parse them; an end-to-end test can evaluate each
// against a real Prometheus scraping the demo (`allExpressions()` then /api/v1/query?query=...).
import type { Dashboard, Panel, RowPanel } from '@grafana/grafana-foundation-sdk/dashboard';
import { VariableType } from '@grafana/grafana-foundation-sdk/dashboard';
import { buildDashboards } from './index.js';
import { RULES_FILE, SHIPPED_RULE_FILES, loadRuleGroups } from './rules.js';

export {
  RULES_FILE,
  SLO_RULES_FILE,
  REDIS_RULES_FILE,
  SHIPPED_RULE_FILES,
  loadRuleGroups,
  shippedRuleGroups,
} from './rules.js';
export type { Rule, RuleGroup } from './rules.js';

export interface ShippedExpression {
  origin: 'dashboard' | 'rule';
  /** `<dashboard uid> / <panel title> / <refId>`, or `<group> / <record or alert name>`. */
  where: string;
  /** As written; dashboard expressions still hold Grafana variables ($job, $__rate_interval...). */
  expr: string;
  /** Plain PromQL for /api/v1/query: variables replaced by their "All" value and the intervals. */
  query: string;
}

export interface IntervalOptions {
  /** Stands for $__rate_interval (Grafana: four scrape intervals at least). Default 5m. */
  rateInterval?: string;
  /** Stands for $__interval. Default 1m. */
  interval?: string;
  /** Stands for $__range. Default 1h. */
  range?: string;
}

/**
 * Replaces Grafana's variable references ($name, ${name}, ${name:format}, [[name]]) in `expr` by
 * `values[name]` or the built-in intervals. An unknown variable throws: it would be sent to
 * Prometheus verbatim and fail there.
 */
export function interpolateGrafanaVariables(
  expr: string,
  values: Record<string, string>,
  options: IntervalOptions = {},
): string {
  const builtins: Record<string, string> = {
    __rate_interval: options.rateInterval ?? '5m',
    __interval: options.interval ?? '1m',
    __range: options.range ?? '1h',
  };
  return expr.replace(
    /\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g,
    (match, braced?: string, bare?: string, bracketed?: string) => {
      const name = braced ?? bare ?? bracketed ?? '';
      const value = builtins[name] ?? values[name];
      if (value === undefined) throw new Error(`unknown Grafana variable ${match} in: ${expr}`);
      return value;
    },
  );
}

/** The value each query variable of a dashboard takes when "All" is selected. */
export function allValues(dashboard: Dashboard): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of dashboard.templating.list ?? []) {
    if (variable.type === VariableType.Query) values[variable.name] = variable.allValue ?? '.*';
  }
  return values;
}

/** Every panel of a dashboard, the panels of collapsed rows included. */
export function allPanels(dashboard: Dashboard): (Panel | RowPanel)[] {
  const panels: (Panel | RowPanel)[] = [];
  for (const panel of dashboard.panels ?? []) {
    panels.push(panel);
    if (panel.type === 'row') panels.push(...(panel as RowPanel).panels);
  }
  return panels;
}

/** The Prometheus targets of a panel: refId and expression. */
export function panelTargets(panel: Panel | RowPanel): { refId: string; expr: string }[] {
  if (panel.type === 'row') return [];
  return ((panel as Panel).targets ?? []).map((target) => {
    const { refId, expr } = target as { refId?: unknown; expr?: unknown };
    if (typeof expr !== 'string') throw new Error(`panel "${panel.title ?? ''}" has a target without a PromQL expr`);
    return { refId: typeof refId === 'string' ? refId : '', expr };
  });
}

export function dashboardExpressions(options: IntervalOptions = {}): ShippedExpression[] {
  return buildDashboards().flatMap(({ dashboard }) => {
    const values = allValues(dashboard);
    return allPanels(dashboard).flatMap((panel) =>
      panelTargets(panel).map(({ refId, expr }) => ({
        origin: 'dashboard' as const,
        where: `${dashboard.uid ?? ''} / ${panel.title ?? ''} / ${refId}`,
        expr,
        query: interpolateGrafanaVariables(expr, values, options),
      })),
    );
  });
}

export function ruleExpressions(file: string = RULES_FILE): ShippedExpression[] {
  return loadRuleGroups(file).flatMap((group) =>
    group.rules.map((rule) => ({
      origin: 'rule' as const,
      where: `${group.name} / ${rule.record ?? rule.alert ?? ''}`,
      expr: rule.expr,
      query: rule.expr,
    })),
  );
}

/** Dashboards first, then rules; `query` of each is ready for Prometheus. */
export function allExpressions(options: IntervalOptions = {}): ShippedExpression[] {
  return [...dashboardExpressions(options), ...SHIPPED_RULE_FILES.flatMap((file) => ruleExpressions(file))];
}
