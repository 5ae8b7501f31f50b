// Settings of the mixin; override with `(import 'mixin.libsonnet') + { _config+:: { ... } }`.
{
  _config+:: {
    // The label selector of your exporter's scrape job, in the up-based alerts and the freshness SLO.
    jobSelector: 'job="upstash-exporter"',
    // Where the runbooks are (docs/runbooks.md and docs/slos.md under it).
    runbookUrlBase: 'https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/',
    // SLO objectives in percent by SLO name (delivery-success, delivery-latency,
    // workflow-run-success, exporter-freshness); unset ones keep deploy/slo/upstash-slos.yaml's.
    sloObjectives: {},
    // Burn-rate alert thresholds, as multiples of the error budget (the workbook's, for 30 days).
    sloBurnRates: { page: [14.4, 6], ticket: [3, 1] },
  },
}
