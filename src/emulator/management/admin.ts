// Test-only routes, mounted by the app at /__emulator/management (no auth: loopback use): the
// account's here, each resource's at its own path. Bodies are validated strictly by the same
// schemas as the in-process API (inside ManagementState, hence the plain cast below).
import express, { Router } from 'express';
import { handle, jsonErrorHandler } from './http.js';
import type { AccountPatch } from './inputs.js';
import type { ManagementResource } from './resource.js';
import type { ManagementState } from './state.js';

/** What GET /state answers: the account's snapshot and every resource's fields. */
export function stateSnapshot(state: ManagementState, resources: readonly ManagementResource[]): object {
  return resources.reduce<object>((all, resource) => ({ ...all, ...resource.snapshot() }), state.snapshot());
}

/** Back to the starting data: the account and every resource. */
export function resetAll(state: ManagementState, resources: readonly ManagementResource[]): void {
  state.reset();
  for (const resource of resources) resource.reset();
}

export function adminRouter(state: ManagementState, resources: readonly ManagementResource[] = []): Router {
  const router = Router();
  for (const resource of resources) {
    const own = Router();
    resource.mountAdmin(own);
    router.use(resource.adminPath, own);
  }
  router.use(express.json({ limit: '100kb' }));

  router.get(
    '/state',
    handle((_req, res) => {
      res.json(stateSnapshot(state, resources));
    }),
  );
  router.patch(
    '/account',
    handle((req, res) => {
      // ?region=us-east-1 changes that region's user; the primary one without.
      const region = typeof req.query.region === 'string' ? req.query.region : undefined;
      res.json(state.patchAccount(req.body as AccountPatch, region));
    }),
  );
  router.post(
    '/reset',
    handle((_req, res) => {
      resetAll(state, resources);
      res.json('OK');
    }),
  );

  router.use(jsonErrorHandler);
  return router;
}
