// The Redis product: databases of the account through the developer API (./client.ts,
// ./schemas.ts), their families (./families.ts), the collector (./collector.ts).
import type { CollectorFactory } from '../collector.js';
import { polledIntervalMs } from '../poll-schedule.js';
import { redisApi } from './client.js';
import { RedisCollector } from './collector.js';

export { RedisCollector, REDIS_STATS_CONCURRENCY, type RedisCollectorOptions } from './collector.js';
export { REDIS_FAMILY_ROWS } from './families.js';

export const createRedisCollector: CollectorFactory = (config, deps) => {
  if (deps.management === null) return null;
  if (!config.redis.discovery && config.redis.databaseIds.length === 0) {
    deps.logger.warn(
      { collector: 'redis' },
      'Redis discovery is off and no Redis database ids are configured: the redis collector exports nothing',
    );
  }
  return new RedisCollector({
    client: redisApi(deps.management),
    intervalMs: polledIntervalMs('redis', config, deps.schedule),
    bounds: deps.selfMetrics.seriesCounters,
    databaseIds: config.redis.databaseIds,
    discovery: config.redis.discovery,
  });
};
