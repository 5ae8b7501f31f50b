// Test-only routes, mounted by the app at /__emulator/management (no auth: loopback use).
// Bodies are validated strictly by the same schemas as the in-process API (inside ManagementState,
// hence the plain casts below).
import express, { Router } from 'express';
import { handle, jsonErrorHandler } from './http.js';
import type { AccountPatch, NewSearchIndex, NewVectorIndex } from './inputs.js';
import type { ManagementResource } from './resource.js';
import type { ManagementState } from './state.js';

export function adminRouter(state: ManagementState, resources: readonly ManagementResource[] = []): Router {
  const router = Router();
  for (const resource of resources) {
    const own = Router();
    resource.mountAdmin(own);
    router.use(`/${resource.name}`, own);
  }
  router.use(express.json({ limit: '100kb' }));

  router.get(
    '/state',
    handle((_req, res) => {
      res.json({
        ...state.snapshot(),
        ...Object.fromEntries(resources.map((resource) => [resource.name, resource.snapshot()])),
      });
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
    '/search-indexes',
    handle((req, res) => {
      res.status(201).json(state.addSearchIndex(req.body as NewSearchIndex));
    }),
  );
  router.delete(
    '/search-indexes/:id',
    handle((req, res) => {
      state.deleteSearchIndex(req.params.id as string);
      res.json('OK');
    }),
  );
  router.post(
    '/vector-indexes',
    handle((req, res) => {
      res.status(201).json(state.addVectorIndex(req.body as NewVectorIndex));
    }),
  );
  router.delete(
    '/vector-indexes/:id',
    handle((req, res) => {
      state.deleteVectorIndex(req.params.id as string);
      res.json('OK');
    }),
  );
  router.post(
    '/reset',
    handle((_req, res) => {
      state.reset();
      for (const resource of resources) resource.reset();
      res.json('OK');
    }),
  );

  router.use(jsonErrorHandler);
  return router;
}
