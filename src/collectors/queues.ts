// The queues collector: GET /v2/queues into a fresh snapshot per poll: each queue's backlog
// (`lag`), paused flag and parallelism, and the number of queues to set against the plan's
// max_queues (upstash_qstash_plan_max_queues of the account collector; both carry only the
// target labels, so `sum(upstash_qstash_queues) / upstash_qstash_plan_max_queues` divides).
// Global parallelism (GET /v2/globalParallelism) is read here too: it is the account-wide
// counterpart of a queue's parallelism. A service without it (404) still has its queues
// exported; the global gauges are left out (optional-endpoint.ts).

import type { Registry } from 'prom-client';
import type { DeliveryClient, GlobalParallelism, QueueInfo } from '../api/delivery.js';
import type { CollectorFactory, PollContext } from './collector.js';
import { flagValue, registerGauge, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { OptionalEndpoint, type EndpointAvailabilityGauge } from './optional-endpoint.js';
import { polledIntervalMs } from './poll-schedule.js';
import { gaugeRows, type FamilyRow } from './families.js';

const SOURCE = 'GET /v2/queues';
const GLOBAL_SOURCE = 'GET /v2/globalParallelism';

export const QUEUE_FAMILIES = {
  queues: {
    name: 'upstash_qstash_queues',
    meaning:
      'Number of queues by paused state; both states always present; sum it against upstash_qstash_plan_max_queues',
    source: `entries of ${SOURCE} counted by paused`,
    labelNames: ['paused'],
  },
  lag: {
    name: 'upstash_qstash_queue_lag',
    meaning: 'Messages waiting in the queue (its backlog)',
    source: `lag of ${SOURCE}`,
    labelNames: ['queue'],
  },
  paused: {
    name: 'upstash_qstash_queue_paused',
    meaning: 'Whether the queue is paused (1: it holds its messages) or active (0)',
    source: `paused of ${SOURCE}`,
    labelNames: ['queue'],
  },
  parallelism: {
    name: 'upstash_qstash_queue_parallelism',
    meaning:
      "Deliveries of the queue's messages allowed in flight at once; compare with upstash_qstash_plan_max_parallelism",
    source: `parallelism of ${SOURCE}`,
    labelNames: ['queue'],
  },
  globalParallelismMax: {
    name: 'upstash_qstash_global_parallelism_max',
    meaning:
      'Most deliveries in flight at once across the account, as the service applies it; the plan figure is upstash_qstash_plan_max_global_parallelism',
    source: `parallelismMax of ${GLOBAL_SOURCE}`,
    labelNames: [],
  },
  globalParallelismInUse: {
    name: 'upstash_qstash_global_parallelism_in_use',
    meaning: 'Deliveries in flight across the account now',
    source: `parallelismCount of ${GLOBAL_SOURCE}`,
    labelNames: [],
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const QUEUE_FAMILY_ROWS: readonly FamilyRow[] = gaugeRows(QUEUE_FAMILIES);

interface QueuesData {
  queues: QueueInfo[];
  /** undefined: the service has no global parallelism endpoint. */
  global: GlobalParallelism | undefined;
}

type QueuesClient = Pick<DeliveryClient, 'listQueues' | 'globalParallelism'>;

export interface QueuesCollectorOptions {
  bounds?: InventoryBounds;
  client: QueuesClient;
  intervalMs: number;
  availability?: EndpointAvailabilityGauge;
}

export class QueuesCollector extends SnapshotCollector<'queues', QueuesData> {
  readonly #client: QueuesClient;
  readonly #global: OptionalEndpoint;

  constructor(options: QueuesCollectorOptions) {
    super('queues', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#global = new OptionalEndpoint({ collector: 'queues', endpoint: GLOBAL_SOURCE, gauge: options.availability });
  }

  protected async fetch(ctx: PollContext): Promise<QueuesData> {
    const call = { signal: ctx.signal };
    const [queues, global] = await Promise.all([
      this.#client.listQueues(call),
      this.#global.read(ctx, () => this.#client.globalParallelism(call)),
    ]);
    return { queues, global };
  }

  protected fill(registry: Registry, data: QueuesData): void {
    const f = QUEUE_FAMILIES;
    const count = registerGauge(registry, f.queues, this.families);
    const lag = registerGauge(registry, f.lag, this.families);
    const paused = registerGauge(registry, f.paused, this.families);
    const parallelism = registerGauge(registry, f.parallelism, this.families);

    const pausedCount = data.queues.filter((q) => q.paused).length;
    count.set({ paused: 'true' }, pausedCount);
    count.set({ paused: 'false' }, data.queues.length - pausedCount);
    for (const queue of data.queues) {
      const id = { queue: queue.name };
      paused.set(id, flagValue(queue.paused));
      // Absent reads as "not told", not 0: a missing lag must not look like an empty backlog.
      if (queue.lag !== undefined) lag.set(id, queue.lag);
      if (queue.parallelism !== undefined) parallelism.set(id, queue.parallelism);
    }

    if (data.global === undefined) return;
    // The SDK reads absent fields of this record as 0; so does the exporter.
    registerGauge(registry, f.globalParallelismMax, this.families).set(data.global.parallelismMax ?? 0);
    registerGauge(registry, f.globalParallelismInUse, this.families).set(data.global.parallelismCount ?? 0);
  }
}

export const createQueuesCollector: CollectorFactory = (config, deps) =>
  deps.delivery === null
    ? null
    : new QueuesCollector({
        client: deps.delivery,
        intervalMs: polledIntervalMs('queues', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
        availability: deps.selfMetrics.endpointAvailable,
      });
