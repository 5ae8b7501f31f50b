// Usage of a search index (GET /v2/search/{id}/stats): the real API answers in the vector stats
// shape, so the emulator serves the vector model (../vector/stats.ts) over a search index's traffic:
// its query rate, a tenth of it as updates (none under 5 queries a minute: a quiet index, such as
// the free FAQ, keeps its documents and stays under its document limit), documents of 2 KB.
import type { VectorIndexRecord, VectorTraffic } from '../vector/indexes.js';
import type { SearchIndexEntry, SearchIndexRecord } from './indexes.js';

const BYTES_PER_DOCUMENT = 2_048;

export function searchTraffic(entry: SearchIndexEntry): VectorTraffic {
  const queries = entry.queriesPerMinute;
  return {
    queries_per_minute: queries,
    updates_per_minute: Math.round(queries / 10),
    reranks_per_minute: entry.record.input_enrichment_enabled ? Math.max(1, Math.round(queries / 20)) : 0,
    bytes_per_query: 1_200,
    bytes_per_update: BYTES_PER_DOCUMENT,
    bytes_per_vector: BYTES_PER_DOCUMENT,
    initial_vectors: 5_000,
    query_latency_ms: 18,
    update_latency_ms: 25,
    embed_latency_ms: 30,
    rerank_latency_ms: entry.record.input_enrichment_enabled ? 60 : 0,
  };
}

/** The fields the vector model reads (creation time, plan, limits), from a search index record. */
export function searchAsVectorRecord(record: SearchIndexRecord): VectorIndexRecord {
  return {
    ...record,
    similarity_function: 'COSINE',
    dimension_count: 1_024,
    embedding_model: '',
    sparse_embedding_model: '',
    index_type: 'HYBRID',
    max_total_metadata_size: -1,
    reserved_price: record.type === 'fixed' ? 60 : 0,
  };
}
