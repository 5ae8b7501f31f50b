// Signing keys: GET /v2/keys answers `{current, next}`; POST /v2/keys/rotate makes next the
// current key, generates a fresh next and answers the new pair (the service's API).
import { Router } from 'express';
import type { DeliveryService } from '../service.js';

export function keysRouter(service: DeliveryService): Router {
  const router = Router();
  router.get('/v2/keys', (_req, res) => {
    res.json(service.signingKeys.get());
  });
  router.post('/v2/keys/rotate', (_req, res) => {
    res.json(service.signingKeys.rotate());
  });
  return router;
}
