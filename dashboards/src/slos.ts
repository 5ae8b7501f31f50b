// Upstash / SLOs: per SLO of deploy/slo/upstash-slos.yaml its objective, the SLI now, the error
// budget left over the period and the burn rate over each alerting window. It reads the series
// the SLO rules record (Sloth's names and labels), not the exporter's, so it works as well with
// rules Sloth generated from the same spec; the job and instance variables do not apply.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { labelVariable, row, table, timeseries, upstashDashboard, type ThresholdStep } from './common.js';
import { sloBurnFactors } from './rules.js';
import { DELIVERIES_UID, EXPORTER_HEALTH_UID, SLOS_UID, WORKFLOWS_UID } from './uids.js';

/** SLO series carry the exporter and region; the objective and budget constants carry only the SLO. */
const CONSTANTS = new Set(['slo:objective:ratio', 'slo:error_budget:ratio']);
const slo = (record: string): string =>
  CONSTANTS.has(record)
    ? `${record}{sloth_slo=~"$slo"}`
    : `${record}{sloth_slo=~"$slo",job=~"$job",instance=~"$instance",qstash_region=~"$qstash_region"}`;
const BY_SLO = 'max by (sloth_slo)';
/** The burn rate over one window: its error ratio in units of the error budget. */
const burnRate = (window: string): string =>
  `${BY_SLO} (${slo(`slo:sli_error:ratio_rate${window}`)} / on (sloth_id) group_left () ${slo('slo:error_budget:ratio')})`;

/** Budget left: red when spent, orange under a quarter. */
export const BUDGET_THRESHOLDS: ThresholdStep[] = [
  { value: null, color: 'red' },
  { value: 0, color: 'orange' },
  { value: 0.25, color: 'green' },
];
/** The SLO alerts' burn-rate factors, read from the SLO rules (pages: 14.4 and 6; tickets: 3 and 1). */
const BURN = sloBurnFactors();
/**
 * Burn rate: 1 spends the budget exactly over the period. Yellow from the lowest ticket factor,
 * orange from the lowest page factor, red from the highest: the alerts' own factors.
 */
const BURN_THRESHOLDS: ThresholdStep[] = [
  { value: null, color: 'green' },
  { value: Math.min(...BURN.ticket), color: 'yellow' },
  { value: Math.min(...BURN.page), color: 'orange' },
  { value: Math.max(...BURN.page), color: 'red' },
];

export function slosDashboard(): Dashboard {
  return upstashDashboard(
    SLOS_UID,
    'Upstash / SLOs',
    "Service level objectives of QStash deliveries, Upstash Workflow runs and the exporter's freshness (deploy/slo/upstash-slos.yaml, docs/slos.md): objective, SLI, error budget left and burn rates.",
    [labelVariable('slo', 'SLO', 'label_values(slo:objective:ratio, sloth_slo)')],
  )
    .withRow(row('Objectives'))
    .withPanel(
      table({
        title: 'SLOs',
        links: [
          { title: 'QStash deliveries', uid: DELIVERIES_UID },
          { title: 'Workflows and waiting time', uid: WORKFLOWS_UID },
          { title: 'Exporter health', uid: EXPORTER_HEALTH_UID },
        ],
        description:
          'One row per SLO: its objective, the SLI over the last 5 minutes and the last hour (no value: no event), the error budget left over the period (negative: overspent) and the period in days.',
        height: 8,
        labels: { sloth_slo: 'SLO' },
        columns: [
          { expr: `${BY_SLO} (${slo('slo:objective:ratio')})`, column: { title: 'Objective', unit: 'percentunit' } },
          {
            expr: `${BY_SLO} (1 - ${slo('slo:sli_error:ratio_rate5m')})`,
            column: { title: 'SLI 5m', unit: 'percentunit' },
          },
          {
            expr: `${BY_SLO} (1 - ${slo('slo:sli_error:ratio_rate1h')})`,
            column: { title: 'SLI 1h', unit: 'percentunit' },
          },
          {
            expr: `${BY_SLO} (${slo('slo:period_error_budget_remaining:ratio')})`,
            column: { title: 'Budget left', unit: 'percentunit', thresholds: BUDGET_THRESHOLDS, colored: true },
          },
          { expr: `${BY_SLO} (${slo('slo:time_period:days')})`, column: { title: 'Period', unit: 'd' } },
        ],
        sortBy: 'Budget left',
      }),
    )
    .withPanel(
      timeseries({
        title: 'SLI against objective',
        description:
          'Good events / all events over 5 minutes per SLO (dashed: its objective). Gaps are intervals without events.',
        queries: [
          { expr: `${BY_SLO} (1 - ${slo('slo:sli_error:ratio_rate5m')})`, legend: '{{sloth_slo}}' },
          { expr: `${BY_SLO} (${slo('slo:objective:ratio')})`, legend: '{{sloth_slo}} objective' },
        ],
        unit: 'percentunit',
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Error budget left over the period',
        description: "1 - the period's error ratio / the error budget: 100% untouched, 0 spent, negative overspent.",
        queries: [{ expr: `${BY_SLO} (${slo('slo:period_error_budget_remaining:ratio')})`, legend: '{{sloth_slo}}' }],
        unit: 'percentunit',
        thresholds: BUDGET_THRESHOLDS,
        span: 12,
      }),
    )
    .withRow(row('Burn rate'))
    .withPanel(
      timeseries({
        title: 'Burn rate (5m)',
        description: `Error ratio over 5 minutes in units of the error budget: 1 spends the budget exactly over the period; pages need ${Math.max(...BURN.page)} over 5m and 1h, or ${Math.min(...BURN.page)} over 30m and 6h.`,
        queries: [{ expr: `${BY_SLO} (${slo('slo:current_burn_rate:ratio')})`, legend: '{{sloth_slo}}' }],
        unit: 'suffix:x',
        thresholds: BURN_THRESHOLDS,
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Burn rate by window',
        description: `Burn rate over each window the alerts read (page: 1h with 5m at ${Math.max(...BURN.page)}, 6h with 30m at ${Math.min(...BURN.page)}; ticket: 1d with 2h at ${Math.max(...BURN.ticket)}, 3d with 6h at ${Math.min(...BURN.ticket)}) and over the whole period.`,
        queries: [
          ...['30m', '1h', '2h', '6h', '1d', '3d'].map((window) => ({
            expr: burnRate(window),
            legend: `{{sloth_slo}} ${window}`,
          })),
          { expr: `${BY_SLO} (${slo('slo:period_burn_rate:ratio')})`, legend: '{{sloth_slo}} period' },
        ],
        unit: 'suffix:x',
        thresholds: BURN_THRESHOLDS,
        span: 12,
      }),
    )
    .build();
}
