// The management API routes (interface §4.6–§4.8 and the real paths of service-behaviour §6):
// account record per service name, search indexes, vector indexes and their statistics.
import { Router } from 'express';
import { basicAuth } from './auth.js';
import { ManagementError } from './errors.js';
import { handle } from './http.js';
import { parsePeriod } from './inputs.js';
import type { ManagementState } from './state.js';

export interface ManagementRoutesOptions {
  email: string;
  apiKey: string;
  serviceNames: string[];
}

const SERVICE_NAME = /^[a-z0-9][a-z0-9_-]*$/i;

export function managementRouter(state: ManagementState, options: ManagementRoutesOptions): Router {
  const router = Router();
  const auth = basicAuth(options.email, options.apiKey);

  for (const name of options.serviceNames) {
    if (!SERVICE_NAME.test(name)) throw new Error(`invalid management service name: ${JSON.stringify(name)}`);
    // Legacy path of the spec's vintage, still served by the real API.
    router.get(`/v2/${name}/user`, auth, handle((_req, res) => {
      res.json(state.accountFor(name));
    }));
    // Current paths: one QStash "user" per region; the emulator has one.
    router.get(`/v2/${name}/users`, auth, handle((_req, res) => {
      res.json([state.accountFor(name)]);
    }));
    router.get(`/v2/${name}/user/:id`, auth, handle((req, res) => {
      const account = state.accountFor(name);
      if (req.params.id !== account.id) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'user not found');
      res.json(account);
    }));
  }

  router.get('/v2/search', auth, handle((_req, res) => {
    res.json(state.searchIndexes());
  }));
  router.get('/v2/search/:id', auth, handle((req, res) => {
    res.json(state.searchIndex(req.params.id as string));
  }));

  router.get('/v2/vector/index', auth, handle((_req, res) => {
    res.json(state.vectorIndexes());
  }));
  router.get('/v2/vector/index/:id', auth, handle((req, res) => {
    res.json(state.vectorIndex(req.params.id as string));
  }));
  router.get('/v2/vector/index/:id/stats', auth, handle((req, res) => {
    const period = parsePeriod(req.query.period);
    res.json(state.vectorStats(req.params.id as string, period));
  }));

  return router;
}
