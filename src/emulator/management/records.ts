// The records the management API serves, their builders and the emulator's starting data.
// Field names and types follow the real API (./README.md says where they differ from the
// documented ones): `vercel_email` (documented as `partner_email`), unix seconds
// for every creation time, `-1` for unlimited index limits.
import { deterministicHostLabel, deterministicSecret, deterministicUuid } from './ids.js';
import type { NewSearchIndex, NewVectorIndex, VectorTraffic } from './inputs.js';
import {
  ACCOUNT_LIMITS,
  SEARCH_INDEX_LIMITS,
  VECTOR_INDEX_LIMITS,
  type AccountLimits,
  type IndexType,
  type PlanProfile,
  type SearchIndexLimits,
  type VectorIndexLimits,
} from './plans.js';
import { DAY_MS, unixSeconds } from './time-format.js';

export interface Point {
  x: string;
  y: number;
}

/**
 * Everything the emulator knows of one regional QStash user. What is served is a view of it
 * (qstash-users.ts): the current record (region, read_only_token, budget, ...; no password) or
 * the legacy one (password; no region), as the `managementApi` knob says.
 */
export interface AccountRecord extends AccountLimits {
  customer_id: string;
  id: string;
  password: string;
  token: string;
  read_only_token: string;
  active: boolean;
  state: 'active' | 'passive';
  last_plan_upgrade_time: number;
  prod_pack_enabled: boolean;
  created_by: string;
  creation_time: number;
  region: string;
  budget: number;
  max_bandwidth_per_second: number;
  /** Text, as the current service sends it. */
  prometheus_enabled: 'true' | 'false';
  modifying_state: string;
  deletion_time: number;
}

export interface SearchIndexRecord extends SearchIndexLimits {
  customer_id: string;
  id: string;
  name: string;
  endpoint: string;
  type: IndexType;
  region: string;
  vercel_email: string;
  token: string;
  read_only_token: string;
  creation_time: number;
  input_enrichment_enabled: boolean;
}

/** A search index as served: the record plus its recent query throughput. */
export interface ServedSearchIndex extends SearchIndexRecord {
  throughput_vector: Point[];
}

export interface VectorIndexRecord extends VectorIndexLimits {
  customer_id: string;
  id: string;
  name: string;
  similarity_function: string;
  dimension_count: number;
  embedding_model: string;
  sparse_embedding_model: string;
  endpoint: string;
  token: string;
  read_only_token: string;
  type: IndexType;
  region: string;
  creation_time: number;
  index_type: string;
}

export interface ServedVectorIndex extends VectorIndexRecord {
  throughput_vector: Point[];
}

/** A search index with the emulator-only figure that drives its throughput. */
export interface SearchIndexEntry {
  record: SearchIndexRecord;
  queriesPerMinute: number;
}

export interface VectorIndexEntry {
  record: VectorIndexRecord;
  traffic: VectorTraffic;
}

/** Drops keys whose value is undefined, so spreading an input never blanks a default. */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export interface Owner {
  email: string;
}

/** The region whose user keeps the seeds of the single-user emulator (ids unchanged since then). */
export const PRIMARY_REGION = 'eu-central-1';
/** Plan of a regional user the emulator does not serve a delivery API for. */
export const UNSERVED_REGION_PLAN: PlanProfile = 'free';

/** Bytes per second a plan may move (the record's max_bandwidth_per_second; no documented figures). */
const BANDWIDTH_PER_SECOND: Record<PlanProfile, number> = { free: 10_485_760, payg: 104_857_600, fixed: 524_288_000 };

function userSeed(email: string, region: string): string {
  return region === PRIMARY_REGION ? email : `${email}:${region}`;
}

/**
 * The token of a regional user when none is given: deterministic, so a region's client and the
 * record listing it agree on every start (a region's delivery token in a multi-region emulator).
 */
export function regionalUserToken(email: string, region: string): string {
  return deterministicSecret(email, `qstash-token:${email}:${region}`);
}

/** One regional QStash user; `token` is its region's delivery token. */
export function buildAccount(
  owner: Owner,
  plan: PlanProfile,
  createdMs: number,
  region: string,
  token: string,
): AccountRecord {
  const created = unixSeconds(createdMs);
  const seed = userSeed(owner.email, region);
  return {
    customer_id: owner.email,
    id: deterministicUuid(`account:${seed}`),
    password: deterministicSecret(owner.email, `account-password:${seed}`),
    token,
    read_only_token: deterministicSecret(owner.email, `qstash-read-only-token:${seed}`),
    active: true,
    state: 'active',
    last_plan_upgrade_time: created,
    ...ACCOUNT_LIMITS[plan],
    prod_pack_enabled: false,
    created_by: owner.email,
    creation_time: created,
    region,
    budget: 0,
    max_bandwidth_per_second: BANDWIDTH_PER_SECOND[plan],
    prometheus_enabled: 'false',
    modifying_state: '',
    deletion_time: 0,
  };
}

const SEARCH_REGION_SUFFIX: Record<string, string> = { 'eu-west-1': 'eu1', 'us-central1': 'us1' };
const VECTOR_REGION_SUFFIX: Record<string, string> = {
  'eu-west-1': 'eu1',
  'us-east-1': 'use1',
  'us-central1': 'us1',
};

const DEFAULT_SEARCH_QUERIES_PER_MINUTE = 5;

export function buildSearchIndex(
  owner: Owner,
  seed: string,
  input: NewSearchIndex & { name: string },
  createdMs: number,
): SearchIndexEntry {
  const type = input.type ?? 'payg';
  const region = input.region ?? 'us-central1';
  const { name, queries_per_minute, input_enrichment_enabled, type: _t, region: _r, ...limits } = input;
  return {
    record: {
      customer_id: owner.email,
      id: deterministicUuid(seed),
      name,
      endpoint: `${deterministicHostLabel(seed)}-${SEARCH_REGION_SUFFIX[region] ?? 'us1'}`,
      type,
      region,
      vercel_email: '',
      token: deterministicSecret(owner.email, `${seed}:token`),
      read_only_token: deterministicSecret(owner.email, `${seed}:read-only`),
      ...SEARCH_INDEX_LIMITS[type],
      ...definedOnly(limits),
      creation_time: unixSeconds(createdMs),
      input_enrichment_enabled: input_enrichment_enabled ?? false,
    },
    queriesPerMinute: queries_per_minute ?? DEFAULT_SEARCH_QUERIES_PER_MINUTE,
  };
}

export const DEFAULT_VECTOR_TRAFFIC: VectorTraffic = {
  queries_per_minute: 10,
  updates_per_minute: 4,
  reranks_per_minute: 0,
  bytes_per_query: 4_200,
  bytes_per_update: 4_400,
  bytes_per_vector: 4_300,
  initial_vectors: 0,
  query_latency_ms: 6,
  update_latency_ms: 9,
  embed_latency_ms: 0,
  rerank_latency_ms: 0,
};

export function buildVectorIndex(
  owner: Owner,
  seed: string,
  input: NewVectorIndex & { name: string },
  createdMs: number,
): VectorIndexEntry {
  const type = input.type ?? 'payg';
  const region = input.region ?? 'us-east-1';
  const {
    name,
    traffic,
    type: _t,
    region: _r,
    similarity_function,
    dimension_count,
    index_type,
    embedding_model,
    sparse_embedding_model,
    ...limits
  } = input;
  return {
    record: {
      customer_id: owner.email,
      id: deterministicUuid(seed),
      name,
      similarity_function: similarity_function ?? 'COSINE',
      dimension_count: dimension_count ?? 1_024,
      embedding_model: embedding_model ?? '',
      sparse_embedding_model: sparse_embedding_model ?? '',
      endpoint: `${deterministicHostLabel(seed)}-${VECTOR_REGION_SUFFIX[region] ?? 'use1'}-vector.upstash.io`,
      token: deterministicSecret(owner.email, `${seed}:token`),
      read_only_token: deterministicSecret(owner.email, `${seed}:read-only`),
      type,
      region,
      ...VECTOR_INDEX_LIMITS[type],
      ...definedOnly(limits),
      creation_time: unixSeconds(createdMs),
      index_type: index_type ?? 'DENSE',
    },
    traffic: { ...DEFAULT_VECTOR_TRAFFIC, ...definedOnly(traffic ?? {}) },
  };
}

/** Starting data, created this long before the emulator starts. */
export const ACCOUNT_AGE_MS = 400 * DAY_MS;

export interface InitialIndex<T> {
  input: T & { name: string };
  ageMs: number;
}

/** One pay-as-you-go index with `-1` limits and one free index close to its daily limits. */
export const INITIAL_SEARCH_INDEXES: InitialIndex<NewSearchIndex>[] = [
  {
    input: {
      name: 'docs-search',
      type: 'payg',
      region: 'us-central1',
      input_enrichment_enabled: true,
      queries_per_minute: 40,
    },
    ageMs: 120 * DAY_MS,
  },
  {
    input: { name: 'support-faq', type: 'free', region: 'eu-west-1', queries_per_minute: 2 },
    ageMs: 12 * DAY_MS,
  },
];

export const INITIAL_VECTOR_INDEXES: InitialIndex<NewVectorIndex>[] = [
  {
    input: {
      name: 'product-embeddings',
      type: 'payg',
      region: 'us-east-1',
      similarity_function: 'COSINE',
      dimension_count: 1_536,
      index_type: 'DENSE',
      traffic: {
        queries_per_minute: 120,
        updates_per_minute: 30,
        reranks_per_minute: 0,
        bytes_per_query: 6_400,
        bytes_per_update: 6_600,
        bytes_per_vector: 6_500,
        initial_vectors: 800_000,
        query_latency_ms: 4.2,
        update_latency_ms: 6.5,
        embed_latency_ms: 0,
        rerank_latency_ms: 0,
      },
    },
    ageMs: 90 * DAY_MS,
  },
  {
    // 3 queries a minute at diurnal factor 1 make 9,000 a day: close to the free 10,000.
    input: {
      name: 'kb-hybrid',
      type: 'free',
      region: 'eu-west-1',
      similarity_function: 'DOT_PRODUCT',
      dimension_count: 1_024,
      index_type: 'HYBRID',
      embedding_model: 'BGE_M3',
      sparse_embedding_model: 'BM25',
      traffic: {
        queries_per_minute: 3,
        updates_per_minute: 1,
        reranks_per_minute: 1,
        bytes_per_query: 4_300,
        bytes_per_update: 4_500,
        bytes_per_vector: 4_400,
        initial_vectors: 40_000,
        query_latency_ms: 9.5,
        update_latency_ms: 12,
        embed_latency_ms: 35,
        rerank_latency_ms: 80,
      },
    },
    ageMs: 30 * DAY_MS,
  },
];
