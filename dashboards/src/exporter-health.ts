// Upstash / Exporter health: collectors, upstream API calls, log reading and the process itself.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  RATE,
  ZERO_IS_GOOD,
  accountSel,
  alertThresholds,
  alertValue,
  booleanMapping,
  exportersUp,
  row,
  sel,
  stat,
  timeseries,
  upstashDashboard,
} from './common.js';
import { DELIVERIES_UID, EXPORTER_HEALTH_UID, SLOS_UID } from './uids.js';

// The scrape, the process and the cardinality guard are the exporter's, not a QStash region's:
// their series have no qstash_region, so the region variable does not filter them (the state file
// is per region: its checkpoints carry the label).

export function exporterHealthDashboard(): Dashboard {
  return upstashDashboard(
    EXPORTER_HEALTH_UID,
    'Upstash / Exporter health',
    'The exporter itself: collector polls, calls to the Upstash APIs, rate limits, delivery log and workflow run reading, the canary probe, remediation, cardinality guard and process resources.',
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
      exportersUp({
        title: 'Targets up',
        description:
          'Exporter targets Prometheus scrapes successfully (`up` 1) and those it cannot (`up` 0, red: alert UpstashExporterDown).',
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
        links: [{ title: 'QStash deliveries', uid: DELIVERIES_UID }],
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
        span: 16,
      }),
    )
    .withPanel(
      stat({
        title: 'Polls overdue',
        description:
          'Polls in flight past their deadline (twice the interval, at least 60 s): counted as failed from then on while they go on (docs/http.md).',
        queries: [{ expr: `count(upstash_exporter_collector_poll_overdue${sel()} == 1) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 4,
        height: 8,
      }),
    )
    .withPanel(
      stat({
        title: 'Optional endpoints unavailable',
        description:
          'Optional endpoints a collector reads that answered 404 or 405 (upstash_exporter_endpoint_available 0): their metrics are left out, the rest of the collector goes on.',
        queries: [{ expr: `count(upstash_exporter_endpoint_available${sel()} == 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 4,
        height: 8,
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
        span: 6,
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
        span: 6,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Rate limit remaining',
        description:
          'Last Burst-RateLimit-Remaining and Burst-RateLimit-Limit headers seen per API (requests per second; the exporter uses http.rate_limit_share of the limit). Remaining near 0: the exporter (or another client of the same token) is being throttled.',
        queries: [
          {
            expr: `upstash_exporter_rate_limit_remaining${sel()}`,
            legend: '{{instance}} {{api}} {{qstash_region}} remaining',
          },
          { expr: `upstash_exporter_rate_limit${sel()}`, legend: '{{instance}} {{api}} {{qstash_region}} limit' },
        ],
        unit: 'short',
        min: 0,
        span: 6,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Blocked by rate limiting',
        description:
          'Seconds left during which the exporter sends no request to the API because a 429 asked it to wait (Retry-After or a rate-limit reset); 0 when not blocked.',
        queries: [
          {
            expr: `clamp_min(upstash_exporter_rate_limit_blocked_until_seconds${sel()} - time(), 0)`,
            legend: '{{instance}} {{api}} {{qstash_region}}',
          },
        ],
        unit: 's',
        min: 0,
        span: 6,
      }),
    )
    .withRow(row('Delivery logs'))
    .withPanel(
      timeseries({
        title: 'Log lag',
        links: [{ title: 'SLOs', uid: SLOS_UID }],
        description: `Now minus the logs watermark. Normal: ingestion delay plus one poll interval; UpstashLogLagHigh fires above ${alertValue('UpstashLogLagHigh')} s.`,
        queries: [{ expr: `upstash_exporter_log_lag_seconds${sel()}`, legend: '{{instance}} {{qstash_region}}' }],
        unit: 's',
        thresholds: alertThresholds('UpstashLogLagHigh'),
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
            expr: `sum by (result, qstash_region) (rate(upstash_exporter_state_checkpoints_total${sel()}[${RATE}]))`,
            legend: '{{result}} {{qstash_region}}',
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
        queries: [{ expr: `upstash_exporter_log_state_walk${sel()}`, legend: '{{instance}} {{qstash_region}}' }],
        unit: 'short',
        min: 0,
        max: 1,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Log walk errors',
        description:
          'Log walk cycles that failed per second, by error code (ERR_API_PAGE_TOO_LARGE, ERR_API_NOT_FOUND, ERR_API_DAILY_LIMIT, ...): the watermark stays where it was and the next cycle tries again.',
        queries: [
          {
            expr: `sum by (code, qstash_region) (rate(upstash_exporter_log_walk_errors_total${sel()}[${RATE}]))`,
            legend: '{{code}} {{qstash_region}}',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Late entries and watermark resets',
        description:
          'Per interval: entries that became visible later than the ingestion delay and were still counted (late), those found too late to be counted (missed: an undercount; raise logs.ingestion_delay), and moves of the watermark back from ahead of the service clock (resets).',
        queries: [
          {
            expr: `sum by (qstash_region) (increase(upstash_exporter_log_late_events_total${sel()}[${RATE}]))`,
            legend: 'late {{qstash_region}}',
          },
          {
            expr: `sum by (qstash_region) (increase(upstash_exporter_log_missed_late_events_total${sel()}[${RATE}]))`,
            legend: 'missed {{qstash_region}}',
          },
          {
            expr: `sum by (qstash_region) (increase(upstash_exporter_log_watermark_resets_total${sel()}[${RATE}]))`,
            legend: 'watermark resets {{qstash_region}}',
          },
        ],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Label values cut',
        description:
          'Label values longer than 256 bytes cut with a hash suffix, per second by metric (counted when their series is created): two long values with one prefix stay apart, but read the hash, not the text.',
        queries: [
          {
            expr: `sum by (metric) (rate(upstash_exporter_label_values_truncated_total${accountSel()}[${RATE}]))`,
            legend: '{{metric}}',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withRow(row('Workflow runs reading'))
    .withPanel(
      timeseries({
        title: 'Workflow run pages',
        description:
          'Pages of workflow runs read per second: by the walk of new runs, and by following the runs in progress until they end.',
        queries: [
          {
            expr: `sum by (kind, qstash_region) (rate(upstash_exporter_workflow_pages_total${sel()}[${RATE}]))`,
            legend: '{{kind}} {{qstash_region}}',
          },
        ],
        unit: 'ops',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Workflow watermark lag',
        description:
          'Now minus the creation time up to which every workflow run is counted: how far behind the workflow counts are.',
        queries: [
          {
            expr: `time() - upstash_exporter_workflow_watermark_timestamp_seconds${sel()}`,
            legend: '{{instance}} {{qstash_region}}',
          },
        ],
        unit: 's',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Workflow runs no longer followed',
        description:
          'Runs in progress dropped from the follow list per interval (more than 10000 followed, or no longer served): their end is not counted.',
        queries: [
          {
            expr: `sum by (qstash_region) (increase(upstash_exporter_workflow_runs_dropped_total${sel()}[${RATE}]))`,
            legend: '{{qstash_region}}',
          },
        ],
        unit: 'short',
        span: 8,
      }),
    )
    .withRow(row('Canary probe (black box; off unless --probe-enabled)'))
    .withPanel(
      stat({
        title: 'Probe success',
        description:
          'Whether the last canary probe (a message, or a workflow run with --probe-workflow-url) arrived at the receiver, signature verified, within --probe-timeout; one value per kind and region. "probe off" when the probe is not enabled (docs/active-checks.md).',
        queries: [{ expr: `upstash_probe_success${sel()}`, legend: '{{kind}} {{qstash_region}}' }],
        mappings: booleanMapping('arrived', 'failed', 'green', 'red'),
        noValue: 'probe off',
        valueAndName: true,
        span: 8,
        height: 8,
      }),
    )
    .withPanel(
      stat({
        title: 'Last probe success',
        description:
          'Time since the last probe arrived, per kind and region. Growing: nothing sent through the service arrives. "probe off" when the probe is not enabled; "never" until a probe arrived.',
        queries: [
          {
            expr: `time() - (upstash_probe_last_success_timestamp_seconds${sel()} > 0)`,
            legend: '{{kind}} {{qstash_region}}',
          },
        ],
        unit: 's',
        noValue: 'probe off',
        valueAndName: true,
        span: 8,
        height: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Probe delivery duration',
        links: [{ title: 'QStash deliveries', uid: DELIVERIES_UID }],
        description:
          'Last delivered probe: from the start of the enqueue to its verified arrival at the receiver (delivery), and the time the service took to accept it (accept).',
        queries: [
          { expr: `upstash_probe_delivery_duration_seconds${sel()}`, legend: 'delivery {{kind}} {{qstash_region}}' },
          { expr: `upstash_probe_accept_duration_seconds${sel()}`, legend: 'accept {{kind}} {{qstash_region}}' },
        ],
        unit: 's',
        noValue: 'probe off',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Probe runs by result',
        description: 'Probes run per second by result: success, enqueue_error (the service refused it), timeout.',
        queries: [
          {
            expr: `sum by (kind, result, qstash_region) (rate(upstash_probe_runs_total${sel()}[${RATE}]))`,
            legend: '{{kind}} {{result}} {{qstash_region}}',
          },
        ],
        unit: 'ops',
        noValue: 'probe off',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Probe receiver requests',
        description:
          'Requests to the probe receiver per second by result: accepted, late, duplicate, unknown, invalid_signature (not signed with the signing keys), invalid_body.',
        queries: [
          {
            expr: `sum by (result, qstash_region) (rate(upstash_probe_receipts_total${sel()}[${RATE}]))`,
            legend: '{{result}} {{qstash_region}}',
          },
        ],
        unit: 'reqps',
        noValue: 'probe off',
        span: 12,
      }),
    )
    .withRow(row('Remediation (off unless --remediation-enabled)'))
    .withPanel(
      timeseries({
        title: 'Remediation webhooks',
        description:
          'Alertmanager notifications to the remediation webhook per second by result (unauthorized: alert UpstashRemediationWebhookUnauthorized), and the alerts of accepted ones that caused no action, by reason.',
        queries: [
          {
            expr: `sum by (result) (rate(upstash_remediation_webhooks_total${accountSel()}[${RATE}]))`,
            legend: 'webhook {{result}}',
          },
          {
            expr: `sum by (reason) (rate(upstash_remediation_alerts_ignored_total${accountSel()}[${RATE}]))`,
            legend: 'ignored {{reason}}',
          },
        ],
        unit: 'reqps',
        noValue: 'remediation off',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Remediation actions',
        description:
          'Actions per interval by result: paused, already_paused, dry_run (not taken), not_found, error. A pause stops the schedule until a person resumes it.',
        queries: [
          {
            expr: `sum by (action, result) (increase(upstash_remediation_actions_total${accountSel()}[${RATE}]))`,
            legend: '{{action}} {{result}}',
          },
        ],
        unit: 'short',
        noValue: 'remediation off',
        span: 12,
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
