// The account and search collectors with the real ManagementClient: against the emulator (plan
// changes, -1 limits, secrets in the record), and against a fixture server on 127.0.0.1 for
// records the emulator never serves (fields missing, unordered throughput points).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManagementClient } from '../../src/api/management.js';
import { AccountCollector, PLAN_LIMITS } from '../../src/collectors/account.js';
import { SearchCollector } from '../../src/collectors/search.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import {
  captureLogger,
  familiesOf,
  pollContext,
  valueOf,
  type CapturedLogger,
} from '../support/exporter-e2e-helpers.js';
import { fixtureClientPerTest } from '../support/fixture-client.js';

describe('account collector against the emulator', () => {
  let emulator: EmulatorHandle;
  let client: ManagementClient;
  let log: CapturedLogger;
  beforeEach(() => {
    log = captureLogger('debug');
  });

  beforeAll(async () => {
    emulator = await createEmulator({ plan: 'fixed' });
    client = new ManagementClient({
      baseUrl: emulator.url,
      email: emulator.credentials.email,
      apiKey: emulator.credentials.apiKey,
      qstashToken: emulator.credentials.token,
      retry: { maxRetries: 0 },
    });
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  async function patchAccount(body: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${emulator.url}/__emulator/management/account`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  it('follows a plan change and a -1 limit, in base units, without the record secrets', async () => {
    const account = new AccountCollector({ client, intervalMs: 300_000, accountPath: '/v2/qstash/user' });
    await account.poll(pollContext(log.logger));
    let f = await familiesOf(account.registry);
    const byToken = {
      state: 'active',
      plan: 'paid',
      reserved_plan: 'qstash_fixed_1m',
      region: 'eu-central-1',
      selected_by: 'token',
    };
    expect(valueOf(f, 'upstash_qstash_account_info', byToken)).toBe(1);
    expect(valueOf(f, 'upstash_qstash_plan_max_dlq_retention_seconds')).toBe(30 * 86_400);
    expect(valueOf(f, 'upstash_qstash_account_reserved_price')).toBe(180);

    const record = await patchAccount({
      plan: 'free',
      state: 'passive',
      max_schedules: -1,
      password: 'canary-password-1',
      token: 'canary-token-1',
    });
    await account.poll(pollContext(log.logger));
    f = await familiesOf(account.registry);
    // The token no longer matches the configured one, and 127.0.0.1 has no region: the legacy record.
    expect(f.get('upstash_qstash_account_info')!.samples).toEqual([
      {
        labels: { state: 'passive', plan: 'free', reserved_plan: '', region: 'eu-central-1', selected_by: 'legacy' },
        value: 1,
      },
    ]);
    expect(valueOf(f, 'upstash_qstash_account_active')).toBe(0);
    expect(valueOf(f, 'upstash_qstash_plan_max_schedules')).toBe(Number.POSITIVE_INFINITY);
    expect(valueOf(f, 'upstash_qstash_plan_max_requests_per_day')).toBe(1000);
    expect(valueOf(f, 'upstash_qstash_plan_timeout_seconds')).toBe(900);
    expect(valueOf(f, 'upstash_qstash_plan_max_delay_seconds')).toBe(7 * 86_400);
    expect(valueOf(f, 'upstash_qstash_plan_max_dlq_retention_seconds')).toBe(3 * 86_400);
    expect(valueOf(f, 'upstash_qstash_account_last_plan_upgrade_timestamp_seconds')).toBe(
      record.last_plan_upgrade_time,
    );
    for (const limit of PLAN_LIMITS) expect(f.has(limit.name), limit.name).toBe(true);
    const text = await account.registry.metrics();
    expect(text).not.toContain('canary-password-1');
    expect(text).not.toContain('canary-token-1');
    expect(f.get('upstash_qstash_plan_max_schedules')!.help).toContain('-1 (unlimited) is exported as +Inf');
    expect(f.get('upstash_qstash_plan_max_dlq_retention_seconds')!.help).toContain(
      'max_dlq_retention_time_milis of the QStash user of GET /v2/qstash/users (else GET /v2/qstash/user), in milliseconds',
    );
  });
});

describe('account and search collectors against fixture records', () => {
  const setup = fixtureClientPerTest(
    (url) => new ManagementClient({ baseUrl: url, email: 'o@example.test', apiKey: 'k', retry: { maxRetries: 0 } }),
  );

  it('a field the record lacks leaves its family out instead of exporting 0', async () => {
    // The current service dropped `password` and may drop more; only what is there is exported.
    setup.fixture.routes.set('/v2/svc/user', {
      body: { state: 'active', type: 'free', max_queues: 10, timeout: 0, prometheus_enabled: 'true' },
    });
    await setup.client.close();
    setup.client = new ManagementClient({
      baseUrl: setup.fixture.url,
      email: 'o@example.test',
      apiKey: 'k',
      accountPath: '/v2/svc/user',
      retry: { maxRetries: 0 },
    });
    const account = new AccountCollector({ client: setup.client, intervalMs: 300_000, accountPath: '/v2/svc/user' });
    await account.poll(pollContext(setup.log.logger));
    const f = await familiesOf(account.registry);
    expect([...f.keys()].sort()).toEqual([
      'upstash_qstash_account_info',
      'upstash_qstash_account_prometheus_enabled',
      'upstash_qstash_plan_max_queues',
      'upstash_qstash_plan_timeout_seconds',
    ]);
    // No /v2/svc/users on this fixture (an older service): the legacy record, without a region.
    expect(
      valueOf(f, 'upstash_qstash_account_info', {
        state: 'active',
        plan: 'free',
        reserved_plan: '',
        region: '',
        selected_by: 'legacy',
      }),
    ).toBe(1);
    expect(valueOf(f, 'upstash_qstash_account_prometheus_enabled')).toBe(1);
    expect(valueOf(f, 'upstash_qstash_plan_timeout_seconds')).toBe(0);
    expect(f.get('upstash_qstash_plan_max_queues')!.help).toContain(
      'max_queues of the QStash user of GET /v2/svc/users (else GET /v2/svc/user)',
    );
  });

  it('search: newest throughput point by time, limits (-1 as +Inf), optional fields absent', async () => {
    setup.fixture.routes.set('/v2/search', {
      body: [
        {
          id: 's-1',
          name: 'docs',
          type: 'payg',
          region: 'us-central1',
          token: 'search-secret-token',
          read_only_token: 'search-secret-ro',
          max_vector_count: 2_000_000,
          max_monthly_reranks: -1,
          max_daily_updates: -1,
          max_daily_queries: 5,
          max_monthly_bandwidth: -1,
          max_writes_per_second: 1000,
          max_query_per_second: 900,
          max_reads_per_request: 100,
          max_writes_per_request: 50,
          creation_time: 1_761_200_000,
          input_enrichment_enabled: true,
          throughput_vector: [
            { x: '2025-10-23 20:55:00.000 +0000 UTC', y: 42 },
            { x: '2025-10-23 20:54:00.000 +0000 UTC', y: 7 },
          ],
        },
        { id: 's-2', name: 'bare' },
      ],
    });
    const search = new SearchCollector({ client: setup.client, intervalMs: 300_000 });
    await search.poll(pollContext(setup.log.logger));
    const f = await familiesOf(search.registry);
    const one = { index_id: 's-1' };
    expect(
      valueOf(f, 'upstash_search_index_info', { ...one, name: 'docs', plan: 'payg', cloud_region: 'us-central1' }),
    ).toBe(1);
    expect(valueOf(f, 'upstash_search_index_info', { index_id: 's-2', name: 'bare', plan: '', cloud_region: '' })).toBe(
      1,
    );
    expect(valueOf(f, 'upstash_search_index_throughput', one)).toBe(42);
    expect(valueOf(f, 'upstash_search_index_created_timestamp_seconds', one)).toBe(1_761_200_000);
    expect(valueOf(f, 'upstash_search_index_input_enrichment_enabled', one)).toBe(1);
    expect(valueOf(f, 'upstash_search_index_max_monthly_reranks', one)).toBe(Number.POSITIVE_INFINITY);
    expect(valueOf(f, 'upstash_search_index_max_daily_queries', one)).toBe(5);
    expect(valueOf(f, 'upstash_search_index_max_queries_per_second', one)).toBe(900);
    expect(valueOf(f, 'upstash_search_index_max_writes_per_request', one)).toBe(50);
    for (const family of f.values()) {
      expect(family.samples.filter((s) => s.labels.index_id === 's-2').length, family.name).toBe(
        family.name === 'upstash_search_index_info' ? 1 : 0,
      );
    }
    const text = await search.registry.metrics();
    expect(text).not.toContain('search-secret');
  });
});
