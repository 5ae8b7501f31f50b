// The reserved admin path /__emulator/ (no auth: the emulator is a loopback test tool):
// GET|PATCH /__emulator/knobs, GET /__emulator/ground-truth, GET /__emulator/workflows/ground-truth,
// POST /__emulator/reset.
import { Router } from 'express';
import { readJsonBody } from '../../http-util.js';
import type { DeliveryService } from '../service.js';

export const ADMIN_PREFIX = '/__emulator';

export function adminRouter(service: DeliveryService): Router {
  const router = Router();

  router.get('/knobs', (_req, res) => {
    res.json(service.knobs);
  });

  router.patch('/knobs', async (req, res) => {
    const patch = await readJsonBody(req, res, 64 * 1024);
    res.json(service.setKnobs(patch));
  });

  router.get('/ground-truth', (_req, res) => {
    res.json(service.groundTruth());
  });

  router.get('/workflows/ground-truth', (_req, res) => {
    res.json(service.workflows.groundTruth());
  });

  router.post('/reset', (_req, res) => {
    service.reset();
    res.json({ reset: true });
  });

  return router;
}
