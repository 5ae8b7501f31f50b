// Contract between the emulator app (src/emulator/app) and its management interface.
// The app mounts `router` at its root and `adminRouter` at /__emulator/management; `state` is
// the same data for in-process use (the app's EmulatorHandle may expose it).
import type { Router } from 'express';
import { adminRouter } from './admin.js';
import type { PlanProfile } from './plans.js';
import type { ManagementApiVersion, TrafficReader } from './qstash-users.js';
import type { ManagementResource } from './resource.js';
import { MANAGEMENT_RESOURCES } from './resources.js';
import { managementRouter } from './routes.js';
import { ManagementState, type ServedRegion } from './state.js';

export type { PlanProfile } from './plans.js';
export type { ManagementResource } from './resource.js';
export type { RedisSnapshot } from './redis/index.js';
export { PLAN_PROFILES } from './plans.js';
export { ManagementError, type ManagementErrorCode } from './errors.js';
export { ManagementState, type ManagementSnapshot, type ServedRegion } from './state.js';
export { regionalUserToken } from './records.js';
export {
  STATS_PERIODS,
  type AccountPatch,
  type NewSearchIndex,
  type NewVectorIndex,
  type StatsPeriod,
  type VectorTraffic,
} from './inputs.js';
export type { AccountRecord, Point, ServedSearchIndex, ServedVectorIndex } from './records.js';
export type { VectorStats, VectorStatsScalars } from './vector-stats.js';
export {
  MANAGEMENT_API_VERSIONS,
  type ManagementApiVersion,
  type QStashStatsRecord,
  type ServedAccount,
  type TrafficReader,
} from './qstash-users.js';

export interface ManagementOptions {
  /** Basic auth username (account email) and password (management API key). */
  email: string;
  apiKey: string;
  /** The delivery token, served as the account record's secret `token` field. */
  deliveryToken: string;
  plan: PlanProfile;
  /** Clock in epoch milliseconds; values that move with time are derived from it. */
  now: () => number;
  /** Service names under which the account record is served: /v2/<name>/user. */
  serviceNames: string[];
  /** What the delivery side billed: the primary user's official usage (without `regions`). */
  traffic?: TrafficReader;
  /** Which version of the API is served (the `managementApi` knob). */
  apiVersion?: () => ManagementApiVersion;
  /**
   * The regions whose delivery APIs are served, each with its token, plan and traffic; the first
   * is the primary user. Default: eu-central-1 with `deliveryToken`, `plan` and `traffic`.
   */
  regions?: ServedRegion[];
}

export interface Management {
  /** Management API routes, auth checked inside. Mounted at the root of the emulator app. */
  router: Router;
  /** Test-only routes (change plan, add/delete indexes), mounted at /__emulator/management. */
  adminRouter: Router;
  /** The same state the routes serve, to read and change in process. */
  state: ManagementState;
  /** The resources that live in a folder of their own (./resources.ts), by name. */
  resources: ReadonlyMap<string, ManagementResource>;
}

export function createManagement(options: ManagementOptions): Management {
  const state = new ManagementState(options);
  const resources = MANAGEMENT_RESOURCES.map((create) => create({ email: options.email, now: options.now }));
  return {
    router: managementRouter(state, options, resources),
    adminRouter: adminRouter(state, resources),
    state,
    resources: new Map(resources.map((resource) => [resource.name, resource])),
  };
}
