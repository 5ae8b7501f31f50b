// ManagementClient: the Upstash developer API with Basic auth (account email : API key).
// Account record, search index list, vector index list and vector index stats.
import { ApiRequestError } from './errors.js';
import { HttpClient } from './http.js';
import type { CommonClientOptions } from './http.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import {
  accountSchema,
  searchIndexListSchema,
  vectorIndexListSchema,
  vectorStatsSchema,
} from './schemas/management.js';
import type { Account, SearchIndex, VectorIndex, VectorStats } from './schemas/management.js';
import type { VectorStatsPeriod } from '../config/index.js';
import type { CallOptions } from './delivery.js';

export type { Account, SearchIndex, VectorIndex, VectorStats, VectorStatsSeriesName } from './schemas/management.js';
export type { VectorStatsPeriod } from '../config/index.js';
export { VECTOR_STATS_SERIES } from './schemas/management.js';

export interface ManagementClientOptions extends CommonClientOptions {
  email: string;
  apiKey: string;
  /** Path of the account record; `/v2/qstash/user` on the real service. */
  accountPath?: string;
}

const ENDPOINTS = {
  search: '/v2/search',
  vectorIndexes: '/v2/vector/index',
  vectorStats: '/v2/vector/index/:id/stats',
} as const;

export class ManagementClient {
  private readonly http: HttpClient;
  private readonly accountPath: string;

  constructor(options: ManagementClientOptions) {
    this.http = new HttpClient({
      ...options,
      api: 'management',
      credentials: { scheme: 'basic', username: options.email, password: options.apiKey },
    });
    this.accountPath = options.accountPath ?? '/v2/qstash/user';
  }

  /** The account record with its plan limits (secret fields removed). */
  async account(call: CallOptions = {}): Promise<Account> {
    return parseWith(accountSchema, await this.get(this.accountPath, this.accountPath, call), context(this.accountPath));
  }

  /** Search indexes of the account (secret fields removed). */
  async listSearchIndexes(call: CallOptions = {}): Promise<SearchIndex[]> {
    const data = await this.get(ENDPOINTS.search, ENDPOINTS.search, call);
    return parseWith(searchIndexListSchema, data, context(ENDPOINTS.search));
  }

  /** Vector indexes of the account (secret fields removed). */
  async listVectorIndexes(call: CallOptions = {}): Promise<VectorIndex[]> {
    const data = await this.get(ENDPOINTS.vectorIndexes, ENDPOINTS.vectorIndexes, call);
    return parseWith(vectorIndexListSchema, data, context(ENDPOINTS.vectorIndexes));
  }

  /** Usage counters and time series of one vector index over `period` (default 1h). */
  async vectorStats(indexId: string, period: VectorStatsPeriod = '1h', call: CallOptions = {}): Promise<VectorStats> {
    if (typeof indexId !== 'string' || indexId === '') {
      throw new ApiRequestError('a non-empty vector index id is required', context(ENDPOINTS.vectorStats));
    }
    const path = `/v2/vector/index/${encodeURIComponent(indexId)}/stats?period=${encodeURIComponent(period)}`;
    const data = await this.get(ENDPOINTS.vectorStats, path, call);
    return parseWith(vectorStatsSchema, data, context(ENDPOINTS.vectorStats));
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private get(endpoint: string, path: string, call: CallOptions): Promise<unknown> {
    return this.http.request({
      method: 'GET',
      endpoint,
      path,
      response: 'json',
      ...(call.signal ? { signal: call.signal } : {}),
    });
  }
}

function context(endpoint: string): SchemaContext {
  return { api: 'management', endpoint, method: 'GET' };
}
