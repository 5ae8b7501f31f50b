// The emulator's management interface over real HTTP: a tiny express app on 127.0.0.1:0 mounts
// the management routers the way the emulator app does (root + /__emulator/management), with a
// fake clock so values that move with time can be checked against hand-worked figures.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ManagementError,
  STATS_PERIODS,
  createManagement,
  type AccountRecord,
  type Management,
  type ManagementApiVersion,
  type ManagementSnapshot,
  type PlanProfile,
  type QStashStatsRecord,
  type TrafficReader,
  type ServedSearchIndex,
  type ServedVectorIndex,
  type VectorStats,
} from '../src/emulator/management/index.js';

const EMAIL = 'ops@example.com';
const API_KEY = 'mgmt-key-3f9a';
const DELIVERY_TOKEN = 'qstash-token-77c1';
/** Wednesday 18 March 2026, 10:30:15.123 UTC. */
const START = Date.UTC(2026, 2, 18, 10, 30, 15, 123);
const MINUTE = 60_000;
const DAY = 86_400_000;

const TIME_TEXT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? \+0000 UTC$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Harness {
  url: string;
  management: Management;
  clock: { now: number };
  /** The `managementApi` knob the app would hold. */
  apiVersion: { value: ManagementApiVersion };
  get: <T>(path: string, auth?: string | null) => Promise<{ status: number; body: T }>;
  admin: <T>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;
}

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

async function start(plan: PlanProfile = 'fixed', traffic?: TrafficReader): Promise<Harness> {
  const clock = { now: START };
  const apiVersion: Harness['apiVersion'] = { value: 'current' };
  const management = createManagement({
    email: EMAIL,
    apiKey: API_KEY,
    deliveryToken: DELIVERY_TOKEN,
    plan,
    now: () => clock.now,
    serviceNames: ['qstash', 'svc'],
    apiVersion: () => apiVersion.value,
    ...(traffic ? { traffic } : {}),
  });
  const app = express();
  app.use('/__emulator/management', management.adminRouter);
  app.use(management.router);
  // Stands for the delivery routes the real app mounts behind the management router.
  app.use((_req, res) => {
    res.status(404).json({ from: 'app' });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async <T>(path: string, auth: string | null = basic(EMAIL, API_KEY)) => {
    const res = await fetch(`${url}${path}`, { headers: auth === null ? {} : { authorization: auth } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__emulator/management${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  return { url, management, clock, apiVersion, get, admin };
}

function parseTime(text: string): { ms: number; fraction: string | undefined } {
  const match = TIME_TEXT.exec(text);
  if (!match) throw new Error(`not a service timestamp: ${text}`);
  const [, y, mo, d, h, mi, s, fraction] = match;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return { ms: ms + (fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0), fraction };
}

function expectTypes(record: object, types: Record<string, 'string' | 'integer' | 'number' | 'boolean'>): void {
  for (const [field, type] of Object.entries(types)) {
    const value = (record as Record<string, unknown>)[field];
    if (type === 'integer') expect(Number.isInteger(value), `${field} is an integer`).toBe(true);
    else expect(typeof value, `${field} is a ${type}`).toBe(type);
  }
}

/** The current record (2026-03+); the legacy one has `password` instead of the CURRENT_ONLY fields. */
const CURRENT_ONLY = ['read_only_token', 'region', 'budget', 'max_bandwidth_per_second', 'prometheus_enabled', 'modifying_state', 'deletion_time'];
const ACCOUNT_FIELDS = {
  customer_id: 'string',
  id: 'string',
  token: 'string',
  read_only_token: 'string',
  region: 'string',
  budget: 'number',
  max_bandwidth_per_second: 'integer',
  prometheus_enabled: 'string',
  modifying_state: 'string',
  deletion_time: 'integer',
  active: 'boolean',
  state: 'string',
  last_plan_upgrade_time: 'integer',
  max_message_size: 'integer',
  max_requests_per_day: 'integer',
  max_requests_per_day_hard: 'integer',
  max_endpoints_per_topic: 'integer',
  max_requests_per_second: 'integer',
  max_dlq_size: 'integer',
  max_retries: 'integer',
  max_topics: 'integer',
  max_schedules: 'integer',
  max_events_size: 'integer',
  max_dlq_retention_time_milis: 'integer',
  max_delay: 'integer',
  max_parallelism: 'integer',
  max_global_parallelism: 'integer',
  max_queues: 'integer',
  prod_pack_enabled: 'boolean',
  timeout: 'integer',
  type: 'string',
  reserved_type: 'string',
  reserved_price: 'number',
  created_by: 'string',
  creation_time: 'integer',
} as const;

/** The limits search and vector indexes both carry. */
const INDEX_LIMIT_FIELDS = {
  max_vector_count: 'integer',
  max_monthly_reranks: 'integer',
  max_daily_updates: 'integer',
  max_daily_queries: 'integer',
  max_monthly_bandwidth: 'integer',
  max_writes_per_second: 'integer',
  max_query_per_second: 'integer',
  max_reads_per_request: 'integer',
  max_writes_per_request: 'integer',
} as const;

const SEARCH_FIELDS = {
  customer_id: 'string',
  id: 'string',
  name: 'string',
  endpoint: 'string',
  type: 'string',
  region: 'string',
  vercel_email: 'string',
  token: 'string',
  read_only_token: 'string',
  ...INDEX_LIMIT_FIELDS,
  creation_time: 'integer',
  input_enrichment_enabled: 'boolean',
} as const;

const VECTOR_FIELDS = {
  customer_id: 'string',
  id: 'string',
  name: 'string',
  similarity_function: 'string',
  dimension_count: 'integer',
  embedding_model: 'string',
  sparse_embedding_model: 'string',
  endpoint: 'string',
  token: 'string',
  read_only_token: 'string',
  type: 'string',
  region: 'string',
  ...INDEX_LIMIT_FIELDS,
  max_total_metadata_size: 'integer',
  reserved_price: 'number',
  creation_time: 'integer',
  index_type: 'string',
} as const;

const STATS_SCALARS = {
  pending_index_count: 'integer',
  current_vector_count: 'integer',
  daily_query_count: 'integer',
  daily_update_count: 'integer',
  monthly_query_count: 'integer',
  monthly_update_count: 'integer',
  monthly_bandwidth_usage: 'integer',
  storage_usage: 'integer',
  monthly_cost: 'number',
  daily_rerank_count: 'integer',
  monthly_rerank_count: 'integer',
} as const;

const DAILY_SERIES = ['daily_update_requests', 'daily_query_requests', 'daily_bandwidths', 'daily_rerank_requests'];
const PERIOD_SERIES = [
  'query_throughput',
  'update_throughput',
  'query_latency_mean',
  'query_latency_99',
  'update_latency_mean',
  'update_latency_99',
  'embeds_latency_mean',
  'embeds_latency_99',
  'vector_count',
  'data_size',
  'rerank_latency_mean',
  'rerank_latency_99',
];
const LIMITS_UNLIMITED_IN_DOCS = ['max_monthly_reranks', 'max_daily_updates', 'max_daily_queries', 'max_monthly_bandwidth'];

async function vectorByName(h: Harness, name: string): Promise<ServedVectorIndex> {
  const { body } = await h.get<ServedVectorIndex[]>('/v2/vector/index');
  const index = body.find((candidate) => candidate.name === name);
  if (!index) throw new Error(`no vector index ${name}`);
  return index;
}

async function statsOf(h: Harness, id: string, period?: string): Promise<VectorStats> {
  const query = period === undefined ? '' : `?period=${period}`;
  const { status, body } = await h.get<VectorStats>(`/v2/vector/index/${id}/stats${query}`);
  expect(status).toBe(200);
  return body;
}

describe('authentication', () => {
  it('answers 401 with a JSON error for missing, malformed and wrong credentials', async () => {
    const h = await start();
    const cases: (string | null)[] = [
      null,
      '',
      `Bearer ${API_KEY}`,
      'Basic !!!not-base64!!!',
      'Basic abc', // base64 of the wrong length
      `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
      basic('someone@example.com', API_KEY),
      basic(EMAIL, 'wrong-key'),
      basic(EMAIL, `${API_KEY}x`),
      basic(EMAIL, ''),
    ];
    for (const path of ['/v2/qstash/user', '/v2/search', '/v2/vector/index', '/v2/vector/index/x/stats']) {
      for (const auth of cases) {
        const { status, body } = await h.get<{ error: string }>(path, auth);
        expect(status, `${path} with ${String(auth)}`).toBe(401);
        expect(typeof body.error).toBe('string');
        expect(body.error).not.toContain(API_KEY);
      }
    }
    expect((await h.get('/v2/svc/users')).status).toBe(200);
    // A lower-case scheme is still valid Basic.
    const lower = `basic ${Buffer.from(`${EMAIL}:${API_KEY}`).toString('base64')}`;
    expect((await h.get('/v2/search', lower)).status).toBe(200);
  });

  it('leaves paths that are not management routes to the rest of the app', async () => {
    const h = await start();
    const { status, body } = await h.get<{ from: string }>('/v2/logs', null);
    expect(status).toBe(404);
    expect(body.from).toBe('app');
  });
});

describe('account record', () => {
  it('has every field of the current record with its type, the delivery token and unix-second times on every plan', async () => {
    for (const plan of ['free', 'payg', 'fixed'] as const) {
      const h = await start(plan);
      const { status, body } = await h.get<AccountRecord>('/v2/qstash/user');
      expect(status).toBe(200);
      expectTypes(body, ACCOUNT_FIELDS);
      expect(Object.keys(body).sort()).toEqual(Object.keys(ACCOUNT_FIELDS).sort());
      expect(body.id).toMatch(UUID);
      expect(body.customer_id).toBe(EMAIL);
      expect(body.created_by).toBe(EMAIL);
      expect(body.token).toBe(DELIVERY_TOKEN);
      expect(body.read_only_token.length).toBeGreaterThan(8);
      expect(body).toMatchObject({ region: 'eu-central-1', prometheus_enabled: 'false', state: 'active', active: true });
      // Seconds, not milliseconds: 400 days before the clock.
      expect(body.creation_time).toBe(Math.floor(START / 1000) - 400 * 86_400);
      expect(body.last_plan_upgrade_time).toBeLessThanOrEqual(Math.floor(START / 1000));
      // No -1 in the account record: it is not documented there.
      for (const [field, value] of Object.entries(body)) {
        if (typeof value === 'number') expect(value, field).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('on the legacy API version has password and no region, and the older reserved_type values', async () => {
    const h = await start('fixed');
    h.apiVersion.value = 'legacy';
    const { body } = await h.get<AccountRecord>('/v2/qstash/user');
    const legacyFields = [...Object.keys(ACCOUNT_FIELDS).filter((field) => !CURRENT_ONLY.includes(field)), 'password'];
    expect(Object.keys(body).sort()).toEqual(legacyFields.sort());
    expect(body.password.length).toBeGreaterThan(8);
    expect(body.reserved_type).toBe('qstash_enterprise_1m');
    expect((await h.get<AccountRecord>('/v2/svc/user')).body.reserved_type).toBe('svc_enterprise_1m');
    const payg = await start('payg');
    payg.apiVersion.value = 'legacy';
    expect((await payg.get<AccountRecord>('/v2/qstash/user')).body.reserved_type).toBe('paid');
    // Only the legacy paths exist.
    for (const path of ['/v2/qstash/users', `/v2/qstash/user/${body.id}`, `/v2/qstash/stats/${body.id}`]) {
      expect((await h.get(path)).status, path).toBe(404);
    }
    expect((await h.get('/v2/qstash/stats')).status).toBe(200);
  });

  it('carries the limits of each plan profile', async () => {
    const free = (await (await start('free')).get<AccountRecord>('/v2/qstash/user')).body;
    expect(free).toMatchObject({
      type: 'free',
      reserved_type: '',
      reserved_price: 0,
      max_requests_per_day: 1_000,
      max_topics: 1,
      max_schedules: 10,
      max_message_size: 1_048_576,
      max_dlq_retention_time_milis: 259_200_000,
      max_delay: 604_800,
      timeout: 900,
      max_retries: 3,
    });
    const payg = (await (await start('payg')).get<AccountRecord>('/v2/qstash/user')).body;
    // The current vocabulary: pay as you go has no reserved tier.
    expect(payg).toMatchObject({ type: 'paid', reserved_type: '', reserved_price: 0, timeout: 7_200 });
    expect(payg.max_requests_per_day).toBeGreaterThan(free.max_requests_per_day);
    expect(payg.max_schedules).toBeGreaterThan(free.max_schedules);
    const fixed = (await (await start('fixed')).get<AccountRecord>('/v2/qstash/user')).body;
    expect(fixed).toMatchObject({
      type: 'paid',
      reserved_type: 'qstash_fixed_1m',
      reserved_price: 180,
      max_requests_per_day: 1_000_000,
      max_requests_per_day_hard: 10_000_000,
      max_dlq_retention_time_milis: 2_592_000_000,
      timeout: 21_600,
    });
  });

  it('lists two regional users, each by id, the legacy path serving the one of the delivery token', async () => {
    const h = await start('fixed');
    const legacy = (await h.get<AccountRecord>('/v2/qstash/user')).body;
    const spec = (await h.get<AccountRecord>('/v2/svc/user')).body;
    // The spec's copy names the tiers after its own service name.
    expect(spec.reserved_type).toBe('svc_fixed_1m');
    expect({ ...spec, reserved_type: legacy.reserved_type }).toEqual(legacy);
    const users = await h.get<AccountRecord[]>('/v2/qstash/users');
    expect(users.status).toBe(200);
    expect(users.body.map((user) => user.region)).toEqual(['eu-central-1', 'us-east-1']);
    const [eu, us] = users.body as [AccountRecord, AccountRecord];
    expect(eu).toEqual(legacy);
    expect(us.token).not.toBe(DELIVERY_TOKEN);
    expect(us.id).not.toBe(eu.id);
    expect(us).toMatchObject({ type: 'free', max_requests_per_day: 1_000 });
    for (const user of users.body) expect((await h.get<AccountRecord>(`/v2/qstash/user/${user.id}`)).body).toEqual(user);
    const unknown = await h.get<{ error: string }>('/v2/qstash/user/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.error).toBe('string');
  });
});

describe('QStash usage statistics', () => {
  /** 100 requests of 1 KB a minute today, 5 messages in the DLQ. */
  const steady: TrafficReader = {
    between: (from, to) => {
      const minutes = Math.max(0, Math.ceil((Math.min(to, START) - from) / MINUTE));
      return { requests: 100 * minutes, bytes: 102_400 * minutes };
    },
    day: (ms) => (ms <= START && ms > START - DAY ? { requests: 63_000, bytes: 64_512_000 } : { requests: 0, bytes: 0 }),
    dlqMessages: () => 5,
  };

  it('serves daily series over the whole month, today from the traffic, on both paths', async () => {
    const h = await start('payg', steady);
    const eu = (await h.get<AccountRecord>('/v2/qstash/user')).body;
    const byId = await h.get<QStashStatsRecord>(`/v2/qstash/stats/${eu.id}?period=1h`);
    expect(byId.status).toBe(200);
    const stats = byId.body;
    // March 2026 has 31 days; today is the 18th.
    expect(stats.days).toHaveLength(31);
    expect(stats.daily_requests).toHaveLength(31);
    expect(stats.days[17]).toBe('Wednesday');
    expect(parseTime(stats.daily_requests[17]!.x).ms).toBe(START);
    expect(stats.daily_requests[17]).toMatchObject({ y: 63_000, workflow_message: 0, workflow_run: 0 });
    expect(stats.daily_requests[18]!.y).toBe(0);
    expect(stats.daily_bandwidths[17]!.y).toBe(64_512_000);
    // Pay as you go: $1 per 100,000 messages.
    expect(stats.daily_billings[17]!.y).toBe(0.63);
    expect(stats.total_monthly_billing).toBe(0.63);
    expect(stats.dlq_message_count).toBe(5);
    expect(stats.daily_used).toHaveLength(60);
    expect(stats.daily_used[0]!.y).toBe(100);
    expect((await h.get<QStashStatsRecord>('/v2/qstash/stats?period=1h')).body).toEqual(stats);
    // The user of the other region has no traffic here.
    const us = (await h.get<AccountRecord[]>('/v2/qstash/users')).body[1]!;
    const other = (await h.get<QStashStatsRecord>(`/v2/qstash/stats/${us.id}`)).body;
    expect(other.daily_requests.every((point) => point.y === 0)).toBe(true);
    expect(other.total_monthly_billing).toBe(0);
    expect((await h.get('/v2/qstash/stats/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.get('/v2/qstash/stats?period=2h')).status).toBe(400);
  });

  it('bills a fixed plan its reserved price', async () => {
    const h = await start('fixed', steady);
    const stats = (await h.get<QStashStatsRecord>('/v2/qstash/stats')).body;
    expect(stats.total_monthly_billing).toBe(180);
    expect(stats.daily_billings.every((point) => point.y === 0)).toBe(true);
  });
});

describe('search indexes', () => {
  it('serves each index\'s usage in the vector stats shape, from its query rate', async () => {
    const h = await start();
    const [docs] = (await h.get<ServedSearchIndex[]>('/v2/search')).body;
    const stats = await h.get<VectorStats>(`/v2/search/${docs!.id}/stats?period=1h`);
    expect(stats.status).toBe(200);
    const vector = (await h.get<ServedVectorIndex[]>('/v2/vector/index')).body[0]!;
    const vectorStats = (await h.get<VectorStats>(`/v2/vector/index/${vector.id}/stats`)).body;
    expect(Object.keys(stats.body).sort()).toEqual(Object.keys(vectorStats).sort());
    // docs-search: 40 queries a minute at the diurnal factor (10:30 UTC is factor 3, 16 hours of 1-3 before).
    expect(stats.body.daily_query_count).toBe(40 * (16 * 60 + 3 * 30));
    expect(stats.body.current_vector_count).toBeGreaterThan(5_000);
    expect((await h.get('/v2/search/nope/stats')).status).toBe(404);
  });

  it('lists two indexes with every field, vercel_email, and -1 where the docs put it', async () => {
    const h = await start();
    const { status, body } = await h.get<ServedSearchIndex[]>('/v2/search');
    expect(status).toBe(200);
    expect(body).toHaveLength(2);
    for (const index of body) {
      expectTypes(index, SEARCH_FIELDS);
      expect(index.id).toMatch(UUID);
      expect(index).not.toHaveProperty('partner_email');
      expect(['free', 'payg', 'fixed']).toContain(index.type);
      expect(['eu-west-1', 'us-central1']).toContain(index.region);
      expect(index.creation_time).toBeLessThan(START / 1000);
      expect(index.throughput_vector).toHaveLength(60);
      for (const point of index.throughput_vector) {
        expect(point.x).toMatch(TIME_TEXT);
        expect(typeof point.y).toBe('number');
      }
      expect(parseTime(index.throughput_vector.at(-1)!.x).ms).toBe(Math.floor(START / MINUTE) * MINUTE);
    }
    const payg = body.find((index) => index.type === 'payg')!;
    const free = body.find((index) => index.type === 'free')!;
    for (const field of LIMITS_UNLIMITED_IN_DOCS) {
      expect((payg as unknown as Record<string, number>)[field], field).toBe(-1);
      expect((free as unknown as Record<string, number>)[field], field).toBeGreaterThan(0);
    }
    for (const field of ['max_vector_count', 'max_writes_per_second', 'max_query_per_second', 'max_reads_per_request']) {
      expect((payg as unknown as Record<string, number>)[field], field).toBeGreaterThan(0);
    }
  });

  it('serves one index by id and 404 for an unknown id', async () => {
    const h = await start();
    const list = (await h.get<ServedSearchIndex[]>('/v2/search')).body;
    for (const index of list) {
      expect((await h.get<ServedSearchIndex>(`/v2/search/${index.id}`)).body).toEqual(index);
    }
    const unknown = await h.get<{ error: string }>('/v2/search/not-an-index');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/not found/);
  });

  it('keeps the same ids across emulator starts', async () => {
    const first = (await (await start()).get<ServedSearchIndex[]>('/v2/search')).body.map((index) => index.id);
    const second = (await (await start()).get<ServedSearchIndex[]>('/v2/search')).body.map((index) => index.id);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(2);
  });
});

describe('vector indexes', () => {
  it('lists two indexes with every field and serves each by id', async () => {
    const h = await start();
    const { status, body } = await h.get<ServedVectorIndex[]>('/v2/vector/index');
    expect(status).toBe(200);
    expect(body.map((index) => index.name).sort()).toEqual(['kb-hybrid', 'product-embeddings']);
    for (const index of body) {
      expectTypes(index, VECTOR_FIELDS);
      expect(index.id).toMatch(UUID);
      expect(['DENSE', 'SPARSE', 'HYBRID']).toContain(index.index_type);
      expect(index.throughput_vector).toHaveLength(60);
      expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${index.id}`)).body).toEqual(index);
    }
    const payg = body.find((index) => index.type === 'payg')!;
    const free = body.find((index) => index.type === 'free')!;
    for (const field of LIMITS_UNLIMITED_IN_DOCS) {
      expect((payg as unknown as Record<string, number>)[field], field).toBe(-1);
      expect((free as unknown as Record<string, number>)[field], field).toBeGreaterThan(0);
    }
    // The free index reranks all month and stays under its limit (quota alerts stay quiet).
    const freeStats = await statsOf(h, free.id);
    expect(freeStats.monthly_rerank_count).toBeGreaterThan(0);
    expect(freeStats.monthly_rerank_count).toBeLessThan(free.max_monthly_reranks);
    const unknown = await h.get<{ error: string }>('/v2/vector/index/nope');
    expect(unknown.status).toBe(404);
    expect(typeof unknown.body.error).toBe('string');
  });

  it('serves the statistics of every period: 16 series, 60 or 240 points, the documented time text', async () => {
    const h = await start();
    const { id } = await vectorByName(h, 'kb-hybrid');
    const fractions = new Set<number>();
    const nowMinute = Math.floor(START / MINUTE) * MINUTE;
    const expectedStepMinutes = { '1h': 1, '3h': 3, '12h': 12, '1d': 24, '3d': 72, '7d': 168, '30d': 180 };
    for (const period of STATS_PERIODS) {
      const stats = await statsOf(h, id, period);
      expectTypes(stats, STATS_SCALARS);
      expect(Object.keys(stats)).toHaveLength(Object.keys(STATS_SCALARS).length + 1 + 16);
      for (const name of PERIOD_SERIES) {
        const points = (stats as unknown as Record<string, { x: string; y: number }[]>)[name]!;
        expect(points, `${period} ${name}`).toHaveLength(period === '30d' ? 240 : 60);
        const times = points.map((point) => parseTime(point.x));
        for (const time of times) fractions.add(time.fraction?.length ?? 0);
        expect(times.at(-1)!.ms, `${name} ends at the current minute`).toBe(nowMinute);
        expect(times[1]!.ms - times[0]!.ms).toBe(expectedStepMinutes[period] * MINUTE);
        for (const point of points) expect(typeof point.y).toBe('number');
      }
      expect(stats.days).toEqual(['Thursday', 'Friday', 'Saturday', 'Sunday', 'Monday', 'Tuesday', 'Wednesday']);
      for (const name of DAILY_SERIES) {
        const points = (stats as unknown as Record<string, { x: string; y: number }[]>)[name]!;
        expect(points, name).toHaveLength(7);
        const times = points.map((point) => parseTime(point.x));
        for (const time of times) fractions.add(time.fraction?.length ?? 0);
        expect(times.at(-1)!.ms).toBe(START);
        expect(times[1]!.ms - times[0]!.ms).toBe(DAY);
      }
    }
    // The service mixes 9-digit, 3-digit and absent fractions; so does the emulator.
    expect([...fractions].sort()).toEqual([0, 3, 9]);
  });

  it('defaults to 1h, answers 400 naming period for anything else, 404 for an unknown id', async () => {
    const h = await start();
    const { id } = await vectorByName(h, 'product-embeddings');
    expect((await statsOf(h, id)).query_throughput).toEqual((await statsOf(h, id, '1h')).query_throughput);
    for (const bad of ['2h', '1H', '', '30', 'period']) {
      const { status, body } = await h.get<{ error: string }>(`/v2/vector/index/${id}/stats?period=${bad}`);
      expect(status, bad).toBe(400);
      expect(body.error).toContain('period');
    }
    const repeated = await h.get<{ error: string }>(`/v2/vector/index/${id}/stats?period=1h&period=3h`);
    expect(repeated.status).toBe(400);
    expect((await h.get(`/v2/vector/index/nope/stats`)).status).toBe(404);
    expect((await h.get(`/v2/vector/index/nope/stats?period=1d`)).status).toBe(404);
  });

  it('derives counts from the clock: daily counts grow through the day and reset at 00:00 UTC', async () => {
    const h = await start();
    const { id } = await vectorByName(h, 'product-embeddings');
    // 120 queries and 30 updates a minute, times the hour's factor (1,1,1,1,1,1,2,2,3,...).
    // 00:00-10:00 weighs 16 hours of factor 1, then 30 minutes at factor 3: 1,050 minutes.
    let stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(120 * 1_050);
    expect(stats.daily_update_count).toBe(30 * 1_050);
    // A whole day weighs 50 hours: 3,000 minutes. 1-17 March are whole days.
    expect(stats.monthly_query_count).toBe(120 * (17 * 3_000 + 1_050));
    expect(stats.monthly_bandwidth_usage).toBe(
      stats.monthly_query_count * 6_400 + stats.monthly_update_count * 6_600,
    );
    expect(stats.storage_usage).toBe(stats.current_vector_count * 6_500);
    // 15 s into a minute at factor 3: 30 x 3 x 15 / 60 updates waiting.
    expect(stats.pending_index_count).toBe(22);
    expect(stats.query_throughput.at(-1)!.y).toBe(360);
    expect(stats.daily_query_requests.at(-1)!.y).toBe(stats.daily_query_count);
    expect(stats.daily_query_requests.at(-2)!.y).toBe(120 * 3_000);
    expect(stats.monthly_cost).toBe(
      Math.round((stats.monthly_query_count + stats.monthly_update_count) * 0.000004 * 100) / 100,
    );
    const before = stats;

    h.clock.now = START + MINUTE;
    stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(before.daily_query_count + 360);
    expect(stats.monthly_query_count).toBe(before.monthly_query_count + 360);
    expect(stats.current_vector_count).toBeGreaterThanOrEqual(before.current_vector_count);
    expect(stats.query_latency_mean.at(-1)!.y).not.toBe(before.query_latency_mean.at(-1)!.y);

    h.clock.now = START + 3 * 3_600_000;
    expect((await statsOf(h, id)).current_vector_count).toBeGreaterThan(before.current_vector_count);

    h.clock.now = Date.UTC(2026, 2, 19, 0, 0, 30);
    stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(0);
    expect(stats.monthly_query_count).toBe(120 * 18 * 3_000);
    h.clock.now = Date.UTC(2026, 2, 19, 0, 7, 0);
    expect((await statsOf(h, id)).daily_query_count).toBe(120 * 7);
  });

  it('resets monthly counts at the start of the month', async () => {
    const h = await start();
    const { id } = await vectorByName(h, 'kb-hybrid');
    h.clock.now = Date.UTC(2026, 3, 1, 0, 0, 45);
    let stats = await statsOf(h, id);
    expect(stats.monthly_query_count).toBe(0);
    expect(stats.monthly_update_count).toBe(0);
    expect(stats.monthly_rerank_count).toBe(0);
    expect(stats.monthly_bandwidth_usage).toBe(0);
    h.clock.now = Date.UTC(2026, 3, 1, 0, 5, 0);
    stats = await statsOf(h, id);
    expect(stats.monthly_query_count).toBe(3 * 5);
    expect(stats.monthly_rerank_count).toBe(5);
    expect(stats.daily_query_count).toBe(3 * 5);
    expect(stats.monthly_cost).toBe(0); // a free index
  });
});

describe('admin routes and in-process state', () => {
  it('reports the full current state', async () => {
    const h = await start();
    const { status, body } = await h.admin<ManagementSnapshot>('GET', '/state');
    expect(status).toBe(200);
    expect(body.now).toBe(START);
    expect(body.plan).toBe('fixed');
    expect(body.account).toEqual((await h.get<AccountRecord>('/v2/qstash/user')).body);
    expect(body.searchIndexes).toEqual((await h.get<ServedSearchIndex[]>('/v2/search')).body);
    expect(body.vectorIndexes).toEqual((await h.get<ServedVectorIndex[]>('/v2/vector/index')).body);
    for (const index of body.vectorIndexes) {
      const stats = await statsOf(h, index.id);
      expect(body.vectorStats[index.id]!.daily_query_count).toBe(stats.daily_query_count);
      expect(body.vectorStats[index.id]!.current_vector_count).toBe(stats.current_vector_count);
    }
  });

  it('changes the plan and fields of the account', async () => {
    const h = await start('fixed');
    h.clock.now = START + 5 * MINUTE;
    const patched = await h.admin<AccountRecord>('PATCH', '/account', { plan: 'free' });
    expect(patched.status).toBe(200);
    const account = (await h.get<AccountRecord>('/v2/qstash/user')).body;
    expect(account).toMatchObject({ type: 'free', max_requests_per_day: 1_000, reserved_type: '', reserved_price: 0 });
    expect(account.last_plan_upgrade_time).toBe(Math.floor((START + 5 * MINUTE) / 1000));
    expect((await h.admin<ManagementSnapshot>('GET', '/state')).body.plan).toBe('free');

    await h.admin('PATCH', '/account', { state: 'passive', max_topics: 7 });
    const passive = (await h.get<AccountRecord>('/v2/svc/user')).body;
    expect(passive).toMatchObject({ state: 'passive', active: false, max_topics: 7, type: 'free' });

    for (const bad of [{ plan: 'gold' }, { max_topics: 'many' }, { nonsense: 1 }, { state: 'deleted' }]) {
      const { status, body } = await h.admin<{ error: string }>('PATCH', '/account', bad);
      expect(status, JSON.stringify(bad)).toBe(400);
      expect(typeof body.error).toBe('string');
    }
    const malformed = await h.admin<{ error: string }>('PATCH', '/account', '{"plan": ');
    expect(malformed.status).toBe(400);
    expect(typeof malformed.body.error).toBe('string');
  });

  it('adds and deletes search indexes, reflected in the list and by id', async () => {
    const h = await start();
    const created = await h.admin<ServedSearchIndex>('POST', '/search-indexes', { name: 'extra', type: 'payg' });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(UUID);
    expect(created.body.creation_time).toBe(Math.floor(START / 1000));
    expect(created.body.max_daily_queries).toBe(-1);
    let list = (await h.get<ServedSearchIndex[]>('/v2/search')).body;
    expect(list.map((index) => index.name)).toContain('extra');
    expect((await h.get(`/v2/search/${created.body.id}`)).status).toBe(200);

    expect((await h.admin('DELETE', `/search-indexes/${created.body.id}`)).status).toBe(200);
    list = (await h.get<ServedSearchIndex[]>('/v2/search')).body;
    expect(list).toHaveLength(2);
    expect((await h.get(`/v2/search/${created.body.id}`)).status).toBe(404);
    expect((await h.admin('DELETE', `/search-indexes/${created.body.id}`)).status).toBe(404);
    expect((await h.admin('POST', '/search-indexes', { region: 'mars-1' })).status).toBe(400);
  });

  it('adds vector indexes whose counts start at creation, and deletes them with their statistics', async () => {
    const h = await start();
    const created = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', {
      name: 'fresh',
      type: 'payg',
      traffic: { queries_per_minute: 10, initial_vectors: 5 },
    });
    expect(created.status).toBe(201);
    const { id } = created.body;
    let stats = await statsOf(h, id);
    expect(stats.daily_query_count).toBe(0);
    expect(stats.current_vector_count).toBe(5);
    // Points before creation are zero.
    expect(stats.query_throughput[0]!.y).toBe(0);
    h.clock.now = START + 2 * MINUTE;
    stats = await statsOf(h, id);
    // Creation at 10:30:15 counts from 10:31; 10:31 is complete at 10:32:15, at factor 3.
    expect(stats.daily_query_count).toBe(10 * 3);
    expect((await h.get<ServedVectorIndex[]>('/v2/vector/index')).body).toHaveLength(3);

    expect((await h.admin('DELETE', `/vector-indexes/${id}`)).status).toBe(200);
    expect((await h.get<ServedVectorIndex[]>('/v2/vector/index')).body.map((index) => index.id)).not.toContain(id);
    expect((await h.get(`/v2/vector/index/${id}/stats`)).status).toBe(404);
    expect(Object.keys((await h.admin<ManagementSnapshot>('GET', '/state')).body.vectorStats)).not.toContain(id);
    expect((await h.admin('POST', '/vector-indexes', { traffic: { queries_per_minute: -1 } })).status).toBe(400);
  });

  it('takes max_monthly_reranks like any other limit: a count, or -1 for unlimited', async () => {
    const h = await start();
    const limited = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', { name: 'limited', type: 'payg', max_monthly_reranks: 5_000 });
    expect(limited.status).toBe(201);
    expect(limited.body.max_monthly_reranks).toBe(5_000);
    expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${limited.body.id}`)).body.max_monthly_reranks).toBe(5_000);
    const unlimited = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', { name: 'unlimited', type: 'free', max_monthly_reranks: -1 });
    expect(unlimited.body.max_monthly_reranks).toBe(-1);
    // Without the field, the plan's figure.
    const fixed = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', { name: 'fixed', type: 'fixed' });
    expect(fixed.body.max_monthly_reranks).toBeGreaterThan(0);
    for (const bad of [-2, 1.5, 'many']) {
      expect((await h.admin('POST', '/vector-indexes', { max_monthly_reranks: bad })).status, String(bad)).toBe(400);
    }
  });

  it('resets to the starting data', async () => {
    const h = await start();
    const initial = (await h.admin<ManagementSnapshot>('GET', '/state')).body;
    await h.admin('PATCH', '/account', { plan: 'payg' });
    await h.admin('DELETE', `/vector-indexes/${initial.vectorIndexes[0]!.id}`);
    await h.admin('POST', '/search-indexes', { name: 'x' });
    expect((await h.admin('POST', '/reset')).status).toBe(200);
    expect((await h.admin<ManagementSnapshot>('GET', '/state')).body).toEqual(initial);
  });

  it('offers the same operations in process, with typed errors', async () => {
    const h = await start();
    const { state } = h.management;
    const added = state.addVectorIndex({ name: 'in-process', type: 'free' });
    expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${added.id}`)).body.name).toBe('in-process');
    expect(state.vectorStats(added.id, '30d').vector_count).toHaveLength(240);
    state.deleteVectorIndex(added.id);
    expect(() => state.vectorStats(added.id)).toThrow(ManagementError);
    try {
      state.patchAccount({ plan: 'gold' as PlanProfile });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ManagementError);
      expect((error as ManagementError).code).toBe('ERR_EMULATOR_INPUT');
    }
    state.patchAccount({ prod_pack_enabled: true });
    expect((await h.get<AccountRecord>('/v2/qstash/user')).body.prod_pack_enabled).toBe(true);
  });
});
