// Regional QStash users and official usage with the real ManagementClient against the emulator,
// its traffic made with the official SDK. Both sides of the split evidence: a current service
// (GET /v2/qstash/users, /v2/qstash/stats/{id}) and an older one (`managementApi: legacy`: only
// /v2/qstash/user and /v2/qstash/stats).
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiSchemaDriftError } from '../../src/api/errors.js';
import { ManagementClient, qstashRegionOfUrl, type ManagementClientOptions } from '../../src/api/management.js';
import { AccountCollector } from '../../src/collectors/account.js';
import { SearchCollector } from '../../src/collectors/search.js';
import { pointOfDay, UsageCollector } from '../../src/collectors/usage.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import {
  captureLogger,
  eventually,
  familiesOf,
  pollContext,
  startFixtureServer,
  valueOf,
  type FixtureServer,
} from '../support/exporter-e2e-helpers.js';

const BODY = 'x'.repeat(300);

let emulator: EmulatorHandle;
let destination: FixtureServer;
const clients: ManagementClient[] = [];

function client(options: Partial<ManagementClientOptions> = {}): ManagementClient {
  const made = new ManagementClient({
    baseUrl: emulator.url,
    email: emulator.credentials.email,
    apiKey: emulator.credentials.apiKey,
    retry: { maxRetries: 0 },
    ...options,
  });
  clients.push(made);
  return made;
}

function collectors(management: ManagementClient): { account: AccountCollector; usage: UsageCollector } {
  return {
    account: new AccountCollector({ client: management, intervalMs: 300_000, accountPath: '/v2/qstash/user' }),
    usage: new UsageCollector({ client: management, intervalMs: 60_000, accountPath: '/v2/qstash/user' }),
  };
}

beforeAll(async () => {
  destination = await startFixtureServer();
  destination.routes.set('/ok', { body: 'ok' });
  destination.routes.set('/fail', { status: 500, body: { error: 'down' } });
  emulator = await createEmulator({ plan: 'payg' });
  const sdk = new Client({ baseUrl: emulator.url, token: emulator.credentials.token, retry: false });
  // 7 messages delivered, 2 that fail without retries (they land in the DLQ): 9 billed requests.
  for (let i = 0; i < 7; i++) await sdk.publish({ url: `${destination.url}/ok`, body: BODY });
  for (let i = 0; i < 2; i++) await sdk.publish({ url: `${destination.url}/fail`, body: BODY, retries: 0 });
  await eventually(() =>
    emulator.groundTruth().byState.FAILED === 2 ? [] : [`FAILED ${emulator.groundTruth().byState.FAILED}`],
  );
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emulator?.close();
  await destination?.close();
});

describe('a current service (GET /v2/qstash/users, /v2/qstash/stats/{id})', () => {
  it('chooses the user by the QStash token and exports its official usage', async () => {
    const log = captureLogger('info');
    const { account, usage } = collectors(client({ qstashToken: emulator.credentials.token }));
    await account.poll(pollContext(log.logger));
    await usage.poll(pollContext(log.logger));
    const a = await familiesOf(account.registry);
    expect(a.get('upstash_qstash_account_info')!.samples).toEqual([
      {
        labels: { state: 'active', plan: 'paid', reserved_plan: '', region: 'eu-central-1', selected_by: 'token' },
        value: 1,
      },
    ]);
    expect(valueOf(a, 'upstash_qstash_account_prometheus_enabled')).toBe(0);
    expect(valueOf(a, 'upstash_qstash_plan_max_bandwidth_bytes_per_second')).toBeGreaterThan(0);

    const u = await familiesOf(usage.registry);
    // The ground truth of the emulator: every CREATED entry (and no retries here) is billed.
    expect(emulator.groundTruth().byState.CREATED).toBe(9);
    expect(valueOf(u, 'upstash_qstash_usage_daily_requests')).toBe(9);
    expect(valueOf(u, 'upstash_qstash_usage_daily_bandwidth_bytes')).toBe(9 * BODY.length);
    expect(valueOf(u, 'upstash_qstash_usage_dlq_messages')).toBe(2);
    // Pay as you go: $1 per 100,000 messages, rounded to 3 decimals.
    expect(valueOf(u, 'upstash_qstash_usage_daily_billing')).toBe(0);
    expect(valueOf(u, 'upstash_qstash_usage_monthly_billing')).toBe(0);
    expect(u.get('upstash_qstash_usage_daily_requests')!.help).toContain(
      "today's point of daily_requests of GET /v2/qstash/stats/{id}?period=1h",
    );

    const lines = log.lines().map((line) => line.msg);
    expect(lines).toContain('QStash user chosen by the configured QStash token (region eu-central-1)');
    expect(lines).toContain('official usage read from the stats of the QStash user (by id)');
  });

  it("without a token, chooses the user in the QStash URL's region: the other region has no traffic here", async () => {
    const log = captureLogger('info');
    const { account, usage } = collectors(
      client({ qstashRegion: qstashRegionOfUrl('https://qstash-us-east-1.upstash.io') }),
    );
    await account.poll(pollContext(log.logger));
    await usage.poll(pollContext(log.logger));
    const a = await familiesOf(account.registry);
    expect(a.get('upstash_qstash_account_info')!.samples[0]!.labels).toMatchObject({
      plan: 'free',
      region: 'us-east-1',
      selected_by: 'region',
    });
    expect(valueOf(a, 'upstash_qstash_plan_max_requests_per_day')).toBe(1_000);
    expect(valueOf(await familiesOf(usage.registry), 'upstash_qstash_usage_daily_requests')).toBe(0);
  });

  it('with neither a matching token nor a region, falls back to the legacy record', async () => {
    const log = captureLogger('info');
    const { account } = collectors(client({ qstashToken: 'not-the-token', qstashRegion: null }));
    await account.poll(pollContext(log.logger));
    const a = await familiesOf(account.registry);
    expect(a.get('upstash_qstash_account_info')!.samples[0]!.labels).toMatchObject({
      region: 'eu-central-1',
      selected_by: 'legacy',
    });
    expect(log.text()).toContain('legacy single-user endpoint');
  });
});

describe('an older service (managementApi: legacy: only /v2/qstash/user and /v2/qstash/stats)', () => {
  beforeAll(() => emulator.setKnobs({ managementApi: 'legacy' }));
  afterAll(() => emulator.setKnobs({ managementApi: 'current' }));

  it('reads the legacy record and the stats without an id, with the same usage', async () => {
    const log = captureLogger('info');
    const { account, usage } = collectors(client({ qstashToken: emulator.credentials.token }));
    await account.poll(pollContext(log.logger));
    await usage.poll(pollContext(log.logger));
    await usage.poll(pollContext(log.logger));
    const a = await familiesOf(account.registry);
    // The older record: no region, the older reserved_type vocabulary, no current-only fields.
    expect(a.get('upstash_qstash_account_info')!.samples).toEqual([
      { labels: { state: 'active', plan: 'paid', reserved_plan: 'paid', region: '', selected_by: 'legacy' }, value: 1 },
    ]);
    expect(a.has('upstash_qstash_account_prometheus_enabled')).toBe(false);
    expect(a.has('upstash_qstash_plan_max_bandwidth_bytes_per_second')).toBe(false);
    const u = await familiesOf(usage.registry);
    expect(valueOf(u, 'upstash_qstash_usage_daily_requests')).toBe(9);
    expect(valueOf(u, 'upstash_qstash_usage_dlq_messages')).toBe(2);
    expect(u.get('upstash_qstash_usage_daily_requests')!.help).toContain('of GET /v2/qstash/stats?period=1h');
    expect(log.lines().map((line) => line.msg)).toContain(
      'official usage read from the older stats path without a user id',
    );
  });
});

describe('search index usage', () => {
  it("exports each index's stats beside its limits, equal to what the emulator serves", async () => {
    const log = captureLogger('info');
    const search = new SearchCollector({ client: client(), intervalMs: 300_000 });
    const indexes = emulator.managementResources.search.list();
    expect(indexes.length).toBe(2);
    // The figures move by the minute: poll and read the emulator in the same minute.
    await eventually(async () => {
      await search.poll(pollContext(log.logger));
      const f = await familiesOf(search.registry);
      const problems: string[] = [];
      for (const index of indexes) {
        const stats = emulator.managementResources.search.stats(index.id);
        const labels = { index_id: index.id };
        if (valueOf(f, 'upstash_search_index_daily_queries', labels) !== stats.daily_query_count)
          problems.push(`${index.name} daily queries`);
        if (valueOf(f, 'upstash_search_index_vectors', labels) !== stats.current_vector_count)
          problems.push(`${index.name} documents`);
        if (valueOf(f, 'upstash_search_index_max_vectors', labels) === undefined) problems.push(`${index.name} limit`);
      }
      return problems;
    });
    const f = await familiesOf(search.registry);
    expect(f.get('upstash_search_index_daily_queries')!.help).toContain(
      'daily_query_count of GET /v2/search/{id}/stats?period=1h',
    );
    expect(f.get('upstash_search_index_vectors')!.help).toContain('compare with upstash_search_index_max_vectors');
  });
});

describe('schema drift in the answers (fixture: the emulator never serves it)', () => {
  let fixture: FixtureServer;
  beforeAll(async () => {
    fixture = await startFixtureServer();
  });
  afterAll(() => fixture.close());

  it('names the field of a wrong type, never a token value', async () => {
    const management = new ManagementClient({
      baseUrl: fixture.url,
      email: 'o@example.test',
      apiKey: 'k',
      retry: { maxRetries: 0 },
      qstashToken: 'tok-1',
    });
    clients.push(management);
    fixture.routes.set('/v2/qstash/users', {
      body: [{ id: 'u1', region: 'eu-central-1', token: 'tok-1', read_only_token: 'ro-secret-9', max_queues: '10' }],
    });
    const error = await management.qstashUser().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiSchemaDriftError);
    expect((error as ApiSchemaDriftError).path).toBe('max_queues');
    expect((error as Error).message).not.toMatch(/tok-1|ro-secret-9/);

    fixture.routes.set('/v2/qstash/users', { body: [{ id: 'u1', region: 'eu-central-1', token: 'tok-1' }] });
    fixture.routes.set('/v2/qstash/stats/u1', { body: { dlq_message_count: '5', daily_requests: [] } });
    const drift = await management.qstashStats('u1').catch((e: unknown) => e);
    expect(drift).toBeInstanceOf(ApiSchemaDriftError);
    expect((drift as ApiSchemaDriftError).path).toBe('dlq_message_count');
  });
});

describe('helpers', () => {
  it('qstashRegionOfUrl reads the region of the QStash host', () => {
    expect(qstashRegionOfUrl('https://qstash-us-east-1.upstash.io')).toBe('us-east-1');
    expect(qstashRegionOfUrl('https://qstash-eu-central-1.upstash.io/')).toBe('eu-central-1');
    expect(qstashRegionOfUrl('https://qstash.upstash.io')).toBe('eu-central-1');
    expect(qstashRegionOfUrl('http://127.0.0.1:8080')).toBeNull();
    expect(qstashRegionOfUrl('not a url')).toBeNull();
  });

  it('pointOfDay takes the point on the day, not the newest (future days are 0)', () => {
    const day = Date.UTC(2026, 10, 25);
    const points = [
      { x: '2026-11-24 09:00:00.123456789 +0000 UTC', y: 5 },
      { x: '2026-11-25 09:00:00.123456789 +0000 UTC', y: 42 },
      { x: '2026-11-26 09:00:00.123456789 +0000 UTC', y: 0 },
    ];
    expect(pointOfDay(points, day)).toBe(42);
    expect(pointOfDay(points, day + 7 * 86_400_000)).toBeUndefined();
    expect(pointOfDay(undefined, day)).toBeUndefined();
  });
});

describe('the DLQ count of the official usage', () => {
  it('is the dead-letter queue itself: a message deleted with the SDK leaves the count', async () => {
    const sdk = new Client({ baseUrl: emulator.url, token: emulator.credentials.token, retry: false });
    const { messages } = await sdk.dlq.listMessages();
    expect(messages).toHaveLength(2);
    await sdk.dlq.delete(messages[0]!.dlqId);
    const { usage } = collectors(client({ qstashToken: emulator.credentials.token }));
    await usage.poll(pollContext(captureLogger('info').logger));
    expect(valueOf(await familiesOf(usage.registry), 'upstash_qstash_usage_dlq_messages')).toBe(1);
  });
});
