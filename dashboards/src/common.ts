// Building blocks shared by every dashboard: the data source and label variables, the label
// selector they imply, query targets and one factory per panel type with the project's defaults.
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import {
  BarGaugeDisplayMode,
  BarGaugeNamePlacement,
  BarGaugeSizing,
  BarGaugeValueMode,
  BigValueColorMode,
  BigValueGraphMode,
  BigValueTextMode,
  GraphThresholdsStyleMode,
  LegendDisplayMode,
  LegendPlacement,
  ReduceDataOptionsBuilder,
  SortOrder,
  StackingConfigBuilder,
  StackingMode,
  TableSortByFieldStateBuilder,
  TooltipDisplayMode,
  VisibilityMode,
  VizLegendOptionsBuilder,
  VizOrientation,
  VizTooltipOptionsBuilder,
  GraphThresholdsStyleConfigBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DashboardLinkBuilder,
  DashboardLinkType,
  DatasourceVariableBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import type {
  DashboardLink,
  DataTransformerConfig,
  DynamicConfigValue,
  ThresholdsConfig,
  ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as BarGaugePanelBuilder } from '@grafana/grafana-foundation-sdk/bargauge';
import { PanelBuilder as GaugePanelBuilder } from '@grafana/grafana-foundation-sdk/gauge';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { withMatchers } from './promql.js';
import { alertThreshold, shippedAlert } from './rules.js';

/** Every panel and every target reads the data source chosen in the `datasource` variable. */
export const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

/** Range of rate()/increase() in panels: Grafana sizes it to the scrape interval and the zoom. */
export const RATE = '$__rate_interval';

/** Tag shared by the dashboards; the dashboard links list every dashboard that carries it. */
export const DASHBOARD_TAG = 'upstash';

/**
 * The label matchers of the job, instance and QStash region variables plus the given ones, as a
 * PromQL selector body: sel('state="FAILED"') is
 * `{job=~"$job",instance=~"$instance",qstash_region=~"$qstash_region",state="FAILED"}`. "All"
 * regions is `.*`, which also matches series without the label.
 */
export function sel(...matchers: string[]): string {
  return `{${[...DASHBOARD_MATCHERS, ...matchers].join(',')}}`;
}

/** The matchers of the job, instance and QStash region variables, which every dashboard has. */
const DASHBOARD_MATCHERS = ['job=~"$job"', 'instance=~"$instance"', 'qstash_region=~"$qstash_region"'];

/** `expr` (e.g. what an alert compares, read from its rule) with sel()'s matchers on every selector. */
export function selectAll(expr: string): string {
  return withMatchers(expr, DASHBOARD_MATCHERS);
}

/**
 * The job and instance matchers only, for series of the account rather than of a QStash region
 * (search and vector indexes, the management API), which the region variable cannot filter.
 */
export function accountSel(...matchers: string[]): string {
  return `{${['job=~"$job"', 'instance=~"$instance"', ...matchers].join(',')}}`;
}

/** A multi-value label variable whose "All" matches every value, the empty one included. */
export function labelVariable(name: string, label: string, query: string): QueryVariableBuilder {
  return new QueryVariableBuilder(name)
    .label(label)
    .query(query)
    .definition(query)
    .datasource(DATASOURCE)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue('.*')
    .current({ selected: true, text: 'All', value: '$__all' });
}

/**
 * A dashboard with the project's defaults: the `datasource`, `job`, `instance` and `qstash_region` variables (then
 * `extraVariables`), links to the other Upstash dashboards, crosshair shared between panels.
 */
export function upstashDashboard(
  uid: string,
  title: string,
  description: string,
  extraVariables: QueryVariableBuilder[] = [],
): DashboardBuilder {
  const builder = new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags([DASHBOARD_TAG, 'upstash-exporter'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-6h', to: 'now' })
    .refresh('1m')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(labelVariable('job', 'Job', 'label_values(upstash_exporter_build_info, job)'))
    .withVariable(
      labelVariable('instance', 'Instance', 'label_values(upstash_exporter_build_info{job=~"$job"}, instance)'),
    )
    .withVariable(
      labelVariable(
        'qstash_region',
        'QStash region',
        'label_values(upstash_exporter_collector_success{job=~"$job",instance=~"$instance"}, qstash_region)',
      ),
    )
    .link(
      new DashboardLinkBuilder('Upstash')
        .type(DashboardLinkType.Dashboards)
        .tags([DASHBOARD_TAG])
        .asDropdown(true)
        .includeVars(true)
        .keepTime(true),
    );
  for (const variable of extraVariables) builder.withVariable(variable);
  return builder;
}

/** A row (not collapsed); it carries the data source too, for Grafana's row repeats. */
export function row(title: string): RowBuilder {
  return new RowBuilder(title).datasource(DATASOURCE);
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

export interface Query {
  expr: string;
  /** Legend (time series) or display name (stat, gauge); Grafana's {{label}} syntax. */
  legend?: string;
}

/** Range targets with refIds A, B, ... so overrides by query stay stable. */
function rangeTargets(queries: Query[]): DataqueryBuilder[] {
  return queries.map((query, index) => {
    const target = new DataqueryBuilder().datasource(DATASOURCE).refId(refId(index)).expr(query.expr).range();
    if (query.legend !== undefined) target.legendFormat(query.legend);
    return target;
  });
}

/**
 * Instant targets in table format: one row per series, one column per label plus the value,
 * named `Value #<refId>` (tables always have several queries; a lone query's column is `Value`).
 */
function tableTargets(queries: Query[]): DataqueryBuilder[] {
  return queries.map((query, index) =>
    new DataqueryBuilder()
      .datasource(DATASOURCE)
      .refId(refId(index))
      .expr(query.expr)
      .instant()
      .format(PromQueryFormat.Table),
  );
}

export function refId(index: number): string {
  return String.fromCharCode('A'.charCodeAt(0) + index);
}

// ---------------------------------------------------------------------------------------------
// Thresholds
// ---------------------------------------------------------------------------------------------

export interface ThresholdStep {
  value: number | null;
  color: string;
}

/** Colour of a panel's values past the threshold of an alert of that severity. */
const SEVERITY_COLORS: Record<string, string> = { critical: 'red', warning: 'orange', info: 'yellow' };

/**
 * Threshold steps from alerts of deploy/rules: green, then each alert's comparison constant in the
 * colour of its severity (orange for warning, red for critical). Read at generation, so a panel
 * cannot drift from its alert; test/dashboards/alert-thresholds.test.ts checks each pair.
 * Only for alerts firing above their constant (`>`, `>=`).
 */
export function alertThresholds(...alerts: string[]): ThresholdStep[] {
  const steps = alerts.map((name) => {
    const threshold = alertThreshold(name);
    if (threshold.comparison !== '>' && threshold.comparison !== '>=')
      throw new Error(`alert ${name} fires ${threshold.comparison} ${threshold.value}: not an upper threshold`);
    const severity = shippedAlert(name).labels?.severity ?? 'warning';
    const step = { value: threshold.value, color: SEVERITY_COLORS[severity] ?? 'orange' };
    ALERT_OF_STEP.set(step, name);
    return step;
  });
  return [{ value: null, color: 'green' }, ...steps.sort((a, b) => a.value - b.value)];
}

/**
 * The alert each step made by alertThresholds() stands for, by the step object itself: the
 * builders keep the objects, so the built dashboards can say which step is which alert's
 * (alertThresholdSteps in index.ts; the mixin follows _config.alertThresholds with it).
 */
const ALERT_OF_STEP = new WeakMap<object, string>();

/** The alert whose threshold this step of a built dashboard is, if alertThresholds() made it. */
export function alertOfStep(step: object): string | undefined {
  return ALERT_OF_STEP.get(step);
}

/** The comparison constant of an alert, for a panel's description ("above 10%"). */
export function alertValue(name: string): number {
  return alertThreshold(name).value;
}

/** A ratio as a percentage for descriptions: 0.1 is "10%", 0.955 "95.5%". */
export function percent(ratio: number): string {
  return `${Number((ratio * 100).toFixed(2))}%`;
}

/**
 * Plan quota usage (0..1): orange from UpstashQuotaUsageHigh's constant (80%), red from
 * UpstashQuotaUsageCritical's (95%).
 */
export const QUOTA_THRESHOLDS: ThresholdStep[] = alertThresholds('UpstashQuotaUsageHigh', 'UpstashQuotaUsageCritical');

/** Counts that should be zero (failing collectors, failed runs): red from 1. */
export const ZERO_IS_GOOD: ThresholdStep[] = [
  { value: null, color: 'green' },
  { value: 1, color: 'red' },
];

/** Counts that should be at least one (targets up): red at 0. */
export const ZERO_IS_BAD: ThresholdStep[] = [
  { value: null, color: 'red' },
  { value: 1, color: 'green' },
];

function thresholdsConfig(steps: ThresholdStep[]): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

// ---------------------------------------------------------------------------------------------
// Panels
// ---------------------------------------------------------------------------------------------

export interface PanelSpec {
  title: string;
  /** What the panel shows and how to read it; shown as the panel's info tooltip. */
  description: string;
  queries: Query[];
  /** Grafana unit id: 's', 'bytes', 'percentunit', 'dateTimeFromNow', 'eps', 'reqps', 'short', ... */
  unit?: string;
  /** Width on the 24-column grid; the panels of one line must add up to 24. */
  span?: number;
  height?: number;
  min?: number;
  max?: number;
  decimals?: number;
  thresholds?: ThresholdStep[];
  mappings?: ValueMapping[];
  noValue?: string;
  /** Field overrides by query refId ('A', 'B', ...), e.g. a different unit per query. */
  overridesByQuery?: Record<string, DynamicConfigValue[]>;
  /** Dashboards that explain the panel, by uid and link title: panel links keeping time and filters. */
  links?: PanelLink[];
}

export interface PanelLink {
  title: string;
  /** uid of the shipped dashboard the link opens. */
  uid: string;
}

/**
 * The URL of a shipped dashboard carrying the time range, the data source and the variables every
 * dashboard has (job, instance, qstash_region), as Grafana interpolates panel links.
 */
export function dashboardUrl(uid: string): string {
  const variables = ['datasource', 'job', 'instance', 'qstash_region'].map((name) => `\${${name}:queryparam}`);
  return `/d/${uid}?\${__url_time_range}&${variables.join('&')}`;
}

/** The methods every SDK panel builder has; used to apply a PanelSpec to any panel type. */
interface CommonPanelBuilder {
  title(title: string): unknown;
  description(description: string): unknown;
  datasource(datasource: DataSourceRef): unknown;
  span(width: number): unknown;
  height(height: number): unknown;
  unit(unit: string): unknown;
  min(min: number): unknown;
  max(max: number): unknown;
  decimals(decimals: number): unknown;
  noValue(noValue: string): unknown;
  mappings(mappings: ValueMapping[]): unknown;
  thresholds(thresholds: cog.Builder<ThresholdsConfig>): unknown;
  overrideByQuery(refId: string, properties: DynamicConfigValue[]): unknown;
  links(links: cog.Builder<DashboardLink>[]): unknown;
  withTarget(target: cog.Builder<cog.Dataquery>): unknown;
}

function applySpec<T extends CommonPanelBuilder>(panel: T, spec: PanelSpec, targets: DataqueryBuilder[]): T {
  panel.title(spec.title);
  panel.description(spec.description);
  panel.datasource(DATASOURCE);
  panel.span(spec.span ?? 12);
  panel.height(spec.height ?? 8);
  panel.unit(spec.unit ?? 'short');
  if (spec.min !== undefined) panel.min(spec.min);
  if (spec.max !== undefined) panel.max(spec.max);
  if (spec.decimals !== undefined) panel.decimals(spec.decimals);
  if (spec.noValue !== undefined) panel.noValue(spec.noValue);
  if (spec.mappings !== undefined) panel.mappings(spec.mappings);
  panel.thresholds(thresholdsConfig(spec.thresholds ?? [{ value: null, color: 'green' }]));
  for (const [id, properties] of Object.entries(spec.overridesByQuery ?? {})) panel.overrideByQuery(id, properties);
  if (spec.links !== undefined && spec.links.length > 0) {
    panel.links(
      spec.links.map((link) =>
        new DashboardLinkBuilder(link.title).type(DashboardLinkType.Link).url(dashboardUrl(link.uid)),
      ),
    );
  }
  for (const target of targets) panel.withTarget(target);
  return panel;
}

export interface TimeseriesSpec extends PanelSpec {
  /** Stack the series (parts of one whole, e.g. events by state). */
  stack?: boolean;
  /** Draw the thresholds as dashed lines (alert thresholds). */
  thresholdLines?: boolean;
  /** Legend as a table on the right with last and max values (many series). */
  legendTable?: boolean;
}

export function timeseries(spec: TimeseriesSpec): TimeseriesPanelBuilder {
  const legend = new VizLegendOptionsBuilder().showLegend(true);
  if (spec.legendTable === true) {
    legend.displayMode(LegendDisplayMode.Table).placement(LegendPlacement.Right).calcs(['lastNotNull', 'max']);
  } else {
    legend.displayMode(LegendDisplayMode.List).placement(LegendPlacement.Bottom).calcs([]);
  }
  const panel = applySpec(new TimeseriesPanelBuilder(), spec, rangeTargets(spec.queries))
    .legend(legend)
    .tooltip(new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.Descending))
    .lineWidth(1)
    .fillOpacity(spec.stack === true ? 30 : 10)
    .showPoints(VisibilityMode.Never)
    .spanNulls(false);
  if (spec.stack === true) panel.stacking(new StackingConfigBuilder().mode(StackingMode.Normal));
  if (spec.thresholdLines === true) {
    panel.thresholdsStyle(new GraphThresholdsStyleConfigBuilder().mode(GraphThresholdsStyleMode.Dashed));
  }
  return panel;
}

export interface StatSpec extends PanelSpec {
  /** Show a sparkline behind the value. */
  sparkline?: boolean;
  /** Show the legend (display name) instead of the value: for _info metrics' labels. */
  showName?: boolean;
  /** Show value and name: for panels with several queries. */
  valueAndName?: boolean;
}

export function stat(spec: StatSpec): StatPanelBuilder {
  const textMode =
    spec.showName === true
      ? BigValueTextMode.Name
      : spec.valueAndName === true
        ? BigValueTextMode.ValueAndName
        : BigValueTextMode.Auto;
  return applySpec(new StatPanelBuilder(), { span: 4, height: 4, ...spec }, rangeTargets(spec.queries))
    .graphMode(spec.sparkline === true ? BigValueGraphMode.Area : BigValueGraphMode.None)
    .colorMode(spec.showName === true ? BigValueColorMode.None : BigValueColorMode.Value)
    .textMode(textMode)
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .orientation(VizOrientation.Auto);
}

export function gauge(spec: PanelSpec): GaugePanelBuilder {
  return applySpec(new GaugePanelBuilder(), { span: 6, height: 8, ...spec }, rangeTargets(spec.queries))
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .showThresholdMarkers(true)
    .showThresholdLabels(false)
    .orientation(VizOrientation.Auto);
}

export function bargauge(spec: PanelSpec): BarGaugePanelBuilder {
  return applySpec(new BarGaugePanelBuilder(), spec, rangeTargets(spec.queries))
    .displayMode(BarGaugeDisplayMode.Gradient)
    .valueMode(BarGaugeValueMode.Color)
    .namePlacement(BarGaugeNamePlacement.Left)
    .showUnfilled(true)
    .sizing(BarGaugeSizing.Auto)
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .orientation(VizOrientation.Horizontal);
}

export interface TableColumn {
  /** Column header. */
  title: string;
  /** Grafana unit of the column, e.g. 'dateTimeFromNow' for a timestamp in milliseconds. */
  unit?: string;
  mappings?: ValueMapping[];
  thresholds?: ThresholdStep[];
  /** Colour the cell text by its thresholds or mappings. */
  colored?: boolean;
}

export interface TableSpec extends Omit<PanelSpec, 'queries'> {
  /** Label columns to show, in order, with their headers: { schedule_id: 'Schedule', ... }. */
  labels: Record<string, string>;
  /**
   * Instant queries joined on their common labels (one row per resource). The first is usually
   * an _info metric whose value is not shown; give it `column: null`.
   */
  columns: { expr: string; column: TableColumn | null }[];
  /** Column header to sort the rows by. */
  sortBy?: string;
  /** Sort descending (largest first). */
  sortDesc?: boolean;
}

/**
 * A table of resources: instant queries in table format merged on their common labels, then
 * organised so that the chosen labels and the value columns appear with readable headers.
 */
export function table(spec: TableSpec): TablePanelBuilder {
  const queries = spec.columns.map((column) => ({ expr: column.expr }));
  const panel = applySpec(new TablePanelBuilder(), { span: 24, height: 10, ...spec, queries }, tableTargets(queries));
  const renameByName: Record<string, string> = {};
  const indexByName: Record<string, number> = {};
  const excludeByName: Record<string, boolean> = { Time: true, job: true, instance: true, __name__: true };
  // Rows of QStash resources are per region (a queue of one name can live in both).
  renameByName['qstash_region'] = 'Region';
  let position = 0;
  for (const [label, header] of Object.entries(spec.labels)) {
    renameByName[label] = header;
    indexByName[label] = position++;
  }
  spec.columns.forEach((column, index) => {
    const field = `Value #${refId(index)}`;
    if (column.column === null) {
      excludeByName[field] = true;
      return;
    }
    renameByName[field] = column.column.title;
    indexByName[field] = position++;
    const properties: DynamicConfigValue[] = [];
    if (column.column.unit !== undefined) properties.push({ id: 'unit', value: column.column.unit });
    if (column.column.mappings !== undefined) properties.push({ id: 'mappings', value: column.column.mappings });
    if (column.column.thresholds !== undefined) {
      properties.push({ id: 'thresholds', value: { mode: ThresholdsMode.Absolute, steps: column.column.thresholds } });
    }
    if (column.column.colored === true) properties.push({ id: 'custom.cellOptions', value: { type: 'color-text' } });
    // Overrides apply after the organize transformation renamed the field.
    if (properties.length > 0) panel.overrideByName(column.column.title, properties);
  });
  const transformations: DataTransformerConfig[] = [
    { id: 'merge', options: {} },
    { id: 'organize', options: { excludeByName, indexByName, renameByName, includeByName: {} } },
  ];
  panel.transformations(transformations);
  if (spec.sortBy !== undefined)
    panel.sortBy([new TableSortByFieldStateBuilder().displayName(spec.sortBy).desc(spec.sortDesc === true)]);
  return panel;
}

/** Usage of one plan quota, 0..1 (recording rule upstash:quota_usage:ratio), as a single value. */
export function quotaUsage(quota: string): string {
  return `max(upstash:quota_usage:ratio${sel(`quota="${quota}"`)})`;
}

/** A gauge of one plan quota's usage with the quota alerts' thresholds (UpstashQuotaUsageHigh, UpstashQuotaUsageCritical). */
export function quotaGauge(spec: Omit<PanelSpec, 'queries'> & { quota: string }): GaugePanelBuilder {
  const { quota, ...panel } = spec;
  return gauge({
    unit: 'percentunit',
    min: 0,
    max: 1,
    thresholds: QUOTA_THRESHOLDS,
    ...panel,
    queries: [{ expr: quotaUsage(quota) }],
  });
}

/**
 * Exporter targets up and down (`up`): the count of each, so a replica that is down shows next to
 * those that are up instead of hiding in a sum; "down" is red from 1.
 */
export function exportersUp(spec: Omit<StatSpec, 'queries'>): StatPanelBuilder {
  return stat({
    ...spec,
    queries: [
      { expr: `count(up${accountSel()} == 1) or vector(0)`, legend: 'up' },
      { expr: `count(up${accountSel()} == 0) or vector(0)`, legend: 'down' },
    ],
    valueAndName: true,
    thresholds: [{ value: null, color: 'text' }],
    overridesByQuery: {
      A: [{ id: 'thresholds', value: { mode: ThresholdsMode.Absolute, steps: ZERO_IS_BAD } }],
      B: [{ id: 'thresholds', value: { mode: ThresholdsMode.Absolute, steps: ZERO_IS_GOOD } }],
    },
  });
}

/** Value mapping for 0/1 gauges: 1 shows `yes`, 0 shows `no`, each in its colour. */
export function booleanMapping(yes: string, no: string, yesColor = 'green', noColor = 'text'): ValueMapping[] {
  return [
    {
      type: MappingType.ValueToText,
      options: { '1': { text: yes, color: yesColor, index: 0 }, '0': { text: no, color: noColor, index: 1 } },
    },
  ];
}

/**
 * A table column of the share of a plan limit used (0..1), coloured by the quota alerts' thresholds
 * unless the limit has alerts of its own (`alertThresholds(...)`).
 */
export function limitUsedColumn(title: string, thresholds: ThresholdStep[] = QUOTA_THRESHOLDS): TableColumn {
  return { title, unit: 'percentunit', thresholds, colored: true };
}
