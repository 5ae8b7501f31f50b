// Contract between the emulator app (src/emulator/app) and its management interface.
// The app mounts `router` at its root and `adminRouter` at /__emulator/management; `state` (the
// account) and `resources` (the products, ./resources.ts) are the same data for in-process use
// (the app's EmulatorHandle exposes them).
import type { Router } from 'express';
import { adminRouter, resetAll, stateSnapshot } from './admin.js';
import type { PlanProfile } from './plans.js';
import type { ManagementApiVersion, TrafficReader } from './qstash-users.js';
import { createResources, type ManagementResources, type ResourceSnapshots } from './resources.js';
import { managementRouter } from './routes.js';
import { ManagementState, type AccountSnapshot, type ServedRegion } from './state.js';

export type { PlanProfile } from './plans.js';
export type { ManagementResource } from './resource.js';
export type { ManagementResources } from './resources.js';
export type { RedisSnapshot } from './redis/index.js';
export type { SearchResource, ServedSearchIndex } from './search/index.js';
export type { VectorResource, ServedVectorIndex, VectorStats, VectorStatsScalars } from './vector/index.js';
export type { NewSearchIndex } from './search/index.js';
export type { NewVectorIndex, VectorTraffic } from './vector/index.js';
export { PLAN_PROFILES } from './plans.js';
export { ManagementError, type ManagementErrorCode } from './errors.js';
export { ManagementState, type AccountSnapshot, type ServedRegion } from './state.js';
export { regionalUserToken, type AccountRecord } from './records.js';
export { STATS_PERIODS, type Point, type StatsPeriod } from './periods.js';
export type { AccountPatch } from './inputs.js';
export {
  MANAGEMENT_API_VERSIONS,
  type ManagementApiVersion,
  type QStashStatsRecord,
  type ServedAccount,
  type TrafficReader,
} from './qstash-users.js';

/** Everything the management API would serve right now (GET /state), for tests to compare an exporter with. */
export type ManagementSnapshot = AccountSnapshot & ResourceSnapshots;

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
  /** Test-only routes (change plan, add/delete indexes and databases), mounted at /__emulator/management. */
  adminRouter: Router;
  /** The account the routes serve (its regional users, plans and usage), to read and change in process. */
  state: ManagementState;
  /** The products (search, vector, Redis), each a resource of its own (./resources.ts), by name. */
  resources: ManagementResources;
  /** What GET /state answers. */
  snapshot(): ManagementSnapshot;
  /** Back to the starting data, as POST /reset. */
  reset(): void;
}

export function createManagement(options: ManagementOptions): Management {
  const state = new ManagementState(options);
  const resources = createResources({ email: options.email, now: options.now });
  const list = Object.values(resources);
  return {
    router: managementRouter(state, options, list),
    adminRouter: adminRouter(state, list),
    state,
    resources,
    snapshot: () => stateSnapshot(state, list) as ManagementSnapshot,
    reset: () => resetAll(state, list),
  };
}
