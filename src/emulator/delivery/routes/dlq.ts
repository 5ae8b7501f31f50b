// The dead-letter queue: GET /v2/dlq (pages of at most 100, oldest first, `cursor` and `count`,
// filters queueName, topicName, url, label), DELETE /v2/dlq/{dlqId}, and DELETE /v2/dlq with
// repeated `dlqIds`, or a filter / nothing (all) with `count` and `cursor`, as the SDK sends them.
import { Router, type Request } from 'express';
import { DLQ_MAX_PAGE_SIZE, dlqJson, type DlqFilter } from '../dlq.js';
import { EmulatorInputError } from '../../errors.js';
import type { DeliveryService } from '../service.js';

const DLQ_ID = /^\d+-\d+$/;

function single(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new EmulatorInputError(name, 'give it once');
  return value;
}

function cursorOf(req: Request): string | undefined {
  const cursor = single(req, 'cursor');
  if (cursor === undefined || cursor === '') return undefined;
  if (!DLQ_ID.test(cursor)) throw new EmulatorInputError('cursor', 'not a cursor of this DLQ');
  return cursor;
}

function countOf(req: Request): number {
  const raw = single(req, 'count');
  if (raw === undefined) return DLQ_MAX_PAGE_SIZE;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new EmulatorInputError('count', 'must be a positive integer');
  return Math.min(DLQ_MAX_PAGE_SIZE, Number(raw));
}

function filterOf(req: Request): DlqFilter {
  const filter: DlqFilter = {};
  for (const name of ['queueName', 'topicName', 'url', 'label'] as const) {
    const value = single(req, name);
    if (value !== undefined && value !== '') filter[name] = value;
  }
  return filter;
}

export function dlqRouter(service: DeliveryService): Router {
  const router = Router();

  router.get('/v2/dlq', (req, res) => {
    const page = service.dlq.page(cursorOf(req), countOf(req), filterOf(req));
    res.json({ messages: page.entries.map(dlqJson), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  });

  router.delete('/v2/dlq/:dlqId', (req, res) => {
    service.dlq.delete(String(req.params.dlqId));
    res.status(200).end();
  });

  router.delete('/v2/dlq', (req, res) => {
    const raw = req.query.dlqIds;
    if (raw !== undefined) {
      const ids = (Array.isArray(raw) ? raw : [raw]).map(String);
      let deleted = 0;
      for (const id of ids) {
        if (service.dlq.has(id)) {
          service.dlq.delete(id);
          deleted++;
        }
      }
      res.json({ deleted });
      return;
    }
    const page = service.dlq.page(cursorOf(req), countOf(req), filterOf(req));
    for (const entry of page.entries) service.dlq.delete(entry.dlqId);
    res.json({ deleted: page.entries.length, ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  });

  return router;
}
