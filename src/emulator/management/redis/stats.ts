// The statistics of one Redis database at an instant, in the OpenAPI's `DatabaseStats` shape, all
// derived from the database's profile and the clock so the figures move over time.
//
// Series: 60 points one minute apart, the last one at the start of the current minute (that
// minute still filling, as a live chart shows it), timestamps with nine fraction digits. Daily
// series (dailyrequests, dailybilling, bandwidths): one point per UTC day for the last 7 days,
// oldest first, each the day's total so far, with `days` naming their weekdays. A suspended
// database serves no traffic: zero connections, commands and latency, its storage kept.
import { DAY_MS, MINUTE_MS, formatServiceTime, startOfUtcDay, startOfUtcMonth, weekdayName } from '../time-format.js';
import { REDIS_PLAN_LIMITS, type RedisDatabaseEntry } from './databases.js';

const POINTS = 60;
const DAILY_POINTS = 7;
const READ_SHARE = 0.7;
const BYTES_PER_COMMAND = 200;
/** Pay-as-you-go price per command, USD ($0.2 per 100K). */
const PAYG_PRICE_PER_COMMAND = 0.2 / 100_000;
/** Fixed monthly price of a pro database, USD. */
const PRO_MONTHLY_PRICE = 280;

interface Point {
  x: string;
  y: number;
}

const wave = (ms: number, periodMs: number, phase = 0): number => Math.sin((2 * Math.PI * ms) / periodMs + phase);
const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** The figures of one minute. */
function minute(entry: RedisDatabaseEntry, ms: number) {
  const { profile } = entry;
  const limits = REDIS_PLAN_LIMITS[profile.type];
  const active = profile.state === 'active';
  const throughput = active
    ? Math.max(
        0,
        limits.db_max_commands_per_second * profile.throughput_fraction * (1 + 0.3 * wave(ms, 15 * MINUTE_MS)),
      )
    : 0;
  const storage = Math.round(limits.db_disk_threshold * profile.storage_fraction * (1 + 0.02 * wave(ms, 3_600_000, 1)));
  const reads = throughput * 60 * READ_SHARE;
  return {
    connections: active
      ? Math.round(limits.db_max_clients * profile.connections_fraction * (1 + 0.3 * wave(ms, 20 * MINUTE_MS, 2)))
      : 0,
    throughput: round(throughput, 2),
    storage,
    keys: Math.round(storage / 1024) + 100,
    latencyMean: active ? round(0.5 + 0.1 * wave(ms, 10 * MINUTE_MS), 3) : 0,
    reads: Math.round(reads),
    writes: Math.round(throughput * 60 * (1 - READ_SHARE)),
    hits: Math.round(reads * profile.hit_ratio),
    misses: Math.round(reads * (1 - profile.hit_ratio)),
  };
}

/** Commands from `fromMs` to `toMs` at the database's mean rate (the wave averages out). */
function commandsBetween(entry: RedisDatabaseEntry, fromMs: number, toMs: number): number {
  const { profile } = entry;
  if (profile.state !== 'active') return 0;
  const rate = REDIS_PLAN_LIMITS[profile.type].db_max_commands_per_second * profile.throughput_fraction;
  return Math.round((rate * Math.max(0, toMs - Math.max(fromMs, entry.createdMs))) / 1000);
}

function billing(entry: RedisDatabaseEntry, fromMs: number, toMs: number): number {
  if (entry.profile.type === 'free') return 0;
  if (entry.profile.type === 'pro') return round((PRO_MONTHLY_PRICE * (toMs - fromMs)) / (30 * DAY_MS), 4);
  return round(commandsBetween(entry, fromMs, toMs) * PAYG_PRICE_PER_COMMAND, 4);
}

export function redisStats(entry: RedisDatabaseEntry, nowMs: number): Record<string, unknown> {
  const lastMinute = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  const minutes = Array.from({ length: POINTS }, (_, i) => lastMinute - (POINTS - 1 - i) * MINUTE_MS);
  const figures = minutes.map((ms) => ({ ms, ...minute(entry, ms) }));
  const series = (pick: (f: (typeof figures)[number]) => number): Point[] =>
    figures.map((f) => ({ x: formatServiceTime(f.ms, 'nanos'), y: pick(f) }));

  const today = startOfUtcDay(nowMs);
  const days = Array.from({ length: DAILY_POINTS }, (_, i) => today - (DAILY_POINTS - 1 - i) * DAY_MS);
  const daily = (total: (fromMs: number, toMs: number) => number): Point[] =>
    days.map((dayMs) => ({ x: formatServiceTime(dayMs, 'nanos'), y: total(dayMs, Math.min(dayMs + DAY_MS, nowMs)) }));

  const dailyCommands = commandsBetween(entry, today, nowMs);
  const month = startOfUtcMonth(nowMs);
  const monthlyCommands = commandsBetween(entry, month, nowMs);
  const current = minute(entry, nowMs);
  const latency = series((f) => f.latencyMean);
  return {
    connection_count: series((f) => f.connections),
    keyspace: series((f) => f.keys),
    throughput: series((f) => f.throughput),
    diskusage: series((f) => f.storage),
    latencymean: latency,
    latency_99: series((f) => round(f.latencyMean * 3, 3)),
    read_latency_mean: series((f) => round(f.latencyMean * 0.8, 3)),
    read_latency_99: series((f) => round(f.latencyMean * 2.5, 3)),
    write_latency_mean: series((f) => round(f.latencyMean * 1.3, 3)),
    write_latency_99: series((f) => round(f.latencyMean * 4, 3)),
    hits: series((f) => f.hits),
    misses: series((f) => f.misses),
    read: series((f) => f.reads),
    write: series((f) => f.writes),
    dailyrequests: daily((from, to) => commandsBetween(entry, from, to)),
    dailybilling: daily((from, to) => billing(entry, from, to)),
    bandwidths: daily((from, to) => commandsBetween(entry, from, to) * BYTES_PER_COMMAND),
    days: days.map(weekdayName),
    monitor_count: [],
    command_counts: [
      {
        metric_identifier: 'GET',
        data_points: series((f) => f.reads),
      },
    ],
    daily_net_commands: dailyCommands,
    daily_read_requests: Math.round(dailyCommands * READ_SHARE),
    daily_write_requests: dailyCommands - Math.round(dailyCommands * READ_SHARE),
    dailybandwidth: dailyCommands * BYTES_PER_COMMAND,
    total_monthly_requests: monthlyCommands,
    total_monthly_read_requests: Math.round(monthlyCommands * READ_SHARE),
    total_monthly_write_requests: monthlyCommands - Math.round(monthlyCommands * READ_SHARE),
    total_monthly_script_requests: Math.round(monthlyCommands * 0.01),
    total_monthly_bandwidth: monthlyCommands * BYTES_PER_COMMAND,
    queue_optimized: false,
    total_monthly_storage: current.storage,
    current_storage: current.storage,
    total_monthly_billing: billing(entry, month, nowMs),
  };
}
