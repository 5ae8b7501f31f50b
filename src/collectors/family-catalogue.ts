// The families of every collector that declares them as data, by collector, in the order of
// docs/metrics.md. docs/metrics.md's tables are written from this list (families-doc.ts,
// `npm run docs:metrics`), and the tests check the served families against it. It imports the
// collectors' modules, so only the docs generator and the tests read it (the exporter loads a
// collector's module only when the collector is enabled).

import type { CollectorName } from './collector.js';
import type { FamilyRow } from './families.js';
import { ACCOUNT_FAMILY_ROWS } from './account.js';
import { DLQ_FAMILY_ROWS } from './dlq.js';
import { FLOW_CONTROL_FAMILY_ROWS } from './flow-control.js';
import { QUEUE_FAMILY_ROWS } from './queues.js';
import { SCHEDULE_FAMILY_ROWS } from './schedules.js';
import { SEARCH_FAMILY_ROWS } from './search.js';
import { URL_GROUP_FAMILY_ROWS } from './url-groups.js';
import { USAGE_FAMILY_ROWS } from './usage.js';
import { VECTOR_FAMILY_ROWS } from './vector.js';
import { REDIS_FAMILY_ROWS } from './redis/families.js';

export const FAMILY_CATALOGUE: Partial<Record<CollectorName, readonly FamilyRow[]>> = {
  schedules: SCHEDULE_FAMILY_ROWS,
  queues: QUEUE_FAMILY_ROWS,
  url_groups: URL_GROUP_FAMILY_ROWS,
  dlq: DLQ_FAMILY_ROWS,
  flow_control: FLOW_CONTROL_FAMILY_ROWS,
  account: ACCOUNT_FAMILY_ROWS,
  search: SEARCH_FAMILY_ROWS,
  usage: USAGE_FAMILY_ROWS,
  vector: VECTOR_FAMILY_ROWS,
  redis: REDIS_FAMILY_ROWS,
};
