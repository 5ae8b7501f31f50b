// prometheusAlerts: the groups that hold alerts (with the recording rules they read first).
local rules = import '../lib/rules.libsonnet';

{
  prometheusAlerts+:: {
    groups+: rules.alertGroups($._config),
  },
}
