// Upstash / Exporter health: collectors, upstream API calls, log reading and the process itself.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { RATE, ZERO_IS_BAD, ZERO_IS_GOOD, accountSel, row, sel, stat, timeseries, upstashDashboard } from './common.js';

// The scrape, the process, the state file and the cardinality guard are the exporter's, not a
// QStash region's: their series have no qstash_region, so the region variable does not filter them.

export const EXPORTER_HEALTH_UID = 'upstash-exporter-health';

export function exporterHealthDashboard(): Dashboard {
  return upstashDashboard(
    EXPORTER_HEALTH_UID,
    'Upstash / Exporter health',
    'The exporter itself: collector polls, calls to the Upstash APIs, rate limits, delivery log reading, cardinality guard and process resources.',
  )
    .withRow(row('Overview'))
    .withPanel(
      stat({
        title: 'Version',
        description: 'Exporter version and Node.js version of each instance.',
        queries: [
          { expr: `upstash_exporter_build_info${accountSel()}`, legend: '{{version}} (Node.js {{nodejs_version}})' },
        ],
        showName: true,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Targets up',
        description: 'Exporter targets Prometheus scrapes successfully (`up`).',
        queries: [{ expr: `sum(up${accountSel()})` }],
        thresholds: ZERO_IS_BAD,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Collectors failing',
        description: 'Collectors whose last poll failed (alert UpstashCollectorFailing after 15 minutes).',
        queries: [{ expr: `count(upstash_exporter_collector_success${sel()} == 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Series dropped (1h)',
        description:
          'Increments folded into overflow series by the series cap in the last hour. Not zero: raise --logs-series-limit or drop opt-in labels.',
        queries: [{ expr: `sum(increase(upstash_exporter_series_dropped_total${accountSel()}[1h])) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 6,
      }),
    )
    .withRow(row('Collectors'))
    .withPanel(
      timeseries({
        title: 'Collector success',
        description: "1 when the collector's last poll succeeded, 0 when it failed.",
        queries: [
          {
            expr: `upstash_exporter_collector_success${sel()}`,
            legend: '{{instance}} {{collector}} {{qstash_region}}',
          },
        ],
        unit: 'short',
        min: 0,
        max: 1,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Poll duration',
        description: "Duration of each collector's last poll. Close to the poll interval means polls start to overlap.",
        queries: [
          {
            expr: `upstash_exporter_collector_duration_seconds${sel()}`,
            legend: '{{instance}} {{collector}} {{qstash_region}}',
          },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Time since last success',
        description: "Age of each collector's data. UpstashCollectorDataStale fires above three poll intervals.",
        queries: [
          {
            expr: `time() - upstash_exporter_collector_last_success_timestamp_seconds${sel()}`,
            legend: '{{instance}} {{collector}} {{qstash_region}}',
          },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Poll failures, overlaps and missed runs',
        description:
          'Per second: failed polls, ticks skipped because the previous poll was still running, ticks missed because the event loop was blocked.',
        queries: [
          {
            expr: `sum by (collector, qstash_region) (rate(upstash_exporter_collector_errors_total${sel()}[${RATE}]))`,
            legend: '{{collector}} {{qstash_region}} errors',
          },
          {
            expr: `sum by (collector, qstash_region) (rate(upstash_exporter_collector_overlaps_total${sel()}[${RATE}]))`,
            legend: '{{collector}} {{qstash_region}} overlaps',
          },
          {
            expr: `sum by (collector, qstash_region) (rate(upstash_exporter_collector_missed_runs_total${sel()}[${RATE}]))`,
            legend: '{{collector}} {{qstash_region}} missed',
          },
        ],
        unit: 'ops',
        span: 24,
      }),
    )
    .withRow(row('Upstream API'))
    .withPanel(
      timeseries({
        title: 'API requests by code',
        description:
          'HTTP attempts to the Upstash APIs per second by status code (`error` and `timeout` when there was no response).',
        queries: [
          {
            expr: `sum by (api, code) (rate(upstash_exporter_api_requests_total${sel()}[${RATE}]))`,
            legend: '{{api}} {{code}}',
          },
        ],
        unit: 'reqps',
        span: 8,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'API request duration p90',
        description: '90th percentile duration of the HTTP attempts by API and endpoint (route template).',
        queries: [
          {
            expr: `histogram_quantile(0.9, sum by (le, api, endpoint) (rate(upstash_exporter_api_request_duration_seconds_bucket${sel()}[${RATE}])))`,
            legend: '{{api}} {{endpoint}}',
          },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Rate limit remaining',
        description:
          'Last Burst-RateLimit-Remaining header seen per API. Near 0: the exporter (or another client of the same token) is being throttled.',
        queries: [{ expr: `upstash_exporter_rate_limit_remaining${sel()}`, legend: '{{instance}} {{api}}' }],
        unit: 'short',
        min: 0,
        span: 8,
      }),
    )
    .withRow(row('Delivery logs'))
    .withPanel(
      timeseries({
        title: 'Log lag',
        description:
          'Now minus the logs watermark. Normal: ingestion delay plus one poll interval; UpstashLogLagHigh fires above 5 minutes.',
        queries: [{ expr: `upstash_exporter_log_lag_seconds${sel()}`, legend: '{{instance}} {{qstash_region}}' }],
        unit: 's',
        thresholds: [
          { value: null, color: 'green' },
          { value: 300, color: 'orange' },
        ],
        thresholdLines: true,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Log gaps',
        description:
          'Log events the service dropped before the exporter read them (estimate), per interval. Any is an undercount (UpstashLogGapsDetected).',
        queries: [
          {
            expr: `sum by (instance, qstash_region) (increase(upstash_exporter_log_gaps_total${sel()}[${RATE}]))`,
            legend: '{{instance}} {{qstash_region}}',
          },
        ],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Log pages and duplicates',
        description:
          'Log pages read per second, and entries seen again (overlap re-reads, page edges) and not counted.',
        queries: [
          { expr: `sum(rate(upstash_exporter_log_pages_total${sel()}[${RATE}]))`, legend: 'pages' },
          {
            expr: `sum(rate(upstash_exporter_log_duplicates_skipped_total${sel()}[${RATE}]))`,
            legend: 'duplicates skipped',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Series dropped by metric',
        description: 'Increments folded into overflow series per second, by metric.',
        queries: [
          {
            expr: `sum by (metric) (rate(upstash_exporter_series_dropped_total${accountSel()}[${RATE}]))`,
            legend: '{{metric}}',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'State checkpoints',
        description: 'State file writes per second by result; errors mean a restart would re-read or lose counts.',
        queries: [
          {
            expr: `sum by (result) (rate(upstash_exporter_state_checkpoints_total${accountSel()}[${RATE}]))`,
            legend: '{{result}}',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Log state walk',
        description:
          '1 while log entries come without a state and the exporter walks one filter per state (more pages per cycle).',
        queries: [{ expr: `upstash_exporter_log_state_walk${sel()}`, legend: '{{instance}}' }],
        unit: 'short',
        min: 0,
        max: 1,
        span: 8,
      }),
    )
    .withRow(row('Process'))
    .withPanel(
      timeseries({
        title: 'CPU',
        description: 'CPU time used per second by the exporter process.',
        queries: [{ expr: `rate(process_cpu_seconds_total${accountSel()}[${RATE}])`, legend: '{{instance}}' }],
        unit: 'percentunit',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Memory',
        description: 'Resident memory and V8 heap used.',
        queries: [
          { expr: `process_resident_memory_bytes${accountSel()}`, legend: '{{instance}} resident' },
          { expr: `sum by (instance) (nodejs_heap_size_used_bytes${accountSel()})`, legend: '{{instance}} heap used' },
        ],
        unit: 'bytes',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Event loop lag p99',
        description:
          'Event loop delay, sampled every 100 ms (the values include the interval: 0.1 s is an idle loop); higher values delay polls and scrapes alike.',
        queries: [{ expr: `nodejs_eventloop_lag_p99_seconds${accountSel()}`, legend: '{{instance}}' }],
        unit: 's',
        span: 8,
      }),
    )
    .build();
}
