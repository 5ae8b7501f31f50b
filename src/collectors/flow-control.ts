// The flow-control collector: per flow-control key, the wait list, parallelism and rate in use
// against their maximum, and the paused and pinned flags (GET /v2/flowControl/{key}, the SDK's
// FlowControlInfo). Which keys: the configured ones (flow_control.keys), plus those the list
// endpoint GET /v2/flowControl names, where the service has it (the SDK has no list call; a 404
// is remembered and asked again rarely: optional-endpoint.ts). At most flow_control.max_keys keys are read per poll,
// one request each: configured keys first, then listed ones by wait list size.

import type { Registry } from 'prom-client';
import type { DeliveryClient, FlowControlInfo } from '../api/delivery.js';
import { ApiNotFoundError } from '../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { CollectorFactory, PollContext } from './collector.js';
import { flagValue, registerGauge, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { OptionalEndpoint, type EndpointAvailabilityGauge } from './optional-endpoint.js';
import { polledIntervalMs } from './poll-schedule.js';
import { gaugeRows, type FamilyRow } from './families.js';

const SOURCE = 'GET /v2/flowControl/{key}';
const LIST_SOURCE = 'GET /v2/flowControl';

export const DEFAULT_FLOW_CONTROL_MAX_KEYS = 100;

const perKey = (name: string, meaning: string, field: string): GaugeSpec<'flow_control_key'> => ({
  name,
  meaning,
  source: `${field} of ${SOURCE}`,
  labelNames: ['flow_control_key'],
});

export const FLOW_CONTROL_FAMILIES = {
  waitlist: perKey(
    'upstash_qstash_flow_control_waitlist_size',
    'Messages of the flow-control key waiting for its parallelism or rate',
    'waitListSize',
  ),
  parallelismMax: perKey(
    'upstash_qstash_flow_control_parallelism_max',
    'Deliveries of the key allowed in flight at once; 0 when none is set',
    'parallelismMax',
  ),
  parallelismInUse: perKey(
    'upstash_qstash_flow_control_parallelism_in_use',
    'Deliveries of the key in flight now',
    'parallelismCount',
  ),
  rateMax: perKey(
    'upstash_qstash_flow_control_rate_max',
    'Deliveries of the key allowed to start per rate period; 0 when none is set',
    'rateMax',
  ),
  rateInUse: perKey(
    'upstash_qstash_flow_control_rate_in_use',
    'Deliveries of the key started in the current rate period',
    'rateCount',
  ),
  ratePeriod: perKey(
    'upstash_qstash_flow_control_rate_period_seconds',
    'Length of the rate period of the key, seconds',
    'ratePeriod',
  ),
  paused: perKey(
    'upstash_qstash_flow_control_paused',
    'Whether delivery of the key is paused (1): its messages stay in the wait list',
    'isPaused',
  ),
  pinned: {
    name: 'upstash_qstash_flow_control_pinned',
    meaning: 'Whether the setting (parallelism, rate) of the key is pinned (1): messages cannot change it',
    source: `isPinnedParallelism, isPinnedRate of ${SOURCE}`,
    labelNames: ['flow_control_key', 'setting'],
    keep: ['setting'],
  },
  listed: {
    name: 'upstash_qstash_flow_control_keys_listed',
    meaning:
      'Flow-control keys the service lists; absent where it has no list endpoint (only configured keys are read then)',
    source: `entries of ${LIST_SOURCE}`,
    labelNames: [],
  },
  unread: {
    name: 'upstash_qstash_flow_control_keys_unread',
    meaning:
      'Flow-control keys known (listed or configured) but not read this poll: beyond flow_control.max_keys, or unknown to the service',
    source: `${LIST_SOURCE} and the configured keys`,
    labelNames: [],
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const FLOW_CONTROL_FAMILY_ROWS: readonly FamilyRow[] = gaugeRows(FLOW_CONTROL_FAMILIES);

interface FlowControlData {
  /** null: the service has no list endpoint. */
  listed: number | null;
  records: FlowControlInfo[];
  unread: number;
}

type FlowControlClient = Pick<DeliveryClient, 'listFlowControls' | 'flowControl'>;

export interface FlowControlCollectorOptions {
  bounds?: InventoryBounds;
  client: FlowControlClient;
  intervalMs: number;
  /** Keys read even when the service does not list them. */
  keys?: readonly string[];
  maxKeys?: number;
  availability?: EndpointAvailabilityGauge;
}

export class FlowControlCollector extends SnapshotCollector<'flow_control', FlowControlData> {
  readonly #client: FlowControlClient;
  readonly #keys: readonly string[];
  readonly #maxKeys: number;
  readonly #list: OptionalEndpoint;
  /** Configured keys the service did not know, already logged. */
  readonly #unknownWarned = new Set<string>();

  constructor(options: FlowControlCollectorOptions) {
    super('flow_control', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#keys = options.keys ?? [];
    this.#maxKeys = options.maxKeys ?? DEFAULT_FLOW_CONTROL_MAX_KEYS;
    this.#list = new OptionalEndpoint({
      collector: 'flow_control',
      endpoint: LIST_SOURCE,
      gauge: options.availability,
    });
  }

  protected async fetch(ctx: PollContext): Promise<FlowControlData> {
    const call = { signal: ctx.signal };
    const list = (await this.#list.read(ctx, () => this.#client.listFlowControls(call))) ?? null;
    const listedByKey = new Map((list ?? []).map((record) => [record.flowControlKey, record]));
    const waitOf = (record: FlowControlInfo | undefined): number => record?.waitListSize ?? record?.waitlistSize ?? 0;
    const listedKeys = [...listedByKey.keys()]
      .filter((key) => !this.#keys.includes(key))
      .sort((a, b) => waitOf(listedByKey.get(b)) - waitOf(listedByKey.get(a)));
    const known = [...this.#keys, ...listedKeys];
    const chosen = known.slice(0, this.#maxKeys);
    let unread = known.length - chosen.length;

    const records: FlowControlInfo[] = [];
    for (const key of chosen) {
      const listed = listedByKey.get(key);
      // A list record with the details spares the request; the docs' list has only the wait list.
      if (listed?.parallelismMax !== undefined) {
        records.push(listed);
        continue;
      }
      try {
        records.push(await this.#client.flowControl(key, call));
      } catch (error) {
        if (!(error instanceof ApiNotFoundError)) throw error;
        // A configured key the service has not seen (yet), or one gone since it was listed.
        unread += 1;
        this.#warnUnknown(key, ctx.logger);
      }
    }
    return { listed: list === null ? null : list.length, records, unread };
  }

  protected fill(registry: Registry, data: FlowControlData): void {
    const f = FLOW_CONTROL_FAMILIES;
    const gauges = {
      waitlist: registerGauge(registry, f.waitlist, this.families),
      parallelismMax: registerGauge(registry, f.parallelismMax, this.families),
      parallelismInUse: registerGauge(registry, f.parallelismInUse, this.families),
      rateMax: registerGauge(registry, f.rateMax, this.families),
      rateInUse: registerGauge(registry, f.rateInUse, this.families),
      ratePeriod: registerGauge(registry, f.ratePeriod, this.families),
      paused: registerGauge(registry, f.paused, this.families),
    };
    const pinned = registerGauge(registry, f.pinned, this.families);
    if (data.listed !== null) registerGauge(registry, f.listed, this.families).set(data.listed);
    registerGauge(registry, f.unread, this.families).set(data.unread);

    for (const record of data.records) {
      const id = { flow_control_key: record.flowControlKey };
      const set = (gauge: (typeof gauges)[keyof typeof gauges], value: number | undefined): void => {
        if (value !== undefined) gauge.set(id, value);
      };
      set(gauges.waitlist, record.waitListSize ?? record.waitlistSize);
      set(gauges.parallelismMax, record.parallelismMax);
      set(gauges.parallelismInUse, record.parallelismCount);
      set(gauges.rateMax, record.rateMax);
      set(gauges.rateInUse, record.rateCount);
      set(gauges.ratePeriod, record.ratePeriod);
      gauges.paused.set(id, flagValue(record.isPaused ?? false));
      pinned.set({ ...id, setting: 'parallelism' }, flagValue(record.isPinnedParallelism ?? false));
      pinned.set({ ...id, setting: 'rate' }, flagValue(record.isPinnedRate ?? false));
    }
  }

  #warnUnknown(key: string, logger: Logger): void {
    if (this.#unknownWarned.has(key)) return;
    this.#unknownWarned.add(key);
    logger.warn(
      { flowControlKey: key.slice(0, 64) },
      'flow-control key unknown to the service (404); not exported until it has messages',
    );
  }
}

export const createFlowControlCollector: CollectorFactory = (config, deps) =>
  deps.delivery === null
    ? null
    : new FlowControlCollector({
        client: deps.delivery,
        intervalMs: polledIntervalMs('flow_control', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
        keys: config.flowControl.keys,
        maxKeys: config.flowControl.maxKeys,
        availability: deps.selfMetrics.endpointAvailable,
      });
