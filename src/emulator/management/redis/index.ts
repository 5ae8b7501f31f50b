// Redis databases of the management API (upstash/docs devops/developer-api/openapi.yml):
// GET /v2/redis/databases, GET /v2/redis/database/{id} (`?credentials=hide` drops the secrets),
// GET /v2/redis/stats/{id}. Test-only routes under /__emulator/management/redis: add a database
// (POST /databases), delete one (DELETE /databases/{id}), change its state or figures
// (PATCH /databases/{id}).
import express from 'express';
import { ManagementError } from '../errors.js';
import { handle, jsonErrorHandler } from '../http.js';
import type { ManagementResource, ManagementResourceContext } from '../resource.js';
import {
  INITIAL_REDIS_DATABASES,
  buildDatabase,
  redisDatabasePatchSchema,
  parseNewDatabase,
  servedDatabase,
  type RedisDatabaseEntry,
} from './databases.js';
import { redisStats } from './stats.js';

export { INITIAL_REDIS_DATABASES, REDIS_PLAN_LIMITS, type NewRedisDatabase } from './databases.js';

export interface RedisSnapshot {
  /** Every database as GET /v2/redis/databases serves it, secrets included. */
  databases: Record<string, unknown>[];
}

/** Its field of GET /state. */
export interface RedisStateFields {
  redis: RedisSnapshot;
}

export function createRedisResource(context: ManagementResourceContext): ManagementResource<RedisStateFields> {
  const startMs = Math.floor(context.now() / 1000) * 1000;
  let databases = new Map<string, RedisDatabaseEntry>();
  let additions = 0;

  const reset = (): void => {
    databases = new Map();
    additions = 0;
    for (const { input, ageMs } of INITIAL_REDIS_DATABASES) {
      const entry = buildDatabase(context.email, input.name, parseNewDatabase(input), startMs - ageMs);
      databases.set(entry.id, entry);
    }
  };
  reset();

  const find = (id: string): RedisDatabaseEntry => {
    const entry = databases.get(id);
    if (entry === undefined) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'database not found');
    return entry;
  };

  return {
    adminPath: '/redis',
    reset,
    snapshot: () => ({ redis: { databases: [...databases.values()].map((entry) => servedDatabase(entry)) } }),
    mount(router, auth) {
      router.get(
        '/v2/redis/databases',
        auth,
        handle((_req, res) => {
          res.json([...databases.values()].map((entry) => servedDatabase(entry)));
        }),
      );
      router.get(
        '/v2/redis/database/:id',
        auth,
        handle((req, res) => {
          res.json(servedDatabase(find(req.params.id as string), req.query.credentials === 'hide'));
        }),
      );
      router.get(
        '/v2/redis/stats/:id',
        auth,
        handle((req, res) => {
          res.json(redisStats(find(req.params.id as string), context.now()));
        }),
      );
    },
    mountAdmin(router) {
      router.use(express.json({ limit: '100kb' }));
      router.post(
        '/databases',
        handle((req, res) => {
          const profile = parseNewDatabase(req.body);
          additions += 1;
          const entry = buildDatabase(context.email, `${profile.name}#${additions}`, profile, context.now());
          databases.set(entry.id, entry);
          res.status(201).json(servedDatabase(entry));
        }),
      );
      router.patch(
        '/databases/:id',
        handle((req, res) => {
          const entry = find(req.params.id as string);
          const patch = redisDatabasePatchSchema.safeParse(req.body);
          if (!patch.success) throw new ManagementError('ERR_EMULATOR_INPUT', 'invalid Redis database patch');
          const defined = Object.fromEntries(Object.entries(patch.data).filter(([, v]) => v !== undefined));
          entry.profile = { ...entry.profile, ...defined };
          res.json(servedDatabase(entry));
        }),
      );
      router.delete(
        '/databases/:id',
        handle((req, res) => {
          find(req.params.id as string);
          databases.delete(req.params.id as string);
          res.json('OK');
        }),
      );
      router.use(jsonErrorHandler);
    },
  };
}
