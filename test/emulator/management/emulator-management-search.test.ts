// The emulator's management interface: search indexes, their fields, limits and usage.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ServedSearchIndex,
  type ServedVectorIndex,
  type VectorStats,
} from '../../../src/emulator/management/index.js';
import {
  expectTypes,
  INDEX_LIMIT_FIELDS,
  LIMITS_UNLIMITED_IN_DOCS,
  MINUTE,
  parseTime,
  START,
  startManagement,
  stopManagementServers,
  TIME_TEXT,
  UUID,
} from '../../support/emulator-management.js';

afterEach(stopManagementServers);

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

describe('search indexes', () => {
  it("serves each index's usage in the vector stats shape, from its query rate", async () => {
    const h = await startManagement();
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
    const h = await startManagement();
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
    for (const field of [
      'max_vector_count',
      'max_writes_per_second',
      'max_query_per_second',
      'max_reads_per_request',
    ]) {
      expect((payg as unknown as Record<string, number>)[field], field).toBeGreaterThan(0);
    }
  });

  it('serves one index by id and 404 for an unknown id', async () => {
    const h = await startManagement();
    const list = (await h.get<ServedSearchIndex[]>('/v2/search')).body;
    for (const index of list) {
      expect((await h.get<ServedSearchIndex>(`/v2/search/${index.id}`)).body).toEqual(index);
    }
    const unknown = await h.get<{ error: string }>('/v2/search/not-an-index');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/not found/);
  });

  it('keeps the same ids across emulator starts', async () => {
    const first = (await (await startManagement()).get<ServedSearchIndex[]>('/v2/search')).body.map(
      (index) => index.id,
    );
    const second = (await (await startManagement()).get<ServedSearchIndex[]>('/v2/search')).body.map(
      (index) => index.id,
    );
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(2);
  });
});
