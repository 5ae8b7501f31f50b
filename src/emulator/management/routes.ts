// The management API routes (the documented paths and the real ones, see ./README.md): the
// account's records and usage per service name here, then every resource's own routes.
import { Router } from 'express';
import { basicAuth } from './auth.js';
import { ManagementError } from './errors.js';
import { handle } from './http.js';
import { parsePeriod } from './periods.js';
import type { ManagementResource } from './resource.js';
import type { ManagementState } from './state.js';

export interface ManagementRoutesOptions {
  email: string;
  apiKey: string;
  serviceNames: string[];
}

const SERVICE_NAME = /^[a-z0-9][a-z0-9_-]*$/i;

export function managementRouter(
  state: ManagementState,
  options: ManagementRoutesOptions,
  resources: readonly ManagementResource[] = [],
): Router {
  const router = Router();
  const auth = basicAuth(options.email, options.apiKey);
  for (const resource of resources) resource.mount(router, auth);

  for (const name of options.serviceNames) {
    if (!SERVICE_NAME.test(name)) throw new Error(`invalid management service name: ${JSON.stringify(name)}`);
    // Legacy paths of the spec's API version, still served by the real API: the primary user.
    router.get(
      `/v2/${name}/user`,
      auth,
      handle((_req, res) => {
        res.json(state.accountFor(name));
      }),
    );
    router.get(
      `/v2/${name}/stats`,
      auth,
      handle((req, res) => {
        res.json(state.qstashStats(undefined, parsePeriod(req.query.period)));
      }),
    );
    // Current paths (2026-03+): one QStash user per region; 404 on the legacy API version.
    const current = (): void => {
      if (state.apiVersion() === 'legacy') throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'not found');
    };
    router.get(
      `/v2/${name}/users`,
      auth,
      handle((_req, res) => {
        current();
        res.json(state.usersFor(name));
      }),
    );
    router.get(
      `/v2/${name}/user/:id`,
      auth,
      handle((req, res) => {
        current();
        res.json(state.userFor(name, req.params.id as string));
      }),
    );
    router.get(
      `/v2/${name}/stats/:id`,
      auth,
      handle((req, res) => {
        current();
        res.json(state.qstashStats(req.params.id as string, parsePeriod(req.query.period)));
      }),
    );
  }

  return router;
}
