// Upstash / QStash schedules: every schedule with its state, next and last run, last-run outcome.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  alertValue,
  ZERO_IS_GOOD,
  booleanMapping,
  quotaGauge,
  row,
  sel,
  stat,
  table,
  timeseries,
  upstashDashboard,
} from './common.js';
import { DELIVERIES_UID, SCHEDULES_UID } from './uids.js';

/**
 * One value per schedule with only the identifying labels, so that the table's merge joins the
 * rows (a __name__ or state column would keep them apart).
 */
const perSchedule = (expr: string): string => `max by (job, instance, qstash_region, schedule_id) (${expr})`;

/** UpstashScheduleMissedRun's grace: how long past its next run a schedule is overdue, seconds. */
const GRACE_SECONDS = alertValue('UpstashScheduleMissedRun');

/** Not paused and due more than the alert's grace ago. */
const OVERDUE = `(time() - upstash_qstash_schedule_next_run_timestamp_seconds${sel()} > ${GRACE_SECONDS}) unless on (job, instance, qstash_region, schedule_id) upstash_qstash_schedule_paused${sel()} == 1`;

export function schedulesDashboard(): Dashboard {
  return upstashDashboard(
    SCHEDULES_UID,
    'Upstash / QStash schedules',
    'QStash schedules: paused or not, next and last run, and the outcome of the last run.',
  )
    .withRow(row('Summary'))
    .withPanel(
      stat({
        title: 'Active schedules',
        description: 'Schedules that are not paused.',
        queries: [{ expr: `sum(upstash_qstash_schedules${sel('paused="false"')})` }],
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Paused schedules',
        description: 'Paused schedules keep their next run time but are not triggered.',
        queries: [{ expr: `sum(upstash_qstash_schedules${sel('paused="true"')})` }],
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Overdue schedules',
        description: `Schedules not paused whose next run is more than ${GRACE_SECONDS} s in the past, the grace of alert UpstashScheduleMissedRun (which fires after 5 more minutes).`,
        queries: [{ expr: `count(${OVERDUE}) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 6,
      }),
    )
    .withPanel(
      stat({
        title: 'Last run failed',
        links: [{ title: 'QStash deliveries', uid: DELIVERIES_UID }],
        description:
          'Schedules whose last run has at least one message in state FAIL (alert UpstashScheduleLastRunFailed).',
        queries: [{ expr: `count(upstash_qstash_schedule_last_run_messages${sel('state="FAIL"')} > 0) or vector(0)` }],
        thresholds: ZERO_IS_GOOD,
        span: 6,
      }),
    )
    .withRow(row('Schedules'))
    .withPanel(
      table({
        title: 'Schedules',
        description:
          'One row per schedule. Last-run columns count the messages of the last trigger by state (a URL-group schedule sends one per endpoint).',
        height: 12,
        labels: { schedule_id: 'Schedule', cron: 'Cron', destination: 'Destination', method: 'Method' },
        columns: [
          {
            expr: `max by (job, instance, qstash_region, schedule_id, cron, destination, method) (upstash_qstash_schedule_info${sel()})`,
            column: null,
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_paused${sel()}`),
            column: { title: 'Paused', mappings: booleanMapping('paused', 'active', 'orange', 'green'), colored: true },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_next_run_timestamp_seconds${sel()}`) + ' * 1000',
            column: { title: 'Next run', unit: 'dateTimeFromNow' },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_last_run_timestamp_seconds${sel()}`) + ' * 1000',
            column: { title: 'Last run', unit: 'dateTimeFromNow' },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_last_run_messages${sel('state="SUCCESS"')}`),
            column: { title: 'Last run: success', unit: 'short' },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_last_run_messages${sel('state="IN_PROGRESS"')}`),
            column: { title: 'Last run: in progress', unit: 'short' },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_last_run_messages${sel('state="FAIL"')}`),
            column: { title: 'Last run: failed', unit: 'short', thresholds: ZERO_IS_GOOD, colored: true },
          },
          {
            expr: perSchedule(`upstash_qstash_schedule_created_timestamp_seconds${sel()}`) + ' * 1000',
            column: { title: 'Created', unit: 'dateTimeFromNow' },
          },
        ],
        sortBy: 'Next run',
      }),
    )
    .withRow(row('Over time'))
    .withPanel(
      timeseries({
        title: 'Schedules',
        description: 'Number of schedules, paused and active.',
        queries: [{ expr: `sum by (paused) (upstash_qstash_schedules${sel()})`, legend: 'paused={{paused}}' }],
        unit: 'short',
        span: 8,
        stack: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Last-run messages by state',
        description: "Messages of the schedules' last runs by state, summed over the schedules.",
        queries: [{ expr: `sum by (state) (upstash_qstash_schedule_last_run_messages${sel()})`, legend: '{{state}}' }],
        unit: 'short',
        span: 8,
        stack: true,
      }),
    )
    .withPanel(
      quotaGauge({
        title: 'Schedule quota',
        description: "Schedules against the plan's max_schedules.",
        quota: 'qstash_schedules',
        span: 8,
      }),
    )
    .build();
}
