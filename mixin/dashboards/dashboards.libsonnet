// grafanaDashboards: every shipped dashboard by file name (dashboards/*.json, built from
// dashboards/src with grafana-foundation-sdk). They pick their data source with a variable.
{
  grafanaDashboards+:: import '../generated/dashboards.json',
}
