// Upstash / Plan quotas: usage against the plan's limits, the daily request budget, the plan itself.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import type { DynamicConfigValue } from '@grafana/grafana-foundation-sdk/dashboard';
import type { PanelBuilder as BarGaugePanelBuilder } from '@grafana/grafana-foundation-sdk/bargauge';
import type { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { alertThreshold } from './rules.js';
import type { Query } from './common.js';
import { INDEXES_UID, QUEUES_UID, QUOTAS_UID, SCHEDULES_UID } from './uids.js';
import {
  QUOTA_THRESHOLDS,
  accountSel,
  alertThresholds,
  bargauge,
  booleanMapping,
  percent,
  quotaGauge,
  refId,
  row,
  sel,
  selectAll,
  stat,
  timeseries,
  upstashDashboard,
} from './common.js';

/**
 * `expr` labelled with the region of the exporter's QStash user (upstash_qstash_account_info).
 * Matched on qstash_region too: an exporter watching two regions has two account_info series.
 */
function byRegion(expr: string): string {
  return `${expr} * on (job, instance, qstash_region) group_left (region) group by (job, instance, qstash_region, region) (upstash_qstash_account_info${sel()})`;
}

/** The quotas of one kind of index (quota label `<kind>_*`) over time, one series per index and quota. */
function indexQuotaUsage(kind: 'vector' | 'search', description: string): TimeseriesPanelBuilder {
  return timeseries({
    title: `${kind === 'vector' ? 'Vector' : 'Search'} index quota usage`,
    description,
    // Index quotas are the account's, not a QStash region's: the region variable does not apply.
    queries: [
      { expr: `upstash:quota_usage:ratio${accountSel(`quota=~"${kind}_.*"`)}`, legend: '{{index_id}} {{quota}}' },
    ],
    unit: 'percentunit',
    min: 0,
    thresholds: QUOTA_THRESHOLDS,
    thresholdLines: true,
    span: 24,
    legendTable: true,
    links: [{ title: 'Vector and search indexes', uid: INDEXES_UID }],
  });
}

/**
 * Today's requests against both daily limits, each bar coloured from the constant of its alert:
 * the soft limit (UpstashDailyRequestSoftLimitReached warns; requests still pass beyond it) and the
 * hard one (UpstashDailyRequestHardLimitNear pages; the service rejects publish at it). The bars'
 * queries are the ones the alerts compare, the highest region.
 */
function dailyRequestsPanel(): BarGaugePanelBuilder {
  const soft = alertThreshold('UpstashDailyRequestSoftLimitReached');
  const hard = alertThreshold('UpstashDailyRequestHardLimitNear');
  const thresholds = (alert: string): DynamicConfigValue[] => [
    { id: 'thresholds', value: { mode: 'absolute', steps: alertThresholds(alert) } },
  ];
  return bargauge({
    title: 'Daily requests',
    description: `Requests since 00:00 UTC (the official count of the usage collector, else the count of CREATED entries), highest region: against the soft limit max_requests_per_day (orange from ${percent(soft.value)}: UpstashDailyRequestSoftLimitReached; requests still pass) and the hard limit (red from ${percent(hard.value)}: UpstashDailyRequestHardLimitNear; at 100% the service rejects publish until 00:00 UTC).`,
    queries: [
      { expr: `max(${selectAll(soft.compared)})`, legend: 'of the soft limit' },
      { expr: `max(${selectAll(hard.compared)})`, legend: 'of the hard limit' },
    ],
    unit: 'percentunit',
    min: 0,
    max: 1,
    overridesByQuery: {
      A: thresholds('UpstashDailyRequestSoftLimitReached'),
      B: thresholds('UpstashDailyRequestHardLimitNear'),
    },
    span: 6,
    height: 10,
  });
}

/** QStash plan limits shown as one stat each, with their unit. */
const PLAN_LIMITS: { metric: string; name: string; unit: string }[] = [
  { metric: 'upstash_qstash_plan_max_requests_per_day', name: 'requests / day', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_requests_per_day_hard', name: 'requests / day (hard)', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_requests_per_second', name: 'requests / s', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_bandwidth_bytes_per_second', name: 'bandwidth / s', unit: 'Bps' },
  { metric: 'upstash_qstash_plan_max_message_size_bytes', name: 'message size', unit: 'bytes' },
  { metric: 'upstash_qstash_plan_timeout_seconds', name: 'delivery timeout', unit: 's' },
  { metric: 'upstash_qstash_plan_max_retries', name: 'retries', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_delay_seconds', name: 'delay', unit: 's' },
  { metric: 'upstash_qstash_plan_max_schedules', name: 'schedules', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_queues', name: 'queues', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_url_groups', name: 'URL groups', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_endpoints_per_url_group', name: 'endpoints / URL group', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_parallelism', name: 'parallelism', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_global_parallelism', name: 'global parallelism', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_log_events', name: 'log events kept', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_dlq_messages', name: 'DLQ messages', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_dlq_retention_seconds', name: 'DLQ retention', unit: 's' },
];

export function quotasDashboard(): Dashboard {
  const limits: Query[] = PLAN_LIMITS.map((limit) => ({ expr: `max(${limit.metric}${sel()})`, legend: limit.name }));
  const limitUnits = Object.fromEntries(
    PLAN_LIMITS.map((limit, index) => [refId(index), [{ id: 'unit', value: limit.unit }]]),
  );

  return upstashDashboard(
    QUOTAS_UID,
    'Upstash / Plan quotas',
    'Usage of the QStash, vector index and search index quotas against the plan limits (recording rule upstash:quota_usage:ratio), the official daily usage per region against the soft and hard daily limits, the dead-letter queue, bandwidth and billing, and the plan.',
  )
    .withRow(row('Usage'))
    .withPanel(
      bargauge({
        title: 'Quota usage',
        description:
          'Each quota as a share of its limit; unlimited quotas show 0%. Orange from 80% (UpstashQuotaUsageHigh), red from 95% (UpstashQuotaUsageCritical).',
        queries: [{ expr: `upstash:quota_usage:ratio${sel()}`, legend: '{{quota}} {{index_id}}' }],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: QUOTA_THRESHOLDS,
        height: 10,
      }),
    )
    .withPanel(dailyRequestsPanel())
    .withPanel(
      quotaGauge({
        title: 'Schedules',
        links: [{ title: 'QStash schedules', uid: SCHEDULES_UID }],
        description: 'Schedules against max_schedules.',
        quota: 'qstash_schedules',
        height: 10,
      }),
    )
    .withRow(row('Official usage per region (daily figures reset 00:00 UTC)'))
    .withPanel(
      timeseries({
        title: 'Requests today',
        description:
          'Requests since 00:00 UTC per region (recording rule upstash_qstash:daily_requests:official_or_created: the official count of GET /v2/qstash/stats, ' +
          "else the count of CREATED entries, as its source label says) with the plan's soft and hard daily limits. " +
          'UpstashDailyRequestSoftLimitReached warns at the soft limit, UpstashDailyRequestHardLimitNear pages above 90% of the hard one.',
        queries: [
          {
            expr: byRegion(`upstash_qstash:daily_requests:official_or_created${sel()}`),
            legend: '{{region}} used ({{source}})',
          },
          { expr: byRegion(`upstash_qstash_plan_max_requests_per_day${sel()}`), legend: '{{region}} soft limit' },
          { expr: byRegion(`upstash_qstash_plan_max_requests_per_day_hard${sel()}`), legend: '{{region}} hard limit' },
        ],
        unit: 'short',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Projected by 00:00 UTC',
        description:
          "Today's count plus the last hour's pace until midnight UTC (recording rule upstash_qstash:daily_requests:projected_end_of_day), against the soft limit. UpstashDailyRequestQuotaRunningOut fires when it stays above the limit for 30 minutes.",
        queries: [
          {
            expr: byRegion(`upstash_qstash:daily_requests:projected_end_of_day${sel()}`),
            legend: '{{region}} projected ({{source}})',
          },
          { expr: byRegion(`upstash_qstash_plan_max_requests_per_day${sel()}`), legend: '{{region}} soft limit' },
        ],
        unit: 'short',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Dead-letter queue',
        links: [{ title: 'Queues and DLQ', uid: QUEUES_UID }],
        description:
          "Messages in the dead-letter queue (dlq_message_count of the official usage) against the plan's max_dlq_size.",
        queries: [
          { expr: byRegion(`upstash_qstash_usage_dlq_messages${sel()}`), legend: '{{region}} in DLQ' },
          { expr: byRegion(`upstash_qstash_plan_max_dlq_messages${sel()}`), legend: '{{region}} max DLQ size' },
        ],
        unit: 'short',
        min: 0,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Bandwidth today',
        description:
          "Bandwidth used since 00:00 UTC (today's point of daily_bandwidths of the official usage; the API does not name the unit, bytes assumed).",
        queries: [{ expr: byRegion(`upstash_qstash_usage_daily_bandwidth_bytes${sel()}`), legend: '{{region}}' }],
        unit: 'bytes',
        min: 0,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Billing',
        description:
          "Amount billed this month so far and today (total_monthly_billing and daily_billings of the official usage; the API gives no currency), against the user's monthly budget (0: none set).",
        queries: [
          { expr: byRegion(`upstash_qstash_usage_monthly_billing${sel()}`), legend: '{{region}} this month' },
          { expr: byRegion(`upstash_qstash_usage_daily_billing${sel()}`), legend: '{{region}} today' },
          { expr: byRegion(`upstash_qstash_account_budget${sel()}`), legend: '{{region}} monthly budget' },
        ],
        unit: 'short',
        min: 0,
        span: 8,
      }),
    )
    .withRow(row('Vector index quotas'))
    .withPanel(
      indexQuotaUsage(
        'vector',
        'Vector index quotas over time: vectors, daily queries and updates, monthly bandwidth and reranks.',
      ),
    )
    .withRow(row('Search index quotas'))
    .withPanel(
      indexQuotaUsage(
        'search',
        'Search index quotas over time: documents, daily queries and updates, monthly bandwidth and reranks (usage from the index stats).',
      ),
    )
    .withRow(row('Plan'))
    .withPanel(
      stat({
        title: 'Plan',
        description:
          "The QStash user's region, plan (upstream field `type`) and reserved plan; selected_by says how the exporter chose the user (token, region, legacy).",
        queries: [
          {
            expr: `upstash_qstash_account_info${sel()}`,
            legend: '{{region}} {{plan}} {{reserved_plan}} ({{selected_by}})',
          },
        ],
        showName: true,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Account active',
        description: 'Whether the QStash account is active.',
        queries: [{ expr: `max(upstash_qstash_account_active${sel()})` }],
        mappings: booleanMapping('active', 'inactive', 'green', 'red'),
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Prod pack',
        description: 'Whether the Prod Pack add-on is enabled.',
        queries: [{ expr: `max(upstash_qstash_account_prod_pack_enabled${sel()})` }],
        mappings: booleanMapping('enabled', 'disabled', 'green', 'text'),
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Last plan upgrade',
        description: 'When the plan last changed.',
        queries: [{ expr: `max(upstash_qstash_account_last_plan_upgrade_timestamp_seconds${sel()}) * 1000` }],
        unit: 'dateTimeFromNow',
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'QStash plan limits',
        description: 'Every limit of the QStash plan; unlimited ones show as infinity.',
        queries: limits,
        overridesByQuery: limitUnits,
        valueAndName: true,
        span: 24,
        height: 8,
      }),
    )
    .build();
}
