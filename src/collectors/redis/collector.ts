// The redis collector: per Redis database of the account, its record from the database list
// (GET /v2/redis/databases: name, plan, state, limits) and its usage from GET /v2/redis/stats/{id}
// (the newest complete point of each series, the daily and monthly totals). A fresh snapshot per
// poll: a deleted database's series vanish on the next poll.
//
// Which databases: the configured ids, plus every listed one unless discovery is off. The list
// is read on every poll either way (names, states and limits live there). Stats are read with at
// most REDIS_STATS_CONCURRENCY requests in flight; the request core paces them under the
// management API's Burst-RateLimit budget. A CONFIGURED id whose stats answer 404 does not fail
// the poll (warned once, its series absent; the other databases export), a LISTED one that 404s
// was deleted meanwhile and is left out quietly; any other error fails the poll and the previous
// snapshot stays served with collector_success 0 (as for vector indexes).
import type { Gauge, Registry } from 'prom-client';
import { ApiNotFoundError } from '../../api/errors.js';
import type { Logger } from '../../logging/index.js';
import type { PollContext } from '../collector.js';
import { limitValue, registerGauge } from '../inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from '../inventory/snapshot-collector.js';
import { pointOfDay } from '../usage.js';
import { mapConcurrently } from '../vector.js';
import type { RedisApi } from './client.js';
import {
  LATENCY_SERIES,
  REDIS_FAMILIES,
  REDIS_FAMILY_ROWS,
  REDIS_LIMITS,
  REDIS_POINT_VALUES,
  REDIS_STATES,
  REDIS_TOTALS,
} from './families.js';
import { latestCompletePoint } from './points.js';
import type { RedisDatabase, RedisStats, RedisStatsSeriesName } from './schemas.js';

/** Stats requests in flight at once: a handful, gentle on the management API's rate limit. */
export const REDIS_STATS_CONCURRENCY = 4;
const DAY_MS = 86_400_000;

export interface RedisCollectorOptions {
  bounds?: InventoryBounds;
  client: RedisApi;
  intervalMs: number;
  /** Ids to read whatever the list says. */
  databaseIds: readonly string[];
  /** Also read every database the list shows. */
  discovery: boolean;
}

interface StatsReading {
  stats: RedisStats;
  /** The exporter's clock when the answer came, epoch ms. */
  readAtMs: number;
}

interface PollResult {
  listed: Map<string, RedisDatabase>;
  stats: Map<string, StatsReading>;
  nowMs: number;
}

export class RedisCollector extends SnapshotCollector<'redis', PollResult> {
  readonly #client: RedisApi;
  readonly #configured: readonly string[];
  readonly #discovery: boolean;
  /** Configured ids whose stats answered 404 on the last poll (warned once each). */
  readonly #missing = new Set<string>();
  /** Series whose unreadable points were already reported. */
  readonly #warned = new Set<string>();
  #summary: string | undefined;

  constructor(options: RedisCollectorOptions) {
    super('redis', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#configured = [...new Set(options.databaseIds)];
    this.#discovery = options.discovery;
  }

  /** Configured ids that answered 404 on the last poll. */
  get missingDatabaseIds(): string[] {
    return [...this.#missing];
  }

  /** The landing page's line: databases and their states (never a secret). */
  summary(): string | undefined {
    return this.#summary;
  }

  protected async fetch(ctx: PollContext): Promise<PollResult> {
    const listed = new Map<string, RedisDatabase>();
    if (this.#discovery || this.#configured.length > 0) {
      for (const db of await this.#client.listDatabases({ signal: ctx.signal })) listed.set(db.database_id, db);
    }
    const configured = new Set(this.#configured);
    const ids = [...new Set([...this.#configured, ...(this.#discovery ? listed.keys() : [])])];
    const answers = await mapConcurrently(ids, REDIS_STATS_CONCURRENCY, async (id) => {
      try {
        const stats = await this.#client.databaseStats(id, { signal: ctx.signal });
        return { stats, readAtMs: ctx.now() };
      } catch (error) {
        if (error instanceof ApiNotFoundError) return undefined;
        throw error;
      }
    });
    const stats = new Map<string, StatsReading>();
    ids.forEach((id, i) => {
      const answer = answers[i];
      if (answer !== undefined) {
        stats.set(id, answer);
        if (this.#missing.delete(id)) ctx.logger.info({ databaseId: id }, 'configured Redis database found again');
      } else if (configured.has(id)) {
        if (!this.#missing.has(id)) {
          this.#missing.add(id);
          ctx.logger.warn(
            { databaseId: id },
            'configured Redis database not found (stats answered 404): its series are absent until it exists; the other databases are exported',
          );
        }
      } else {
        ctx.logger.debug({ databaseId: id }, 'listed Redis database vanished before its stats were read (deleted?)');
      }
    });
    // A configured id the list does not show keeps no record; a listed one outside the selection is dropped.
    const selected = new Map([...listed].filter(([id]) => this.#discovery || configured.has(id)));
    return { listed: selected, stats, nowMs: ctx.now() };
  }

  protected fill(registry: Registry, { listed, stats, nowMs }: PollResult, logger: Logger): void {
    const gauges = new Map<string, Gauge<string>>(
      REDIS_FAMILY_ROWS.map((row) => [
        row.name,
        registerGauge(
          registry,
          { name: row.name, meaning: row.meaning, source: row.source, labelNames: row.labelNames },
          this.families,
        ),
      ]),
    );
    const gauge = (name: string): Gauge<string> => gauges.get(name)!;
    const f = REDIS_FAMILIES;

    const states = new Map<string, number>();
    for (const [id, db] of listed) {
      const labels = { database_id: id };
      const state = db.state ?? '';
      states.set(state, (states.get(state) ?? 0) + 1);
      gauge(f.info.name).set(
        {
          ...labels,
          name: db.database_name ?? '',
          cloud_region: db.primary_region ?? db.region ?? '',
          plan: db.type ?? '',
          state,
          tls: db.tls === undefined ? '' : String(db.tls),
          eviction: db.eviction === undefined ? '' : String(db.eviction),
        },
        1,
      );
      if (db.state !== undefined) {
        const known: readonly string[] = REDIS_STATES;
        for (const each of known.includes(db.state) ? known : [...known, db.state]) {
          gauge(f.state.name).set({ ...labels, state: each }, each === db.state ? 1 : 0);
        }
      }
      if (db.creation_time !== undefined && db.creation_time > 0) gauge(f.created.name).set(labels, db.creation_time);
      for (const limit of REDIS_LIMITS) {
        const raw = db[limit.field];
        if (typeof raw === 'number') gauge(limit.name).set(labels, limitValue(raw));
      }
    }

    const todayMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
    for (const [id, { stats: s, readAtMs }] of stats) {
      const labels = { database_id: id };
      let newestTaken: number | undefined;
      const take = (series: RedisStatsSeriesName): number | undefined => {
        const { point, unreadable } = latestCompletePoint(s[series], nowMs);
        if (unreadable > 0 && !this.#warned.has(series)) {
          this.#warned.add(series);
          logger.warn(
            { series, unreadable },
            'Redis stats points with unreadable x or y were skipped (reported once per series)',
          );
        }
        if (point === undefined) return undefined;
        newestTaken = Math.max(newestTaken ?? point.timeMs, point.timeMs);
        return point.value;
      };
      for (const spec of REDIS_POINT_VALUES) {
        const value = take(spec.field);
        if (value !== undefined) gauge(spec.name).set(labels, value);
      }
      for (const [operation, series] of Object.entries(LATENCY_SERIES)) {
        const mean = take(series.mean);
        if (mean !== undefined) gauge(f.latencyMean.name).set({ ...labels, operation }, mean);
        const p99 = take(series.p99);
        if (p99 !== undefined) gauge(f.latencyP99.name).set({ ...labels, operation }, p99);
      }
      for (const spec of REDIS_TOTALS) {
        const value = s[spec.field];
        if (value !== undefined) gauge(spec.name).set(labels, value);
      }
      const billedToday = pointOfDay(s.dailybilling, todayMs);
      if (billedToday !== undefined) gauge(f.dailyBilling.name).set(labels, billedToday);
      if (newestTaken !== undefined) gauge(f.pointTime.name).set(labels, newestTaken / 1000);
      gauge(f.readTime.name).set(labels, readAtMs / 1000);
    }

    const byState = [...states].map(([state, count]) => `${count} ${state === '' ? 'state unknown' : state}`);
    this.#summary = `${listed.size} database${listed.size === 1 ? '' : 's'}${byState.length > 0 ? ` (${byState.join(', ')})` : ''}`;
  }
}
