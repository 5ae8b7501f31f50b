// Upstash / Vector and search indexes: size, usage and limits of every index.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  QUOTA_THRESHOLDS,
  booleanMapping,
  labelVariable,
  row,
  accountSel,
  table,
  timeseries,
  upstashDashboard,
} from './common.js';
import { INDEXES_UID } from './uids.js';

/** Selector of the vector index metrics: job, instance and the vector_index variable. */
const VECTOR = (...matchers: string[]): string => accountSel('index_id=~"$vector_index"', ...matchers);

/** One value per index with only the identifying labels, so that the table's merge joins the rows. */
const perIndex = (expr: string): string => `max by (job, instance, index_id) (${expr})`;

const UNDOCUMENTED_UNIT = 'The service does not document the unit of this series; it is shown as received.';

export function indexesDashboard(): Dashboard {
  return upstashDashboard(
    INDEXES_UID,
    'Upstash / Vector and search indexes',
    'Upstash Vector indexes (size, daily and monthly usage, latency, cost) and Upstash Search indexes (plan limits), from the management API.',
    [labelVariable('vector_index', 'Vector index', `label_values(upstash_vector_index_info${accountSel()}, index_id)`)],
  )
    .withRow(row('Vector indexes'))
    .withPanel(
      table({
        title: 'Vector indexes',
        description: "One row per vector index with its size against its limit and today's usage.",
        labels: { index_id: 'Index', name: 'Name', plan: 'Plan', cloud_region: 'Region' },
        columns: [
          {
            expr: `max by (job, instance, index_id, name, plan, cloud_region) (upstash_vector_index_info${VECTOR()})`,
            column: null,
          },
          { expr: perIndex(`upstash_vector_index_vectors${VECTOR()}`), column: { title: 'Vectors', unit: 'short' } },
          {
            expr: perIndex(`upstash_vector_index_max_vectors${VECTOR()}`),
            column: { title: 'Vector limit', unit: 'short' },
          },
          {
            expr: perIndex(`upstash:quota_usage:ratio${VECTOR('quota="vector_vectors"')}`),
            column: { title: 'Limit used', unit: 'percentunit', thresholds: QUOTA_THRESHOLDS, colored: true },
          },
          {
            expr: perIndex(`upstash_vector_index_pending_vectors${VECTOR()}`),
            column: { title: 'Pending', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_vector_index_storage_bytes${VECTOR()}`),
            column: { title: 'Storage', unit: 'bytes' },
          },
          {
            expr: perIndex(`upstash_vector_index_daily_queries${VECTOR()}`),
            column: { title: 'Queries today', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_vector_index_daily_updates${VECTOR()}`),
            column: { title: 'Updates today', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_vector_index_monthly_cost${VECTOR()}`),
            column: { title: 'Monthly cost', unit: 'none' },
          },
        ],
        sortBy: 'Index',
      }),
    )
    .withPanel(
      timeseries({
        title: 'Vectors',
        description: 'Vectors stored per index (current_vector_count).',
        queries: [{ expr: `upstash_vector_index_vectors${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Pending vectors',
        description:
          'Vectors written but not yet indexed (pending_index_count); a growing backlog delays their visibility in queries.',
        queries: [{ expr: `upstash_vector_index_pending_vectors${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Storage',
        description: 'Storage used per index.',
        queries: [{ expr: `upstash_vector_index_storage_bytes${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'bytes',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Daily queries',
        description: "Queries since the start of the service's day (resets daily).",
        queries: [{ expr: `upstash_vector_index_daily_queries${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Daily updates',
        description: "Updates (upserts and deletes) since the start of the service's day.",
        queries: [{ expr: `upstash_vector_index_daily_updates${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Daily reranks',
        description: "Reranks since the start of the service's day.",
        queries: [{ expr: `upstash_vector_index_daily_reranks${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Monthly queries, updates and reranks',
        description: 'Counts since the start of the billing month.',
        queries: [
          { expr: `upstash_vector_index_monthly_queries${VECTOR()}`, legend: '{{index_id}} queries' },
          { expr: `upstash_vector_index_monthly_updates${VECTOR()}`, legend: '{{index_id}} updates' },
          { expr: `upstash_vector_index_monthly_reranks${VECTOR()}`, legend: '{{index_id}} reranks' },
        ],
        unit: 'short',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Monthly bandwidth',
        description: 'Bandwidth used since the start of the billing month.',
        queries: [{ expr: `upstash_vector_index_monthly_bandwidth_bytes${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'bytes',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Monthly cost',
        description: 'Cost so far this month, as reported by the service (the API does not give the currency).',
        queries: [{ expr: `upstash_vector_index_monthly_cost${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'none',
        decimals: 2,
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Latency (mean)',
        description: `Mean latency by operation, newest point of the service's series. ${UNDOCUMENTED_UNIT}`,
        queries: [{ expr: `upstash_vector_index_latency_mean${VECTOR()}`, legend: '{{index_id}} {{operation}}' }],
        unit: 'none',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Latency (p99)',
        description: `99th percentile latency by operation, newest point of the service's series. ${UNDOCUMENTED_UNIT}`,
        queries: [{ expr: `upstash_vector_index_latency_p99${VECTOR()}`, legend: '{{index_id}} {{operation}}' }],
        unit: 'none',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Throughput',
        description: `Query and update throughput, newest point of the service's series. ${UNDOCUMENTED_UNIT}`,
        queries: [{ expr: `upstash_vector_index_throughput${VECTOR()}`, legend: '{{index_id}} {{operation}}' }],
        unit: 'none',
        span: 8,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Vector quota usage',
        description: 'Each vector index quota as a share of its limit; unlimited quotas show 0%.',
        queries: [
          { expr: `upstash:quota_usage:ratio${VECTOR('quota=~"vector_.*"')}`, legend: '{{index_id}} {{quota}}' },
        ],
        unit: 'percentunit',
        min: 0,
        thresholds: QUOTA_THRESHOLDS,
        thresholdLines: true,
        span: 12,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Data size',
        description: `Newest point of the service's data_size series. ${UNDOCUMENTED_UNIT}`,
        queries: [{ expr: `upstash_vector_index_data_size${VECTOR()}`, legend: '{{index_id}}' }],
        unit: 'none',
        span: 12,
      }),
    )
    .withRow(row('Search indexes'))
    .withPanel(
      table({
        title: 'Search indexes',
        description: 'One row per search index with its plan limits (unlimited ones show as infinity).',
        labels: { index_id: 'Index', name: 'Name', plan: 'Plan', cloud_region: 'Region' },
        columns: [
          {
            expr: `max by (job, instance, index_id, name, plan, cloud_region) (upstash_search_index_info${accountSel()})`,
            column: null,
          },
          {
            expr: perIndex(`upstash_search_index_max_vectors${accountSel()}`),
            column: { title: 'Vector limit', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_daily_queries${accountSel()}`),
            column: { title: 'Queries / day', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_daily_updates${accountSel()}`),
            column: { title: 'Updates / day', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_monthly_reranks${accountSel()}`),
            column: { title: 'Reranks / month', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_monthly_bandwidth_bytes${accountSel()}`),
            column: { title: 'Bandwidth / month', unit: 'bytes' },
          },
          {
            expr: perIndex(`upstash_search_index_max_queries_per_second${accountSel()}`),
            column: { title: 'Queries / s', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_writes_per_second${accountSel()}`),
            column: { title: 'Writes / s', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_reads_per_request${accountSel()}`),
            column: { title: 'Reads / request', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_max_writes_per_request${accountSel()}`),
            column: { title: 'Writes / request', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_input_enrichment_enabled${accountSel()}`),
            column: { title: 'Input enrichment', mappings: booleanMapping('on', 'off') },
          },
          {
            expr: perIndex(`upstash_search_index_created_timestamp_seconds${accountSel()}`) + ' * 1000',
            column: { title: 'Created', unit: 'dateTimeFromNow' },
          },
        ],
        sortBy: 'Index',
      }),
    )
    .withPanel(
      table({
        title: 'Search index usage',
        description:
          'One row per search index with its usage from the index stats: documents and those not indexed yet, storage, daily reranks, monthly queries and updates, and its cost this month (no currency given by the API). Their share of the limits is on the Plan quotas dashboard.',
        labels: { index_id: 'Index', name: 'Name' },
        columns: [
          {
            expr: `max by (job, instance, index_id, name) (upstash_search_index_info${accountSel()})`,
            column: null,
          },
          {
            expr: perIndex(`upstash_search_index_vectors${accountSel()}`),
            column: { title: 'Documents', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_pending_vectors${accountSel()}`),
            column: { title: 'Not indexed yet', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_storage_bytes${accountSel()}`),
            column: { title: 'Storage', unit: 'bytes' },
          },
          {
            expr: perIndex(`upstash_search_index_daily_reranks${accountSel()}`),
            column: { title: 'Reranks today', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_monthly_queries${accountSel()}`),
            column: { title: 'Queries this month', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_monthly_updates${accountSel()}`),
            column: { title: 'Updates this month', unit: 'short' },
          },
          {
            expr: perIndex(`upstash_search_index_monthly_cost${accountSel()}`),
            column: { title: 'Cost this month', unit: 'none' },
          },
        ],
        sortBy: 'Documents',
        sortDesc: true,
      }),
    )
    .withPanel(
      timeseries({
        title: 'Search throughput',
        description: `Newest point of each search index's throughput series. ${UNDOCUMENTED_UNIT}`,
        queries: [{ expr: `upstash_search_index_throughput${accountSel()}`, legend: '{{index_id}}' }],
        unit: 'none',
        span: 24,
      }),
    )
    .build();
}
