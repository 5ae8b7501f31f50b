// Upstash / QStash deliveries: throughput, failures and latency by destination, queue and URL group.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import type { TableColumn, TimeseriesSpec } from './common.js';
import { shippedRecord } from './rules.js';
import { DELIVERIES_UID, EXPORTER_HEALTH_UID, SLOS_UID, WORKFLOWS_UID } from './uids.js';
import {
  RATE,
  alertThresholds,
  alertValue,
  labelVariable,
  percent,
  row,
  sel,
  table,
  timeseries,
  upstashDashboard,
} from './common.js';

/** Selector of the log-event metrics (events, delivery errors): every filter variable. */
const EVENTS = (...matchers: string[]): string =>
  sel('destination=~"$destination"', 'queue=~"$queue"', 'url_group=~"$url_group"', ...matchers);

/** Selector of the per-message histograms, which have no url_group label (the URL group filter cannot apply). */
const MESSAGES = (...matchers: string[]): string => sel('destination=~"$destination"', 'queue=~"$queue"', ...matchers);

const events = (...matchers: string[]): string => `upstash_qstash_message_events_total${EVENTS(...matchers)}`;

/**
 * The delivery log events recorded per route (queue, URL group, destination) and state over a
 * window: the recording rule `<level>:message_events:rate5m` (or 1h), found by its metric and
 * operations in the shipped rules.
 */
const routeEvents = (window: '5m' | '1h', ...matchers: string[]): string =>
  `${shippedRecord(`:message_events:rate${window}`)}${EVENTS(...matchers)}`;

/**
 * A delivery ratio by one grouping, computed from the per-route rates so that every filter
 * variable applies (the per-grouping recording rules have summed the other route labels away):
 * `bad` / (`bad` + `good`) where at least one event of either happened in the window.
 */
function groupingRatio(label: Grouping, window: '5m' | '1h', bad: string, good: string): string {
  const by = `sum by (job, instance, qstash_region, ${label})`;
  return `${by} (${routeEvents(window, `state="${bad}"`)}) / (${by} (${routeEvents(window, `state=~"${good}|${bad}"`)}) > 0)`;
}

type Grouping = 'destination' | 'queue' | 'url_group';

/** The panels of one grouping: deliveries, failures, and the failure and error ratios over 5m and 1h. */
function groupingPanels(label: Grouping, title: string): TimeseriesSpec[] {
  const legend = `{{${label}}}`;
  const ratioPanel = { unit: 'percentunit', min: 0, max: 1, span: 6 };
  const failureRatio = alertValue('UpstashDeliveryFailureRatioHigh');
  return [
    {
      title: `Delivered by ${title}`,
      description: `Messages delivered per second by ${title}.`,
      queries: [{ expr: `sum by (${label}) (rate(${events('state="DELIVERED"')}[${RATE}]))`, legend }],
      unit: 'eps',
      span: 6,
    },
    {
      title: `Failed by ${title}`,
      description: `Messages per second that exhausted their retries (FAILED, now in the dead letter queue) by ${title}.`,
      queries: [{ expr: `sum by (${label}) (rate(${events('state="FAILED"')}[${RATE}]))`, legend }],
      unit: 'eps',
      span: 6,
    },
    {
      ...ratioPanel,
      title: `Failure ratio by ${title}`,
      description: `FAILED / (DELIVERED + FAILED) by ${title} over 5 minutes and 1 hour, over the selected routes (from the per-route rates ${shippedRecord(':message_events:rate5m')} and its 1h twin). No value where nothing finished. Coloured from ${percent(failureRatio)}, the threshold of UpstashDeliveryFailureRatioHigh (which is per destination).`,
      queries: [
        { expr: groupingRatio(label, '5m', 'FAILED', 'DELIVERED'), legend: `${legend} 5m` },
        { expr: groupingRatio(label, '1h', 'FAILED', 'DELIVERED'), legend: `${legend} 1h` },
      ],
      thresholds: alertThresholds('UpstashDeliveryFailureRatioHigh'),
      thresholdLines: true,
    },
    {
      ...ratioPanel,
      title: `Attempt error ratio by ${title}`,
      description: `ERROR / (DELIVERED + ERROR): the share of delivery attempts that failed, by ${title} over 5 minutes and 1 hour, over the selected routes. Retries save many of them.`,
      queries: [
        { expr: groupingRatio(label, '5m', 'ERROR', 'DELIVERED'), legend: `${legend} 5m` },
        { expr: groupingRatio(label, '1h', 'ERROR', 'DELIVERED'), legend: `${legend} 1h` },
      ],
    },
  ];
}

/** One value per route (queue, URL group, destination) without __name__, so the table's merge joins the rows. */
const perRoute = (expr: string): string =>
  `max by (job, instance, qstash_region, queue, url_group, destination) (${expr})`;

function ratioColumn(title: string): TableColumn {
  return {
    title,
    unit: 'percentunit',
    thresholds: alertThresholds('UpstashDeliveryFailureRatioHigh'),
    colored: true,
  };
}

function latencyQuantile(quantile: number, by = ''): string {
  const grouping = by === '' ? 'le' : `le, ${by}`;
  return `histogram_quantile(${quantile}, sum by (${grouping}) (rate(upstash_qstash_message_duration_seconds_bucket${MESSAGES('outcome="delivered"')}[${RATE}])))`;
}

export function deliveriesDashboard(): Dashboard {
  const scope = 'job=~"$job",instance=~"$instance"';
  const builder = upstashDashboard(
    DELIVERIES_UID,
    'Upstash / QStash deliveries',
    'QStash message deliveries counted from the delivery logs: throughput, failures, errors and latency by destination, queue and URL group.',
    [
      labelVariable(
        'destination',
        'Destination',
        `label_values(upstash_qstash_message_events_total{${scope}}, destination)`,
      ),
      labelVariable('queue', 'Queue', `label_values(upstash_qstash_message_events_total{${scope}}, queue)`),
      labelVariable('url_group', 'URL group', `label_values(upstash_qstash_message_events_total{${scope}}, url_group)`),
    ],
  )
    .withRow(row('Throughput'))
    .withPanel(
      timeseries({
        title: 'Accepted by queue',
        description:
          'Messages accepted (CREATED) per second by queue; an empty queue is a message published without one.',
        queries: [{ expr: `sum by (queue) (rate(${events('state="CREATED"')}[${RATE}]))`, legend: '{{queue}}' }],
        unit: 'eps',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Finished messages',
        description: 'Messages reaching a final state per second: DELIVERED, FAILED (retries exhausted), CANCELLED.',
        queries: [
          {
            expr: `sum by (state) (rate(${events('state=~"DELIVERED|FAILED|CANCELLED"')}[${RATE}]))`,
            legend: '{{state}}',
          },
        ],
        unit: 'eps',
        span: 8,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Log events by state',
        description: 'Every delivery log event per second by state.',
        queries: [{ expr: `sum by (state) (rate(${events()}[${RATE}]))`, legend: '{{state}}' }],
        unit: 'eps',
        span: 8,
        stack: true,
      }),
    )
    .withRow(row('Latency'))
    .withPanel(
      timeseries({
        title: 'Time to delivery',
        links: [{ title: 'SLOs', uid: SLOS_UID }],
        description:
          'Time from CREATED to DELIVERED, percentiles over the selected messages (histogram upstash_qstash_message_duration_seconds). Includes delays and retries.',
        queries: [
          { expr: latencyQuantile(0.5), legend: 'p50' },
          { expr: latencyQuantile(0.9), legend: 'p90' },
          { expr: latencyQuantile(0.99), legend: 'p99' },
        ],
        unit: 's',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Time to delivery p90 by destination',
        description: '90th percentile of the time from CREATED to DELIVERED, by destination.',
        queries: [{ expr: latencyQuantile(0.9, 'destination'), legend: '{{destination}}' }],
        unit: 's',
        span: 12,
        legendTable: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Time to failure p50',
        description: 'Median time from CREATED to FAILED: how long messages spend retrying before they give up.',
        queries: [
          {
            expr: `histogram_quantile(0.5, sum by (le, destination) (rate(upstash_qstash_message_duration_seconds_bucket${MESSAGES('outcome="failed"')}[${RATE}])))`,
            legend: '{{destination}}',
          },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Messages in flight',
        links: [{ title: 'Workflows and waiting time', uid: WORKFLOWS_UID }],
        description: 'Messages seen but not yet in a final state (bounded tracker).',
        queries: [{ expr: `sum(upstash_qstash_messages_in_flight${sel()})`, legend: 'in flight' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Tracker evictions',
        links: [{ title: 'Exporter health', uid: EXPORTER_HEALTH_UID }],
        description:
          'Messages dropped from the in-flight tracker before they finished (their latency and attempts are not recorded). Raise --logs-message-tracker-size if this is not zero.',
        queries: [
          { expr: `sum(rate(upstash_qstash_message_tracker_evictions_total${sel()}[${RATE}]))`, legend: 'evictions' },
        ],
        unit: 'eps',
        span: 8,
      }),
    );

  const groupings: [Grouping, string, string][] = [
    ['destination', 'destination', 'By destination'],
    ['queue', 'queue', 'By queue'],
    ['url_group', 'URL group', 'By URL group'],
  ];
  for (const [label, title, rowTitle] of groupings) {
    builder.withRow(row(rowTitle));
    for (const spec of groupingPanels(label, title)) builder.withPanel(timeseries(spec));
  }

  return builder
    .withRow(row('Routes'))
    .withPanel(
      table({
        title: 'Routes by failure ratio',
        description:
          'Every queue, URL group and destination combination with its failure and attempt error ratios (recording rules upstash_qstash_route:delivery_failure_ratio:* and upstash_qstash_route:delivery_error_ratio:*). Routes where nothing finished have no value.',
        labels: { queue: 'Queue', url_group: 'URL group', destination: 'Destination' },
        columns: [
          {
            expr: perRoute(`upstash_qstash_route:delivery_failure_ratio:rate5m${EVENTS()}`),
            column: ratioColumn('Failure ratio (5m)'),
          },
          {
            expr: perRoute(`upstash_qstash_route:delivery_failure_ratio:rate1h${EVENTS()}`),
            column: ratioColumn('Failure ratio (1h)'),
          },
          {
            expr: perRoute(`upstash_qstash_route:delivery_error_ratio:rate5m${EVENTS()}`),
            column: ratioColumn('Error ratio (5m)'),
          },
          {
            expr: perRoute(`upstash_qstash_route:delivery_error_ratio:rate1h${EVENTS()}`),
            column: ratioColumn('Error ratio (1h)'),
          },
        ],
        sortBy: 'Failure ratio (1h)',
        sortDesc: true,
      }),
    )
    .withRow(row('Errors and retries'))
    .withPanel(
      timeseries({
        title: 'Delivery errors by reason',
        description:
          'Failed delivery attempts (ERROR events) per second by class: 4xx, 5xx, timeout, connection, other. Each is retried or, on the last attempt, FAILED.',
        queries: [
          {
            expr: `sum by (reason) (rate(upstash_qstash_delivery_errors_total${EVENTS()}[${RATE}]))`,
            legend: '{{reason}}',
          },
        ],
        unit: 'eps',
        span: 12,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Mean attempts per finished message',
        description: 'Delivery attempts per message that reached a final state, by outcome.',
        queries: [
          {
            expr: `sum by (outcome) (rate(upstash_qstash_message_attempts_sum${MESSAGES()}[${RATE}])) / sum by (outcome) (rate(upstash_qstash_message_attempts_count${MESSAGES()}[${RATE}]))`,
            legend: '{{outcome}}',
          },
        ],
        unit: 'short',
        span: 12,
      }),
    )
    .build();
}
