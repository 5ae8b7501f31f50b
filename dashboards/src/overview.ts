// Upstash / Overview: is the exporter healthy, are messages delivered, how close are the quotas.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  QUOTA_THRESHOLDS,
  RATE,
  ZERO_IS_BAD,
  ZERO_IS_GOOD,
  bargauge,
  quotaUsage,
  row,
  accountSel,
  sel,
  stat,
  timeseries,
  upstashDashboard,
} from './common.js';

export const OVERVIEW_UID = 'upstash-overview';

export function overviewDashboard(): Dashboard {
  return upstashDashboard(
    OVERVIEW_UID,
    'Upstash / Overview',
    'Upstash QStash deliveries, plan quotas and the exporter at a glance. Follow the links for details.',
  )
    .withRow(row('Health'))
    .withPanel(
      stat({
        title: 'Exporters up',
        description: 'Exporter targets Prometheus scrapes successfully (`up`).',
        queries: [{ expr: `sum(up${accountSel()})` }],
        thresholds: ZERO_IS_BAD,
      }),
    )
    .withPanel(
      stat({
        title: 'Collectors failing',
        description: 'Collectors whose last poll failed; their metrics are frozen at the last success.',
        queries: [{ expr: `count(upstash_exporter_collector_success${sel()} == 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
      }),
    )
    .withPanel(
      stat({
        title: 'Log lag',
        description:
          'How far behind now the delivery logs are fully counted. Normal: ingestion delay plus one poll interval.',
        queries: [{ expr: `max(upstash_exporter_log_lag_seconds${sel()})` }],
        unit: 's',
        thresholds: [
          { value: null, color: 'green' },
          { value: 300, color: 'orange' },
        ],
        sparkline: true,
      }),
    )
    .withPanel(
      stat({
        title: 'Messages in flight',
        description: 'Messages seen in the logs but not yet delivered, failed or cancelled.',
        queries: [{ expr: `sum(upstash_qstash_messages_in_flight${sel()})` }],
        sparkline: true,
      }),
    )
    .withPanel(
      stat({
        title: 'Daily request quota',
        description: "Messages accepted since 00:00 UTC against the plan's daily request limit.",
        queries: [{ expr: quotaUsage('qstash_daily_requests') }],
        unit: 'percentunit',
        decimals: 1,
        thresholds: QUOTA_THRESHOLDS,
      }),
    )
    .withPanel(
      stat({
        title: 'Newest log event',
        description: 'Time of the newest delivery log event counted.',
        queries: [{ expr: `max(upstash_qstash_last_event_timestamp_seconds${sel()}) * 1000` }],
        unit: 'dateTimeFromNow',
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
      }),
    )
    .withPanel(
      timeseries({
        title: 'Failure ratio by destination (5m)',
        description:
          'Share of the messages to each destination that finished FAILED rather than DELIVERED. The alert fires above 10% with at least 10 finished messages in 5 minutes.',
        queries: [
          { expr: `upstash_qstash_destination:delivery_failure_ratio:rate5m${sel()}`, legend: '{{destination}}' },
        ],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: [
          { value: null, color: 'green' },
          { value: 0.1, color: 'red' },
        ],
        thresholdLines: true,
      }),
    )
    .withRow(row('Plan and resources'))
    .withPanel(
      bargauge({
        title: 'Quota usage',
        description:
          'Every plan quota the exporter can compute, as a share of its limit (unlimited quotas show 0%). Alerts at 80% and 95%.',
        queries: [{ expr: `upstash:quota_usage:ratio${sel()}`, legend: '{{quota}} {{index_id}}' }],
        unit: 'percentunit',
        min: 0,
        max: 1,
        thresholds: QUOTA_THRESHOLDS,
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
      }),
    )
    .withPanel(
      stat({
        title: 'Indexes',
        description: 'Vector and search indexes the exporter reads.',
        queries: [
          { expr: `count(upstash_vector_index_info${sel()}) or vector(0)`, legend: 'vector' },
          { expr: `count(upstash_search_index_info${sel()}) or vector(0)`, legend: 'search' },
        ],
        valueAndName: true,
        height: 8,
      }),
    )
    .withPanel(
      stat({
        title: 'Schedules with a failed last run',
        description: 'Schedules whose last run has at least one message in state FAIL.',
        queries: [{ expr: `count(upstash_qstash_schedule_last_run_messages${sel('state="FAIL"')} > 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        height: 8,
      }),
    )
    .build();
}
