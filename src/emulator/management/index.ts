// Contract between the emulator app (src/emulator/app) and its management interface.
// The management engineer fills this in; the app only relies on the signature below.
import { Router } from 'express';

export type PlanProfile = 'free' | 'payg' | 'fixed';

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
}

export interface Management {
  /** Management API routes, auth checked inside. Mounted at the root of the emulator app. */
  router: Router;
  /** Test-only routes (change plan, add/delete indexes), mounted at /__emulator/management. */
  adminRouter: Router;
}

export function createManagement(_options: ManagementOptions): Management {
  return { router: Router(), adminRouter: Router() };
}
