// Prometheus rules from an SLO spec, with the multi-window, multi-burn-rate alerts of the Google
// SRE workbook ("Alerting on SLOs"): the error ratio recorded over 5m, 30m, 1h, 2h, 6h, 1d and
// 3d; a page when the budget burns 14.4x over 1h and 5m or 6x over 6h and 30m, a ticket at 3x
// over 1d and 2h or 1x over 3d and 6h (factors for a 30-day period: each pair spends 2%, 5%,
// 10% and 10% of the period's budget in its long window); the error budget remaining over the
// period. Series and label names are Sloth's (slo:sli_error:ratio_rate5m, sloth_id, ...), so
// the dashboard reads rules made by Sloth from the same spec as well.
import { Document } from 'yaml';
import { parseDuration } from '../common/duration.js';
import { type Slo, type SloSpec, WINDOW_VARIABLE } from './spec.js';

/** The windows whose error ratio is recorded; the alerts read them in pairs. */
export const SLI_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
type SliWindow = (typeof SLI_WINDOWS)[number];

export const DEFAULT_PERIOD = '30d';

interface BurnWindow {
  severity: 'page' | 'ticket';
  long: SliWindow;
  short: SliWindow;
  /** Share of the period's error budget spent over the long window when the alert fires. */
  budgetShare: number;
}

/** The workbook's four pairs of windows. */
export const BURN_WINDOWS: readonly BurnWindow[] = [
  { severity: 'page', long: '1h', short: '5m', budgetShare: 0.02 },
  { severity: 'page', long: '6h', short: '30m', budgetShare: 0.05 },
  { severity: 'ticket', long: '1d', short: '2h', budgetShare: 0.1 },
  { severity: 'ticket', long: '3d', short: '6h', budgetShare: 0.1 },
];

/**
 * An events SLI alerts only when its long window holds more than one bad event: one failure on a
 * quiet account, or the first failure a brand-new exporter counts (rate() over a few minutes of
 * counter history), is a 100% error ratio but not a burn worth a page.
 */
export const MIN_BAD_EVENTS = 1.5;

/**
 * An alert needs its long window to hold history: the 5m error ratio must have been recorded over
 * at least half the long window, at most an hour of it (30 minutes for the 1h pair, an hour for
 * the others), counted as its samples in the long window against those of the last 5 minutes, so
 * whatever the evaluation interval. A fresh Prometheus, or a new exporter or region, with a burst
 * of failures has a few minutes of data behind a 1h or 3d ratio: no page until that history is
 * there, as a sustained burn then has.
 */
export const MIN_HISTORY_SHARE = 0.5;
export const MAX_HISTORY = '1h';

/** The history an alert of this pair needs, seconds. */
export function requiredHistorySeconds(window: BurnWindow): number {
  return Math.min(MIN_HISTORY_SHARE * seconds(window.long), seconds(MAX_HISTORY));
}

/** The region an SLO series describes, in an alert's text (absent from an SLO not split by region). */
const REGION_TEXT = '{{ with $labels.qstash_region }} in region {{ . }}{{ end }}';

export interface RuleOptions {
  /** SLO period, e.g. 30d (Sloth's --default-slo-period). */
  period?: string;
  /** Where the spec came from, for the generated file's header. */
  source?: string;
}

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: Rule[];
}

/** Twelve significant digits: 0.02 * 720 is 14.4, not 14.399999999999999. */
const round = (value: number): number => Number(value.toPrecision(12));

const seconds = (window: string): number => parseDuration(window) / 1000;

/** Burn-rate factor of a pair of windows for a period: 14.4, 6, 3 and 1 for 30 days. */
export function burnFactor(window: BurnWindow, period: string): number {
  return round((window.budgetShare * seconds(period)) / seconds(window.long));
}

const fill = (query: string, window: string): string => query.trim().split(WINDOW_VARIABLE).join(window);

/** `slo:sli_error:ratio_rate5m` and so on. */
export const errorRatioRecord = (window: string): string => `slo:sli_error:ratio_rate${window}`;

export function sloId(spec: SloSpec, slo: Slo): string {
  return `${spec.service}-${slo.name}`;
}

/** The error ratio over one window: bad / total, absent (not NaN) when nothing happened. */
function errorRatioExpr(slo: Slo, window: string): string {
  if (slo.sli.raw !== undefined) return fill(slo.sli.raw.error_ratio_query, window);
  const events = slo.sli.events!;
  return `(${fill(events.error_query, window)})\n/\n((${fill(events.total_query, window)}) > 0)\n`;
}

export function generateRuleGroups(spec: SloSpec, options: RuleOptions = {}): RuleGroup[] {
  const period = options.period ?? DEFAULT_PERIOD;
  const periodDays = seconds(period) / 86_400;
  return spec.slos.flatMap((slo) => {
    const id = sloId(spec, slo);
    const idLabels = { sloth_id: id, sloth_service: spec.service, sloth_slo: slo.name };
    const sloLabels = { ...spec.labels, ...slo.labels };
    const select = `{sloth_id="${id}"}`;
    const join = 'on (sloth_id, sloth_slo, sloth_service) group_left ()';
    const budget = round(1 - slo.objective / 100);

    const sli: RuleGroup = {
      name: `upstash-slos.${slo.name}.sli`,
      rules: SLI_WINDOWS.map((window) => ({
        record: errorRatioRecord(window),
        expr: errorRatioExpr(slo, window),
        labels: { ...sloLabels, ...idLabels, sloth_window: window },
      })),
    };

    const periodRecord = errorRatioRecord(period);
    const meta: RuleGroup = {
      name: `upstash-slos.${slo.name}.meta`,
      rules: [
        {
          record: 'slo:objective:ratio',
          expr: `vector(${round(slo.objective / 100)})`,
          labels: { ...sloLabels, ...idLabels },
        },
        { record: 'slo:error_budget:ratio', expr: `vector(${budget})`, labels: { ...sloLabels, ...idLabels } },
        { record: 'slo:time_period:days', expr: `vector(${periodDays})`, labels: { ...sloLabels, ...idLabels } },
        {
          record: 'slo:current_burn_rate:ratio',
          expr: `${errorRatioRecord('5m')}${select}\n/ ${join}\nslo:error_budget:ratio${select}\n`,
          labels: { ...sloLabels, ...idLabels },
        },
        {
          // The mean of the 5m ratios over the period, as Sloth does: one sample per evaluation
          // instead of the period's raw samples. Intervals without events have no ratio and count
          // for nothing.
          record: periodRecord,
          expr: `sum_over_time(${errorRatioRecord('5m')}${select}[${period}])\n/\ncount_over_time(${errorRatioRecord('5m')}${select}[${period}])\n`,
          labels: { ...sloLabels, ...idLabels, sloth_window: period },
        },
        {
          record: 'slo:period_burn_rate:ratio',
          expr: `${periodRecord}${select}\n/ ${join}\nslo:error_budget:ratio${select}\n`,
          labels: { ...sloLabels, ...idLabels },
        },
        {
          record: 'slo:period_error_budget_remaining:ratio',
          expr: `1 - slo:period_burn_rate:ratio${select}`,
          labels: { ...sloLabels, ...idLabels },
        },
      ],
    };

    const ignored = ['sloth_id', 'sloth_service', 'sloth_slo', ...Object.keys(sloLabels)].join(', ');
    const clause = (window: BurnWindow): string => {
      const factor = burnFactor(window, period);
      const above = (w: string): string =>
        `max without (sloth_window) (${errorRatioRecord(w)}${select})\n  > ${join} (${factor} * slo:error_budget:ratio${select})`;
      const ratio5m = `${errorRatioRecord('5m')}${select}`;
      const historyFactor = round(requiredHistorySeconds(window) / seconds('5m'));
      const parts = [
        above(window.short),
        above(window.long),
        `max without (sloth_window) (count_over_time(${ratio5m}[${window.long}]))\n  >= ${historyFactor} * max without (sloth_window) (count_over_time(${ratio5m}[5m]))`,
      ];
      if (slo.sli.events !== undefined) {
        parts.push(
          `ignoring (${ignored})\n  (${fill(slo.sli.events.error_query, window.long)}) * ${seconds(window.long)} > ${MIN_BAD_EVENTS}`,
        );
      }
      return `(\n  ${parts.join('\nand\n  ')}\n)`;
    };
    const alert = (severity: 'page' | 'ticket'): Rule | undefined => {
      const own = severity === 'page' ? slo.alerting.page_alert : slo.alerting.ticket_alert;
      if (own?.disable === true) return undefined;
      const pairs = BURN_WINDOWS.filter((w) => w.severity === severity);
      const speed = pairs.map((w) => `${burnFactor(w, period)}x over ${w.long} and ${w.short}`).join(', or ');
      return {
        alert: slo.alerting.name,
        expr: `${pairs.map(clause).join('\nor\n')}\n`,
        labels: { ...slo.alerting.labels, ...own?.labels, sloth_severity: severity },
        annotations: {
          summary: `SLO ${slo.name} of ${spec.service}${REGION_TEXT} burns its error budget too fast (${severity}).`,
          description:
            `{{ $value | humanizePercentage }} of the events of SLO {{ $labels.sloth_slo }}${REGION_TEXT}` +
            `{{ with $labels.instance }} (exporter {{ . }}){{ end }} were bad over the short window ` +
            `(objective ${slo.objective}% over ${period}; ${severity} at ${speed}; ` +
            `once the long window holds ${pairs.map((w) => `${requiredHistorySeconds(w) / 60}m`).join(' or ')} of data).`,
          ...slo.alerting.annotations,
          ...own?.annotations,
        },
      };
    };
    const alerts: RuleGroup = {
      name: `upstash-slos.${slo.name}.alerts`,
      rules: [alert('page'), alert('ticket')].filter((rule) => rule !== undefined),
    };
    return alerts.rules.length > 0 ? [sli, meta, alerts] : [sli, meta];
  });
}

/** The rules file: a header naming the spec and the command, then the groups. */
export function renderRulesFile(spec: SloSpec, options: RuleOptions = {}): string {
  const document = new Document({ groups: generateRuleGroups(spec, options) });
  const period = options.period ?? DEFAULT_PERIOD;
  const source = options.source ?? 'the SLO spec';
  document.commentBefore = [
    ` Generated from ${source} by \`upstash-exporter slo --spec ${source}${period === DEFAULT_PERIOD ? '' : ` --period ${period}`}\`: do not edit.`,
    ' SLOs, their alerts and runbooks: docs/slos.md.',
  ].join('\n');
  return document.toString({ lineWidth: 0, blockQuote: 'literal' });
}
