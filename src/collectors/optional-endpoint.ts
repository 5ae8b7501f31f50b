// Endpoints a collector reads that a service may not have (the real service, a regional one, an
// older one, a self-hosted one): `/v2/workflows/*`, `/v2/globalParallelism`, the flow-control
// list `/v2/flowControl`, the management `/v2/qstash/stats*`. A 404 (or 405) on one is not a
// failed poll: it is remembered, logged once, asked again every ABSENT_RETRY_MS, and shown as
// upstash_exporter_endpoint_available{collector,endpoint,qstash_region} 0 (1 once it answers). The rest of the
// collector goes on; a collector whose every endpoint is absent succeeds with nothing to export
// and says so in its summary (the landing page): unsupported, not failing (docs/metrics.md).
import type { Gauge } from 'prom-client';
import { ApiNotFoundError, ApiUpstreamError } from '../api/errors.js';
import type { CollectorName, PollContext } from './collector.js';

/** How long an absent endpoint is left alone before it is asked again. */
export const ABSENT_RETRY_MS = 10 * 60_000;

/** upstash_exporter_endpoint_available (SelfMetrics.endpointAvailable). */
export type EndpointAvailabilityGauge = Pick<Gauge<'collector' | 'endpoint' | 'qstash_region'>, 'set'>;

/** A 404 or 405: the service does not route this endpoint. */
export function isEndpointRefused(error: unknown): boolean {
  return error instanceof ApiNotFoundError || (error instanceof ApiUpstreamError && error.status === 405);
}

export interface OptionalEndpointOptions {
  collector: CollectorName;
  /** As shown in the metric's `endpoint` label: `GET /v2/globalParallelism`. */
  endpoint: string;
  gauge?: EndpointAvailabilityGauge | undefined;
  /** Which errors say the endpoint is absent (default: a 404 or 405). */
  isAbsence?: (error: unknown) => boolean;
  retryMs?: number;
}

export class OptionalEndpoint {
  readonly endpoint: string;
  readonly #collector: CollectorName;
  readonly #gauge: EndpointAvailabilityGauge | undefined;
  readonly #isAbsence: (error: unknown) => boolean;
  readonly #retryMs: number;
  /** null until it has been asked. */
  #available: boolean | null = null;
  /** When an absent endpoint is asked again, unix ms. */
  #retryAt = 0;

  constructor(options: OptionalEndpointOptions) {
    this.endpoint = options.endpoint;
    this.#collector = options.collector;
    this.#gauge = options.gauge;
    this.#isAbsence = options.isAbsence ?? isEndpointRefused;
    this.#retryMs = options.retryMs ?? ABSENT_RETRY_MS;
  }

  /** Whether the endpoint answered when last asked (null: not asked yet). */
  get available(): boolean | null {
    return this.#available;
  }

  /** Known absent and not due to be asked again: read() would not ask. */
  skipped(now: number): boolean {
    return this.#available === false && now < this.#retryAt;
  }

  /**
   * The endpoint's answer, or undefined when the service does not have it (asked again only
   * every retryMs). Any other error is passed on: the poll fails as usual.
   */
  async read<T>(ctx: PollContext, request: () => Promise<T>): Promise<T | undefined> {
    if (this.skipped(ctx.now())) return undefined;
    let value: T;
    try {
      value = await request();
    } catch (error) {
      if (!this.#isAbsence(error)) throw error;
      this.#retryAt = ctx.now() + this.#retryMs;
      if (this.#available !== false) {
        ctx.logger.warn(
          { endpoint: this.endpoint, retryInSeconds: this.#retryMs / 1000 },
          'the service does not have this endpoint (404): its metrics are left out and it is asked again every so often; see upstash_exporter_endpoint_available',
        );
      }
      this.#set(false, ctx);
      return undefined;
    }
    if (this.#available === false) ctx.logger.info({ endpoint: this.endpoint }, 'the endpoint answers again');
    this.#set(true, ctx);
    return value;
  }

  #set(available: boolean, ctx: PollContext): void {
    this.#available = available;
    // Each region's instance its own series: one region may have an endpoint the other lacks.
    const region = ctx.qstashRegion === undefined ? {} : { qstash_region: ctx.qstashRegion };
    this.#gauge?.set({ collector: this.#collector, endpoint: this.endpoint, ...region }, available ? 1 : 0);
  }
}

/** The summary line of a collector whose every endpoint is absent, or undefined. */
export function unsupportedSummary(endpoints: readonly OptionalEndpoint[]): string | undefined {
  if (endpoints.length === 0 || !endpoints.every((endpoint) => endpoint.available === false)) return undefined;
  return `unsupported: the service has no ${endpoints.map((endpoint) => endpoint.endpoint).join(', ')} (404); asked again every ${ABSENT_RETRY_MS / 60_000} minutes`;
}
