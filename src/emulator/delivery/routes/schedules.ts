// /v2/schedules: GET list, GET one, DELETE, pause and resume (PATCH and POST by default, knob `scheduleVerbs`; idempotent), and
// POST /v2/schedules/{destination} to create or replace (Upstash-Cron, Upstash-Schedule-Id).
// The remainder of the path is read raw: a destination URL contains slashes of its own.
import type { Request, RequestHandler, Response } from 'express';
import { CronError, CronSchedule } from '../cron.js';
import { parseDestination, parseName, splitRawTarget } from '../destination.js';
import { EmulatorInputError, EmulatorNotFoundError } from '../../errors.js';
import { callerIpOf, readRawBody, sendError } from '../../http-util.js';
import { parseMessageSpec, RequestHeaders } from '../message-options.js';
import { makeId } from '../../random.js';
import { scheduleJson } from '../schedules.js';
import type { DeliveryService } from '../service.js';

const PREFIX = '/v2/schedules';

function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new EmulatorInputError('scheduleId', 'bad percent-encoding');
  }
}

async function createSchedule(service: DeliveryService, req: Request, res: Response): Promise<void> {
  const prefix = service.options.headerPrefix;
  const target = splitRawTarget(req.originalUrl, `${PREFIX}/`, prefix);
  const destination = parseDestination(target.destination);
  const body = await readRawBody(req, res, service.options.maxBodyBytes);
  const headers = new RequestHeaders(req.rawHeaders, target.queryConfig);
  const cronField = `${prefix}Cron`;
  const cronText = headers.get(cronField)?.trim();
  if (!cronText) throw new EmulatorInputError(cronField, 'is required');
  let cron: CronSchedule;
  try {
    cron = CronSchedule.parse(cronText);
  } catch (error) {
    throw new EmulatorInputError(cronField, error instanceof CronError ? error.message : 'invalid cron expression');
  }
  try {
    const spec = parseMessageSpec(
      {
        prefix,
        defaultRetries: service.plan.retries,
        planTimeoutMs: service.plan.timeoutMs,
        nowMs: service.clock.now(),
      },
      headers,
    );
    const idField = `${prefix}Schedule-Id`;
    const givenId = headers.get(idField)?.trim();
    const scheduleId = givenId ? parseName(idField, givenId) : makeId('scd');
    const queueField = `${prefix}Queue-Name`;
    const queueText = headers.get(queueField)?.trim();
    const queueName = queueText ? parseName(queueField, queueText) : undefined;
    if (destination.kind === 'group') service.groups.require(destination.name);
    service.schedules.upsert({
      scheduleId,
      cron,
      destination,
      destinationText: target.destination,
      spec,
      body,
      queueName,
      callerIP: callerIpOf(req),
      createdAt: service.clock.now(),
      isPaused: false,
      lastScheduleStates: {},
    });
    res.status(200).json({ scheduleId });
  } catch (error) {
    cron.destroy();
    throw error;
  }
}

/** One handler for everything under /v2/schedules, mounted after authentication. */
export function schedulesHandler(service: DeliveryService): RequestHandler {
  return async (req, res) => {
    const questionMark = req.originalUrl.indexOf('?');
    const path = questionMark === -1 ? req.originalUrl : req.originalUrl.slice(0, questionMark);
    const rest = path.slice(PREFIX.length).replace(/^\/+/, '');

    if (rest === '') {
      if (req.method !== 'GET')
        throw new EmulatorInputError('method', `${req.method} is not allowed on ${PREFIX}; use GET`);
      res.json(service.schedules.list().map((schedule) => scheduleJson(schedule, service.clock)));
      return;
    }
    // A destination URL (or a URL Group name with POST) means "create".
    if (/^https?:\/?\//i.test(rest)) {
      if (req.method !== 'POST') throw new EmulatorInputError('method', 'use POST to create a schedule');
      await createSchedule(service, req, res);
      return;
    }
    const action = /^([^/]+)\/(pause|resume)\/?$/.exec(rest);
    if (action) {
      // Knob `scheduleVerbs`: the SDKs send PATCH, the OpenAPI documents POST; the other verb is a 405.
      const verbs = service.knobs.scheduleVerbs;
      const allowed = verbs === 'both' ? ['POST', 'PATCH'] : [verbs.toUpperCase()];
      if (!allowed.includes(req.method)) {
        res.setHeader('Allow', allowed.join(', '));
        sendError(res, 405, `${req.method} is not allowed on ${PREFIX}/{id}/${action[2]}; use ${allowed.join(' or ')}`);
        return;
      }
      service.schedules.setPaused(decodeId(action[1]!), action[2] === 'pause');
      res.status(200).end();
      return;
    }
    const single = /^([^/]+)\/?$/.exec(rest);
    if (!single) throw new EmulatorNotFoundError(`no route for ${req.method} ${PREFIX}/${rest.slice(0, 100)}`);
    switch (req.method) {
      case 'GET':
        res.json(scheduleJson(service.schedules.require(decodeId(single[1]!)), service.clock));
        return;
      case 'DELETE':
        service.schedules.delete(decodeId(single[1]!));
        res.status(200).end();
        return;
      case 'POST':
        // POST /v2/schedules/{urlGroupName}
        await createSchedule(service, req, res);
        return;
      default:
        throw new EmulatorInputError('method', `${req.method} is not allowed here`);
    }
  };
}
