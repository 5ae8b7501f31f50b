// grafanaDashboards: every shipped dashboard by file name (dashboards/*.json, built from
// dashboards/src with grafana-foundation-sdk). They pick their data source with a variable.
// A panel step that stands for an alert's threshold (generated/dashboard-alert-thresholds.json:
// { alertname: [{ file, path }] }, written by `npm run dashboards`) follows
// _config.alertThresholds, as the alert does; with the defaults the dashboards are the shipped ones.
local shipped = import '../generated/dashboards.json';
local stepsByAlert = import '../generated/dashboard-alert-thresholds.json';
// The thresholds the shipped rules state: an alert the rules cannot override keeps its panels too.
local ruleThresholds = import '../generated/alert-thresholds.json';

// `value` with the element at `path` (keys and array indexes) replaced by `new`.
local setAt(value, path, new) =
  if std.length(path) == 0 then new
  else if std.isArray(value) then
    [if i == path[0] then setAt(value[i], path[1:], new) else value[i] for i in std.range(0, std.length(value) - 1)]
  else value { [path[0]]: setAt(value[path[0]], path[1:], new) };

local getAt(value, path) = std.foldl(function(inner, key) inner[key], path, value);

// [{ file, path, value }]: the steps to move, those of overridden alerts whose value differs.
local patches(config) = [
  step { value: config.alertThresholds[alert] }
  for alert in std.objectFields(stepsByAlert)
  if std.objectHas(config.alertThresholds, alert)
     && std.objectHas(ruleThresholds, alert)
     && config.alertThresholds[alert] != ruleThresholds[alert].value
  for step in stepsByAlert[alert]
];

local patched(config) = std.foldl(
  function(dashboards, patch)
    local step = getAt(dashboards[patch.file], patch.path);
    dashboards { [patch.file]: setAt(dashboards[patch.file], patch.path, step { value: patch.value }) },
  patches(config),
  shipped,
);

{
  grafanaDashboards+:: patched($._config),
}
