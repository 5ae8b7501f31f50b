// Upstash / Queues and DLQ: backlog, pauses and parallelism of the queues, dead letters by queue
// and URL Group, flow-control wait lists and limits, global parallelism, URL Group endpoints.
// Limits come from the account collector (upstash_qstash_plan_max_*, only the target labels):
// per-queue or per-key series divide with group_left.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  QUOTA_THRESHOLDS,
  ZERO_IS_GOOD,
  alertThresholds,
  alertValue,
  percent,
  booleanMapping,
  quotaGauge,
  row,
  sel,
  stat,
  table,
  timeseries,
  upstashDashboard,
} from './common.js';
import { QUEUES_UID, QUOTAS_UID } from './uids.js';

const perQueue = (expr: string): string => `max by (job, instance, qstash_region, queue) (${expr})`;
const perKey = (expr: string): string => `max by (job, instance, qstash_region, flow_control_key) (${expr})`;
const perTarget = (expr: string): string => `max by (job, instance, qstash_region) (${expr})`;

export function queuesDashboard(): Dashboard {
  return upstashDashboard(
    QUEUES_UID,
    'Upstash / Queues and DLQ',
    'QStash queues (backlog, paused, parallelism), the dead-letter queue, flow-control keys and global parallelism.',
  )
    .withRow(row('Summary'))
    .withPanel(
      stat({
        title: 'Queue backlog',
        description: 'Messages waiting in all queues (sum of lag).',
        queries: [{ expr: `sum(upstash_qstash_queue_lag${sel()}) or vector(0)` }],
        span: 4,
      }),
    )
    .withPanel(
      stat({
        title: 'Paused queues',
        description: 'Queues that hold their messages (alert UpstashQueuePausedLong after an hour).',
        queries: [{ expr: `sum(upstash_qstash_queues${sel('paused="true"')}) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 4,
      }),
    )
    .withPanel(
      stat({
        title: 'Dead letters',
        description:
          'Messages in the dead-letter queue; a lower bound when the exporter stopped at its page budget (see "DLQ read complete").',
        queries: [{ expr: `sum(upstash_qstash_dlq_size${sel()}) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 4,
      }),
    )
    .withPanel(
      stat({
        title: 'Oldest dead letter',
        description: 'Age of the oldest message in the dead-letter queue (by its creation time).',
        queries: [{ expr: `time() - min(upstash_qstash_dlq_oldest_message_timestamp_seconds${sel()})` }],
        unit: 's',
        noValue: 'none',
        span: 4,
      }),
    )
    .withPanel(
      stat({
        title: 'Flow-control wait list',
        description: "Messages waiting for a flow-control key's parallelism or rate, all keys read.",
        queries: [{ expr: `sum(upstash_qstash_flow_control_waitlist_size${sel()}) or vector(0)` }],
        span: 4,
      }),
    )
    .withPanel(
      stat({
        title: 'Global parallelism in use',
        description: `Deliveries in flight across the account against the maximum the service applies (alert UpstashParallelismSaturated from ${percent(alertValue('UpstashParallelismSaturated'))} for 15 minutes).`,
        queries: [
          {
            expr: `sum(upstash_qstash_global_parallelism_in_use${sel()}) / sum(upstash_qstash_global_parallelism_max${sel()} > 0)`,
          },
        ],
        unit: 'percentunit',
        thresholds: alertThresholds('UpstashParallelismSaturated'),
        min: 0,
        max: 1,
        span: 4,
      }),
    )
    .withRow(row('Queues'))
    .withPanel(
      table({
        title: 'Queues',
        description:
          "One row per queue: backlog (lag), paused, and the parallelism against the plan's max_parallelism.",
        height: 10,
        labels: { queue: 'Queue' },
        columns: [
          { expr: perQueue(`upstash_qstash_queue_lag${sel()}`), column: { title: 'Backlog', unit: 'short' } },
          {
            expr: perQueue(`upstash_qstash_queue_paused${sel()}`),
            column: { title: 'Paused', mappings: booleanMapping('paused', 'active', 'orange', 'green'), colored: true },
          },
          {
            expr: perQueue(`upstash_qstash_queue_parallelism${sel()}`),
            column: { title: 'Parallelism', unit: 'short' },
          },
          {
            expr: perQueue(
              `upstash_qstash_queue_parallelism${sel()} / ignoring (queue) group_left upstash_qstash_plan_max_parallelism${sel()}`,
            ),
            column: { title: 'Of plan max', unit: 'percentunit', thresholds: QUOTA_THRESHOLDS, colored: true },
          },
        ],
        sortBy: 'Backlog',
        sortDesc: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Backlog by queue',
        description: 'Messages waiting in each queue (lag); rising lines are alert UpstashQueueBacklogGrowing.',
        queries: [{ expr: `sum by (queue) (upstash_qstash_queue_lag${sel()})`, legend: '{{queue}}' }],
        unit: 'short',
        span: 12,
      }),
    )
    .withPanel(
      quotaGauge({
        title: 'Queue quota',
        links: [{ title: 'Plan quotas', uid: QUOTAS_UID }],
        description: "Queues against the plan's max_queues.",
        quota: 'qstash_queues',
        span: 6,
      }),
    )
    .withPanel(
      quotaGauge({
        title: 'URL Group quota',
        links: [{ title: 'Plan quotas', uid: QUOTAS_UID }],
        description: "URL Groups against the plan's max_topics.",
        quota: 'qstash_url_groups',
        span: 6,
      }),
    )
    .withRow(row('Dead-letter queue'))
    .withPanel(
      timeseries({
        title: 'Dead letters by queue and URL Group',
        description: 'Messages in the dead-letter queue ("" is none); alert UpstashDlqGrowing when the total rises.',
        queries: [
          {
            expr: `sum by (queue, url_group) (upstash_qstash_dlq_messages${sel()})`,
            legend: 'queue={{queue}} url_group={{url_group}}',
          },
        ],
        unit: 'short',
        span: 12,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'DLQ against the plan limit',
        links: [{ title: 'Plan quotas', uid: QUOTAS_UID }],
        description: `Dead letters against the plan's max_dlq_size; beyond it the oldest are lost (alert UpstashDlqNearLimit above ${percent(alertValue('UpstashDlqNearLimit'))}).`,
        queries: [
          {
            expr: `upstash_qstash_dlq_size${sel()} / (upstash_qstash_plan_max_dlq_messages${sel()} > 0)`,
            legend: '{{instance}} {{qstash_region}}',
          },
        ],
        unit: 'percentunit',
        min: 0,
        thresholds: alertThresholds('UpstashDlqNearLimit'),
        thresholdLines: true,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'DLQ read complete',
        description:
          'Whether the last poll read the whole dead-letter queue (1), or stopped at dlq.max_pages (0: the figures are lower bounds).',
        queries: [{ expr: perTarget(`upstash_qstash_dlq_complete${sel()}`) }],
        mappings: booleanMapping('complete', 'lower bound', 'green', 'orange'),
        span: 6,
      }),
    )
    .withRow(row('Flow control and parallelism'))
    .withPanel(
      table({
        title: 'Flow-control keys',
        description:
          'One row per key read: wait list, parallelism and rate in use against their maximum (0: none set), paused.',
        height: 10,
        labels: { flow_control_key: 'Key' },
        columns: [
          {
            expr: perKey(`upstash_qstash_flow_control_waitlist_size${sel()}`),
            column: { title: 'Wait list', unit: 'short' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_parallelism_in_use${sel()}`),
            column: { title: 'Parallelism in use', unit: 'short' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_parallelism_max${sel()}`),
            column: { title: 'Parallelism max', unit: 'short' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_rate_in_use${sel()}`),
            column: { title: 'Rate in use', unit: 'short' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_rate_max${sel()}`),
            column: { title: 'Rate max', unit: 'short' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_rate_period_seconds${sel()}`),
            column: { title: 'Period', unit: 's' },
          },
          {
            expr: perKey(`upstash_qstash_flow_control_paused${sel()}`),
            column: { title: 'Paused', mappings: booleanMapping('paused', 'active', 'orange', 'green'), colored: true },
          },
        ],
        sortBy: 'Wait list',
        sortDesc: true,
      }),
    )
    .withPanel(
      stat({
        title: 'Flow-control keys read',
        description:
          'Keys the service lists, and keys known (listed or configured) but not read this poll: beyond flow_control.max_keys, or unknown to the service. Unread keys have no wait list or parallelism on this dashboard.',
        queries: [
          { expr: `sum(upstash_qstash_flow_control_keys_listed${sel()})`, legend: 'listed' },
          { expr: `sum(upstash_qstash_flow_control_keys_unread${sel()})`, legend: 'not read' },
        ],
        overridesByQuery: {
          B: [
            {
              id: 'thresholds',
              value: {
                mode: 'absolute',
                steps: [
                  { value: null, color: 'green' },
                  { value: 1, color: 'orange' },
                ],
              },
            },
          ],
        },
        valueAndName: true,
        span: 24,
        height: 4,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Wait list by flow-control key',
        description: 'Messages waiting per key; rising lines are alert UpstashFlowControlWaitlistGrowing.',
        queries: [
          {
            expr: `sum by (flow_control_key) (upstash_qstash_flow_control_waitlist_size${sel()})`,
            legend: '{{flow_control_key}}',
          },
        ],
        unit: 'short',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Parallelism in use',
        description: `Parallelism in use against its maximum, globally and per flow-control key (recording rule upstash_qstash:parallelism_usage:ratio; alert UpstashParallelismSaturated from ${percent(alertValue('UpstashParallelismSaturated'))} for 15 minutes).`,
        queries: [{ expr: `upstash_qstash:parallelism_usage:ratio${sel()}`, legend: '{{scope}} {{flow_control_key}}' }],
        unit: 'percentunit',
        min: 0,
        thresholds: alertThresholds('UpstashParallelismSaturated'),
        thresholdLines: true,
        span: 12,
      }),
    )
    .withRow(row('URL Groups'))
    .withPanel(
      table({
        title: 'URL Groups',
        description: "Endpoints per URL Group against the plan's max_endpoints_per_topic.",
        height: 8,
        labels: { url_group: 'URL Group' },
        columns: [
          {
            expr: `max by (job, instance, qstash_region, url_group) (upstash_qstash_url_group_endpoints${sel()})`,
            column: { title: 'Endpoints', unit: 'short' },
          },
          {
            expr: `max by (job, instance, qstash_region, url_group) (upstash_qstash_url_group_endpoints${sel()} / ignoring (url_group) group_left () (upstash_qstash_plan_max_endpoints_per_url_group${sel()} > 0))`,
            column: { title: 'Of plan max', unit: 'percentunit', thresholds: QUOTA_THRESHOLDS, colored: true },
          },
        ],
        sortBy: 'Endpoints',
        sortDesc: true,
      }),
    )
    .build();
}
