// Upstash / Plan quotas: usage against the plan's limits, the daily request budget, the plan itself.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import type { Query } from './common.js';
import { QUOTA_THRESHOLDS, bargauge, booleanMapping, quotaGauge, refId, row, sel, stat, timeseries, upstashDashboard } from './common.js';

export const QUOTAS_UID = 'upstash-plan-quotas';

/** QStash plan limits shown as one stat each, with their unit. */
const PLAN_LIMITS: { metric: string; name: string; unit: string }[] = [
  { metric: 'upstash_qstash_plan_max_requests_per_day', name: 'requests / day', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_requests_per_day_hard', name: 'requests / day (hard)', unit: 'short' },
  { metric: 'upstash_qstash_plan_max_requests_per_second', name: 'requests / s', unit: 'short' },
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
  const limitUnits = Object.fromEntries(PLAN_LIMITS.map((limit, index) => [refId(index), [{ id: 'unit', value: limit.unit }]]));

  return upstashDashboard(
    QUOTAS_UID,
    'Upstash / Plan quotas',
    'Usage of the QStash and vector index quotas against the plan limits (recording rule upstash:quota_usage:ratio), the daily request budget and the plan.',
  )
    .withRow(row('Usage'))
    .withPanel(
      bargauge({
        title: 'Quota usage',
        description: 'Each quota as a share of its limit; unlimited quotas show 0%. Orange from 80% (UpstashQuotaUsageHigh), red from 95% (UpstashQuotaUsageCritical).',
        queries: [{ expr: `upstash:quota_usage:ratio${sel()}`, legend: '{{quota}} {{index_id}}' }],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: QUOTA_THRESHOLDS,
        height: 10,
      }),
    )
    .withPanel(
      quotaGauge({
        title: 'Daily requests',
        description: 'Messages accepted since 00:00 UTC against max_requests_per_day.',
        quota: 'qstash_daily_requests',
        height: 10,
      }),
    )
    .withPanel(quotaGauge({ title: 'Schedules', description: 'Schedules against max_schedules.', quota: 'qstash_schedules', height: 10 }))
    .withRow(row('Daily request budget (resets 00:00 UTC)'))
    .withPanel(
      timeseries({
        title: 'Messages accepted today',
        description: 'Messages accepted (CREATED) since 00:00 UTC with the plan\'s soft and hard daily limits.',
        queries: [
          { expr: `upstash_qstash_daily_messages${sel()}`, legend: 'accepted {{instance}}' },
          { expr: `upstash_qstash_plan_max_requests_per_day${sel()}`, legend: 'limit {{instance}}' },
          { expr: `upstash_qstash_plan_max_requests_per_day_hard${sel()}`, legend: 'hard limit {{instance}}' },
        ],
        unit: 'short',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Projected by 00:00 UTC',
        description: 'Today\'s count plus the last hour\'s pace until midnight UTC (recording rule upstash_qstash:daily_messages:projected_end_of_day), against the limit. UpstashDailyRequestQuotaRunningOut fires when it stays above the limit for 30 minutes.',
        queries: [
          { expr: `upstash_qstash:daily_messages:projected_end_of_day${sel()}`, legend: 'projected {{instance}}' },
          { expr: `upstash_qstash_plan_max_requests_per_day${sel()}`, legend: 'limit {{instance}}' },
        ],
        unit: 'short',
        min: 0,
      }),
    )
    .withRow(row('Vector index quotas'))
    .withPanel(
      timeseries({
        title: 'Vector index quota usage',
        description: 'Vector index quotas over time: vectors, daily queries and updates, monthly bandwidth and reranks.',
        queries: [{ expr: `upstash:quota_usage:ratio${sel('quota=~"vector_.*"')}`, legend: '{{index_id}} {{quota}}' }],
        unit: 'percentunit',
        min: 0,
        thresholds: QUOTA_THRESHOLDS,
        thresholdLines: true,
        span: 24,
        legendTable: true,
      }),
    )
    .withRow(row('Plan'))
    .withPanel(
      stat({
        title: 'Plan',
        description: 'The QStash account\'s plan (upstream field `type`) and reserved plan.',
        queries: [{ expr: `upstash_qstash_account_info${sel()}`, legend: '{{plan}} {{reserved_plan}}' }],
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
