// Test-only routes, mounted by the app at /__emulator/management (no auth: loopback use).
// Bodies are validated strictly by the same schemas as the in-process API (inside ManagementState,
// hence the plain casts below).
import express, { Router } from 'express';
import { handle, jsonErrorHandler } from './http.js';
import type { AccountPatch, NewSearchIndex, NewVectorIndex } from './inputs.js';
import type { ManagementState } from './state.js';

export function adminRouter(state: ManagementState): Router {
  const router = Router();
  router.use(express.json({ limit: '100kb' }));

  router.get(
    '/state',
    handle((_req, res) => {
      res.json(state.snapshot());
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
      res.json('OK');
    }),
  );

  router.use(jsonErrorHandler);
  return router;
}
