// Upstash / Overview: is the exporter healthy, are messages delivered and how fast, how much error
// budget is left, how close are the quotas. Every panel links to the dashboard that explains it.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  QUOTA_THRESHOLDS,
  RATE,
  ZERO_IS_GOOD,
  accountSel,
  alertThresholds,
  alertValue,
  bargauge,
  booleanMapping,
  exportersUp,
  percent,
  quotaUsage,
  row,
  sel,
  stat,
  timeseries,
  upstashDashboard,
  type PanelLink,
} from './common.js';
import {
  DELIVERIES_UID,
  EXPORTER_HEALTH_UID,
  INDEXES_UID,
  OVERVIEW_UID,
  QUOTAS_UID,
  SCHEDULES_UID,
  SLOS_UID,
} from './uids.js';
import { BUDGET_THRESHOLDS } from './slos.js';

const EXPORTER_HEALTH: PanelLink[] = [{ title: 'Exporter health', uid: EXPORTER_HEALTH_UID }];
const DELIVERIES: PanelLink[] = [{ title: 'QStash deliveries', uid: DELIVERIES_UID }];
const QUOTAS: PanelLink[] = [{ title: 'Plan quotas', uid: QUOTAS_UID }];

/** A percentile of the time from CREATED to DELIVERED over every selected message. */
const timeToDelivery = (quantile: number): string =>
  `histogram_quantile(${quantile}, sum by (le) (rate(upstash_qstash_message_duration_seconds_bucket${sel('outcome="delivered"')}[${RATE}])))`;

export function overviewDashboard(): Dashboard {
  const failureRatio = alertValue('UpstashDeliveryFailureRatioHigh');
  return upstashDashboard(
    OVERVIEW_UID,
    'Upstash / Overview',
    'Upstash QStash deliveries, their latency, the SLOs, plan quotas and the exporter at a glance. Every panel links to the dashboard that explains it.',
  )
    .withRow(row('Health'))
    .withPanel(
      exportersUp({
        title: 'Exporters up',
        description:
          'Exporter targets Prometheus scrapes successfully (`up` 1) and those it cannot (`up` 0, red: alert UpstashExporterDown); a replica that is down shows here even while others are up.',
        links: EXPORTER_HEALTH,
      }),
    )
    .withPanel(
      stat({
        title: 'Collectors failing',
        description: 'Collectors whose last poll failed; their metrics are frozen at the last success.',
        queries: [{ expr: `count(upstash_exporter_collector_success${sel()} == 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        links: EXPORTER_HEALTH,
      }),
    )
    .withPanel(
      stat({
        title: 'Log lag',
        description: `How far behind now the delivery logs are fully counted. Normal: ingestion delay plus one poll interval; UpstashLogLagHigh fires above ${alertValue('UpstashLogLagHigh')} s.`,
        queries: [{ expr: `max(upstash_exporter_log_lag_seconds${sel()})` }],
        unit: 's',
        thresholds: alertThresholds('UpstashLogLagHigh'),
        sparkline: true,
        links: EXPORTER_HEALTH,
      }),
    )
    .withPanel(
      stat({
        title: 'Messages in flight',
        description: 'Messages seen in the logs but not yet delivered, failed or cancelled.',
        queries: [{ expr: `sum(upstash_qstash_messages_in_flight${sel()})` }],
        sparkline: true,
        links: DELIVERIES,
      }),
    )
    .withPanel(
      stat({
        title: 'Daily request quota',
        description: `Messages accepted since 00:00 UTC against the plan's soft daily request limit (the highest region); orange from ${percent(alertValue('UpstashDailyRequestSoftLimitReached'))}, where UpstashDailyRequestSoftLimitReached warns. The hard limit is on the Plan quotas dashboard.`,
        queries: [{ expr: quotaUsage('qstash_daily_requests') }],
        unit: 'percentunit',
        decimals: 1,
        thresholds: alertThresholds('UpstashDailyRequestSoftLimitReached'),
        links: QUOTAS,
      }),
    )
    .withPanel(
      stat({
        title: 'Newest log event',
        description: 'Time of the newest delivery log event counted.',
        queries: [{ expr: `max(upstash_qstash_last_event_timestamp_seconds${sel()}) * 1000` }],
        unit: 'dateTimeFromNow',
        links: DELIVERIES,
      }),
    )
    .withRow(row('Deliveries'))
    .withPanel(
      timeseries({
        title: 'Log events by state',
        description:
          'Delivery log events per second by state: CREATED (accepted), ACTIVE (attempt), ERROR (attempt failed), RETRY, DELIVERED, FAILED (retries exhausted), CANCELLED.',
        queries: [
          { expr: `sum by (state) (rate(upstash_qstash_message_events_total${sel()}[${RATE}]))`, legend: '{{state}}' },
        ],
        unit: 'eps',
        links: DELIVERIES,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Failure ratio by destination (5m)',
        description: `Share of the messages to each destination that finished FAILED rather than DELIVERED, the canary probe's queue left out (its own alerts say it). UpstashDeliveryFailureRatioHigh fires above ${percent(failureRatio)} with a minimum of finished messages in 5 minutes.`,
        queries: [
          { expr: `upstash_qstash_destination:delivery_failure_ratio:rate5m${sel()}`, legend: '{{destination}}' },
        ],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: alertThresholds('UpstashDeliveryFailureRatioHigh'),
        thresholdLines: true,
        links: DELIVERIES,
      }),
    )
    .withRow(row('Latency and SLOs'))
    .withPanel(
      timeseries({
        title: 'Time to delivery',
        description:
          'Time from CREATED to DELIVERED over every selected message, median, 90th and 99th percentile (delays and retries included).',
        queries: [
          { expr: timeToDelivery(0.5), legend: 'p50' },
          { expr: timeToDelivery(0.9), legend: 'p90' },
          { expr: timeToDelivery(0.99), legend: 'p99' },
        ],
        unit: 's',
        links: DELIVERIES,
      }),
    )
    .withPanel(
      stat({
        title: 'SLO error budget left',
        description:
          'Per SLO of deploy/slo/upstash-slos.yaml, the error budget left over its period (the lowest of the selected exporters and regions): 100% untouched, 0 spent, negative overspent. Needs the SLO rules loaded.',
        queries: [
          {
            expr: `min by (sloth_slo) (slo:period_error_budget_remaining:ratio${sel()})`,
            legend: '{{sloth_slo}}',
          },
        ],
        unit: 'percentunit',
        decimals: 1,
        thresholds: BUDGET_THRESHOLDS,
        valueAndName: true,
        span: 6,
        height: 8,
        links: [{ title: 'SLOs', uid: SLOS_UID }],
      }),
    )
    .withPanel(
      stat({
        title: 'Canary probe',
        description:
          'Whether the last canary probe of each kind arrived, in every selected region (the black-box check: a message sent through the service and received back). "probe off" unless --probe-enabled.',
        queries: [{ expr: `min by (kind) (upstash_probe_success${sel()})`, legend: '{{kind}}' }],
        mappings: booleanMapping('arrived', 'failed', 'green', 'red'),
        noValue: 'probe off',
        valueAndName: true,
        span: 6,
        height: 8,
        links: EXPORTER_HEALTH,
      }),
    )
    .withRow(row('Plan and resources'))
    .withPanel(
      bargauge({
        title: 'Quota usage',
        description: `Every plan quota the exporter can compute, as a share of its limit (unlimited quotas show 0%). Alerts above ${percent(alertValue('UpstashQuotaUsageHigh'))} and ${percent(alertValue('UpstashQuotaUsageCritical'))}.`,
        queries: [{ expr: `upstash:quota_usage:ratio${sel()}`, legend: '{{quota}} {{index_id}}' }],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: QUOTA_THRESHOLDS,
        links: QUOTAS,
      }),
    )
    .withPanel(
      stat({
        title: 'Schedules',
        description: 'QStash schedules, active and paused.',
        queries: [
          { expr: `sum(upstash_qstash_schedules${sel('paused="false"')})`, legend: 'active' },
          { expr: `sum(upstash_qstash_schedules${sel('paused="true"')})`, legend: 'paused' },
        ],
        valueAndName: true,
        height: 8,
        links: [{ title: 'Schedules', uid: SCHEDULES_UID }],
      }),
    )
    .withPanel(
      stat({
        title: 'Indexes',
        description: 'Vector and search indexes the exporter reads.',
        queries: [
          { expr: `count(upstash_vector_index_info${accountSel()}) or vector(0)`, legend: 'vector' },
          { expr: `count(upstash_search_index_info${accountSel()}) or vector(0)`, legend: 'search' },
        ],
        valueAndName: true,
        height: 8,
        links: [{ title: 'Indexes', uid: INDEXES_UID }],
      }),
    )
    .withPanel(
      stat({
        title: 'Schedules with a failed last run',
        description:
          'Schedules whose last run has at least one message in state FAIL (UpstashScheduleLastRunFailed, info).',
        queries: [{ expr: `count(upstash_qstash_schedule_last_run_messages${sel('state="FAIL"')} > 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        height: 8,
        links: [{ title: 'Schedules', uid: SCHEDULES_UID }],
      }),
    )
    .build();
}
