// Vector indexes of the management API: GET /v2/vector/index, GET /v2/vector/index/{id} (served by
// the real API, though no document lists them) and GET /v2/vector/index/{id}/stats?period=.
// Test-only routes under /__emulator/management/vector-indexes: add an index (POST /), delete one
// (DELETE /{id}); the same operations in process (./index-resource.ts). Its fields of GET /state:
// `vectorIndexes` and `vectorStats` (the scalar statistics by index id).
import type { ManagementResourceContext } from '../resource.js';
import { createIndexResource, type IndexResource } from './index-resource.js';
import {
  INITIAL_VECTOR_INDEXES,
  buildVectorIndex,
  newVectorIndexSchema,
  type NewVectorIndex,
  type ServedVectorIndex,
  type VectorIndexEntry,
} from './indexes.js';
import {
  throughputVector,
  vectorStats,
  vectorStatsScalars,
  type VectorStats,
  type VectorStatsScalars,
} from './stats.js';

export {
  INDEX_TYPES,
  UNLIMITED,
  VECTOR_INDEX_LIMITS,
  type IndexLimits,
  type IndexType,
  type NewVectorIndex,
  type ServedVectorIndex,
  type VectorIndexRecord,
  type VectorTraffic,
} from './indexes.js';
export type { VectorStats, VectorStatsScalars } from './stats.js';

export interface VectorSnapshot {
  vectorIndexes: ServedVectorIndex[];
  /** Scalar statistics per index id (the series are on the stats endpoint). */
  vectorStats: Record<string, VectorStatsScalars>;
}

export type VectorResource = IndexResource<
  NewVectorIndex,
  VectorIndexEntry,
  ServedVectorIndex,
  VectorStats,
  VectorSnapshot
>;

export function createVectorResource(context: ManagementResourceContext): VectorResource {
  return createIndexResource(
    {
      kind: 'vector',
      apiPath: '/v2/vector/index',
      adminPath: '/vector-indexes',
      schema: newVectorIndexSchema,
      initial: INITIAL_VECTOR_INDEXES,
      build: buildVectorIndex,
      idOf: (entry) => entry.record.id,
      serve: ({ record, traffic }, nowMs) => ({
        ...record,
        throughput_vector: throughputVector(traffic.queries_per_minute, record.creation_time * 1000, nowMs),
      }),
      stats: ({ record, traffic }, nowMs, period) => vectorStats(record, traffic, nowMs, period),
    },
    context,
    (indexes, nowMs) => ({
      vectorIndexes: indexes.list(),
      vectorStats: Object.fromEntries(
        indexes.entries().map(({ record, traffic }) => [record.id, vectorStatsScalars(record, traffic, nowMs)]),
      ),
    }),
  );
}
