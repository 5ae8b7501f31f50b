// prometheusRules: the groups of recording rules only (the SLO ratios and budgets among them).
local rules = import '../lib/rules.libsonnet';

{
  prometheusRules+:: {
    groups+: rules.recordingGroups($._config),
  },
}
