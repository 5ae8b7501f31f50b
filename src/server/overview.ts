// The landing page's overview: the few figures a person wants at a glance (deliveries and
// failures, log walk lag, daily requests against the limits, DLQ, queue backlog, workflow runs,
// canary probe), read from the registries /metrics renders (overview-families.ts), so each
// figure is a value /metrics also shows. Nothing here calls the upstream.
//
// OverviewHistory samples the figures that move into a fixed-size ring (one point every 10 s
// for an hour): the windowed counts ("last 5 min") and the page's plots come from it.

import { SampleRing } from '../metrics/ring-buffer.js';
import {
  OVERVIEW_METRICS,
  readFamilies,
  largest,
  single,
  total,
  sum,
  type Families,
  type RegistrySource,
  type Sample,
} from './overview-families.js';

/** The counters and gauges the history keeps, one column each. */
const HISTORY_COLUMNS = ['delivered', 'failed', 'cancelled', 'workflowFailed', 'logLag', 'dailyRequests'] as const;
type HistoryColumn = (typeof HISTORY_COLUMNS)[number];
type HistoryValues = Partial<Record<HistoryColumn, number>>;

export const HISTORY_SAMPLE_INTERVAL_MS = 10_000;
export const HISTORY_SPAN_MS = 3_600_000;
/** The windowed counts of the overview ("delivered in the last 5 min"). */
export const OVERVIEW_WINDOW_MS = 300_000;

const MOVING_FAMILIES = [
  OVERVIEW_METRICS.events,
  OVERVIEW_METRICS.workflowRuns,
  OVERVIEW_METRICS.logLag,
  OVERVIEW_METRICS.usageDailyRequests,
  OVERVIEW_METRICS.dailyMessages,
];

/** The moving figures, from families read just now. */
function movingOf(got: Families): HistoryValues {
  const m = OVERVIEW_METRICS;
  const events = got[m.events] ?? null;
  const runs = got[m.workflowRuns] ?? null;
  const values: HistoryValues = {};
  if (events !== null) {
    values.delivered = sum(events, (l) => l.state === 'DELIVERED');
    values.failed = sum(events, (l) => l.state === 'FAILED');
    values.cancelled = sum(events, (l) => l.state === 'CANCELLED');
  }
  if (runs !== null) values.workflowFailed = sum(runs, (l) => l.state === 'failed');
  const lagSeconds = largest(got[m.logLag] ?? null);
  if (lagSeconds !== null) values.logLag = lagSeconds;
  const requests = single(got[m.usageDailyRequests] ?? null) ?? single(got[m.dailyMessages] ?? null);
  if (requests !== null) values.dailyRequests = requests;
  return values;
}

export interface OverviewHistoryOptions {
  now?: () => number;
  sampleIntervalMs?: number;
  /** How far back the plots reach. */
  spanMs?: number;
}

/** Samples the moving figures on a timer into a ring of fixed size. */
export class OverviewHistory {
  readonly ring: SampleRing<HistoryColumn>;
  readonly sampleIntervalMs: number;
  readonly #sources: () => readonly RegistrySource[];
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(sources: () => readonly RegistrySource[], options: OverviewHistoryOptions = {}) {
    this.#sources = sources;
    this.#now = options.now ?? Date.now;
    this.sampleIntervalMs = options.sampleIntervalMs ?? HISTORY_SAMPLE_INTERVAL_MS;
    const spanMs = options.spanMs ?? HISTORY_SPAN_MS;
    this.ring = new SampleRing(Math.ceil(spanMs / this.sampleIntervalMs) + 1, HISTORY_COLUMNS);
  }

  /** Takes one sample now. */
  async sample(): Promise<void> {
    const values = movingOf(await readFamilies(this.#sources(), MOVING_FAMILIES));
    this.ring.push(this.#now(), values);
  }

  /** Samples at once (the base of the first windows), then every interval. */
  start(): void {
    if (this.#timer !== undefined) return;
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), this.sampleIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** A count over the last OVERVIEW_WINDOW_MS, or since the first sample when that is more recent. */
export interface WindowedCount {
  value: number;
  /** Length of the window actually covered, ms. */
  windowMs: number;
  /** The history does not reach back a whole window (the exporter started less than 5 min ago). */
  sinceStart: boolean;
}

export interface PlotPoint {
  /** Unix ms. */
  t: number;
  v: number;
}

export interface Plot {
  id: string;
  title: string;
  /** Unit of the values, for the text alternative (e.g. `per minute`, `s`). */
  unit: string;
  /** One or two lines, the first drawn solid. */
  series: { name: string; points: PlotPoint[] }[];
}

export interface Overview {
  now: number;
  deliveries: {
    delivered: WindowedCount;
    failed: WindowedCount;
    cancelled: WindowedCount;
    /** FAILED / (DELIVERED + FAILED) over the window; null when nothing finished. */
    failureRatio: number | null;
  } | null;
  logWalk: { lagSeconds: number | null; lateEvents: number | null; missedLateEvents: number | null } | null;
  daily: {
    requests: number;
    /** The family the figure comes from: the official usage when polled, else the log count. */
    metric: string;
    softLimit: number | null;
    hardLimit: number | null;
    region: string | null;
  } | null;
  dlq: { size: number; oldestTimestampSeconds: number | null } | null;
  /** Each queue row is one region's queue (region null without QStash regions); `regions`: how many hold queues. */
  queues: {
    count: number;
    regions: number;
    largest: { queue: string; region: string | null; backlog: number; paused: boolean }[];
  } | null;
  workflows: {
    inProgress: number | null;
    oldestRunAgeSeconds: number | null;
    failedTotal: number | null;
    failed: WindowedCount | null;
  } | null;
  probe:
    | {
        kind: string;
        region: string | null;
        success: boolean;
        lastSuccessSeconds: number | null;
        deliverySeconds: number | null;
      }[]
    | null;
  /** Redis databases: how many, how many not active, billed this month (USD, all databases). */
  redis: { databases: number; notActive: number; monthlyBillingUsd: number } | null;
  plots: Plot[];
}

/** Queues listed by backlog, largest first. */
export const LARGEST_QUEUES = 5;

interface Point {
  t: number;
  values: HistoryValues;
}

/** The history's samples followed by the values now. */
function pointsOf(history: OverviewHistory | null, now: number, live: HistoryValues): Point[] {
  const points: Point[] = [];
  if (history !== null) {
    const { ring } = history;
    for (let i = 0; i < ring.size; i++) {
      const values: HistoryValues = {};
      for (const column of ring.columns) {
        const v = ring.valueAt(i, column);
        if (!Number.isNaN(v)) values[column] = v;
      }
      points.push({ t: ring.timeAt(i), values });
    }
  }
  points.push({ t: now, values: live });
  return points;
}

/** Increase of a counter from the newest sample at least a window old (or the oldest) to now. */
function windowed(points: readonly Point[], column: HistoryColumn, now: number): WindowedCount | null {
  const current = points[points.length - 1]!.values[column];
  if (current === undefined) return null;
  let base = 0;
  for (let i = points.length - 2; i >= 0; i--) {
    base = i;
    if (points[i]!.t <= now - OVERVIEW_WINDOW_MS) break;
  }
  const first = points[base]!;
  const sinceStart = points.length < 2 || first.t > now - OVERVIEW_WINDOW_MS;
  // A family absent at the base sample had not counted anything yet.
  const before = points.length < 2 ? 0 : (first.values[column] ?? 0);
  return {
    value: current >= before ? current - before : current,
    windowMs: points.length < 2 ? 0 : now - first.t,
    sinceStart,
  };
}

/** Per-minute rate of a counter at each point, over the minute before it (or what there is of it). */
function perMinute(points: readonly Point[], column: HistoryColumn): PlotPoint[] {
  const out: PlotPoint[] = [];
  let j = 0;
  for (let i = 1; i < points.length; i++) {
    const p = points[i]!;
    while (j < i - 1 && points[j + 1]!.t <= p.t - 60_000) j++;
    const q = points[j]!;
    const now = p.values[column];
    if (now === undefined || p.t <= q.t) continue;
    const before = q.values[column] ?? 0;
    const increase = now >= before ? now - before : now;
    out.push({ t: p.t, v: (increase * 60_000) / (p.t - q.t) });
  }
  return out;
}

function gaugePoints(points: readonly Point[], column: HistoryColumn): PlotPoint[] {
  return points.flatMap((p) => (p.values[column] === undefined ? [] : [{ t: p.t, v: p.values[column] }]));
}

/** Reads the overview from the registries (and the history for windows and plots). */
export async function readOverview(
  sources: readonly RegistrySource[],
  history: OverviewHistory | null,
  now: number,
): Promise<Overview> {
  const m = OVERVIEW_METRICS;
  const got = await readFamilies(sources, Object.values(m));
  const live = movingOf(got);
  const points = pointsOf(history, now, live);

  const delivered = windowed(points, 'delivered', now);
  const failed = windowed(points, 'failed', now);
  const cancelled = windowed(points, 'cancelled', now);
  const deliveries =
    delivered === null || failed === null || cancelled === null
      ? null
      : {
          delivered,
          failed,
          cancelled,
          failureRatio: delivered.value + failed.value > 0 ? failed.value / (delivered.value + failed.value) : null,
        };

  const lag = got[m.logLag] ?? null;
  const late = got[m.lateEvents] ?? null;
  const missed = got[m.missedLateEvents] ?? null;
  const logWalk =
    lag === null && late === null && missed === null
      ? null
      : { lagSeconds: largest(lag), lateEvents: total(late), missedLateEvents: total(missed) };

  const usage = single(got[m.usageDailyRequests] ?? null);
  const logged = single(got[m.dailyMessages] ?? null);
  const region = got[m.accountInfo]?.[0]?.labels.region;
  const daily =
    usage === null && logged === null
      ? null
      : {
          requests: usage ?? logged!,
          metric: usage !== null ? m.usageDailyRequests : m.dailyMessages,
          softLimit: single(got[m.softDailyLimit] ?? null),
          hardLimit: single(got[m.hardDailyLimit] ?? null),
          region: region === undefined ? null : String(region),
        };

  const dlqSize = total(got[m.dlqSize] ?? null);
  const oldest = (got[m.dlqOldest] ?? []).map((s) => s.value).filter((v) => Number.isFinite(v) && v > 0);
  const dlq =
    dlqSize === null
      ? null
      : { size: dlqSize, oldestTimestampSeconds: oldest.length === 0 ? null : Math.min(...oldest) };

  const lags = got[m.queueLag];
  // A queue is named within its region: "invoices" of one region is not the other's.
  const regionOf = (s: Sample): string | null =>
    s.labels.qstash_region === undefined ? null : String(s.labels.qstash_region);
  const queueKey = (s: Sample): string => `${regionOf(s) ?? ''}\u0000${String(s.labels.queue)}`;
  const paused = new Set((got[m.queuePaused] ?? []).filter((s) => s.value === 1).map(queueKey));
  const queues =
    lags === null || lags === undefined
      ? null
      : {
          count: lags.length,
          regions: new Set(lags.map(regionOf)).size,
          largest: lags
            .filter((s) => s.value > 0)
            .map((s) => ({
              queue: String(s.labels.queue),
              region: regionOf(s),
              backlog: s.value,
              paused: paused.has(queueKey(s)),
            }))
            .sort((a, b) => b.backlog - a.backlog || a.queue.localeCompare(b.queue))
            .slice(0, LARGEST_QUEUES),
        };

  const runs = got[m.workflowRuns] ?? null;
  const inProgress = total(got[m.workflowsInProgress] ?? null);
  const workflows =
    runs === null && inProgress === null
      ? null
      : {
          inProgress,
          oldestRunAgeSeconds: largest(got[m.workflowOldestRunAge] ?? null),
          failedTotal: runs === null ? null : sum(runs, (l) => l.state === 'failed'),
          failed: windowed(points, 'workflowFailed', now),
        };

  const success = got[m.probeSuccess] ?? null;
  const lastSuccess = got[m.probeLastSuccess] ?? [];
  const duration = got[m.probeDeliveryDuration] ?? [];
  // One probe per kind and region: each row's figures are its own region's.
  const probe =
    success === null
      ? null
      : success.map((s) => {
          const kind = String(s.labels.kind);
          const region = regionOf(s);
          const own = (samples: readonly Sample[]): number | null =>
            samples.find((o) => o.labels.kind === kind && regionOf(o) === region)?.value ?? null;
          const last = own(lastSuccess);
          return {
            kind,
            region,
            success: s.value === 1,
            lastSuccessSeconds: last === null || last <= 0 ? null : last,
            deliverySeconds: own(duration),
          };
        });

  const plots: Plot[] = [];
  if (deliveries !== null) {
    plots.push({
      id: 'deliveries',
      title: 'Delivered and failed per minute',
      unit: 'per minute',
      series: [
        { name: 'delivered', points: perMinute(points, 'delivered') },
        { name: 'failed', points: perMinute(points, 'failed') },
      ],
    });
  }
  if (logWalk?.lagSeconds !== null && logWalk !== null) {
    plots.push({
      id: 'log-lag',
      title: 'Log walk lag',
      unit: 's',
      series: [{ name: 'lag', points: gaugePoints(points, 'logLag') }],
    });
  }
  if (daily !== null) {
    plots.push({
      id: 'daily-requests',
      title: 'Requests today',
      unit: 'requests',
      series: [{ name: 'requests', points: gaugePoints(points, 'dailyRequests') }],
    });
  }

  const states = got[m.redisState] ?? null;
  const redis =
    states === null
      ? null
      : {
          databases: new Set(states.map((s) => String(s.labels.database_id))).size,
          notActive: states.filter((s) => s.value === 1 && s.labels.state !== 'active').length,
          monthlyBillingUsd: sum(got[m.redisMonthlyBilling] ?? []),
        };

  return { now, deliveries, logWalk, daily, dlq, queues, workflows, probe, redis, plots };
}
