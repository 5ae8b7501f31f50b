// The exporter's own metrics: one stable registry (never swapped) with every
// upstash_exporter_* family that is not specific to the logs walk (each created from its row in
// self-families.ts), and one with prom-client's process defaults. The runner reports polls here; the API clients report requests via
// `onRequest`. /metrics keeps the first one rendered until `generation` moves; the process
// defaults, read from the system at each scrape, are rendered every time.

import { collectDefaultMetrics, Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ApiName } from '../api/errors.js';
import type { RequestReport } from '../api/http.js';
import type { CollectorName } from '../config/collector-catalogue.js';
import type { SeriesCounters } from './cardinality.js';
import { metricOptions, type Family } from './families.js';
import { SELF_FAMILIES } from './self-families.js';
import { createdAtProcessStart } from './openmetrics.js';
import { createRegistry } from './snapshot.js';

/** Upstream request latencies: loopback/fast answers up to slow retried pages near the timeouts. */
export const API_DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Interval of the timer behind nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds
 * (prom-client samples with 10 ms by default). Each sample is a wake-up of the event loop, about
 * 0.2 ms of CPU on a small VM: at 10 ms that is 100 a second, more than a busy log walk's own.
 * The values are the times between two samples, so they include this interval.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

export interface SelfMetricsOptions {
  /** Collectors to pre-set now (the runner adds its own with addCollector). */
  collectors?: readonly CollectorName[];
  version: string;
  /** Git revision of the build; see buildRevision(). */
  revision?: string;
  /** prom-client's process_* and nodejs_* defaults (on unless a test turns them off). */
  processMetrics?: boolean;
}

export interface PollOutcome {
  collector: CollectorName;
  /** The instance's QStash region; null/absent for an account-scoped collector. */
  region?: string | null;
  /** The poll ran past its deadline and recordOverdue counted it as failed then (not again). */
  countedOverdue?: boolean;
  ok: boolean;
  durationSeconds: number;
  /** When the poll ended, unix milliseconds. */
  finishedAtMs: number;
}

/**
 * The labels of a collector instance's self metrics: no `qstash_region` for an account-scoped one.
 */
function collectorLabels(
  collector: CollectorName,
  region: string | null,
): { collector: string; qstash_region?: string } {
  return region === null ? { collector } : { collector, qstash_region: region };
}

/** The revision label of build_info: UPSTASH_EXPORTER_REVISION (set at image build) or 'unknown'. */
export function buildRevision(env: NodeJS.ProcessEnv = process.env): string {
  const revision = env.UPSTASH_EXPORTER_REVISION?.trim();
  return revision !== undefined && revision !== '' ? revision : 'unknown';
}

export class SelfMetrics {
  readonly registry: Registry = createRegistry();
  /** prom-client's process_* and nodejs_* defaults (empty with `processMetrics: false`). */
  readonly processRegistry: Registry = createRegistry();

  readonly buildInfo: Gauge<'version' | 'revision' | 'nodejs_version'>;
  readonly collectorSuccess: Gauge<'collector' | 'qstash_region'>;
  readonly collectorDuration: Gauge<'collector' | 'qstash_region'>;
  readonly collectorLastSuccess: Gauge<'collector' | 'qstash_region'>;
  readonly collectorPollInterval: Gauge<'collector' | 'qstash_region'>;
  readonly collectorErrors: Counter<'collector' | 'qstash_region'>;
  readonly collectorOverlaps: Counter<'collector' | 'qstash_region'>;
  readonly collectorMissedRuns: Counter<'collector' | 'qstash_region'>;
  readonly collectorPollOverdue: Gauge<'collector' | 'qstash_region'>;
  /** Optional endpoints by whether the service has them (src/collectors/optional-endpoint.ts). */
  readonly endpointAvailable: Gauge<'collector' | 'endpoint' | 'qstash_region'>;
  readonly apiRequests: Counter<'api' | 'endpoint' | 'code' | 'qstash_region'>;
  readonly apiRequestDuration: Histogram<'api' | 'endpoint' | 'qstash_region'>;
  readonly rateLimitRemaining: Gauge<'api' | 'qstash_region'>;
  readonly rateLimit: Gauge<'api' | 'qstash_region'>;
  readonly clockOffset: Gauge<'api' | 'qstash_region'>;
  readonly rateLimitBlockedUntil: Gauge<'api' | 'qstash_region'>;
  /** The call gates rateLimitBlockedUntil reads at each scrape, one per client (API and region). */
  readonly #callGates = new Map<
    string,
    { api: ApiName; region: string | null; gate: { untilUnixMs(unixNowMs: number): number } }
  >();
  /** The upstream clocks clockOffset reads at each scrape. */
  readonly #upstreamClocks = new Map<
    string,
    { api: ApiName; region: string | null; clock: { offsetMs(): number | null } }
  >();
  /** Shared by every SeriesGuard (src/metrics/cardinality.ts). */
  readonly seriesDropped: Counter<'metric'>;
  /** Label values cut to LABEL_VALUE_MAX_BYTES by a SeriesGuard. */
  readonly labelValuesTruncated: Counter<'metric'>;
  /**
   * OpenMetrics created time of a family of this registry: the process start, when all its
   * series were 0. Not for series_dropped_total, which the logs collector continues from its
   * checkpoint (a created time there would read as a reset).
   */
  readonly createdOf: (family: string) => number | undefined;
  /** collector and region of each instance pre-set (addCollector). */
  readonly #collectors = new Set<string>();
  #generation = 0;

  constructor(options: SelfMetricsOptions) {
    const registers = [this.registry];
    const F = SELF_FAMILIES;
    const gauge = <L extends string>(family: Family<L>): Gauge<L> => new Gauge({ ...metricOptions(family), registers });
    const counter = <L extends string>(family: Family<L>): Counter<L> =>
      new Counter({ ...metricOptions(family), registers });
    this.buildInfo = gauge(F.buildInfo);
    this.collectorSuccess = gauge(F.collectorSuccess);
    this.collectorDuration = gauge(F.collectorDuration);
    this.collectorLastSuccess = gauge(F.collectorLastSuccess);
    this.collectorPollInterval = gauge(F.collectorPollInterval);
    this.collectorErrors = counter(F.collectorErrors);
    this.collectorOverlaps = counter(F.collectorOverlaps);
    this.collectorMissedRuns = counter(F.collectorMissedRuns);
    this.collectorPollOverdue = gauge(F.collectorPollOverdue);
    this.endpointAvailable = gauge(F.endpointAvailable);
    this.apiRequests = counter(F.apiRequests);
    this.apiRequestDuration = new Histogram({
      ...metricOptions(F.apiRequestDuration),
      buckets: API_DURATION_BUCKETS,
      registers,
    });
    this.rateLimitRemaining = gauge(F.rateLimitRemaining);
    this.rateLimit = gauge(F.rateLimit);
    const clocks = this.#upstreamClocks;
    this.clockOffset = new Gauge({
      ...metricOptions(F.clockOffset),
      registers,
      collect() {
        for (const { api, region, clock } of clocks.values()) {
          const offsetMs = clock.offsetMs();
          const labels = region === null ? { api } : { api, qstash_region: region };
          if (offsetMs === null) this.remove(labels);
          else this.set(labels, Math.round(offsetMs) / 1000);
        }
      },
    });
    const gates = this.#callGates;
    this.rateLimitBlockedUntil = new Gauge({
      ...metricOptions(F.rateLimitBlockedUntil),
      registers,
      collect() {
        for (const { api, region, gate } of gates.values()) {
          const labels = region === null ? { api } : { api, qstash_region: region };
          this.set(labels, Math.round(gate.untilUnixMs(Date.now())) / 1000);
        }
      },
    });
    this.seriesDropped = counter(F.seriesDropped);
    this.labelValuesTruncated = counter(F.labelValuesTruncated);

    this.createdOf = createdAtProcessStart([F.seriesDropped.name]);

    this.buildInfo.set(
      { version: options.version, revision: options.revision ?? 'unknown', nodejs_version: process.version },
      1,
    );
    for (const collector of options.collectors ?? []) this.addCollector(collector);
    if (options.processMetrics !== false) {
      collectDefaultMetrics({ register: this.processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    }
  }

  /**
   * Moves at every recorded change that does not come with an upstream request: the end of a
   * poll (which also swapped the collector's snapshot) and a skipped or missed poll. Requests
   * are counted during polls, so they show with the poll's end; those of the probe, which runs
   * on its own, show with the next poll's end.
   */
  get generation(): number {
    return this.#generation;
  }

  /** The counters every SeriesGuard reports to. */
  get seriesCounters(): SeriesCounters {
    return { dropped: this.seriesDropped, truncated: this.labelValuesTruncated };
  }

  /**
   * Pre-sets every per-collector series of an enabled collector (success 0, last success 0 =
   * never, counters 0) so dashboards and alerts see zeros rather than nothing. Idempotent.
   */
  addCollector(collector: CollectorName, region: string | null = null): void {
    const labels = collectorLabels(collector, region);
    const key = `${collector} ${region ?? ''}`;
    if (this.#collectors.has(key)) return;
    this.#collectors.add(key);
    this.collectorSuccess.set(labels, 0);
    this.collectorDuration.set(labels, 0);
    this.collectorLastSuccess.set(labels, 0);
    this.collectorErrors.inc(labels, 0);
    this.collectorOverlaps.inc(labels, 0);
    this.collectorMissedRuns.inc(labels, 0);
    this.collectorPollOverdue.set(labels, 0);
  }

  /** The interval the runner polls an enabled collector at, ms. */
  setPollInterval(collector: CollectorName, intervalMs: number, region: string | null = null): void {
    this.collectorPollInterval.set(collectorLabels(collector, region), intervalMs / 1000);
  }

  /** Records the end of one poll. */
  recordPoll(outcome: PollOutcome): void {
    this.#generation += 1;
    const labels = collectorLabels(outcome.collector, outcome.region ?? null);
    this.collectorDuration.set(labels, outcome.durationSeconds);
    this.collectorPollOverdue.set(labels, 0);
    if (outcome.ok) {
      this.collectorSuccess.set(labels, 1);
      this.collectorLastSuccess.set(labels, outcome.finishedAtMs / 1000);
    } else {
      this.collectorSuccess.set(labels, 0);
      if (outcome.countedOverdue !== true) this.collectorErrors.inc(labels);
    }
  }

  /** A poll still running past its deadline: a failed poll from now on (counted once). */
  recordOverdue(collector: CollectorName, region: string | null = null): void {
    this.#generation += 1;
    const labels = collectorLabels(collector, region);
    this.collectorSuccess.set(labels, 0);
    this.collectorErrors.inc(labels);
    this.collectorPollOverdue.set(labels, 1);
  }

  /** Exports until when an upstream API's client sends nothing (rate_limit_blocked_until_seconds). */
  watchCallGate(api: ApiName, gate: { untilUnixMs(unixNowMs: number): number }, region: string | null = null): void {
    this.#callGates.set(`${api} ${region ?? ''}`, { api, region, gate });
  }

  /** Exports the offset of this machine's clock from an upstream API's (clock_offset_seconds). */
  watchUpstreamClock(api: ApiName, clock: { offsetMs(): number | null }, region: string | null = null): void {
    this.#upstreamClocks.set(`${api} ${region ?? ''}`, { api, region, clock });
  }

  countOverlap(collector: CollectorName, region: string | null = null): void {
    this.#generation += 1;
    this.collectorOverlaps.inc(collectorLabels(collector, region));
  }

  countMissedRun(collector: CollectorName, region: string | null = null): void {
    this.#generation += 1;
    this.collectorMissedRuns.inc(collectorLabels(collector, region));
  }

  /** The request hook of one QStash region's client: its requests counted with `qstash_region`. */
  onRequestIn(region: string | null): (report: RequestReport) => void {
    return (report) => this.#countRequest(report, region);
  }

  /** The API clients' hook, called after every HTTP attempt. Bound, so it can be passed as is. */
  readonly onRequest = (report: RequestReport): void => this.#countRequest(report, null);

  #countRequest(report: RequestReport, region: string | null): void {
    // The management API's requests (and a client without region) carry no qstash_region.
    const api = region === null ? { api: report.api } : { api: report.api, qstash_region: region };
    this.apiRequests.inc({ ...api, endpoint: report.endpoint, code: report.code });
    this.apiRequestDuration.observe({ ...api, endpoint: report.endpoint }, report.durationSeconds);
    if (report.rateLimitRemaining !== undefined && Number.isFinite(report.rateLimitRemaining)) {
      this.rateLimitRemaining.set(api, report.rateLimitRemaining);
    }
    if (report.rateLimitLimit !== undefined && Number.isFinite(report.rateLimitLimit)) {
      this.rateLimit.set(api, report.rateLimitLimit);
    }
  }
}
