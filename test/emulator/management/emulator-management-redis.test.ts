// The emulator's Redis databases (src/emulator/management/redis/): the OpenAPI's `Database` and
// `DatabaseStats` shapes, databases of several plans whose figures move with the clock, one
// suspended and one near its disk threshold, the secrets on the list and hidden on request, and
// the test-only routes.
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisSnapshot } from '../../../src/emulator/management/index.js';
import {
  expectTypes,
  MINUTE,
  parseTime,
  START,
  startManagement,
  stopManagementServers,
  UUID,
} from '../../support/emulator-management.js';

afterEach(stopManagementServers);

type Database = Record<string, unknown> & { database_id: string; database_name: string };
type Point = { x: string; y: number };
type Stats = Record<string, unknown>;

const DATABASE_FIELDS = {
  database_id: 'string',
  database_name: 'string',
  region: 'string',
  port: 'integer',
  creation_time: 'integer',
  state: 'string',
  password: 'string',
  endpoint: 'string',
  tls: 'boolean',
  eviction: 'boolean',
  db_max_clients: 'integer',
  db_max_request_size: 'integer',
  db_disk_threshold: 'integer',
  db_max_entry_size: 'integer',
  db_memory_threshold: 'integer',
  db_max_commands_per_second: 'integer',
  db_request_limit: 'number',
  type: 'string',
  budget: 'integer',
  primary_region: 'string',
  rest_token: 'string',
  read_only_rest_token: 'string',
  db_acl_enabled: 'string',
  prometheus_enabled: 'string',
} as const;

const SERIES = [
  'connection_count',
  'keyspace',
  'throughput',
  'diskusage',
  'latencymean',
  'latency_99',
  'hits',
  'misses',
];

describe('emulator: Redis databases', () => {
  it('lists databases of several plans in the Database shape, one suspended, one near its disk threshold', async () => {
    const h = await startManagement();
    const { status, body } = await h.get<Database[]>('/v2/redis/databases');
    expect(status).toBe(200);
    expect(body.map((db) => db.database_name).sort()).toEqual([
      'dev-playground',
      'legacy-jobs',
      'orders-cache',
      'sessions',
    ]);
    for (const db of body) {
      expectTypes(db, DATABASE_FIELDS);
      expect(db.database_id).toMatch(UUID);
    }
    expect(new Set(body.map((db) => db.type))).toEqual(new Set(['pro', 'free', 'payg']));
    expect(body.find((db) => db.database_name === 'legacy-jobs')!.state).toBe('suspended');
    const sessions = body.find((db) => db.database_name === 'sessions')!;
    const stats = (await h.get<Stats>(`/v2/redis/stats/${sessions.database_id}`)).body;
    expect((stats.current_storage as number) / (sessions.db_disk_threshold as number)).toBeGreaterThan(0.9);
    // The pro plan's request limit is the OpenAPI's example, past 2^53.
    expect(body.find((db) => db.type === 'pro')!.db_request_limit).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
  });

  it('serves one database, without its secrets when asked (credentials=hide), and 404 for an unknown id', async () => {
    const h = await startManagement();
    const [first] = (await h.get<Database[]>('/v2/redis/databases')).body;
    const one = await h.get<Database>(`/v2/redis/database/${first!.database_id}`);
    expect(one.body).toEqual(first);
    const hidden = await h.get<Database>(`/v2/redis/database/${first!.database_id}?credentials=hide`);
    for (const field of ['password', 'rest_token', 'read_only_rest_token'])
      expect(hidden.body).not.toHaveProperty(field);
    expect((await h.get('/v2/redis/stats/nope')).status).toBe(404);
    expect((await h.get('/v2/redis/databases', null)).status).toBe(401);
  });

  it('serves stats whose series end at the current (filling) minute and whose figures move with the clock', async () => {
    const h = await startManagement();
    const orders = (await h.get<Database[]>('/v2/redis/databases')).body.find(
      (db) => db.database_name === 'orders-cache',
    )!;
    const read = async () => (await h.get<Stats>(`/v2/redis/stats/${orders.database_id}`)).body;
    const before = await read();
    for (const name of SERIES) {
      const points = before[name] as Point[];
      expect(points, name).toHaveLength(60);
      const last = parseTime(points.at(-1)!.x);
      expect(last.ms).toBe(Math.floor(START / MINUTE) * MINUTE);
      expect(last.fraction).toHaveLength(9);
    }
    expect(before.days).toHaveLength(7);
    for (const total of ['daily_net_commands', 'total_monthly_requests', 'current_storage', 'total_monthly_billing']) {
      expect(typeof before[total], total).toBe('number');
    }
    h.clock.now += 7 * MINUTE;
    const after = await read();
    const newest = (stats: Stats, name: string): number => (stats[name] as Point[]).at(-1)!.y;
    expect(newest(after, 'connection_count')).not.toBe(newest(before, 'connection_count'));
    expect(newest(after, 'throughput')).not.toBe(newest(before, 'throughput'));
    expect(after.daily_net_commands as number).toBeGreaterThan(before.daily_net_commands as number);
  });

  it('a suspended database serves no traffic; the admin routes suspend, change, add and delete databases', async () => {
    const h = await startManagement();
    const list = async () => (await h.get<Database[]>('/v2/redis/databases')).body;
    const legacy = (await list()).find((db) => db.database_name === 'legacy-jobs')!;
    const stats = (await h.get<Stats>(`/v2/redis/stats/${legacy.database_id}`)).body;
    expect((stats.connection_count as Point[]).every((p) => p.y === 0)).toBe(true);
    expect(stats.daily_net_commands).toBe(0);

    const orders = (await list()).find((db) => db.database_name === 'orders-cache')!;
    expect((await h.admin('PATCH', `/redis/databases/${orders.database_id}`, { state: 'suspended' })).status).toBe(200);
    expect((await list()).find((db) => db.database_id === orders.database_id)!.state).toBe('suspended');
    expect((await h.admin('PATCH', `/redis/databases/${orders.database_id}`, { state: 'gone' })).status).toBe(400);

    const added = await h.admin<Database>('POST', '/redis/databases', { name: 'extra', type: 'free' });
    expect(added.status).toBe(201);
    expect((await list()).map((db) => db.database_name)).toContain('extra');
    expect((await h.admin('DELETE', `/redis/databases/${added.body.database_id}`)).status).toBe(200);
    expect((await list()).map((db) => db.database_name)).not.toContain('extra');

    const state = await h.admin<{ redis: RedisSnapshot }>('GET', '/state');
    expect(state.body.redis.databases).toHaveLength(4);
    await h.admin('POST', '/reset');
    expect((await list()).find((db) => db.database_id === orders.database_id)!.state).toBe('active');
  });
});
