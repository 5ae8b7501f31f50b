// A resource of the management API (a product: search indexes, vector indexes, Redis databases)
// as one folder: its state, its routes, its test-only routes and its snapshot, registered once in
// ./resources.ts. The router, the admin router, GET /state and POST /reset go through that list;
// nothing else names a resource.
import type { RequestHandler, Router } from 'express';

export interface ManagementResourceContext {
  /** The account's email (owner of the fake secrets). */
  email: string;
  /** Clock in epoch milliseconds; values that move with time are derived from it. */
  now: () => number;
}

export interface ManagementResource<Snapshot extends object = object> {
  /** Where its test-only routes are mounted, under /__emulator/management (e.g. `/redis`). */
  readonly adminPath: string;
  /** Its routes of the management API; `auth` checks the Basic credentials. */
  mount(router: Router, auth: RequestHandler): void;
  /** Its test-only routes (no auth), mounted at `adminPath`. */
  mountAdmin(router: Router): void;
  /**
   * Its fields of the admin GET /state answer: what it serves right now, secrets included, for
   * tests to compare an exporter with.
   */
  snapshot(): Snapshot;
  /** Back to the starting data. */
  reset(): void;
}

export type ManagementResourceFactory = (context: ManagementResourceContext) => ManagementResource;
