// The emulator's management interface: authentication, the QStash account record (current and
// legacy API versions, plan limits, regional users) and the QStash usage statistics.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AccountRecord,
  type QStashStatsRecord,
  type TrafficReader,
} from '../../../src/emulator/management/index.js';
import {
  API_KEY,
  basic,
  DAY,
  DELIVERY_TOKEN,
  EMAIL,
  expectTypes,
  MINUTE,
  parseTime,
  START,
  startManagement,
  stopManagementServers,
  UUID,
} from '../../support/emulator-management.js';

afterEach(stopManagementServers);

/** The current record (2026-03+); the legacy one has `password` instead of the CURRENT_ONLY fields. */
const CURRENT_ONLY = [
  'read_only_token',
  'region',
  'budget',
  'max_bandwidth_per_second',
  'prometheus_enabled',
  'modifying_state',
  'deletion_time',
];
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

describe('authentication', () => {
  it('answers 401 with a JSON error for missing, malformed and wrong credentials', async () => {
    const h = await startManagement();
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
    const h = await startManagement();
    const { status, body } = await h.get<{ from: string }>('/v2/logs', null);
    expect(status).toBe(404);
    expect(body.from).toBe('app');
  });
});

describe('account record', () => {
  it('has every field of the current record with its type, the delivery token and unix-second times on every plan', async () => {
    for (const plan of ['free', 'payg', 'fixed'] as const) {
      const h = await startManagement(plan);
      const { status, body } = await h.get<AccountRecord>('/v2/qstash/user');
      expect(status).toBe(200);
      expectTypes(body, ACCOUNT_FIELDS);
      expect(Object.keys(body).sort()).toEqual(Object.keys(ACCOUNT_FIELDS).sort());
      expect(body.id).toMatch(UUID);
      expect(body.customer_id).toBe(EMAIL);
      expect(body.created_by).toBe(EMAIL);
      expect(body.token).toBe(DELIVERY_TOKEN);
      expect(body.read_only_token.length).toBeGreaterThan(8);
      expect(body).toMatchObject({
        region: 'eu-central-1',
        prometheus_enabled: 'false',
        state: 'active',
        active: true,
      });
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
    const h = await startManagement('fixed');
    h.apiVersion.value = 'legacy';
    const { body } = await h.get<AccountRecord>('/v2/qstash/user');
    const legacyFields = [...Object.keys(ACCOUNT_FIELDS).filter((field) => !CURRENT_ONLY.includes(field)), 'password'];
    expect(Object.keys(body).sort()).toEqual(legacyFields.sort());
    expect(body.password.length).toBeGreaterThan(8);
    expect(body.reserved_type).toBe('qstash_enterprise_1m');
    expect((await h.get<AccountRecord>('/v2/svc/user')).body.reserved_type).toBe('svc_enterprise_1m');
    const payg = await startManagement('payg');
    payg.apiVersion.value = 'legacy';
    expect((await payg.get<AccountRecord>('/v2/qstash/user')).body.reserved_type).toBe('paid');
    // Only the legacy paths exist.
    for (const path of ['/v2/qstash/users', `/v2/qstash/user/${body.id}`, `/v2/qstash/stats/${body.id}`]) {
      expect((await h.get(path)).status, path).toBe(404);
    }
    expect((await h.get('/v2/qstash/stats')).status).toBe(200);
  });

  it('carries the limits of each plan profile', async () => {
    const free = (await (await startManagement('free')).get<AccountRecord>('/v2/qstash/user')).body;
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
    const payg = (await (await startManagement('payg')).get<AccountRecord>('/v2/qstash/user')).body;
    // The current vocabulary: pay as you go has no reserved tier.
    expect(payg).toMatchObject({ type: 'paid', reserved_type: '', reserved_price: 0, timeout: 7_200 });
    expect(payg.max_requests_per_day).toBeGreaterThan(free.max_requests_per_day);
    expect(payg.max_schedules).toBeGreaterThan(free.max_schedules);
    const fixed = (await (await startManagement('fixed')).get<AccountRecord>('/v2/qstash/user')).body;
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
    const h = await startManagement('fixed');
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
    for (const user of users.body)
      expect((await h.get<AccountRecord>(`/v2/qstash/user/${user.id}`)).body).toEqual(user);
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
    day: (ms) =>
      ms <= START && ms > START - DAY ? { requests: 63_000, bytes: 64_512_000 } : { requests: 0, bytes: 0 },
    dlqMessages: () => 5,
  };

  it('serves daily series over the whole month, today from the traffic, on both paths', async () => {
    const h = await startManagement('payg', steady);
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
    const h = await startManagement('fixed', steady);
    const stats = (await h.get<QStashStatsRecord>('/v2/qstash/stats')).body;
    expect(stats.total_monthly_billing).toBe(180);
    expect(stats.daily_billings.every((point) => point.y === 0)).toBe(true);
  });
});
