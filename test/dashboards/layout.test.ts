// Layout of the shipped dashboards (issue 40, item 8): panels link to the dashboard that explains
// them, keeping the time range and the filters; the overview has latency and an error-budget stat
// and links every panel; Deliveries shows latency right after throughput; the Grafana version the
// dashboards need (schemaVersion 42: Grafana 12) is stated where users read it.
import { readFileSync } from 'node:fs';
import type { Panel, RowPanel } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { buildDashboards } from '../../dashboards/src/index.js';
import { allPanels, panelTargets } from '../../dashboards/src/expressions.js';

const dashboards = buildDashboards();
const uids = new Set(dashboards.map((d) => d.dashboard.uid));
const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const panelsOf = (uid: string): Panel[] =>
  allPanels(dashboards.find((d) => d.dashboard.uid === uid)!.dashboard).filter((p): p is Panel => p.type !== 'row');
const linksOf = (panel: Panel): { title?: string; url?: string }[] =>
  (panel as { links?: { title?: string; url?: string }[] }).links ?? [];

describe('panel links', () => {
  it('open a shipped dashboard with the time range, data source, job, instance and region', () => {
    const links = dashboards.flatMap(({ dashboard }) =>
      allPanels(dashboard).flatMap((panel) =>
        panel.type === 'row' ? [] : linksOf(panel as Panel).map((link) => ({ from: dashboard.uid, ...link })),
      ),
    );
    expect(links.length).toBeGreaterThan(20);
    for (const link of links) {
      const target = /^\/d\/([a-z-]+)\?/.exec(link.url ?? '')?.[1];
      expect(uids.has(target), `${link.from}: ${link.url ?? ''}`).toBe(true);
      expect(target, `${link.from} links to itself`).not.toBe(link.from);
      for (const part of [
        '${__url_time_range}',
        '${datasource:queryparam}',
        '${job:queryparam}',
        '${instance:queryparam}',
        '${qstash_region:queryparam}',
      ])
        expect(link.url, link.from).toContain(part);
      expect(link.title, link.url).toBeTruthy();
    }
  });

  it('leave no overview panel without a link to the dashboard that explains it', () => {
    const unlinked = panelsOf('upstash-overview').filter((panel) => linksOf(panel).length === 0);
    expect(unlinked.map((panel) => panel.title)).toEqual([]);
  });
});

describe('the overview', () => {
  it('shows the time to delivery and the error budget left per SLO', () => {
    const queries = panelsOf('upstash-overview').flatMap((panel) => panelTargets(panel).map((t) => t.expr));
    expect(queries.some((expr) => expr.includes('upstash_qstash_message_duration_seconds_bucket'))).toBe(true);
    expect(queries.some((expr) => expr.includes('slo:period_error_budget_remaining:ratio'))).toBe(true);
  });
});

describe('Deliveries', () => {
  it('puts the latency row right after throughput', () => {
    const rows = (dashboards.find((d) => d.dashboard.uid === 'upstash-qstash-deliveries')!.dashboard.panels ?? [])
      .filter((panel): panel is RowPanel => panel.type === 'row')
      .map((row) => row.title);
    expect(rows.slice(0, 2)).toEqual(['Throughput', 'Latency']);
  });
});

describe('the Grafana version', () => {
  it('is schemaVersion 42 on every dashboard, stated as Grafana 12 in the README, docs/deployment.md and compose', () => {
    for (const { dashboard } of dashboards) expect(dashboard.schemaVersion, dashboard.uid).toBe(42);
    for (const path of ['README.md', 'docs/deployment.md']) {
      const text = read(path).replace(/\s+/g, ' ');
      expect(text, path).toMatch(/Grafana 12\*{0,2} or later/);
      expect(text, path).toContain('schemaVersion 42');
    }
    const image = /image: grafana\/grafana:(\d+)\./.exec(read('deploy/compose/compose.yaml'))?.[1];
    expect(Number(image)).toBeGreaterThanOrEqual(12);
  });
});
