// The emulator's management interface: the admin routes under /__emulator/management and the
// same operations in process.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ManagementError,
  type AccountRecord,
  type ManagementSnapshot,
  type PlanProfile,
  type ServedSearchIndex,
  type ServedVectorIndex,
} from '../../../src/emulator/management/index.js';
import {
  MINUTE,
  START,
  startManagement,
  statsOf,
  stopManagementServers,
  UUID,
} from '../../support/emulator-management.js';

afterEach(stopManagementServers);

describe('admin routes and in-process state', () => {
  it('reports the full current state', async () => {
    const h = await startManagement();
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
    const h = await startManagement('fixed');
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
    const h = await startManagement();
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
    const h = await startManagement();
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
    const h = await startManagement();
    const limited = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', {
      name: 'limited',
      type: 'payg',
      max_monthly_reranks: 5_000,
    });
    expect(limited.status).toBe(201);
    expect(limited.body.max_monthly_reranks).toBe(5_000);
    expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${limited.body.id}`)).body.max_monthly_reranks).toBe(
      5_000,
    );
    const unlimited = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', {
      name: 'unlimited',
      type: 'free',
      max_monthly_reranks: -1,
    });
    expect(unlimited.body.max_monthly_reranks).toBe(-1);
    // Without the field, the plan's figure.
    const fixed = await h.admin<ServedVectorIndex>('POST', '/vector-indexes', { name: 'fixed', type: 'fixed' });
    expect(fixed.body.max_monthly_reranks).toBeGreaterThan(0);
    for (const bad of [-2, 1.5, 'many']) {
      expect((await h.admin('POST', '/vector-indexes', { max_monthly_reranks: bad })).status, String(bad)).toBe(400);
    }
  });

  it('resets to the starting data', async () => {
    const h = await startManagement();
    const initial = (await h.admin<ManagementSnapshot>('GET', '/state')).body;
    await h.admin('PATCH', '/account', { plan: 'payg' });
    await h.admin('DELETE', `/vector-indexes/${initial.vectorIndexes[0]!.id}`);
    await h.admin('POST', '/search-indexes', { name: 'x' });
    expect((await h.admin('POST', '/reset')).status).toBe(200);
    expect((await h.admin<ManagementSnapshot>('GET', '/state')).body).toEqual(initial);
  });

  it('offers the same operations in process, with typed errors', async () => {
    const h = await startManagement();
    const { state, resources } = h.management;
    const added = resources.vector.add({ name: 'in-process', type: 'free' });
    expect((await h.get<ServedVectorIndex>(`/v2/vector/index/${added.id}`)).body.name).toBe('in-process');
    expect(resources.vector.stats(added.id, '30d').vector_count).toHaveLength(240);
    resources.vector.delete(added.id);
    expect(() => resources.vector.stats(added.id)).toThrow(ManagementError);
    const search = resources.search.add({ name: 'in-process-search' });
    expect((await h.get<ServedSearchIndex>(`/v2/search/${search.id}`)).body.name).toBe('in-process-search');
    expect(h.management.snapshot().searchIndexes.map((index) => index.id)).toContain(search.id);
    resources.search.delete(search.id);
    expect(() => resources.search.get(search.id)).toThrow(ManagementError);
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
