// The exporter's own families (upstash_exporter_*) as data, declared as the collectors declare
// theirs (families.ts): SelfMetrics (self.ts) creates each metric from its row, docs/metrics.md's
// "The exporter itself" table is written from them, and the tests read the list here.
import { LABEL_VALUE_MAX_BYTES } from './cardinality.js';
import type { Family } from './families.js';

const COLLECTOR = ['collector', 'qstash_region'] as const;
const API = ['api', 'qstash_region'] as const;
const POLLS = 'each poll of the collector instance (the runner)';
const ATTEMPTS = 'each HTTP attempt of the API clients';

export const SELF_FAMILIES = {
  buildInfo: {
    name: 'upstash_exporter_build_info',
    type: 'gauge',
    labelNames: ['version', 'revision', 'nodejs_version'],
    meaning: 'Build of the exporter; value 1, metadata in the labels',
    source: 'the package version, UPSTASH_EXPORTER_REVISION (set at image build, else unknown), the Node.js version',
  },
  collectorSuccess: {
    name: 'upstash_exporter_collector_success',
    type: 'gauge',
    labelNames: COLLECTOR,
    meaning:
      'Whether the last poll of the collector succeeded (1) or failed (0); metrics are served from the last successful poll',
    details:
      'A collector whose every endpoint the service lacks (usage without `/v2/qstash/stats*`, workflows without `/v2/workflows/*`) succeeds with nothing to export: it is unsupported, not failing, and its landing page summary says so.',
    source: POLLS,
  },
  endpointAvailable: {
    name: 'upstash_exporter_endpoint_available',
    type: 'gauge',
    // qstash_region: the region of the QStash client that asked (absent for the management API's).
    labelNames: ['collector', 'endpoint', 'qstash_region'],
    meaning:
      'Whether the service has an optional endpoint the collector reads (1) or answered 404/405 (0: its metrics are left out, asked again every 10 minutes); absent until asked',
    details:
      'The rest of the collector goes on. Endpoints: `GET /v2/globalParallelism` (queues), `GET /v2/flowControl` (flow_control), `GET /v2/qstash/stats[/{id}]` (usage), `GET /v2/workflows/events|logs` (workflows).',
    source: "the answers of the collector's optional endpoints",
  },
  collectorDuration: {
    name: 'upstash_exporter_collector_duration_seconds',
    type: 'gauge',
    labelNames: COLLECTOR,
    meaning: 'Duration of the last poll of the collector',
    source: POLLS,
  },
  collectorLastSuccess: {
    name: 'upstash_exporter_collector_last_success_timestamp_seconds',
    type: 'gauge',
    labelNames: COLLECTOR,
    meaning: 'When the last successful poll of the collector ended (0: never)',
    source: POLLS,
  },
  collectorPollInterval: {
    name: 'upstash_exporter_collector_poll_interval_seconds',
    type: 'gauge',
    labelNames: COLLECTOR,
    meaning:
      'The interval the collector is polled at, as scheduled (--poll-interval, rounded to what the scheduler can keep); the staleness alert reads it',
    details: 'UpstashCollectorDataStale fires at three times it.',
    source: "the runner's schedule",
  },
  collectorErrors: {
    name: 'upstash_exporter_collector_errors_total',
    type: 'counter',
    labelNames: COLLECTOR,
    meaning: 'Polls of the collector that failed',
    source: POLLS,
  },
  collectorOverlaps: {
    name: 'upstash_exporter_collector_overlaps_total',
    type: 'counter',
    labelNames: COLLECTOR,
    meaning: 'Scheduled polls skipped because the previous poll of the collector was still running',
    source: POLLS,
  },
  collectorPollOverdue: {
    name: 'upstash_exporter_collector_poll_overdue',
    type: 'gauge',
    labelNames: COLLECTOR,
    meaning:
      'Whether the poll of the collector in flight runs past its deadline (1; counted as a failed poll then, success 0) or not (0)',
    details: 'The deadline is twice the interval, at least 60 s ([http.md](http.md)); the poll goes on.',
    source: POLLS,
  },
  collectorMissedRuns: {
    name: 'upstash_exporter_collector_missed_runs_total',
    type: 'counter',
    labelNames: COLLECTOR,
    meaning: 'Scheduled polls the scheduler missed (event loop blocked past the tolerance)',
    details: 'Not the ticks a forward jump of the wall clock went over.',
    source: "the runner's schedule",
  },
  apiRequests: {
    name: 'upstash_exporter_api_requests_total',
    type: 'counter',
    labelNames: ['api', 'endpoint', 'code', 'qstash_region'],
    meaning:
      'HTTP attempts to an upstream API by route template and status code (error/timeout when no response, daily_limit for a 429 of the daily request limit)',
    details: 'A 429 of the daily request limit is not retried.',
    source: ATTEMPTS,
  },
  apiRequestDuration: {
    name: 'upstash_exporter_api_request_duration_seconds',
    type: 'histogram',
    labelNames: ['api', 'endpoint', 'qstash_region'],
    meaning: 'Duration of HTTP attempts to an upstream API by route template',
    source: ATTEMPTS,
  },
  rateLimitRemaining: {
    name: 'upstash_exporter_rate_limit_remaining',
    type: 'gauge',
    labelNames: API,
    meaning: 'Last Burst-RateLimit-Remaining header seen from the upstream API',
    source: 'Burst-RateLimit-Remaining header of the answers',
  },
  rateLimit: {
    name: 'upstash_exporter_rate_limit',
    type: 'gauge',
    labelNames: API,
    meaning:
      'Last Burst-RateLimit-Limit header seen from the upstream API (requests per second; the exporter uses http.rate_limit_share of it)',
    source: 'Burst-RateLimit-Limit header of the answers',
  },
  rateLimitBlockedUntil: {
    name: 'upstash_exporter_rate_limit_blocked_until_seconds',
    type: 'gauge',
    labelNames: API,
    meaning:
      'Until when (unix seconds) the exporter sends no request to the upstream API, as a 429 asked (Retry-After or rate-limit reset, at most http.max_retry_after when set); 0: requests may go',
    details: 'Every collector of the API keeps that wait ([counting.md](counting.md)).',
    source: "the API client's call gate",
  },
  clockOffset: {
    name: 'upstash_exporter_clock_offset_seconds',
    type: 'gauge',
    labelNames: API,
    meaning:
      "This machine's clock minus the upstream API's, estimated from the Date header of its answers (positive: this machine is ahead; about half a second of uncertainty); absent before the first answer",
    source: 'Date header of the answers',
  },
  seriesDropped: {
    name: 'upstash_exporter_series_dropped_total',
    type: 'counter',
    labelNames: ['metric'],
    meaning:
      'Increments folded into an overflow series (label values __overflow__) because the metric reached its series cap',
    details: 'Inventory gauges: series folded, counted on every poll.',
    source: 'the series caps of every labelled family',
  },
  labelValuesTruncated: {
    name: 'upstash_exporter_label_values_truncated_total',
    type: 'counter',
    labelNames: ['metric'],
    meaning: `Label values longer than ${LABEL_VALUE_MAX_BYTES} bytes cut to that length with a hash suffix, counted when their series is created`,
    details: 'Inventory gauges: on every poll.',
    source: 'the label bounds of every labelled family',
  },
} as const satisfies Record<string, Family>;
