// URL Groups, under the API's name "topics": POST/DELETE /v2/topics/{name}/endpoints,
// GET /v2/topics, GET/DELETE /v2/topics/{name}.
import { Router } from 'express';
import { z } from 'zod';
import { parseHttpUrl, parseName } from '../destination.js';
import { readJsonInput } from '../../http-util.js';
import type { DeliveryService } from '../service.js';
import { urlGroupJson } from '../url-groups.js';

const addSchema = z.object({
  endpoints: z.array(z.object({ name: z.string().min(1).max(200).optional(), url: z.string() })).min(1),
});
const removeSchema = z.object({
  endpoints: z
    .array(
      z
        .object({ name: z.string().optional(), url: z.string().optional() })
        .refine((item) => item.name !== undefined || item.url !== undefined, 'needs name or url'),
    )
    .min(1),
});

export function topicsRouter(service: DeliveryService): Router {
  const router = Router();
  const limit = service.options.maxBodyBytes;

  router.post('/v2/topics/:name/endpoints', async (req, res) => {
    const name = parseName('urlGroupName', String(req.params.name));
    const body = await readJsonInput(req, res, limit, addSchema);
    const endpoints = body.endpoints.map((endpoint, index) => ({
      ...(endpoint.name !== undefined ? { name: endpoint.name } : {}),
      url: parseHttpUrl(`endpoints[${index}].url`, endpoint.url),
    }));
    service.groups.addEndpoints(name, endpoints);
    res.status(200).end();
  });

  router.delete('/v2/topics/:name/endpoints', async (req, res) => {
    const name = parseName('urlGroupName', String(req.params.name));
    const body = await readJsonInput(req, res, limit, removeSchema);
    service.groups.removeEndpoints(name, body.endpoints);
    res.status(200).end();
  });

  router.get('/v2/topics', (_req, res) => {
    res.json(service.groups.list().map(urlGroupJson));
  });

  router.get('/v2/topics/:name', (req, res) => {
    res.json(urlGroupJson(service.groups.require(parseName('urlGroupName', String(req.params.name)))));
  });

  router.delete('/v2/topics/:name', (req, res) => {
    service.groups.delete(parseName('urlGroupName', String(req.params.name)));
    res.status(200).end();
  });

  return router;
}
