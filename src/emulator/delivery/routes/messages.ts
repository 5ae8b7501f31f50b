// POST /v2/enqueue/{queue}/{destination}, POST /v2/publish/{destination} and
// POST /v2/trigger/{workflowUrl}. The destination is read from the RAW request URL, its query
// string re-attached; the body is raw bytes of any content type, up to the body limit.
import type { Request, RequestHandler, Response } from 'express';
import { parseDestination, parseName, splitRawTarget, type RawRequestTarget } from '../destination.js';
import { EmulatorInputError } from '../../errors.js';
import { callerIpOf, readRawBody } from '../../http-util.js';
import { parseMessageSpec, RequestHeaders, type MessageSpec } from '../message-options.js';
import { TRIGGER_DEFAULT_RETRIES } from '../../options.js';
import { makeId } from '../../random.js';
import type { DeliveryService, PublishResult } from '../service.js';

function pathOf(rawUrl: string): string {
  const questionMark = rawUrl.indexOf('?');
  return questionMark === -1 ? rawUrl : rawUrl.slice(0, questionMark);
}

function requirePost(req: Request): void {
  if (req.method !== 'POST') throw new EmulatorInputError('method', `${req.method} is not allowed here; use POST`);
}

async function publishFromRequest(
  service: DeliveryService,
  req: Request,
  res: Response,
  target: RawRequestTarget,
  queueName: string | undefined,
): Promise<void> {
  const destination = parseDestination(target.destination);
  const body = await readRawBody(req, res, service.options.maxBodyBytes);
  const spec = parseMessageSpec(
    {
      prefix: service.options.headerPrefix,
      defaultRetries: service.plan.retries,
      planTimeoutMs: service.plan.timeoutMs,
      nowMs: service.clock.now(),
    },
    new RequestHeaders(req.rawHeaders, target.queryConfig),
  );
  const results = service.publish({ destination, spec, body, queueName, callerIP: callerIpOf(req) });
  const allDeduplicated = results.every((result) => result.deduplicated);
  // A URL answers one object; a URL Group answers a bare array, one element per endpoint.
  const payload: PublishResult | PublishResult[] = destination.kind === 'url' ? results[0]! : results;
  res.status(allDeduplicated ? 202 : 200).json(payload);
}

export function enqueueHandler(service: DeliveryService): RequestHandler {
  return async (req, res) => {
    requirePost(req);
    const prefix = '/v2/enqueue/';
    const after = pathOf(req.originalUrl).slice(prefix.length);
    const slash = after.indexOf('/');
    if (slash <= 0) throw new EmulatorInputError('destination', 'expected /v2/enqueue/{queueName}/{destination}');
    const rawQueue = after.slice(0, slash);
    const queueName = parseName('queueName', rawQueue);
    const target = splitRawTarget(req.originalUrl, `${prefix}${rawQueue}/`, service.options.headerPrefix);
    await publishFromRequest(service, req, res, target, queueName);
  };
}

export function publishHandler(service: DeliveryService): RequestHandler {
  return async (req, res) => {
    requirePost(req);
    const target = splitRawTarget(req.originalUrl, '/v2/publish/', service.options.headerPrefix);
    const queueHeader = new RequestHeaders(req.rawHeaders, target.queryConfig)
      .get(`${service.options.headerPrefix}Queue-Name`)
      ?.trim();
    const queueName = queueHeader ? parseName(`${service.options.headerPrefix}Queue-Name`, queueHeader) : undefined;
    await publishFromRequest(service, req, res, target, queueName);
  };
}

const RUN_ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

export function triggerHandler(service: DeliveryService): RequestHandler {
  return async (req, res) => {
    requirePost(req);
    const prefix = service.options.headerPrefix;
    const target = splitRawTarget(req.originalUrl, '/v2/trigger/', prefix);
    const destination = parseDestination(target.destination);
    if (destination.kind !== 'url')
      throw new EmulatorInputError('workflowUrl', 'must be a URL starting with http:// or https://');
    const body = await readRawBody(req, res, service.options.maxBodyBytes);
    const headers = new RequestHeaders(req.rawHeaders, target.queryConfig);
    const spec = parseMessageSpec(
      {
        prefix,
        defaultRetries: TRIGGER_DEFAULT_RETRIES,
        planTimeoutMs: service.plan.timeoutMs,
        nowMs: service.clock.now(),
      },
      headers,
    );
    const runIdField = `${prefix}Workflow-RunId`;
    const givenRunId = headers.get(runIdField)?.trim();
    if (givenRunId !== undefined && givenRunId !== '' && !RUN_ID_PATTERN.test(givenRunId)) {
      throw new EmulatorInputError(runIdField, 'must be 1 to 200 visible ASCII characters');
    }
    const workflowRunId = givenRunId || makeId('wfr');
    const workflowCreatedAt = service.clock.now();
    const run = service.workflows.start(workflowRunId, destination.url, workflowCreatedAt, spec.labels[0]);
    const callerIP = callerIpOf(req);
    // Each step is its own message: the first one waits the asked delay, the next ones go at once.
    const deliverStep = (stepNumber: number, stepSpec: MessageSpec): void => {
      service.publish({
        destination,
        spec: stepSpec,
        body,
        callerIP,
        workflowRunId,
        extraHeaders: { [runIdField]: workflowRunId, [`${prefix}Workflow-Step`]: String(stepNumber) },
        onAttempt: (messageId, outcome) => {
          if (service.workflows.answer(run, messageId, outcome)) {
            deliverStep(stepNumber + 1, {
              ...stepSpec,
              delayMs: 0,
              notBeforeMs: undefined,
              deduplicationId: undefined,
              contentBasedDeduplication: false,
            });
          }
        },
      });
    };
    deliverStep(1, spec);
    res.status(200).json({ workflowRunId, workflowCreatedAt });
  };
}
