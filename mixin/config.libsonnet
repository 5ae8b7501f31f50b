// Settings of the mixin; override with `(import 'mixin.libsonnet') + { _config+:: { ... } }`.
// The defaults render the shipped rules unchanged (deploy/rules).
{
  _config+:: {
    // The label selector of the exporter's scrape job, in the up-based alerts and the freshness
    // SLI. Exact, as kubernetes-mixin's: the job the shipped scrape configs give the exporter
    // (compose: job_name upstash-exporter; Kubernetes: the ServiceMonitor's jobLabel). A regex
    // such as job=~"upstash.*" would also match another Upstash job (a Redis exporter).
    jobSelector: 'job="upstash-exporter"',
    // Where the runbooks are (docs/runbooks.md and docs/slos.md under it).
    runbookUrlBase: 'https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/',
    // The canary probe's queue (--probe-queue), left out of the delivery SLIs and of the alerts on
    // delivery failures, queue backlog and queue wait (docs/alerts.md, "The probe queue").
    probeQueue: 'upstash-exporter-probe',
    // The intervals, in seconds, the exporter polls the schedules and runs the probe at
    // (--poll-interval schedules=..., --probe-interval): the alerts that wait for them follow.
    // (The staleness of every collector reads the interval the exporter exports; nothing to set.)
    pollIntervals: {
      schedules: 60,
      probe: 60,
    },
    // Alert thresholds by alert name: the literal each alert compares against (`... > 0.1`; a
    // ratio as a fraction, a time in seconds). The alert's description follows ("threshold 10%",
    // "threshold 60 s"). Alerts not listed keep the shipped threshold (generated/alert-thresholds.json).
    alertThresholds: {
      // Grace past a schedule's next run: five schedules polls.
      UpstashScheduleMissedRun: 5 * $._config.pollIntervals.schedules,
      // No probe for ten probe intervals.
      UpstashProbeFailing: 10 * $._config.pollIntervals.probe,
      UpstashProbeSlow: 10,
      UpstashDeliveryFailureRatioHigh: 0.1,
      UpstashWorkflowFailureRatioHigh: 0.1,
      UpstashQueueWaitHigh: 60,
      UpstashLogLagHigh: 300,
      UpstashExporterClockSkew: 10,
      UpstashQuotaUsageHigh: 0.8,
      UpstashQuotaUsageCritical: 0.95,
      UpstashDailyRequestHardLimitNear: 0.9,
      UpstashDlqNearLimit: 0.8,
      UpstashWorkflowRunsStuck: 3600,
    },
    // SLO objectives in percent by SLO name (delivery-success, delivery-latency,
    // workflow-run-success, exporter-freshness); unset ones keep deploy/slo/upstash-slos.yaml's.
    // The alert text follows ("objective 99%").
    sloObjectives: {},
    // Burn-rate alert thresholds, as multiples of the error budget (the workbook's, for 30 days).
    sloBurnRates: { page: [14.4, 6], ticket: [3, 1] },
  },
}
