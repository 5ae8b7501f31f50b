// Upstash / Redis: every Redis database at a glance, its usage against each limit of its plan,
// latency, hit ratio, connections and billing (collector redis, deploy/rules/upstash-redis.rules.yml).
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  accountSel,
  alertThresholds,
  alertValue,
  labelVariable,
  limitUsedColumn,
  percent,
  row,
  table,
  timeseries,
  upstashDashboard,
} from './common.js';

export const REDIS_UID = 'upstash-redis';

/**
 * Selector of the Redis metrics: job, instance and the database variable. Redis databases belong
 * to the account, not to a QStash region: the region variable cannot filter them.
 */
const DB = (...matchers: string[]): string => accountSel('database_id=~"$database"', ...matchers);

/** One value per database with only the identifying labels, so that the table's merge joins the rows. */
const perDatabase = (expr: string): string => `max by (job, instance, database_id) (${expr})`;

/**
 * The limits of a database's plan it uses a share of (0..1, the recording rules of
 * deploy/rules/upstash-redis.rules.yml), with the column that shows each in the Databases table
 * and the alert on it, whose constant colours the column and the panel.
 */
const LIMITS_USED = [
  { ratio: 'upstash_redis:storage:ratio', column: 'Storage used', alert: 'UpstashRedisStorageNearDiskThreshold' },
  { ratio: 'upstash_redis:connections:ratio', column: 'Connections used', alert: 'UpstashRedisConnectionsNearMax' },
  {
    ratio: 'upstash_redis:commands_per_second:ratio',
    column: 'Commands/s used',
    alert: 'UpstashRedisCommandsNearMax',
  },
  { ratio: 'upstash_redis:monthly_billing:budget_ratio', column: 'Budget used', alert: 'UpstashRedisSpendNearBudget' },
] as const;

type LimitUsed = (typeof LIMITS_USED)[number];

/** A share of one limit over time, per database, coloured from the limit's alert constant. */
function limitUsedPanel(title: string, description: (alertAbove: string) => string, ratio: LimitUsed['ratio']) {
  const { alert } = LIMITS_USED.find((limit) => limit.ratio === ratio)!;
  return timeseries({
    title,
    description: description(`${alert} above ${percent(alertValue(alert))}`),
    queries: [{ expr: `${ratio}${DB()}`, legend: '{{database_id}}' }],
    unit: 'percentunit',
    min: 0,
    thresholds: alertThresholds(alert),
    thresholdLines: true,
  });
}

const LATENCY_UNIT = 'The service does not document the unit of the latency series; it is shown as received.';

export function redisDashboard(): Dashboard {
  return upstashDashboard(
    REDIS_UID,
    'Upstash / Redis',
    'Upstash Redis databases on every plan (state, usage against the plan limits, latency, hit ratio, connections, billing), from the developer API.',
    [labelVariable('database', 'Database', `label_values(upstash_redis_database_info${accountSel()}, database_id)`)],
  )
    .withRow(row('Databases at a glance'))
    .withPanel(
      table({
        title: 'Databases',
        description:
          'One row per database: plan, state, and how much of each limit it uses (storage, connections, commands per second, monthly budget).',
        labels: { database_id: 'Database', name: 'Name', plan: 'Plan', state: 'State', cloud_region: 'Region' },
        columns: [
          {
            expr: `max by (job, instance, database_id, name, plan, state, cloud_region) (upstash_redis_database_info${DB()})`,
            column: null,
          },
          ...LIMITS_USED.map(({ ratio, column, alert }) => ({
            expr: perDatabase(`${ratio}${DB()}`),
            column: limitUsedColumn(column, alertThresholds(alert)),
          })),
          {
            expr: perDatabase(`upstash_redis_database_monthly_billing_usd${DB()}`),
            column: { title: 'Billed this month', unit: 'currencyUSD' },
          },
        ],
        sortBy: 'Database',
        span: 24,
      }),
    )
    .withRow(row('Usage against limits'))
    .withPanel(
      limitUsedPanel(
        'Storage / disk threshold',
        (alertAbove) => `Data stored against the plan disk threshold; alert ${alertAbove}.`,
        'upstash_redis:storage:ratio',
      ),
    )
    .withPanel(
      limitUsedPanel(
        'Commands per second / maximum',
        (alertAbove) => `Throughput against the plan maximum commands per second (alert ${alertAbove}).`,
        'upstash_redis:commands_per_second:ratio',
      ),
    )
    .withPanel(
      timeseries({
        title: 'Connections',
        description: 'Open client connections (newest complete point) and the plan maximum (db_max_clients).',
        queries: [
          { expr: `upstash_redis_database_connections${DB()}`, legend: '{{database_id}}' },
          { expr: `upstash_redis_database_max_clients${DB()}`, legend: '{{database_id}} max' },
        ],
        unit: 'short',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Storage',
        description: 'Data stored now (current_storage) and the plan disk threshold, bytes.',
        queries: [
          { expr: `upstash_redis_database_storage_bytes${DB()}`, legend: '{{database_id}}' },
          { expr: `upstash_redis_database_disk_threshold_bytes${DB()}`, legend: '{{database_id}} threshold' },
        ],
        unit: 'bytes',
        min: 0,
      }),
    )
    .withRow(row('Performance'))
    .withPanel(
      timeseries({
        title: 'Latency (p99)',
        description: `99th percentile command latency by operation. ${LATENCY_UNIT}`,
        queries: [{ expr: `upstash_redis_database_latency_p99${DB()}`, legend: '{{database_id}} {{operation}}' }],
        unit: 'none',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Hit ratio',
        description: 'Share of key lookups that found their key, over the newest complete point.',
        queries: [{ expr: `upstash_redis:hits:ratio${DB()}`, legend: '{{database_id}}' }],
        unit: 'percentunit',
        min: 0,
        max: 1,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Throughput',
        description: 'Commands per second (newest complete point; the API does not name the unit, read as per second).',
        queries: [{ expr: `upstash_redis_database_throughput${DB()}`, legend: '{{database_id}}' }],
        unit: 'ops',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Commands today',
        description: 'Commands since 00:00 UTC (daily_net_commands).',
        queries: [{ expr: `upstash_redis_database_daily_commands${DB()}`, legend: '{{database_id}}' }],
        unit: 'short',
        min: 0,
      }),
    )
    .withRow(row('Billing'))
    .withPanel(
      timeseries({
        title: 'Billed this month against the budget',
        description: 'Amount billed this month and the monthly budget (0: none), USD.',
        queries: [
          { expr: `upstash_redis_database_monthly_billing_usd${DB()}`, legend: '{{database_id}}' },
          { expr: `upstash_redis_database_budget_usd${DB()} > 0`, legend: '{{database_id}} budget' },
        ],
        unit: 'currencyUSD',
        min: 0,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Stats age',
        description: `Age of the newest complete stats point; alert UpstashRedisStatsStale above ${alertValue('UpstashRedisStatsStale') / 60} minutes.`,
        queries: [
          { expr: `time() - upstash_redis_database_stats_point_timestamp_seconds${DB()}`, legend: '{{database_id}}' },
        ],
        unit: 's',
        min: 0,
        thresholds: alertThresholds('UpstashRedisStatsStale'),
        thresholdLines: true,
      }),
    )
    .build();
}
