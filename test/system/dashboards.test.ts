// Dashboards as code and the shipped PromQL: the committed JSON is what the code generates, every
// panel reads the datasource variable, every expression (dashboards and rules) parses, and every
// metric they name is documented in docs/metrics.md (or is a recording rule, `up`, or one of
// prom-client's default process metrics, which docs/metrics.md says are served too).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import type { Panel } from '@grafana/grafana-foundation-sdk/dashboard';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { buildDashboards, renderDashboard } from '../../dashboards/src/index.js';
import {
  allExpressions,
  allPanels,
  allValues,
  interpolateGrafanaVariables,
  panelTargets,
  shippedRuleGroups,
} from '../../dashboards/src/expressions.js';
import { metricNames } from '../../dashboards/src/promql.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const DASHBOARDS_DIR = join(ROOT, 'dashboards');
const DATASOURCE_UID = '${datasource}';

const dashboards = buildDashboards();

// ---------------------------------------------------------------------------------------------
// PromQL helpers on the lezer syntax tree.
// ---------------------------------------------------------------------------------------------

/** The text of every syntax error node, empty when the expression parses. */
function syntaxErrors(expr: string): string[] {
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(Math.max(0, node.from - 10), node.to + 10)}"`);
    },
  });
  return errors;
}

// ---------------------------------------------------------------------------------------------
// The metric catalogue.
// ---------------------------------------------------------------------------------------------

/** Series names documented in docs/metrics.md: first cell of each table row, with histogram series. */
function documentedSeries(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'metrics.md'), 'utf8');
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const row = /^\|\s*`([a-z_:][a-z0-9_:]*)(?:\{[^`]*\})?`\s*\|\s*([^|]*)\|/.exec(line);
    if (row === null) continue;
    const [, name = '', type = ''] = row;
    names.add(name);
    if (type.trim().startsWith('histogram'))
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

/** Series names of prom-client's default metrics (what `process_*`, `nodejs_*` stands for). */
function defaultProcessSeries(): Set<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    names.add(metric.name);
    for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
  }
  registry.clear();
  return names;
}

/**
 * Recording rules no shipped expression reads any more: the Deliveries dashboard computes its
 * per-destination, per-queue and per-URL-group ratios from the per-route rates so that every filter
 * applies (issue 40, item 6); only upstash_qstash_destination:delivery_failure_ratio:rate5m is
 * still read, by its alert. To be dropped from deploy/rules/upstash-exporter.rules.yml by the
 * rules' owner (issue 40, item 7); then this list empties.
 */
const UNREAD_RECORDS_TO_DROP = new Set(
  ['destination', 'queue', 'url_group'].flatMap((level) =>
    ['delivery_failure_ratio', 'delivery_error_ratio'].flatMap((ratio) =>
      ['rate5m', 'rate1h']
        .map((window) => `upstash_qstash_${level}:${ratio}:${window}`)
        .filter((name) => name !== 'upstash_qstash_destination:delivery_failure_ratio:rate5m'),
    ),
  ),
);

const recordedNames = new Set(
  shippedRuleGroups().flatMap((group) =>
    group.rules.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])),
  ),
);

describe('the metric catalogue parsed from docs/metrics.md', () => {
  it('holds every family of the tables, with histogram series', () => {
    const documented = documentedSeries();
    expect(documented.size).toBeGreaterThan(90);
    expect(documented).toContain('upstash_qstash_message_events_total');
    expect(documented).toContain('upstash_qstash_account_info');
    expect(documented).toContain('upstash_qstash_message_duration_seconds_bucket');
    expect(documented).toContain('upstash_exporter_api_request_duration_seconds_count');
    expect(documented).not.toContain('upstash_qstash_daily_messages_bucket');
  });

  it('says the process defaults are served, which the test relies on for process_* and nodejs_*', () => {
    expect(readFileSync(join(ROOT, 'docs', 'metrics.md'), 'utf8')).toMatch(/`process_\*`, `nodejs_\*`/);
  });
});

describe('PromQL helpers', () => {
  it('flag a broken expression and name the metrics of a valid one', () => {
    expect(syntaxErrors('sum(rate(x[5m])')).not.toEqual([]);
    expect(syntaxErrors('sum(rate(x[$__rate_interval]))')).not.toEqual([]);
    expect(metricNames('a / on (i) group_left (n) b:c:d{x="1"} + rate(e_total[5m]) > 0 unless vector(1)')).toEqual([
      'a',
      'b:c:d',
      'e_total',
    ]);
  });

  it('replace Grafana variables and refuse unknown ones', () => {
    expect(
      interpolateGrafanaVariables('rate(x{job=~"$job",q=~"${q:regex}"}[$__rate_interval])', { job: '.+', q: '.*' }),
    ).toBe('rate(x{job=~".+",q=~".*"}[5m])');
    expect(() => interpolateGrafanaVariables('x{a="$nope"}', {})).toThrow(/\$nope/);
  });
});

// ---------------------------------------------------------------------------------------------
// Dashboards.
// ---------------------------------------------------------------------------------------------

describe('dashboards', () => {
  it('are the ten with stable uids, one file each', () => {
    expect(dashboards.map((d) => d.dashboard.uid)).toEqual([
      'upstash-overview',
      'upstash-qstash-deliveries',
      'upstash-qstash-schedules',
      'upstash-qstash-queues',
      'upstash-plan-quotas',
      'upstash-indexes',
      'upstash-redis',
      'upstash-exporter-health',
      'upstash-workflows',
      'upstash-slos',
    ]);
    for (const { file, dashboard } of dashboards) expect(file).toBe(`${dashboard.uid}.json`);
  });

  it('are committed exactly as the code generates them (run `npm run dashboards`)', () => {
    for (const { file, dashboard } of dashboards) {
      const committed = readFileSync(join(DASHBOARDS_DIR, file), 'utf8');
      expect(committed, file).toBe(renderDashboard(dashboard));
    }
    const jsonFiles = readdirSync(DASHBOARDS_DIR).filter((name) => name.endsWith('.json'));
    expect(jsonFiles.sort()).toEqual(dashboards.map((d) => d.file).sort());
  });

  it('render with sorted keys, two-space indent and a trailing newline', () => {
    const text = renderDashboard(dashboards[0]!.dashboard);
    expect(text.endsWith('}\n')).toBe(true);
    const keys = Object.keys(JSON.parse(text) as object);
    expect(keys).toEqual([...keys].sort());
    expect(text.split('\n')[1]).toMatch(/^ {2}"/);
  });

  for (const { dashboard } of dashboards) {
    describe(dashboard.uid ?? '', () => {
      const panels = allPanels(dashboard);

      it('has a prometheus `datasource` variable that every panel, target and query variable uses', () => {
        const variables = dashboard.templating.list ?? [];
        const datasourceVariable = variables.find((v) => v.name === 'datasource');
        expect(datasourceVariable).toMatchObject({ type: 'datasource', query: 'prometheus' });
        for (const variable of variables.filter((v) => v.type === ('query' as typeof v.type))) {
          expect(variable.datasource, variable.name).toEqual({ type: 'prometheus', uid: DATASOURCE_UID });
        }
        for (const panel of panels) {
          expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: DATASOURCE_UID });
          for (const target of panel.type === 'row' ? [] : ((panel as Panel).targets ?? [])) {
            expect((target as { datasource?: unknown }).datasource, panel.title).toEqual({
              type: 'prometheus',
              uid: DATASOURCE_UID,
            });
          }
        }
      });

      it('gives every panel a unique id, a title, a description and at least one query', () => {
        const ids = panels.map((p) => p.id);
        expect(new Set(ids).size).toBe(panels.length);
        for (const panel of panels) {
          expect(panel.title, `panel ${panel.id ?? ''}`).toBeTruthy();
          if (panel.type === 'row') continue;
          expect((panel as Panel).description, panel.title).toBeTruthy();
          expect(panelTargets(panel).length, panel.title).toBeGreaterThan(0);
        }
      });

      it('lays panels out on the 24-column grid without overlaps', () => {
        const boxes = panels.map((p) => ({ title: p.title ?? '', ...p.gridPos! }));
        for (const box of boxes) expect(box.x + box.w, box.title).toBeLessThanOrEqual(24);
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i]!, boxes[j]!];
            const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
            expect(overlap, `${a.title} / ${b.title}`).toBe(false);
          }
        }
      });

      it('shows timestamps (x1000) as dateTimeFromNow, ratios as percentunit and burn rates as multiples', () => {
        for (const panel of panels) {
          for (const { refId, expr } of panelTargets(panel)) {
            const unit = targetUnit(panel, refId);
            if (/_timestamp_seconds\b/.test(expr) && /\* 1000$/.test(expr))
              expect(unit, `${panel.title} ${refId}`).toBe('dateTimeFromNow');
            // A burn rate is an error ratio in units of the error budget: 14.4x, not 1440%.
            if (/burn_rate:ratio\b|group_left \(\) slo:error_budget:ratio/.test(expr))
              expect(unit, `${panel.title} ${refId}`).toBe('suffix:x');
            else if (/_ratio:|:ratio\b/.test(expr)) expect(unit, `${panel.title} ${refId}`).toBe('percentunit');
          }
        }
      });

      it('uses only variables it defines', () => {
        const values = allValues(dashboard);
        for (const panel of panels) {
          for (const { expr } of panelTargets(panel))
            expect(() => interpolateGrafanaVariables(expr, values)).not.toThrow();
        }
      });
    });
  }
});

/**
 * The unit a target's values are shown with: an override on its refId, or on the table column it
 * becomes (`Value #<refId>` renamed by the organize transformation), else the panel's unit.
 */
function targetUnit(panel: Panel, refId: string): string | undefined {
  const overrides = panel.fieldConfig?.overrides ?? [];
  const unitOf = (matcherId: string, option: string): string | undefined =>
    overrides
      .filter((o) => o.matcher.id === matcherId && o.matcher.options === option)
      .flatMap((o) => o.properties)
      .find((p) => p.id === 'unit')?.value as string | undefined;
  const organize = (panel.transformations ?? []).find((t) => t.id === 'organize');
  const renamed = (organize?.options as { renameByName?: Record<string, string> } | undefined)?.renameByName?.[
    `Value #${refId}`
  ];
  return (
    unitOf('byFrameRefID', refId) ??
    (renamed === undefined ? undefined : unitOf('byName', renamed)) ??
    panel.fieldConfig?.defaults.unit
  );
}

// ---------------------------------------------------------------------------------------------
// Every shipped expression: dashboards and rules.
// ---------------------------------------------------------------------------------------------

describe('shipped PromQL (dashboards and rules)', () => {
  const expressions = allExpressions();
  const known = new Set([...documentedSeries(), ...defaultProcessSeries(), ...recordedNames, 'up']);

  it('covers every dashboard target and every rule', () => {
    const targets = dashboards.reduce(
      (n, d) => n + allPanels(d.dashboard).reduce((m, p) => m + panelTargets(p).length, 0),
      0,
    );
    const rules = shippedRuleGroups().reduce((n, g) => n + g.rules.length, 0);
    expect(expressions.filter((e) => e.origin === 'dashboard')).toHaveLength(targets);
    expect(expressions.filter((e) => e.origin === 'rule')).toHaveLength(rules);
    for (const e of expressions) expect(e.query, e.where).not.toMatch(/\$/);
  });

  it('parse without syntax errors', () => {
    const broken = expressions
      .map((e) => ({ where: e.where, errors: syntaxErrors(e.query) }))
      .filter((e) => e.errors.length > 0);
    expect(broken).toEqual([]);
  });

  it('name only documented metrics, recording rules, `up` and process defaults', () => {
    const unknown = expressions.flatMap((e) =>
      metricNames(e.query)
        .filter((name) => !known.has(name))
        .map((name) => `${e.where}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('read every recording rule somewhere (a dashboard, an alert or another rule)', () => {
    const used = new Set(expressions.flatMap((e) => metricNames(e.query)));
    const unread = [...recordedNames].filter((name) => !used.has(name));
    expect(unread.filter((name) => !UNREAD_RECORDS_TO_DROP.has(name))).toEqual([]);
    // The list goes stale once the rules drop them (or something reads them again).
    expect([...UNREAD_RECORDS_TO_DROP].filter((name) => !unread.includes(name))).toEqual([]);
  });
});

describe('the QStash region variable', () => {
  it('is on every dashboard, and every query of a QStash family filters by it', () => {
    for (const { dashboard } of dashboards) {
      const variables = (dashboard.templating?.list ?? []).map((variable) => variable.name);
      expect(variables, dashboard.uid).toContain('qstash_region');
      for (const panel of allPanels(dashboard))
        for (const target of panelTargets(panel))
          for (const selector of target.expr.matchAll(/\b(upstash_(?:qstash|workflow)[a-z_]*)\{([^}]*)\}/g))
            expect(selector[2], `${dashboard.uid} ${panel.title ?? ''}: ${selector[1]}`).toContain(
              'qstash_region=~"$qstash_region"',
            );
    }
  });

  it('does not filter series that have no region (Redis, the process, the scrape, the series cap)', () => {
    // With one region chosen, a region matcher on these would empty their panels.
    const regionless =
      /\b(upstash_redis_[a-z_]*|process_[a-z_]*|nodejs_[a-z_0-9]*|up|upstash_exporter_build_info|upstash_exporter_series_dropped_total)\{([^}]*)\}/g;
    for (const { dashboard } of dashboards)
      for (const panel of allPanels(dashboard))
        for (const target of panelTargets(panel))
          for (const selector of target.expr.matchAll(regionless))
            expect(selector[2], `${dashboard.uid} ${panel.title ?? ''}: ${selector[1]}`).not.toContain('qstash_region');
  });

  it('is kept by every match or aggregation by instance of a query over QStash series (two regions stay two)', () => {
    // An on (job, instance) over series of two regions mixes them or, with group_left, fails
    // with many-to-many matching (the quotas dashboard's join of upstash_qstash_account_info did).
    for (const { dashboard } of dashboards)
      for (const panel of allPanels(dashboard))
        for (const target of panelTargets(panel)) {
          if (!target.expr.includes('qstash_region=~"$qstash_region"')) continue;
          for (const [clause, labels] of target.expr.matchAll(/\b(?:on|by|ignoring|without)\s*\(([^)]*)\)/g))
            if (/\binstance\b/.test(labels ?? ''))
              expect(labels, `${dashboard.uid} ${panel.title ?? ''}: ${clause}`).toContain('qstash_region');
        }
  });
});
