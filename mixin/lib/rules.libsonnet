// The shipped rule groups (mixin/generated/, from deploy/rules by `npm run deploy:generate`) with
// _config applied: job selector, runbook base, SLO objectives and burn-rate thresholds. With the
// default _config the groups are the shipped ones, unchanged.
local shippedJobSelector = 'job="upstash-exporter"';
local shippedRunbookBase = 'https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/';
local shippedBurnRates = { page: [14.4, 6], ticket: [3, 1] };

local files = [
  import '../generated/upstash-exporter.rules.json',
  import '../generated/upstash-slos.rules.json',
  import '../generated/upstash-redis.rules.json',
];

local hasAlert(group) = std.length([rule for rule in group.rules if std.objectHas(rule, 'alert')]) > 0;

// Through placeholders, so that a new factor equal to another shipped one is not replaced again.
local burnRates(config, rule) =
  local severity = rule.labels.sloth_severity;
  local indexes = std.range(0, std.length(shippedBurnRates[severity]) - 1);
  local marked = std.foldl(
    function(expr, i) std.strReplace(expr, '(%s * slo:error_budget:ratio' % shippedBurnRates[severity][i], '(@burn%d@ * slo:error_budget:ratio' % i),
    indexes,
    rule.expr,
  );
  std.foldl(function(expr, i) std.strReplace(expr, '@burn%d@' % i, '%s' % config.sloBurnRates[severity][i]), indexes, marked);

local applyConfig(config, rule) =
  local labels = if std.objectHas(rule, 'labels') then rule.labels else {};
  local slo = if std.objectHas(labels, 'sloth_slo') then labels.sloth_slo else null;
  local objective = if slo != null && std.objectHas(config.sloObjectives, slo) then config.sloObjectives[slo] else null;
  local record = if std.objectHas(rule, 'record') then rule.record else null;
  local expr =
    if objective != null && record == 'slo:objective:ratio' then 'vector(%s)' % (objective / 100)
    else if objective != null && record == 'slo:error_budget:ratio' then 'vector(%s)' % ((100 - objective) / 100)
    else if std.objectHas(labels, 'sloth_severity') then burnRates(config, rule)
    else rule.expr;
  rule {
    expr: std.strReplace(expr, shippedJobSelector, config.jobSelector),
  } + (
    if std.objectHas(rule, 'annotations') && std.objectHas(rule.annotations, 'runbook_url') then {
      annotations+: { runbook_url: std.strReplace(rule.annotations.runbook_url, shippedRunbookBase, config.runbookUrlBase) },
    } else {}
  );

{
  // Every shipped group, in the files' order, with _config applied.
  groups(config):: [
    group { rules: [applyConfig(config, rule) for rule in group.rules] }
    for file in files
    for group in file.groups
  ],
  // Groups holding alerts keep their recording rules: an alert reads the values its group
  // recorded in the same evaluation.
  alertGroups(config):: [group for group in self.groups(config) if hasAlert(group)],
  recordingGroups(config):: [group for group in self.groups(config) if !hasAlert(group)],
}
