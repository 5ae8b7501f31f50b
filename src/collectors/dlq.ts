// The DLQ collector: walks GET /v2/dlq (pages of 100, cursor) up to a page budget per poll and
// exports the dead-lettered messages by queue and URL Group, with the creation time of the
// oldest. When the budget runs out first, upstash_qstash_dlq_complete is 0 and the figures are
// lower bounds. Message ids, URLs and bodies never become labels. The plan's max_dlq_size is
// upstash_qstash_plan_max_dlq_messages of the account collector (only target labels), so
// `upstash_qstash_dlq_size / upstash_qstash_plan_max_dlq_messages` divides.

import type { Registry } from 'prom-client';
import type { DeliveryClient, DlqMessage } from '../api/delivery.js';
import { ApiUpstreamError } from '../api/errors.js';
import type { CollectorFactory, PollContext } from './collector.js';
import { flagValue, registerGauge, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { polledIntervalMs } from './poll-schedule.js';
import { gaugeRows, type FamilyRow } from './families.js';

const SOURCE = 'GET /v2/dlq';

/** Pages read per poll unless configured (dlq.max_pages): 1000 messages. */
export const DEFAULT_DLQ_MAX_PAGES = 10;

export const DLQ_FAMILIES = {
  size: {
    name: 'upstash_qstash_dlq_size',
    meaning:
      'Messages in the dead-letter queue, all queues and URL Groups; a lower bound while upstash_qstash_dlq_complete is 0; compare with upstash_qstash_plan_max_dlq_messages',
    source: `messages of ${SOURCE}, all pages up to the page budget`,
    labelNames: [],
  },
  messages: {
    name: 'upstash_qstash_dlq_messages',
    meaning:
      'Messages in the dead-letter queue by queue and URL Group ("" for none); a lower bound while upstash_qstash_dlq_complete is 0',
    source: `messages of ${SOURCE} counted by queueName and topicName, all pages up to the page budget`,
    labelNames: ['queue', 'url_group'],
  },
  oldest: {
    name: 'upstash_qstash_dlq_oldest_message_timestamp_seconds',
    meaning:
      'Creation time of the oldest message in the dead-letter queue by queue and URL Group, unix seconds; among the pages read',
    source: `least createdAt (unix milliseconds) of the messages of ${SOURCE}`,
    labelNames: ['queue', 'url_group'],
  },
  complete: {
    name: 'upstash_qstash_dlq_complete',
    meaning:
      'Whether the last poll read the whole dead-letter queue (1) or stopped at the page budget (0: counts are lower bounds)',
    source: `the cursor of ${SOURCE}`,
    labelNames: [],
  },
  pages: {
    name: 'upstash_qstash_dlq_pages_read',
    meaning: 'Pages of the dead-letter queue read by the last poll (one request each)',
    source: `pages of ${SOURCE}`,
    labelNames: [],
  },
} as const satisfies Record<string, GaugeSpec<string>>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const DLQ_FAMILY_ROWS: readonly FamilyRow[] = gaugeRows(DLQ_FAMILIES);

interface DlqData {
  messages: DlqMessage[];
  pages: number;
  complete: boolean;
}

type DlqClient = Pick<DeliveryClient, 'dlqPage'>;

export interface DlqCollectorOptions {
  bounds?: InventoryBounds;
  client: DlqClient;
  intervalMs: number;
  /** Most pages read per poll. */
  maxPages?: number;
}

export class DlqCollector extends SnapshotCollector<'dlq', DlqData> {
  readonly #client: DlqClient;
  readonly #maxPages: number;

  constructor(options: DlqCollectorOptions) {
    super('dlq', options.intervalMs, options.bounds);
    this.#client = options.client;
    this.#maxPages = options.maxPages ?? DEFAULT_DLQ_MAX_PAGES;
  }

  protected async fetch(ctx: PollContext): Promise<DlqData> {
    const messages: DlqMessage[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = await this.#client.dlqPage(cursor, { signal: ctx.signal });
      messages.push(...page.messages);
      if (page.cursor === undefined) return { messages, pages, complete: true };
      if (pages >= this.#maxPages) return { messages, pages, complete: false };
      if (seen.has(page.cursor)) {
        // Following it again would loop: fail the poll, keep the previous snapshot.
        throw new ApiUpstreamError('the service returned a DLQ cursor already followed in this walk', {
          api: 'qstash',
          endpoint: '/v2/dlq',
          method: 'GET',
        });
      }
      seen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  protected fill(registry: Registry, data: DlqData): void {
    const f = DLQ_FAMILIES;
    const count = registerGauge(registry, f.messages, this.families);
    const oldest = registerGauge(registry, f.oldest, this.families);
    registerGauge(registry, f.size, this.families).set(data.messages.length);
    registerGauge(registry, f.complete, this.families).set(flagValue(data.complete));
    registerGauge(registry, f.pages, this.families).set(data.pages);

    const groups = new Map<
      string,
      { labels: { queue: string; url_group: string }; count: number; oldestMs: number | undefined }
    >();
    for (const message of data.messages) {
      const labels = { queue: message.queueName ?? '', url_group: message.topicName ?? '' };
      const key = `${labels.queue}\u0000${labels.url_group}`;
      const group = groups.get(key) ?? { labels, count: 0, oldestMs: undefined };
      group.count += 1;
      const created = message.createdAt;
      if (created !== undefined && created > 0 && (group.oldestMs === undefined || created < group.oldestMs))
        group.oldestMs = created;
      groups.set(key, group);
    }
    for (const group of groups.values()) {
      count.set(group.labels, group.count);
      if (group.oldestMs !== undefined) oldest.set(group.labels, group.oldestMs / 1000);
    }
  }
}

export const createDlqCollector: CollectorFactory = (config, deps) =>
  deps.delivery === null
    ? null
    : new DlqCollector({
        client: deps.delivery,
        intervalMs: polledIntervalMs('dlq', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
        maxPages: config.dlq.maxPages,
      });
