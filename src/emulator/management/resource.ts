// A resource of the management API (a product: Redis databases, ...) as one folder: its state,
// its routes, its test-only routes and its snapshot, registered once in ./resources.ts. The
// router and the admin router mount every registered resource; nothing else names it.
import type { RequestHandler, Router } from 'express';

export interface ManagementResourceContext {
  /** The account's email (owner of the fake secrets). */
  email: string;
  /** Clock in epoch milliseconds; values that move with time are derived from it. */
  now: () => number;
}

export interface ManagementResource {
  /** Its key in the admin /state answer and its admin path: /__emulator/management/<name>. */
  readonly name: string;
  /** Its routes of the management API; `auth` checks the Basic credentials. */
  mount(router: Router, auth: RequestHandler): void;
  /** Its test-only routes (no auth), under /__emulator/management/<name>. */
  mountAdmin(router: Router): void;
  /** What it serves right now, secrets included, for tests to compare an exporter with. */
  snapshot(): unknown;
  /** Back to the starting data. */
  reset(): void;
}

export type ManagementResourceFactory = (context: ManagementResourceContext) => ManagementResource;
