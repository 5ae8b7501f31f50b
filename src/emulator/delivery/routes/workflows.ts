// Workflow runs newest first (by creation time), each with its steps ({cursor, runs}), at the two
// paths the evidence names (knob `workflowRunsPaths`; the other answers 404):
//   GET /v2/workflows/events?groupBy=workflowRunId  what the official workflow SDK's
//                                                   `client.logs()` calls (count default 10);
//   GET /v2/workflows/logs                          the OpenAPI's (count default 1000).
// Count at most 1000 (the OpenAPI's event-mode cap), fromDate/toDate inclusive on the run's
// creation time, state (a run or step state), workflowUrl, workflowRunId and
// workflowRuns=ID@TS,... (other filters then ignored). The events path without
// groupBy=workflowRunId (the OpenAPI's flat event mode) is not served: 400.
// DELETE /v2/workflows/runs/{id}: cancels the run.
import { Router, type Request, type RequestHandler } from 'express';
import { EmulatorInputError } from '../../errors.js';
import { sendError } from '../../http-util.js';
import type { DeliveryService } from '../service.js';
import { RUN_STATES, STEP_STATES, toRunJson, type RunQuery } from '../workflows.js';

export const WORKFLOW_LOGS_MAX_COUNT = 1000;
/** The workflow SDK's documented default of `client.logs()` (it sends no count unless given). */
export const WORKFLOW_EVENTS_DEFAULT_COUNT = 10;

function rawQuery(req: Request): URLSearchParams {
  const questionMark = req.originalUrl.indexOf('?');
  return new URLSearchParams(questionMark === -1 ? '' : req.originalUrl.slice(questionMark + 1));
}

function epochMs(field: string, text: string): number {
  if (!/^\d{1,16}$/.test(text.trim())) throw new EmulatorInputError(field, 'must be unix milliseconds');
  return Number(text.trim());
}

const KNOWN_STATES: readonly string[] = [...RUN_STATES, ...STEP_STATES];

export function parseRunQuery(params: URLSearchParams, defaultCount: number = WORKFLOW_LOGS_MAX_COUNT): RunQuery {
  const text = (name: string): string | undefined => {
    const value = params.get(name)?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  let count = defaultCount;
  const countText = text('count');
  if (countText !== undefined) {
    if (!/^\d{1,9}$/.test(countText) || Number(countText) < 1)
      throw new EmulatorInputError('count', 'must be a positive integer');
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
    if (!KNOWN_STATES.includes(state))
      throw new EmulatorInputError('state', `unknown state "${state}"; use one of ${KNOWN_STATES.join(', ')}`);
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
  const serve =
    (path: 'events' | 'logs'): RequestHandler =>
    (req, res) => {
      const paths = service.knobs.workflowRunsPaths;
      if (paths !== 'both' && paths !== path) {
        sendError(res, 404, `no route for ${req.method} ${req.path.slice(0, 200)}`);
        return;
      }
      const params = rawQuery(req);
      if (path === 'events' && params.get('groupBy')?.trim() !== 'workflowRunId') {
        throw new EmulatorInputError('groupBy', 'only groupBy=workflowRunId (runs with their steps) is served');
      }
      const query = parseRunQuery(params, path === 'events' ? WORKFLOW_EVENTS_DEFAULT_COUNT : WORKFLOW_LOGS_MAX_COUNT);
      const page = service.workflows.page(query);
      const body: Record<string, unknown> = {};
      // Fault (knob repeatCursorNext): the service hands back the cursor it was given.
      if (query.beforeSeq !== undefined && service.takeOneShot('repeatCursorNext'))
        body.cursor = `wr-${query.beforeSeq}`;
      else if (page.nextBeforeSeq !== undefined) body.cursor = `wr-${page.nextBeforeSeq}`;
      body.runs = page.runs.map(toRunJson);
      res.json(body);
    };
  router.get('/v2/workflows/events', serve('events'));
  router.get('/v2/workflows/logs', serve('logs'));
  router.delete('/v2/workflows/runs/:id', (req, res) => {
    const canceled = service.workflows.cancel(String(req.params.id));
    if (canceled === 0) throw new EmulatorInputError('workflowRunId', 'no run in progress with this id');
    res.status(200).json({ canceled });
  });
  return router;
}
