// The read-only inventory endpoints of the QStash delivery API: queues, URL Groups, DLQ pages,
// flow-control keys and global parallelism. DeliveryClient (delivery.ts) exposes them as methods;
// this module holds the requests.
import type { ApiErrorDetails } from './errors.js';
import type { HttpClient, HttpMethod } from './http.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import {
  dlqPageSchema,
  flowControlListSchema,
  flowControlSchema,
  globalParallelismSchema,
  queueListSchema,
  urlGroupListSchema,
} from './schemas/delivery-inventory.js';
import type {
  DlqPage,
  FlowControlInfo,
  GlobalParallelism,
  QueueInfo,
  UrlGroupInfo,
} from './schemas/delivery-inventory.js';
import type { z } from 'zod';

export type {
  DlqMessage,
  DlqPage,
  FlowControlInfo,
  GlobalParallelism,
  QueueInfo,
  UrlGroupInfo,
} from './schemas/delivery-inventory.js';

export const INVENTORY_ENDPOINTS = {
  queues: '/v2/queues',
  urlGroups: '/v2/topics',
  dlq: '/v2/dlq',
  flowControlList: '/v2/flowControl',
  flowControl: '/v2/flowControl/:key',
  globalParallelism: '/v2/globalParallelism',
} as const;

/** Messages per DLQ page: the service's page (and the SDK's default count). */
export const DLQ_PAGE_SIZE = 100;

interface Call {
  signal?: AbortSignal;
}

export class DeliveryInventory {
  constructor(private readonly http: HttpClient) {}

  listQueues(call: Call = {}): Promise<QueueInfo[]> {
    return this.#get(INVENTORY_ENDPOINTS.queues, INVENTORY_ENDPOINTS.queues, queueListSchema, call);
  }

  listUrlGroups(call: Call = {}): Promise<UrlGroupInfo[]> {
    return this.#get(INVENTORY_ENDPOINTS.urlGroups, INVENTORY_ENDPOINTS.urlGroups, urlGroupListSchema, call);
  }

  /** One DLQ page (oldest or newest first: the order is not promised, so callers must not rely on it). */
  dlqPage(cursor: string | undefined, call: Call = {}): Promise<DlqPage> {
    const query = new URLSearchParams({ count: String(DLQ_PAGE_SIZE) });
    if (cursor !== undefined) query.set('cursor', cursor);
    return this.#get(INVENTORY_ENDPOINTS.dlq, INVENTORY_ENDPOINTS.dlq, dlqPageSchema, call, query);
  }

  /**
   * Every flow-control key the service lists. The SDK only knows `GET /v2/flowControl/{key}`,
   * the docs also list `GET /v2/flowControl`: a service without it answers 404 or 405 (the
   * collector remembers that: src/collectors/optional-endpoint.ts).
   */
  listFlowControls(call: Call = {}): Promise<FlowControlInfo[]> {
    const endpoint = INVENTORY_ENDPOINTS.flowControlList;
    return this.#get(endpoint, endpoint, flowControlListSchema, call);
  }

  flowControl(key: string, call: Call = {}): Promise<FlowControlInfo> {
    return this.#get(
      INVENTORY_ENDPOINTS.flowControl,
      `/v2/flowControl/${encodeURIComponent(key)}`,
      flowControlSchema,
      call,
    );
  }

  globalParallelism(call: Call = {}): Promise<GlobalParallelism> {
    const endpoint = INVENTORY_ENDPOINTS.globalParallelism;
    return this.#get(endpoint, endpoint, globalParallelismSchema, call);
  }

  async #get<T extends z.ZodType>(
    endpoint: string,
    path: string,
    schema: T,
    call: Call,
    query?: URLSearchParams,
  ): Promise<z.output<T>> {
    const data = await this.http.request({
      method: 'GET',
      endpoint,
      path,
      ...(query ? { query } : {}),
      response: 'json',
      ...(call.signal ? { signal: call.signal } : {}),
    });
    return parseWith(schema, data, context('GET', endpoint));
  }
}

function context(method: HttpMethod, endpoint: string): SchemaContext & ApiErrorDetails {
  return { api: 'qstash', endpoint, method };
}
