// The Redis calls of the developer API, on the management client's request core (its
// credentials, timeouts, retries, rate-limit pacing and request hook): the database list and one
// database's statistics, each parsed with this folder's schemas.
import { ApiRequestError } from '../../api/errors.js';
import type { CallOptions } from '../../api/delivery.js';
import type { ManagementClient } from '../../api/management.js';
import { parseWith, type SchemaContext } from '../../api/schemas/common.js';
import { redisDatabaseListSchema, redisStatsSchema, type RedisDatabase, type RedisStats } from './schemas.js';

export const REDIS_ENDPOINTS = {
  databases: '/v2/redis/databases',
  stats: '/v2/redis/stats/:id',
} as const;

export interface RedisApi {
  listDatabases(call?: CallOptions): Promise<RedisDatabase[]>;
  databaseStats(databaseId: string, call?: CallOptions): Promise<RedisStats>;
}

const context = (endpoint: string): SchemaContext => ({ api: 'management', endpoint, method: 'GET' });

/** The Redis calls over `management`'s request core. */
export function redisApi(management: Pick<ManagementClient, 'getJson'>): RedisApi {
  return {
    async listDatabases(call = {}) {
      const data = await management.getJson(REDIS_ENDPOINTS.databases, REDIS_ENDPOINTS.databases, call);
      return parseWith(redisDatabaseListSchema, data, context(REDIS_ENDPOINTS.databases));
    },
    async databaseStats(databaseId, call = {}) {
      if (typeof databaseId !== 'string' || databaseId === '') {
        throw new ApiRequestError('a non-empty Redis database id is required', context(REDIS_ENDPOINTS.stats));
      }
      const path = `/v2/redis/stats/${encodeURIComponent(databaseId)}`;
      const data = await management.getJson(REDIS_ENDPOINTS.stats, path, call);
      return parseWith(redisStatsSchema, data, context(REDIS_ENDPOINTS.stats));
    },
  };
}
