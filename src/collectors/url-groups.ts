// The URL Groups collector: GET /v2/topics into a fresh snapshot per poll: the endpoints of each
// group (against the plan's max_endpoints_per_topic) and the number of groups (against
// max_topics). The limits stay in the account collector (upstash_qstash_plan_max_*); both sides
// carry only the target labels beside the group, so a rule divides with `group_left`.
// Endpoint URLs are never exported.

import type { Registry } from 'prom-client';
import type { DeliveryClient, UrlGroupInfo } from '../api/delivery.js';
import type { CollectorFactory, PollContext } from './collector.js';
import { registerGauge, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { polledIntervalMs } from './poll-schedule.js';
import { gaugeRows, type FamilyRow } from './families.js';

const SOURCE = 'GET /v2/topics';

export const URL_GROUP_FAMILIES = {
  groups: {
    name: 'upstash_qstash_url_groups',
    meaning: 'Number of URL Groups (topics); compare with upstash_qstash_plan_max_url_groups',
    source: `entries of ${SOURCE}`,
    labelNames: [],
  },
  endpoints: {
    name: 'upstash_qstash_url_group_endpoints',
    meaning: 'Endpoints of the URL Group; compare with upstash_qstash_plan_max_endpoints_per_url_group',
    source: `length of endpoints of ${SOURCE}`,
    labelNames: ['url_group'],
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const URL_GROUP_FAMILY_ROWS: readonly FamilyRow[] = gaugeRows(URL_GROUP_FAMILIES);

type UrlGroupsClient = Pick<DeliveryClient, 'listUrlGroups'>;

export interface UrlGroupsCollectorOptions {
  bounds?: InventoryBounds;
  client: UrlGroupsClient;
  intervalMs: number;
}

export class UrlGroupsCollector extends SnapshotCollector<'url_groups', UrlGroupInfo[]> {
  readonly #client: UrlGroupsClient;

  constructor(options: UrlGroupsCollectorOptions) {
    super('url_groups', options.intervalMs, options.bounds);
    this.#client = options.client;
  }

  protected fetch(ctx: PollContext): Promise<UrlGroupInfo[]> {
    return this.#client.listUrlGroups({ signal: ctx.signal });
  }

  protected fill(registry: Registry, groups: UrlGroupInfo[]): void {
    registerGauge(registry, URL_GROUP_FAMILIES.groups, this.families).set(groups.length);
    const endpoints = registerGauge(registry, URL_GROUP_FAMILIES.endpoints, this.families);
    for (const group of groups) endpoints.set({ url_group: group.name }, group.endpoints?.length ?? 0);
  }
}

export const createUrlGroupsCollector: CollectorFactory = (config, deps) =>
  deps.delivery === null
    ? null
    : new UrlGroupsCollector({
        client: deps.delivery,
        intervalMs: polledIntervalMs('url_groups', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
      });
