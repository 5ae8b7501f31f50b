// The upstash-exporter monitoring mixin: the alerts, recording rules and dashboards this
// repository ships (deploy/rules, dashboards), rendered from the same files. See README.md.
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
