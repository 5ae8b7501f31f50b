// The families the exporter serves, as the demo's /metrics shows them (every collector and both
// active checks on), against what the shipped dashboards and rules read:
// - every family is read by something shipped: a dashboard panel, an alerting or recording rule of
//   deploy/rules, or docs/metrics.md's list of families for ad-hoc queries; a new family fails
//   here until it is put on a panel, in a rule, or named in that list;
// - every variable of a dashboard filters every query it can: a query reading a family that has
//   the variable's label (directly, or through the recording rules it reads) uses the variable.
import { readFileSync } from 'node:fs';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboards } from '../../dashboards/src/index.js';
import { allExpressions, allPanels, panelTargets, shippedRuleGroups } from '../../dashboards/src/expressions.js';
import { matches, metricNames, vectorSelectors, type LabelMatcher } from '../../dashboards/src/promql.js';
import { parseExposition } from '../support/exporter-e2e-helpers.js';
import { documentedFamilyNames, sleep, startDemoProcess, type DemoProcess } from '../support/demo-helpers.js';

const METRICS_DOC = new URL('../../docs/metrics.md', import.meta.url);
/** The heading of docs/metrics.md's list of families no dashboard or rule reads. */
const AD_HOC_HEADING = '## Families for ad-hoc queries';
/** Time for the demo to serve samples of every documented family (as demo.test.ts expects). */
const FAMILIES_WITHIN_MS = 30_000;
/** Documented families the demo serves without samples (test/system/demo.test.ts says why). */
const WITHOUT_SAMPLES_ON_THE_DEMO = new Set(['upstash_exporter_series_dropped_total']);
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

/**
 * The names in the list items of the ad-hoc section of docs/metrics.md: every `code` span before
 * the item's colon, so one item can name several families. `prefix_*` names every family with
 * that prefix (prom-client's process defaults).
 */
function adHocFamilies(text: string = readFileSync(METRICS_DOC, 'utf8')): string[] {
  const start = text.indexOf(`\n${AD_HOC_HEADING}\n`);
  if (start < 0) return [];
  const rest = text.slice(start + AD_HOC_HEADING.length + 2);
  const section = rest.slice(0, rest.search(/\n## |$/));
  const items = section.split(/\n(?=- )/).filter((item) => item.startsWith('- '));
  return items.flatMap((item) => {
    const named = item.slice(0, item.search(/`:|$/) + 1);
    return [...named.matchAll(/`([a-z_:][a-z0-9_:]*\*?)`/g)].map((match) => match[1]!);
  });
}

/** Whether an ad-hoc list name (a family, or `prefix_*`) names `family`. */
function names(listed: string, family: string): boolean {
  return listed.endsWith('*') ? family.startsWith(listed.slice(0, -1)) : listed === family;
}

/** The family a series name belongs to, among `families` (histogram and summary series by suffix). */
function familyOf(series: string, families: Set<string>): string {
  if (families.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return families.has(base) ? base : series;
}

describe('the families the exporter serves, against the shipped dashboards and rules', () => {
  let demo: DemoProcess | undefined;
  /** Served families and the label names their samples carry (target labels added). */
  const labels = new Map<string, Set<string>>();
  let served = new Set<string>();
  /** Families some dashboard target or rule expression selects. */
  let read = new Set<string>();

  beforeAll(async () => {
    const startedAt = Date.now();
    demo = await startDemoProcess();
    const expected = documentedFamilyNames().filter((name) => !WITHOUT_SAMPLES_ON_THE_DEMO.has(name));
    const sampled = new Set<string>();
    for (;;) {
      for (const [name, family] of parseExposition(await (await fetch(demo.metricsUrl)).text())) {
        const names = labels.get(name) ?? new Set(TARGET_LABELS);
        for (const sample of family.samples) for (const label of Object.keys(sample.labels)) names.add(label);
        labels.set(name, names);
        if (family.samples.length > 0) sampled.add(name);
      }
      if (expected.every((name) => sampled.has(name))) break;
      if (Date.now() - startedAt > FAMILIES_WITHIN_MS) break;
      await sleep(1_000);
    }
    served = new Set(labels.keys());
    read = new Set(allExpressions().flatMap((e) => metricNames(e.query).map((name) => familyOf(name, served))));
  }, FAMILIES_WITHIN_MS + 20_000);

  afterAll(async () => {
    await demo?.stop('SIGKILL');
  });

  it('sees the whole catalogue on the demo', () => {
    const missing = documentedFamilyNames().filter((name) => !served.has(name));
    expect(missing, 'documented families the demo does not declare').toEqual([]);
    expect(served.size).toBeGreaterThan(100);
  });

  describe('families read by nothing shipped', () => {
    it('are none: each family is on a panel, in a rule, or named for ad-hoc queries in docs/metrics.md', () => {
      const adHoc = adHocFamilies();
      const unread = [...served]
        .filter((name) => !read.has(name) && !adHoc.some((listed) => names(listed, name)))
        .sort();
      expect(
        unread,
        `put them on a panel (dashboards/src), in a rule (deploy/rules), or name them under "${AD_HOC_HEADING}" in docs/metrics.md`,
      ).toEqual([]);
    });

    it('the ad-hoc list names only served families that nothing else reads', () => {
      const listed = adHocFamilies();
      expect(listed.length, `no list under "${AD_HOC_HEADING}" in docs/metrics.md`).toBeGreaterThan(0);
      expect(new Set(listed).size, 'named twice').toBe(listed.length);
      expect(
        listed.filter((name) => ![...served].some((family) => names(name, family))),
        'named but not served',
      ).toEqual([]);
      expect(
        listed.filter((name) => !name.endsWith('*') && read.has(name)),
        'named but read by a panel or rule: remove from the list',
      ).toEqual([]);
    });

    it('parses the ad-hoc list: several names per item, patterns, nothing after the colon', () => {
      const text = `# x\n\n${AD_HOC_HEADING}\n\nSome text \`not_this\`.\n\n- \`a_one\`: why, unlike \`not_that\`\n- \`b_two\`, \`b_three\`:\n  why\n- \`c_*\`: defaults\n\n## Next\n\n- \`not_next\`: no\n`;
      expect(adHocFamilies(text)).toEqual(['a_one', 'b_two', 'b_three', 'c_*']);
      expect(names('c_*', 'c_x')).toBe(true);
      expect(names('c_*', 'd_x')).toBe(false);
    });
  });

  describe('dashboard variables', () => {
    const recordingRules = shippedRuleGroups()
      .flatMap((group) => group.rules)
      .filter((rule) => rule.record !== undefined);

    /**
     * The served families a selector stands for: its own, or what the recording rules of that name
     * read, recursively. Of several rules recording one name (upstash:quota_usage:ratio), only
     * those whose static labels the selector's matchers accept (quota=~"vector_.*").
     */
    function sourceFamilies(selector: { name: string; matchers: LabelMatcher[] }, seen = new Set<string>()): string[] {
      const rules = recordingRules.filter(
        (rule) =>
          rule.record === selector.name &&
          selector.matchers.every(
            (matcher) => rule.labels?.[matcher.label] === undefined || matches(matcher, rule.labels[matcher.label]!),
          ),
      );
      if (rules.length === 0)
        return recordingRules.some((rule) => rule.record === selector.name) ? [] : [familyOf(selector.name, served)];
      if (seen.has(selector.name)) return [];
      const inner = new Set([...seen, selector.name]);
      return rules.flatMap((rule) => vectorSelectors(rule.expr).flatMap((source) => sourceFamilies(source, inner)));
    }

    /** Labels of a family: the demo's, or the target labels alone (`up`). */
    const labelsOf = (family: string): Set<string> => labels.get(family) ?? new Set(TARGET_LABELS);

    /** Query variables of a dashboard with the label each stands for and the family its values come from. */
    function variables(dashboard: Dashboard): { name: string; label: string; family: string }[] {
      return (dashboard.templating.list ?? []).flatMap((variable) => {
        const query = typeof variable.query === 'string' ? variable.query : '';
        const match = /^label_values\(([a-z_:][a-z0-9_:]*)(?:\{.*\})?,\s*([a-z_]+)\)$/.exec(query);
        return match === null ? [] : [{ name: variable.name, label: match[2]!, family: match[1]! }];
      });
    }

    /**
     * Whether a variable applies to a family: the family has the label, and for a label of one
     * product's resources (a vector index id, a database id), the family is of that product
     * (upstash_vector_* for the vector_index variable, not upstash_search_*, whose ids differ).
     */
    function applies(variable: { label: string; family: string }, family: string): boolean {
      if (!labelsOf(family).has(variable.label)) return false;
      if (['job', 'instance', 'qstash_region'].includes(variable.label)) return true;
      const product = (name: string): string => /^[a-z]+_[a-z]+_/.exec(name)?.[0] ?? name;
      return product(family) === product(variable.family);
    }

    it('apply to the families that carry their label', () => {
      expect(labelsOf('upstash_qstash_message_events_total')).toContain('destination');
      expect(
        sourceFamilies({ name: 'upstash_qstash_destination:delivery_failure_ratio:rate5m', matchers: [] }),
      ).toContain('upstash_qstash_message_events_total');
      const vectorQuotas = sourceFamilies({
        name: 'upstash:quota_usage:ratio',
        matchers: [{ label: 'quota', op: '=~', value: 'vector_.*' }],
      });
      expect(vectorQuotas).toContain('upstash_vector_index_vectors');
      expect(vectorQuotas).not.toContain('upstash_qstash_plan_max_schedules');
      expect(applies({ label: 'index_id', family: 'upstash_vector_index_info' }, 'upstash_search_index_vectors')).toBe(
        false,
      );
    });

    for (const { dashboard } of buildDashboards()) {
      it(`filter every query of ${dashboard.uid ?? ''} they can`, () => {
        const missing: string[] = [];
        for (const panel of allPanels(dashboard))
          for (const target of panelTargets(panel)) {
            const families = vectorSelectors(target.expr).flatMap((selector) => sourceFamilies(selector));
            for (const variable of variables(dashboard)) {
              const used = target.expr.includes(`$${variable.name}`) || target.expr.includes(`\${${variable.name}`);
              if (!used && families.some((family) => applies(variable, family)))
                missing.push(`${panel.title ?? ''} / ${target.refId}: $${variable.name}`);
            }
          }
        expect(missing).toEqual([]);
      });

      it(`filter no query of ${dashboard.uid ?? ''} by a label its families lack (a chosen value would empty it)`, () => {
        const wrong: string[] = [];
        for (const panel of allPanels(dashboard))
          for (const target of panelTargets(panel))
            for (const selector of vectorSelectors(target.expr)) {
              const families = sourceFamilies(selector);
              if (families.length === 0) continue;
              for (const matcher of selector.matchers) {
                if (!/^\$\{?\w+/.test(matcher.value)) continue;
                if (!families.some((family) => labelsOf(family).has(matcher.label)))
                  wrong.push(`${panel.title ?? ''} / ${target.refId}: ${selector.name}{${matcher.label}}`);
              }
            }
        expect(wrong).toEqual([]);
      });
    }
  });
});
