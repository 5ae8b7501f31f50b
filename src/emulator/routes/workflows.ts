// GET /v2/workflows/logs: workflow runs newest first (by creation time), each with its steps,
// as the official SDK reads it ({cursor, runs}); count default and most 1000 (the OpenAPI's
// event-mode cap), fromDate/toDate inclusive on the run's creation time, state (a run or step
// state), workflowUrl, workflowRunId and workflowRuns=ID@TS,... (other filters then ignored).
// DELETE /v2/workflows/runs/{id}: cancels the run.
import { Router, type Request } from 'express';
import { EmulatorInputError } from '../errors.js';
import type { DeliveryService } from '../service.js';
import { RUN_STATES, STEP_STATES, toRunJson, type RunQuery } from '../workflows.js';

export const WORKFLOW_LOGS_MAX_COUNT = 1000;

function rawQuery(req: Request): URLSearchParams {
  const questionMark = req.originalUrl.indexOf('?');
  return new URLSearchParams(questionMark === -1 ? '' : req.originalUrl.slice(questionMark + 1));
}

function epochMs(field: string, text: string): number {
  if (!/^\d{1,16}$/.test(text.trim())) throw new EmulatorInputError(field, 'must be unix milliseconds');
  return Number(text.trim());
}

const KNOWN_STATES: readonly string[] = [...RUN_STATES, ...STEP_STATES];

export function parseRunQuery(params: URLSearchParams): RunQuery {
  const text = (name: string): string | undefined => {
    const value = params.get(name)?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  let count = WORKFLOW_LOGS_MAX_COUNT;
  const countText = text('count');
  if (countText !== undefined) {
    if (!/^\d{1,9}$/.test(countText) || Number(countText) < 1) throw new EmulatorInputError('count', 'must be a positive integer');
    count = Math.min(WORKFLOW_LOGS_MAX_COUNT, Number(countText));
  }
  const query: RunQuery = { count };
  const runs = text('workflowRuns');
  if (runs !== undefined) {
    query.runs = runs.split(',').map((pair) => {
      const at = pair.lastIndexOf('@');
      if (at <= 0) throw new EmulatorInputError('workflowRuns', 'expected ID@TIMESTAMP pairs separated by commas');
      return { id: pair.slice(0, at).trim(), createdAt: epochMs('workflowRuns', pair.slice(at + 1)) };
    });
  }
  const fromDate = text('fromDate');
  if (fromDate !== undefined) query.fromDate = epochMs('fromDate', fromDate);
  const toDate = text('toDate');
  if (toDate !== undefined) query.toDate = epochMs('toDate', toDate);
  const state = text('state')?.toUpperCase();
  if (state !== undefined) {
    if (!KNOWN_STATES.includes(state)) throw new EmulatorInputError('state', `unknown state "${state}"; use one of ${KNOWN_STATES.join(', ')}`);
    query.state = state;
  }
  const url = text('workflowUrl');
  if (url !== undefined) query.workflowUrl = url;
  const runId = text('workflowRunId');
  if (runId !== undefined) query.workflowRunId = runId;
  const cursor = text('cursor');
  if (cursor !== undefined) {
    const match = /^wr-(\d{1,15})$/.exec(cursor);
    if (!match) throw new EmulatorInputError('cursor', 'not a cursor returned by this service');
    query.beforeSeq = Number(match[1]);
  }
  return query;
}

export function workflowsRouter(service: DeliveryService): Router {
  const router = Router();
  router.get('/v2/workflows/logs', (req, res) => {
    const query = parseRunQuery(rawQuery(req));
    const page = service.workflows.page(query);
    const body: Record<string, unknown> = {};
    // Fault (knob repeatCursorNext): the service hands back the cursor it was given.
    if (query.beforeSeq !== undefined && service.takeOneShot('repeatCursorNext')) body.cursor = `wr-${query.beforeSeq}`;
    else if (page.nextBeforeSeq !== undefined) body.cursor = `wr-${page.nextBeforeSeq}`;
    body.runs = page.runs.map(toRunJson);
    res.json(body);
  });
  router.delete('/v2/workflows/runs/:id', (req, res) => {
    const canceled = service.workflows.cancel(String(req.params.id));
    if (canceled === 0) throw new EmulatorInputError('workflowRunId', 'no run in progress with this id');
    res.status(200).json({ canceled });
  });
  return router;
}
