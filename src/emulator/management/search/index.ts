// Search indexes of the management API: GET /v2/search, GET /v2/search/{id} and
// GET /v2/search/{id}/stats?period= (the vector statistics' shape, ./stats.ts). Test-only routes
// under /__emulator/management/search-indexes: add an index (POST /), delete one (DELETE /{id});
// the same operations in process (../vector/index-resource.ts). Its field of GET /state:
// `searchIndexes`.
import type { ManagementResourceContext } from '../resource.js';
import { createIndexResource, type IndexResource } from '../vector/index-resource.js';
import { throughputVector, vectorStats, type VectorStats } from '../vector/stats.js';
import {
  INITIAL_SEARCH_INDEXES,
  buildSearchIndex,
  newSearchIndexSchema,
  type NewSearchIndex,
  type SearchIndexEntry,
  type ServedSearchIndex,
} from './indexes.js';
import { searchAsVectorRecord, searchTraffic } from './stats.js';

export { SEARCH_INDEX_LIMITS, type NewSearchIndex, type SearchIndexRecord, type ServedSearchIndex } from './indexes.js';

export interface SearchSnapshot {
  searchIndexes: ServedSearchIndex[];
}

export type SearchResource = IndexResource<
  NewSearchIndex,
  SearchIndexEntry,
  ServedSearchIndex,
  VectorStats,
  SearchSnapshot
>;

export function createSearchResource(context: ManagementResourceContext): SearchResource {
  return createIndexResource(
    {
      kind: 'search',
      apiPath: '/v2/search',
      adminPath: '/search-indexes',
      schema: newSearchIndexSchema,
      initial: INITIAL_SEARCH_INDEXES,
      build: buildSearchIndex,
      idOf: (entry) => entry.record.id,
      serve: ({ record, queriesPerMinute }, nowMs) => ({
        ...record,
        throughput_vector: throughputVector(queriesPerMinute, record.creation_time * 1000, nowMs),
      }),
      // Usage of an index: the vector stats shape, from its query rate (./stats.ts).
      stats: (entry, nowMs, period) =>
        vectorStats(searchAsVectorRecord(entry.record), searchTraffic(entry), nowMs, period),
    },
    context,
    (indexes) => ({ searchIndexes: indexes.list() }),
  );
}
