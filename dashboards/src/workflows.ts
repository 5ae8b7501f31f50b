// Upstash / Workflows and waiting time: Upstash Workflow runs and steps, and how long QStash
// messages wait before their first attempt (queue wait, retry lateness, oldest in flight).
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  RATE,
  ZERO_IS_GOOD,
  alertThresholds,
  alertValue,
  percent,
  row,
  sel,
  stat,
  timeseries,
  upstashDashboard,
} from './common.js';
import { DELIVERIES_UID, SLOS_UID, WORKFLOWS_UID } from './uids.js';

const runs = (...matchers: string[]): string => `upstash_workflow_runs_total${sel(...matchers)}`;

/** A quantile of a histogram family by one label, over the rate interval. */
const quantile = (q: number, family: string, by: string, ...matchers: string[]): string =>
  `histogram_quantile(${q}, sum by (le, ${by}) (rate(${family}_bucket${sel(...matchers)}[${RATE}])))`;

export function workflowsDashboard(): Dashboard {
  return upstashDashboard(
    WORKFLOWS_UID,
    'Upstash / Workflows and waiting time',
    'Upstash Workflow runs and steps (collector workflows), and the time QStash messages wait before delivery (delivery logs).',
  )
    .withRow(row('Workflow runs'))
    .withPanel(
      stat({
        title: 'Runs in progress',
        description: 'Workflow runs seen started and not yet ended (followed by the exporter until they end).',
        queries: [{ expr: `sum(upstash_workflow_runs_in_progress${sel()})` }],
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Oldest run in progress',
        description: `Age of the oldest run still in progress (alert UpstashWorkflowRunsStuck above ${alertValue('UpstashWorkflowRunsStuck')} s).`,
        queries: [{ expr: `max(upstash_workflow_oldest_run_age_seconds${sel()})` }],
        unit: 's',
        thresholds: alertThresholds('UpstashWorkflowRunsStuck'),
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Run failure ratio (5m)',
        links: [{ title: 'SLOs', uid: SLOS_UID }],
        description: `Runs FAILED / runs ended SUCCESS or FAILED over 5 minutes (recording rule upstash_workflow:run_failure_ratio:rate5m; alert UpstashWorkflowFailureRatioHigh above ${percent(alertValue('UpstashWorkflowFailureRatioHigh'))}, with a minimum of runs). No value when no run ended.`,
        queries: [{ expr: `max(upstash_workflow:run_failure_ratio:rate5m${sel()})` }],
        unit: 'percentunit',
        thresholds: alertThresholds('UpstashWorkflowFailureRatioHigh'),
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Runs failed (24h)',
        description: 'Runs that ended RUN_FAILED in the last 24 hours; they are in the workflow DLQ.',
        queries: [{ expr: `sum(increase(${runs('state="failed"')}[24h])) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 6,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Runs by state',
        description:
          'Runs started per second, and runs ended per second by the state they ended in (success, failed, canceled).',
        queries: [{ expr: `sum by (state) (rate(${runs()}[${RATE}]))`, legend: '{{state}}' }],
        unit: 'ops',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Steps by state and type',
        description:
          'Steps per second by final state (success, failed, canceled; or the state they had when their run ended) and step type.',
        queries: [
          {
            expr: `sum by (state, step_type) (rate(upstash_workflow_steps_total${sel()}[${RATE}]))`,
            legend: '{{state}} {{step_type}}',
          },
        ],
        unit: 'ops',
        span: 12,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Run duration',
        description: 'Creation to end of the runs that ended, median and 95th percentile by the state they ended in.',
        queries: [
          { expr: quantile(0.5, 'upstash_workflow_run_duration_seconds', 'state'), legend: 'p50 {{state}}' },
          { expr: quantile(0.95, 'upstash_workflow_run_duration_seconds', 'state'), legend: 'p95 {{state}}' },
        ],
        unit: 's',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Step latency',
        description:
          "From the step before (or the run's creation) to the step's record: delivery, waiting and the step's own work; 95th percentile by step type.",
        queries: [
          { expr: quantile(0.95, 'upstash_workflow_step_duration_seconds', 'step_type'), legend: 'p95 {{step_type}}' },
        ],
        unit: 's',
        span: 12,
      }),
    )
    .withRow(row('Waiting time of messages'))
    .withPanel(
      timeseries({
        title: 'Queue wait',
        description: `CREATED to the first attempt beyond the delay the message asked for (queueing, queue parallelism, flow control), 95th percentile by queue (recording rule; alert UpstashQueueWaitHigh above ${alertValue('UpstashQueueWaitHigh')} s). An empty queue is a message published without one.`,
        queries: [
          { expr: `upstash_qstash_queue:message_queue_wait_seconds:p95_5m${sel()}`, legend: 'p95 5m {{queue}}' },
          { expr: quantile(0.5, 'upstash_qstash_message_queue_wait_seconds', 'queue'), legend: 'p50 {{queue}}' },
        ],
        unit: 's',
        thresholds: alertThresholds('UpstashQueueWaitHigh'),
        thresholdLines: true,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Retry lateness',
        description:
          'How late retry attempts start against the nextDeliveryTime their RETRY announced, 95th percentile by queue.',
        queries: [
          { expr: quantile(0.95, 'upstash_qstash_delivery_lateness_seconds', 'queue'), legend: 'p95 {{queue}}' },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Oldest message in flight',
        links: [{ title: 'QStash deliveries', uid: DELIVERIES_UID }],
        description:
          'Age of the oldest message seen in flight (created, not finished) per queue: a message waiting or hanging.',
        queries: [
          { expr: `max by (queue) (upstash_qstash_oldest_in_flight_message_age_seconds${sel()})`, legend: '{{queue}}' },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .build();
}
