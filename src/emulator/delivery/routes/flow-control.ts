// Flow control and global parallelism, as @upstash/qstash calls them: GET /v2/flowControl/{key},
// POST /v2/flowControl/{key}/pause|resume|pin|unpin|resetRate, GET /v2/globalParallelism; and
// GET /v2/flowControl, the list the docs show (`{flowControls: [{flowControlKey, waitListSize}]}`), which the
// knob `flowControlList: false` turns into a 404 (the SDK has no such call).
import { Router, type Request } from 'express';
import { EmulatorInputError, EmulatorNotFoundError } from '../../errors.js';
import type { DeliveryService } from '../service.js';

function positive(req: Request, name: string): number | undefined {
  const raw = req.query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1)
    throw new EmulatorInputError(name, 'must be a positive integer');
  return Number(raw);
}

function flag(req: Request, name: string): boolean {
  const raw = req.query[name];
  return raw === 'true' || raw === '1';
}

export function flowControlRouter(service: DeliveryService): Router {
  const router = Router();
  const store = service.flowControl;

  router.get('/v2/flowControl', (_req, res) => {
    if (!service.knobs.flowControlList) throw new EmulatorNotFoundError('no route for GET /v2/flowControl');
    res.json({
      flowControls: store.list().map((state) => ({ flowControlKey: state.key, waitListSize: state.waitListSize })),
    });
  });

  router.get('/v2/flowControl/:key', (req, res) => {
    res.json(store.json(store.require(String(req.params.key))));
  });

  router.post('/v2/flowControl/:key/:action', (req, res) => {
    const key = String(req.params.key);
    const state = store.require(key);
    switch (String(req.params.action)) {
      case 'pause':
        state.paused = true;
        break;
      case 'resume':
        state.paused = false;
        break;
      case 'pin': {
        const settings: { parallelism?: number; rate?: number; period?: number } = {};
        const parallelism = positive(req, 'parallelism');
        const rate = positive(req, 'rate');
        const period = positive(req, 'period');
        if (parallelism !== undefined) settings.parallelism = parallelism;
        if (rate !== undefined) settings.rate = rate;
        if (period !== undefined) settings.period = period;
        store.pin(key, settings);
        break;
      }
      case 'unpin':
        store.unpin(key, { parallelism: flag(req, 'parallelism'), rate: flag(req, 'rate') });
        break;
      case 'resetRate':
        store.resetRate(key);
        break;
      default:
        throw new EmulatorInputError('action', 'use pause, resume, pin, unpin or resetRate');
    }
    service.dispatcher.releaseFlow(key);
    res.status(200).end();
  });

  router.get('/v2/globalParallelism', (_req, res) => {
    res.json({ parallelismMax: service.dispatcher.concurrency, parallelismCount: service.dispatcher.inFlightCount });
  });

  return router;
}
