// Queues: POST /v2/queues (upsert `{queueName, parallelism, paused}`), GET /v2/queues,
// GET/DELETE /v2/queues/{name}, POST /v2/queues/{name}/pause|resume.
import { Router } from 'express';
import { z } from 'zod';
import { parseName } from '../destination.js';
import { EmulatorInputError } from '../../errors.js';
import { readJsonInput } from '../../http-util.js';
import { queueJson } from '../queues.js';
import type { DeliveryService } from '../service.js';

const upsertSchema = z.object({
  queueName: z.string(),
  parallelism: z.number().int().min(1).max(1000).optional(),
  paused: z.boolean().optional(),
});

export function queuesRouter(service: DeliveryService): Router {
  const router = Router();

  router.post('/v2/queues', async (req, res) => {
    const body = await readJsonInput(req, res, service.options.maxBodyBytes, upsertSchema);
    const name = parseName('queueName', body.queueName);
    service.queues.upsert(name, { parallelism: body.parallelism, paused: body.paused });
    service.dispatcher.releaseQueue(name);
    res.status(200).end();
  });

  router.get('/v2/queues', (_req, res) => {
    res.json(service.queues.list().map(queueJson));
  });

  router.get('/v2/queues/:name', (req, res) => {
    res.json(queueJson(service.queues.require(parseName('queueName', String(req.params.name)))));
  });

  router.delete('/v2/queues/:name', (req, res) => {
    const name = parseName('queueName', String(req.params.name));
    service.queues.delete(name);
    // Messages the queue held go on without it.
    service.dispatcher.releaseQueue(name);
    res.status(200).end();
  });

  router.post('/v2/queues/:name/:action', (req, res) => {
    const name = parseName('queueName', String(req.params.name));
    const action = String(req.params.action);
    if (action !== 'pause' && action !== 'resume') throw new EmulatorInputError('action', 'use pause or resume');
    service.queues.require(name).paused = action === 'pause';
    if (action === 'resume') service.dispatcher.releaseQueue(name);
    res.status(200).end();
  });

  return router;
}
