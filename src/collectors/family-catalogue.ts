// The families of every collector, by collector, and docs/metrics.md's generated tables. The
// catalogue is complete by type (a collector without its families does not compile), so
// docs/metrics.md's tables (src/metrics-doc.ts, `npm run docs:metrics`) and the tests' lists of
// families follow a new collector's declaration without being edited. It imports the
// collectors' families modules, so only the docs generator and the tests read it (the exporter
// loads a collector's module only when the collector is enabled).

import type { CollectorName } from './collector.js';
import { familyRows, type FamilyRow } from './families.js';
import { SELF_FAMILIES } from '../metrics/self-families.js';
import { ACCOUNT_FAMILY_ROWS } from './account.js';
import { DLQ_FAMILY_ROWS } from './dlq.js';
import { FLOW_CONTROL_FAMILY_ROWS } from './flow-control.js';
import { LOGS_FAMILIES, LOGS_WALK_FAMILIES } from './logs/families.js';
import { QUEUE_FAMILY_ROWS } from './queues.js';
import { SCHEDULE_FAMILY_ROWS } from './schedules.js';
import { SEARCH_FAMILY_ROWS } from './search.js';
import { URL_GROUP_FAMILY_ROWS } from './url-groups.js';
import { USAGE_FAMILY_ROWS } from './usage.js';
import { VECTOR_FAMILY_ROWS } from './vector.js';
import { WORKFLOW_FAMILIES } from './workflows/families.js';
import { REDIS_FAMILY_ROWS } from './redis/families.js';

/** The logs walk's own families: documented with the exporter's (upstash_exporter_log_*). */
const LOGS_WALK_ROWS = familyRows(LOGS_WALK_FAMILIES);

/** Every family each collector registers, in the order of docs/metrics.md. */
export const FAMILY_CATALOGUE = {
  logs: [...familyRows(LOGS_FAMILIES), ...LOGS_WALK_ROWS],
  workflows: familyRows(WORKFLOW_FAMILIES),
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
} as const satisfies Record<CollectorName, readonly FamilyRow[]>;

/** The exporter's own families (SelfMetrics). */
export const SELF_FAMILY_ROWS: readonly FamilyRow[] = familyRows(SELF_FAMILIES);

/**
 * docs/metrics.md's generated tables by block name (`<!-- families: <name> -->`): one per
 * collector, the logs walk's own families apart (under "The exporter itself"), and the self
 * metrics. Each family is in exactly one table.
 */
export const FAMILY_TABLES: Readonly<Record<string, readonly FamilyRow[]>> = {
  ...FAMILY_CATALOGUE,
  logs: familyRows(LOGS_FAMILIES),
  logs_walk: LOGS_WALK_ROWS,
  self: SELF_FAMILY_ROWS,
};

/** Every family the exporter's collectors and self metrics declare (not the probe's and remediation's). */
export const ALL_FAMILIES: readonly FamilyRow[] = Object.values(FAMILY_TABLES).flat();
