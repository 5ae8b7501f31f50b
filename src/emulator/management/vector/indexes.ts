// Vector indexes of the management API: their plans' limits, the strict schema of a new index
// (admin routes and in-process alike), the record as served, its builder and the emulator's
// starting indexes with the traffic that moves their figures (./traffic.ts). Search indexes carry
// the same limits (../search/indexes.ts reads IndexLimits and the limit inputs from here).
import { z } from 'zod';
import { deterministicHostLabel, deterministicSecret, deterministicUuid } from '../ids.js';
import { count, definedOnly, limit } from '../inputs.js';
import type { Point } from '../periods.js';
import type { Owner } from '../records.js';
import { DAY_MS, unixSeconds } from '../time-format.js';

// Limits of search and vector indexes by index plan. `-1` means unlimited, as the management
// API documents it for max_monthly_reranks, max_daily_updates, max_daily_queries and
// max_monthly_bandwidth (pay-as-you-go indexes serve exactly that).

export const INDEX_TYPES = ['free', 'payg', 'fixed'] as const;
export type IndexType = (typeof INDEX_TYPES)[number];

export const UNLIMITED = -1;

/** The `max_*` limits search and vector indexes both carry. */
export interface IndexLimits {
  max_vector_count: number;
  max_monthly_reranks: number;
  max_daily_updates: number;
  max_daily_queries: number;
  max_monthly_bandwidth: number;
  max_writes_per_second: number;
  max_query_per_second: number;
  max_reads_per_request: number;
  max_writes_per_request: number;
}

export interface VectorIndexLimits extends IndexLimits {
  max_total_metadata_size: number;
  reserved_price: number;
}

export const VECTOR_INDEX_LIMITS: Record<IndexType, VectorIndexLimits> = {
  free: {
    max_vector_count: 200_000,
    // No documented figure for vector indexes. Chosen so the starting free index (1 rerank a
    // minute at diurnal factor 1: at most 93,000 by the end of a 31-day month) stays under 80%
    // of it (where the quota alerts warn) all month: a healthy free index, as its other figures.
    max_monthly_reranks: 150_000,
    max_daily_updates: 10_000,
    max_daily_queries: 10_000,
    max_monthly_bandwidth: 53_687_091_200,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
    max_total_metadata_size: 10_737_418_240,
    reserved_price: 0,
  },
  // The documented get-index example (a paid index).
  payg: {
    max_vector_count: 400_000_000,
    max_monthly_reranks: UNLIMITED,
    max_daily_updates: UNLIMITED,
    max_daily_queries: UNLIMITED,
    max_monthly_bandwidth: UNLIMITED,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
    max_total_metadata_size: 53_687_091_200,
    reserved_price: 0,
  },
  fixed: {
    max_vector_count: 100_000_000,
    max_monthly_reranks: 1_000_000,
    max_daily_updates: 1_000_000,
    max_daily_queries: 1_000_000,
    max_monthly_bandwidth: UNLIMITED,
    max_writes_per_second: 1_000,
    max_query_per_second: 1_000,
    max_reads_per_request: 1_000,
    max_writes_per_request: 1_000,
    max_total_metadata_size: 53_687_091_200,
    reserved_price: 60,
  },
};

/** Price of a pay-as-you-go vector index: $0.4 per 100K requests. */
export const VECTOR_PAYG_PRICE_PER_REQUEST = 0.4 / 100_000;

export const VECTOR_REGIONS = ['eu-west-1', 'us-east-1', 'us-central1'] as const;
export const SIMILARITY_FUNCTIONS = ['COSINE', 'EUCLIDEAN', 'DOT_PRODUCT'] as const;
export const VECTOR_INDEX_KINDS = ['DENSE', 'SPARSE', 'HYBRID'] as const;

export const indexName = z.string().min(1).max(100);

/** The `max_*` limits search and vector indexes both take (IndexLimits above). */
export const indexLimitInputs = {
  max_vector_count: limit.optional(),
  max_monthly_reranks: limit.optional(),
  max_daily_updates: limit.optional(),
  max_daily_queries: limit.optional(),
  max_monthly_bandwidth: limit.optional(),
  max_writes_per_second: limit.optional(),
  max_query_per_second: limit.optional(),
  max_reads_per_request: limit.optional(),
  max_writes_per_request: limit.optional(),
};

/** The traffic an index sees; every figure is per minute at diurnal factor 1 (traffic.ts). */
export const vectorTrafficSchema = z.strictObject({
  queries_per_minute: count,
  updates_per_minute: count,
  reranks_per_minute: count,
  bytes_per_query: count,
  bytes_per_update: count,
  bytes_per_vector: count,
  /** Vectors present at creation; one more vector per 20 updates after that. */
  initial_vectors: count,
  query_latency_ms: z.number().min(0),
  update_latency_ms: z.number().min(0),
  /** 0 for indexes without an embedding model. */
  embed_latency_ms: z.number().min(0),
  /** 0 for indexes that see no reranks. */
  rerank_latency_ms: z.number().min(0),
});
export type VectorTraffic = z.infer<typeof vectorTrafficSchema>;

export const newVectorIndexSchema = z.strictObject({
  name: indexName.optional(),
  type: z.enum(INDEX_TYPES).optional(),
  region: z.enum(VECTOR_REGIONS).optional(),
  similarity_function: z.enum(SIMILARITY_FUNCTIONS).optional(),
  dimension_count: z.number().int().min(1).max(10_000).optional(),
  index_type: z.enum(VECTOR_INDEX_KINDS).optional(),
  embedding_model: z.string().optional(),
  sparse_embedding_model: z.string().optional(),
  traffic: vectorTrafficSchema.partial().optional(),
  ...indexLimitInputs,
  max_total_metadata_size: limit.optional(),
  reserved_price: z.number().min(0).optional(),
});
export type NewVectorIndex = z.infer<typeof newVectorIndexSchema>;

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

export interface VectorIndexEntry {
  record: VectorIndexRecord;
  traffic: VectorTraffic;
}

const VECTOR_REGION_SUFFIX: Record<string, string> = {
  'eu-west-1': 'eu1',
  'us-east-1': 'use1',
  'us-central1': 'us1',
};

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

/** One of the starting indexes: what builds it, and how long before the emulator's start it was created. */
export interface InitialIndex<T> {
  input: T & { name: string };
  ageMs: number;
}

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
    // A healthy free index all month: 2 queries a minute at diurnal factor 1 make 6,000 a day
    // (60% of the free 10,000), its reranks at most 62% of the free limit by a month's end.
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
        queries_per_minute: 2,
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
