// A panel that shows what an alert watches colours its values from the alert's own constant: the
// dashboards read the constants from deploy/rules at generation (dashboards/src/rules.ts), so a
// rule and its panel cannot drift. Each (panel, alert) pair below is checked on the generated
// dashboards, and a panel whose description names an alert with an upper threshold must be one of
// the pairs or say why its values are not on the alert's scale.
import type { Panel } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { buildDashboards } from '../../dashboards/src/index.js';
import { allPanels } from '../../dashboards/src/expressions.js';
import { alertThreshold, shippedAlert, sloBurnFactors, type AlertThreshold } from '../../dashboards/src/rules.js';

interface Pair {
  dashboard: string;
  panel: string;
  alert: string;
}

/** Panels and the alerts whose constants colour them. */
const PAIRS: Pair[] = [
  { dashboard: 'upstash-overview', panel: 'Log lag', alert: 'UpstashLogLagHigh' },
  { dashboard: 'upstash-overview', panel: 'Daily request quota', alert: 'UpstashDailyRequestSoftLimitReached' },
  {
    dashboard: 'upstash-overview',
    panel: 'Failure ratio by destination (5m)',
    alert: 'UpstashDeliveryFailureRatioHigh',
  },
  { dashboard: 'upstash-overview', panel: 'Quota usage', alert: 'UpstashQuotaUsageHigh' },
  { dashboard: 'upstash-overview', panel: 'Quota usage', alert: 'UpstashQuotaUsageCritical' },
  { dashboard: 'upstash-exporter-health', panel: 'Log lag', alert: 'UpstashLogLagHigh' },
  {
    dashboard: 'upstash-qstash-deliveries',
    panel: 'Failure ratio by destination',
    alert: 'UpstashDeliveryFailureRatioHigh',
  },
  { dashboard: 'upstash-qstash-deliveries', panel: 'Failure ratio by queue', alert: 'UpstashDeliveryFailureRatioHigh' },
  {
    dashboard: 'upstash-qstash-deliveries',
    panel: 'Failure ratio by URL group',
    alert: 'UpstashDeliveryFailureRatioHigh',
  },
  {
    dashboard: 'upstash-qstash-deliveries',
    panel: 'Routes by failure ratio',
    alert: 'UpstashDeliveryFailureRatioHigh',
  },
  { dashboard: 'upstash-plan-quotas', panel: 'Quota usage', alert: 'UpstashQuotaUsageHigh' },
  { dashboard: 'upstash-plan-quotas', panel: 'Quota usage', alert: 'UpstashQuotaUsageCritical' },
  { dashboard: 'upstash-plan-quotas', panel: 'Daily requests', alert: 'UpstashDailyRequestSoftLimitReached' },
  { dashboard: 'upstash-plan-quotas', panel: 'Daily requests', alert: 'UpstashDailyRequestHardLimitNear' },
  { dashboard: 'upstash-plan-quotas', panel: 'Schedules', alert: 'UpstashQuotaUsageCritical' },
  { dashboard: 'upstash-plan-quotas', panel: 'Vector index quota usage', alert: 'UpstashQuotaUsageHigh' },
  { dashboard: 'upstash-plan-quotas', panel: 'Search index quota usage', alert: 'UpstashQuotaUsageHigh' },
  { dashboard: 'upstash-qstash-queues', panel: 'Global parallelism in use', alert: 'UpstashParallelismSaturated' },
  { dashboard: 'upstash-qstash-queues', panel: 'DLQ against the plan limit', alert: 'UpstashDlqNearLimit' },
  { dashboard: 'upstash-qstash-queues', panel: 'Parallelism in use', alert: 'UpstashParallelismSaturated' },
  { dashboard: 'upstash-qstash-queues', panel: 'Queue quota', alert: 'UpstashQuotaUsageHigh' },
  { dashboard: 'upstash-workflows', panel: 'Run failure ratio (5m)', alert: 'UpstashWorkflowFailureRatioHigh' },
  { dashboard: 'upstash-workflows', panel: 'Oldest run in progress', alert: 'UpstashWorkflowRunsStuck' },
  { dashboard: 'upstash-workflows', panel: 'Queue wait', alert: 'UpstashQueueWaitHigh' },
  {
    dashboard: 'upstash-redis',
    panel: 'Storage / disk threshold',
    alert: 'UpstashRedisStorageNearDiskThreshold',
  },
  { dashboard: 'upstash-redis', panel: 'Commands per second / maximum', alert: 'UpstashRedisCommandsNearMax' },
  { dashboard: 'upstash-redis', panel: 'Stats age', alert: 'UpstashRedisStatsStale' },
  { dashboard: 'upstash-redis', panel: 'Databases', alert: 'UpstashRedisStorageNearDiskThreshold' },
  { dashboard: 'upstash-redis', panel: 'Databases', alert: 'UpstashRedisConnectionsNearMax' },
  { dashboard: 'upstash-redis', panel: 'Databases', alert: 'UpstashRedisSpendNearBudget' },
];

/** Panels (`<dashboard> | <panel> | <alert>`) naming an alert whose values are not on its scale, with the reason. */
const NOT_ON_THE_ALERT_SCALE: Record<string, string> = {
  'upstash-qstash-queues | Backlog by queue | UpstashQueueBacklogGrowing':
    'the alert compares the growth (deriv), the panel draws the backlog',
  'upstash-qstash-queues | Wait list by flow-control key | UpstashFlowControlWaitlistGrowing':
    'the alert compares the growth (deriv), the panel draws the wait list',
  'upstash-qstash-queues | Dead letters by queue and URL Group | UpstashDlqGrowing':
    'the alert compares the change over 30 minutes, the panel draws the count',
  'upstash-qstash-schedules | Overdue schedules | UpstashScheduleMissedRun':
    "a count of schedules past the alert's grace (the grace is the alert's constant): red from one",
  'upstash-qstash-schedules | Last run failed | UpstashScheduleLastRunFailed': 'a count of schedules: red from one',
  'upstash-overview | Schedules with a failed last run | UpstashScheduleLastRunFailed':
    'a count of schedules: red from one',
  'upstash-plan-quotas | Requests today | UpstashDailyRequestSoftLimitReached':
    'absolute counts drawn with the soft and hard limits themselves (the Daily requests bars carry the ratios)',
  'upstash-plan-quotas | Requests today | UpstashDailyRequestHardLimitNear': 'as above',
  'upstash-exporter-health | Log gaps | UpstashLogGapsDetected': 'any gap is the alert: no threshold above 0',
  'upstash-exporter-health | Remediation webhooks | UpstashRemediationWebhookUnauthorized':
    'the alert counts refusals over 10 minutes; the panel draws rates of every result',
};

const COLORS: Record<string, string> = { warning: 'orange', critical: 'red', info: 'yellow' };
const dashboards = buildDashboards();

function findPanel(dashboard: string, title: string): Panel {
  const found = dashboards.find((d) => d.dashboard.uid === dashboard);
  const panel = found === undefined ? undefined : allPanels(found.dashboard).find((p) => p.title === title);
  if (panel === undefined || panel.type === 'row') throw new Error(`no panel "${title}" on ${dashboard}`);
  return panel;
}

/** Every threshold step list of a panel: its defaults and those of its overrides (columns, queries). */
function thresholdSteps(panel: Panel): { value: number | null; color: string }[][] {
  type Steps = { steps?: { value: number | null; color: string }[] };
  const lists = [(panel.fieldConfig?.defaults.thresholds as Steps | undefined)?.steps ?? []];
  for (const override of panel.fieldConfig?.overrides ?? [])
    for (const property of override.properties)
      if (property.id === 'thresholds') lists.push((property.value as Steps).steps ?? []);
  return lists;
}

/** An alert's upper threshold, or undefined when it has none (no constant, or `==`/`<`). */
function upperThreshold(alert: string): AlertThreshold | undefined {
  try {
    const threshold = alertThreshold(alert);
    return threshold.comparison === '>' || threshold.comparison === '>=' ? threshold : undefined;
  } catch {
    return undefined;
  }
}

describe('alertThreshold', () => {
  it('reads the constant of the top comparison, past and/unless guards and nested comparisons', () => {
    expect(alertThreshold('A', 'x:ratio > 0.1\nand\nsum without (s) (y) * 300 >= 10')).toMatchObject({
      comparison: '>',
      value: 0.1,
      compared: 'x:ratio',
    });
    expect(alertThreshold('B', 'a / ignoring (source) group_left () (b > 0) >= 1')).toMatchObject({
      comparison: '>=',
      value: 1,
      compared: 'a / ignoring (source) group_left () (b > 0)',
    });
    expect(alertThreshold('C', '(time() - x > 3600) unless on (i) y == 1')).toMatchObject({ value: 3600 });
    expect(() => alertThreshold('D', 'absent(up{job="x"})')).toThrow(/D: no top-level comparison/);
    expect(() => alertThreshold('E', 'a > b')).toThrow(/E/);
  });

  it('reads the shipped rules', () => {
    expect(upperThreshold('UpstashDeliveryFailureRatioHigh')?.value).toBeGreaterThan(0);
    expect(upperThreshold('UpstashExporterAbsent')).toBeUndefined();
  });
});

describe('panels and their alerts', () => {
  for (const pair of PAIRS) {
    it(`${pair.dashboard} / ${pair.panel} is coloured from ${pair.alert}'s constant`, () => {
      const threshold = upperThreshold(pair.alert);
      expect(threshold, `${pair.alert} has no upper threshold`).toBeDefined();
      const severity = shippedAlert(pair.alert).labels?.severity ?? '';
      const step = { value: threshold!.value, color: COLORS[severity] };
      const lists = thresholdSteps(findPanel(pair.dashboard, pair.panel));
      expect(
        lists.some((steps) => steps.some((s) => s.value === step.value && s.color === step.color)),
        JSON.stringify(lists),
      ).toBe(true);
    });
  }

  it('cover every panel whose description names an alert with an upper threshold', () => {
    const uncovered: string[] = [];
    for (const { dashboard } of dashboards)
      for (const panel of allPanels(dashboard)) {
        const description = (panel as Panel).description ?? '';
        for (const [alert] of description.matchAll(/\bUpstash[A-Z][A-Za-z]+\b/g)) {
          if (upperThreshold(alert) === undefined) continue;
          const key = `${dashboard.uid ?? ''} | ${panel.title ?? ''} | ${alert}`;
          const paired = PAIRS.some(
            (pair) => pair.dashboard === dashboard.uid && pair.panel === panel.title && pair.alert === alert,
          );
          if (!paired && !(key in NOT_ON_THE_ALERT_SCALE)) uncovered.push(key);
        }
      }
    expect(uncovered).toEqual([]);
  });

  it('lists no stale exception', () => {
    const stale = Object.keys(NOT_ON_THE_ALERT_SCALE).filter((key) => {
      const [dashboard, panel, alert] = key.split(' | ');
      try {
        return !((findPanel(dashboard!, panel!).description ?? '').includes(alert!) && upperThreshold(alert!));
      } catch {
        return true;
      }
    });
    expect(stale).toEqual([]);
  });
});

describe('the SLO dashboard and the SLO alerts', () => {
  it("colours burn rates from the SLO alerts' factors: yellow from the lowest ticket, orange and red from the pages", () => {
    const factors = sloBurnFactors();
    expect(factors.page.length).toBeGreaterThan(0);
    expect(factors.ticket.length).toBeGreaterThan(0);
    const expected = [
      { value: Math.min(...factors.ticket), color: 'yellow' },
      { value: Math.min(...factors.page), color: 'orange' },
      { value: Math.max(...factors.page), color: 'red' },
    ];
    for (const title of ['Burn rate (5m)', 'Burn rate by window']) {
      const steps = thresholdSteps(findPanel('upstash-slos', title)).flat();
      for (const step of expected) expect(steps, title).toContainEqual(step);
    }
  });
});
