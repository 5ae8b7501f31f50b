// The shipped rule groups (mixin/generated/, from deploy/rules by `npm run deploy:generate`) with
// _config applied: job selector, runbook base, probe queue, alert thresholds, SLO objectives and
// burn-rate thresholds, in the expressions and in the alert text. With the default _config the
// groups are the shipped ones, unchanged.
local shipped = {
  jobSelector: 'job="upstash-exporter"',
  runbookBase: 'https://github.com/upstash-exporter/upstash-exporter/blob/main/docs/',
  probeQueue: 'queue!="upstash-exporter-probe"',
  burnRates: { page: [14.4, 6], ticket: [3, 1] },
  // { alertname: { op, value, text, index } }: the literal each alert compares against and its
  // offset in the expression (deploy/kubernetes/generator/mixin.ts, alertThreshold()).
  thresholds: import '../generated/alert-thresholds.json',
};

// [{ file, groups }] of every deploy/rules/*.rules.yml, in the PrometheusRule's order.
local files = import '../generated/rules.json';

local hasAlert(group) = std.length([rule for rule in group.rules if std.objectHas(rule, 'alert')]) > 0;

// A number as a short decimal. 99 / 100 is 0.98999999999999999 as a double, which jsonnet writes
// out in full; 12 decimals, trailing zeros trimmed, give 0.99 (and 0.001 for 0.000999999...).
local decimal(x) = std.rstripChars(std.rstripChars(std.format('%.12f', x), '0'), '.');

// Through placeholders, so that a new factor equal to another shipped one is not replaced again.
local burnRates(config, rule) =
  local severity = rule.labels.sloth_severity;
  local indexes = std.range(0, std.length(shipped.burnRates[severity]) - 1);
  local marked = std.foldl(
    function(expr, i) std.strReplace(expr, '(%s * slo:error_budget:ratio' % shipped.burnRates[severity][i], '(@burn%d@ * slo:error_budget:ratio' % i),
    indexes,
    rule.expr,
  );
  std.foldl(function(expr, i) std.strReplace(expr, '@burn%d@' % i, decimal(config.sloBurnRates[severity][i])), indexes, marked);

// The SLO alert's description: "objective 99.9% over 30d; page at 14.4x over 1h and 5m, or 6x over ...".
local sloText(config, rule, objective) =
  local severity = rule.labels.sloth_severity;
  local factors = shipped.burnRates[severity];
  local wanted = config.sloBurnRates[severity];
  local text = rule.annotations.description;
  local after = std.findSubstr('objective ', text)[0] + std.length('objective ');
  local shippedObjective = std.substr(text, after, std.findSubstr('%', text[after:])[0]);
  local withObjective =
    if objective == null then text
    else std.strReplace(text, 'objective %s%%' % shippedObjective, 'objective %s%%' % decimal(objective));
  std.strReplace(
    std.strReplace(withObjective, '%s at %sx over' % [severity, factors[0]], '%s at %sx over' % [severity, decimal(wanted[0])]),
    ', or %sx over' % factors[1],
    ', or %sx over' % decimal(wanted[1]),
  );

// An alert's threshold literal replaced at its offset; its description's "threshold 10%" or
// "threshold 60 s" follows.
local threshold(config, rule) =
  local name = if std.objectHas(rule, 'alert') then rule.alert else null;
  local known = if name != null && std.objectHas(shipped.thresholds, name) then shipped.thresholds[name] else null;
  local wanted = if known != null && std.objectHas(config.alertThresholds, name) then config.alertThresholds[name] else null;
  if wanted == null || wanted == known.value then rule
  else
    local expr = std.substr(rule.expr, 0, known.index) + decimal(wanted) +
                 std.substr(rule.expr, known.index + std.length(known.text), std.length(rule.expr));
    local text(s) = std.strReplace(
      std.strReplace(s, 'threshold %s%%' % decimal(known.value * 100), 'threshold %s%%' % decimal(wanted * 100)),
      'threshold %s s' % decimal(known.value),
      'threshold %s s' % decimal(wanted),
    );
    rule {
      expr: expr,
      annotations+: { description: text(rule.annotations.description) },
    };

// The SLO of a rule: its sloth_slo label, or for an alert its group's (upstash-slos.<slo>.alerts).
local sloOf(group, labels) =
  if std.objectHas(labels, 'sloth_slo') then labels.sloth_slo
  else if std.startsWith(group.name, 'upstash-slos.') then std.split(group.name, '.')[1]
  else null;

local applyConfig(config, group, rule) =
  local labels = if std.objectHas(rule, 'labels') then rule.labels else {};
  local slo = sloOf(group, labels);
  local objective = if slo != null && std.objectHas(config.sloObjectives, slo) then config.sloObjectives[slo] else null;
  local record = if std.objectHas(rule, 'record') then rule.record else null;
  local isSloAlert = std.objectHas(labels, 'sloth_severity');
  local thresholded = threshold(config, rule);
  local expr =
    if objective != null && record == 'slo:objective:ratio' then 'vector(%s)' % decimal(objective / 100)
    else if objective != null && record == 'slo:error_budget:ratio' then 'vector(%s)' % decimal((100 - objective) / 100)
    else if isSloAlert then burnRates(config, rule)
    else thresholded.expr;
  local selectors(s) = std.strReplace(
    std.strReplace(s, shipped.jobSelector, config.jobSelector),
    shipped.probeQueue,
    'queue!="%s"' % config.probeQueue,
  );
  thresholded {
    expr: selectors(expr),
  } + (
    if std.objectHas(rule, 'annotations') then {
      annotations+: {
        [if std.objectHas(rule.annotations, 'runbook_url') then 'runbook_url']:
          std.strReplace(rule.annotations.runbook_url, shipped.runbookBase, config.runbookUrlBase),
        [if std.objectHas(rule.annotations, 'description') then 'description']:
          selectors(if isSloAlert then sloText(config, rule, objective) else thresholded.annotations.description),
      },
    } else {}
  );

{
  // Every shipped group, in the files' order, with _config applied.
  groups(config):: [
    group { rules: [applyConfig(config, group, rule) for rule in group.rules] }
    for file in files
    for group in file.groups
  ],
  // Groups holding alerts keep their recording rules: an alert reads the values its group
  // recorded in the same evaluation.
  alertGroups(config):: [group for group in self.groups(config) if hasAlert(group)],
  recordingGroups(config):: [group for group in self.groups(config) if !hasAlert(group)],
}
