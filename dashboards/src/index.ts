// The dashboards this project ships, and their rendering to the committed JSON files.
import { fileURLToPath } from 'node:url';
import type { Dashboard, Panel, RowPanel } from '@grafana/grafana-foundation-sdk/dashboard';
import { alertOfStep } from './common.js';
import { deliveriesDashboard } from './deliveries.js';
import { exporterHealthDashboard } from './exporter-health.js';
import { indexesDashboard } from './indexes.js';
import { overviewDashboard } from './overview.js';
import { queuesDashboard } from './queues.js';
import { quotasDashboard } from './quotas.js';
import { redisDashboard } from './redis.js';
import { schedulesDashboard } from './schedules.js';
import { slosDashboard } from './slos.js';
import { workflowsDashboard } from './workflows.js';

export interface DashboardFile {
  /** File name under dashboards/, `<uid>.json`. */
  file: string;
  dashboard: Dashboard;
}

const BUILDERS: (() => Dashboard)[] = [
  overviewDashboard,
  deliveriesDashboard,
  schedulesDashboard,
  queuesDashboard,
  quotasDashboard,
  indexesDashboard,
  redisDashboard,
  exporterHealthDashboard,
  workflowsDashboard,
  slosDashboard,
];

/** Every dashboard, built and finalised, in a fixed order. */
export function buildDashboards(): DashboardFile[] {
  return BUILDERS.map((build) => {
    const dashboard = numberPanels(build());
    if (dashboard.uid === undefined || dashboard.uid === '')
      throw new Error(`dashboard "${dashboard.title ?? ''}" has no uid`);
    return { file: `${dashboard.uid}.json`, dashboard };
  });
}

/**
 * Gives every panel (rows included) a stable id, 1, 2, ... in layout order, so that links to a
 * panel (viewPanel=<id>) survive regeneration. The SDK leaves ids unset (rows get 0).
 */
function numberPanels(dashboard: Dashboard): Dashboard {
  let next = 1;
  const visit = (panel: Panel | RowPanel): void => {
    panel.id = next++;
    if (panel.type === 'row') for (const inner of (panel as RowPanel).panels) visit(inner);
  };
  for (const panel of dashboard.panels ?? []) visit(panel);
  return dashboard;
}

/** Where a threshold step of an alert stands: the dashboard file and the path to the step in its JSON. */
export interface AlertThresholdStep {
  file: string;
  path: (string | number)[];
}

/**
 * Written by `npm run dashboards` next to the mixin's other generated data: { alertname: steps },
 * so mixin/dashboards/dashboards.libsonnet moves exactly these steps to _config.alertThresholds.
 */
export const ALERT_THRESHOLD_STEPS_FILE = fileURLToPath(
  new URL('../../mixin/generated/dashboard-alert-thresholds.json', import.meta.url),
);

/**
 * Every threshold step that stands for an alert's threshold (made by alertThresholds()), by alert
 * name, in dashboard and layout order: { alertname: [{ file, path }] }. Paths index the JSON that
 * renderDashboard writes (it sorts keys, never arrays).
 */
export function alertThresholdSteps(files: DashboardFile[] = buildDashboards()): Record<string, AlertThresholdStep[]> {
  const found: Record<string, AlertThresholdStep[]> = {};
  const visit = (file: string, value: unknown, path: (string | number)[]): void => {
    if (value === null || typeof value !== 'object') return;
    const alert = alertOfStep(value);
    if (alert !== undefined) (found[alert] ??= []).push({ file, path });
    if (Array.isArray(value)) value.forEach((item, index) => visit(file, item, [...path, index]));
    else for (const [key, item] of Object.entries(value)) visit(file, item, [...path, key]);
  };
  for (const { file, dashboard } of files) visit(file, dashboard, []);
  return Object.fromEntries(
    Object.keys(found)
      .sort()
      .map((alert) => [alert, found[alert]!]),
  );
}

/** Pretty JSON with object keys sorted at every level and a trailing newline: diffs stay small. */
export function renderDashboard(dashboard: Dashboard): string {
  return `${JSON.stringify(sortKeys(dashboard), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}
