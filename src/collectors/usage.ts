// The usage collector: the OFFICIAL usage of the exporter's QStash user, from the management API's
// statistics (GET /v2/qstash/stats/{id}?period=1h; the older GET /v2/qstash/stats without the id
// after a 404). Today's requests (against the daily soft and hard limits of the account
// collector), today's bandwidth and billing, the month's billing and the dead-letter queue size
// (against max_dlq_size). A fresh snapshot per poll.
//
// A collector of its own rather than part of `account`, one per upstream resource as
// node_exporter does it: the statistics move by the minute while the plan record hardly changes,
// so each has its own interval, and a failing stats endpoint leaves the limits exported. Each poll
// reads the user (ManagementClient.qstashUser: the same choice as the account collector) and its
// statistics: two requests. A service without the statistics (404 on both paths) makes the
// collector unsupported, not failing: nothing exported, asked again rarely (optional-endpoint.ts).
//
// "Today" is the point of a daily series whose timestamp falls on the current UTC date (the daily
// series cover the whole month, future days included with 0, so the newest point is not today's).
// The families carry no labels, like the limits they compare with; the region is on
// upstash_qstash_account_info. The count of CREATED entries (upstash_qstash_daily_messages of the
// logs collector) stays as the fallback the recording rule upstash_qstash:daily_requests:official_or_created
// takes when this collector has nothing.

import type { Registry } from 'prom-client';
import type { ManagementClient, QStashStats, QStashStatsPath } from '../api/management.js';
import type { SeriesPoint } from '../api/schemas/common.js';
import { parseSeriesTimestamp } from '../api/timestamps.js';
import type { Logger } from '../logging/index.js';
import type { CollectorFactory, PollContext } from './collector.js';
import { registerGauge } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { OptionalEndpoint, unsupportedSummary, type EndpointAvailabilityGauge } from './optional-endpoint.js';
import { polledIntervalMs } from './poll-schedule.js';
import { fieldRows, type FamilyRow } from './families.js';

const DAY_MS = 86_400_000;

type DailySeries = 'daily_requests' | 'daily_bandwidths' | 'daily_billings';

interface UsageSpec {
  name: string;
  meaning: string;
  field: DailySeries | 'dlq_message_count' | 'total_monthly_billing';
  /** Today's point of a daily series, or the scalar field. */
  value: (stats: QStashStats, todayMs: number) => number | undefined;
}

/** The point of `points` on the UTC day starting at `dayStartMs` (the last one if several). */
export function pointOfDay(points: readonly SeriesPoint[] | undefined, dayStartMs: number): number | undefined {
  let value: number | undefined;
  for (const point of points ?? []) {
    const timeMs = parseSeriesTimestamp(point.x);
    if (timeMs !== undefined && timeMs >= dayStartMs && timeMs < dayStartMs + DAY_MS && Number.isFinite(point.y))
      value = point.y;
  }
  return value;
}

const today = (field: DailySeries) => (stats: QStashStats, todayMs: number) => pointOfDay(stats[field], todayMs);

export const USAGE_VALUES: readonly UsageSpec[] = [
  {
    name: 'upstash_qstash_usage_daily_requests',
    meaning:
      'Requests billed today (UTC day), the official count the daily limits apply to; compare with upstash_qstash_plan_max_requests_per_day (soft) and _hard',
    field: 'daily_requests',
    value: today('daily_requests'),
  },
  {
    name: 'upstash_qstash_usage_daily_bandwidth_bytes',
    meaning: 'Bandwidth used today (UTC day), bytes (the API does not name the unit; bytes as for vector indexes)',
    field: 'daily_bandwidths',
    value: today('daily_bandwidths'),
  },
  {
    name: 'upstash_qstash_usage_daily_billing',
    meaning: 'Amount billed today (UTC day); the currency is not given by the API',
    field: 'daily_billings',
    value: today('daily_billings'),
  },
  {
    name: 'upstash_qstash_usage_monthly_billing',
    meaning: 'Amount billed this month so far; the currency is not given by the API',
    field: 'total_monthly_billing',
    value: (stats) => stats.total_monthly_billing,
  },
  {
    name: 'upstash_qstash_usage_dlq_messages',
    meaning: 'Messages in the dead-letter queue now; compare with upstash_qstash_plan_max_dlq_messages',
    field: 'dlq_message_count',
    value: (stats) => stats.dlq_message_count,
  },
];

/** Every family of the collector, in the order of docs/metrics.md. */
export const USAGE_FAMILY_ROWS: readonly FamilyRow[] = fieldRows(
  USAGE_VALUES.map((spec) => ({
    ...spec,
    field: spec.field.startsWith('daily_') ? `today's point of ${spec.field}` : spec.field,
  })),
  [],
  'GET /v2/qstash/stats/{id}?period=1h (else GET /v2/qstash/stats?period=1h)',
);

export interface UsageCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<ManagementClient, 'qstashUser' | 'qstashStats'>;
  intervalMs: number;
  /** Path of the legacy account record: the stats live beside it. */
  accountPath: string;
  availability?: EndpointAvailabilityGauge;
}

interface UsageReading {
  stats: QStashStats;
  path: QStashStatsPath;
  /** Start of the current UTC day at the poll, epoch ms. */
  todayMs: number;
}

/** undefined: the service has no statistics. */
type PollResult = UsageReading | undefined;

export class UsageCollector extends SnapshotCollector<'usage', PollResult> {
  readonly #client: UsageCollectorOptions['client'];
  readonly #prefix: string;
  readonly #stats: OptionalEndpoint;
  #lastPath: QStashStatsPath | undefined;

  constructor(options: UsageCollectorOptions) {
    super('usage', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#prefix = options.accountPath.endsWith('/user') ? options.accountPath.slice(0, -'/user'.length) : '/v2/qstash';
    this.#stats = new OptionalEndpoint({
      collector: 'usage',
      endpoint: `GET ${this.#prefix}/stats[/{id}]`,
      gauge: options.availability,
    });
  }

  /** Unsupported when the service has no statistics. */
  summary(): string | undefined {
    return unsupportedSummary([this.#stats]);
  }

  protected async fetch(ctx: PollContext): Promise<PollResult> {
    if (this.#stats.skipped(ctx.now())) return undefined;
    const user = await this.#client.qstashUser({ signal: ctx.signal });
    const answer = await this.#stats.read(ctx, () => this.#client.qstashStats(user.account.id, { signal: ctx.signal }));
    if (answer === undefined) return undefined;
    const { stats, path } = answer;
    if (path !== this.#lastPath) {
      this.#lastPath = path;
      ctx.logger.info(
        { statsPath: path, region: user.account.region ?? '' },
        path === 'id'
          ? 'official usage read from the stats of the QStash user (by id)'
          : 'official usage read from the older stats path without a user id',
      );
    }
    return { stats, path, todayMs: Math.floor(ctx.now() / DAY_MS) * DAY_MS };
  }

  protected fill(registry: Registry, reading: PollResult, _logger: Logger): void {
    if (reading === undefined) return;
    const { stats, path, todayMs } = reading;
    const endpoint = path === 'id' ? `GET ${this.#prefix}/stats/{id}?period=1h` : `GET ${this.#prefix}/stats?period=1h`;
    for (const spec of USAGE_VALUES) {
      const value = spec.value(stats, todayMs);
      if (value === undefined) continue;
      const field = spec.field.startsWith('daily_') ? `today's point of ${spec.field}` : spec.field;
      registerGauge(
        registry,
        { name: spec.name, meaning: spec.meaning, source: `${field} of ${endpoint}`, labelNames: [] },
        this.families,
      ).set(value);
    }
  }
}

export const createUsageCollector: CollectorFactory = (config, deps) =>
  deps.management === null
    ? null
    : new UsageCollector({
        client: deps.management,
        intervalMs: polledIntervalMs('usage', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
        accountPath: config.management.accountPath,
        availability: deps.selfMetrics.endpointAvailable,
      });
