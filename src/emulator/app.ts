// The emulator's express app: admin routes, the delivery interface (Bearer auth) with the
// fault knobs on its read endpoints, the management interface, and a JSON 404 and error
// handler so no input ever crashes the process or gets an HTML answer.
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { bearerAuth } from './auth.js';
import { faultInjector } from './faults.js';
import { describeError, sendError } from './http-util.js';
import type { AbsentEndpointGroup } from './knobs.js';
import type { Management } from './management/index.js';
import { ADMIN_PREFIX, adminRouter } from './delivery/routes/admin.js';
import { logsHandler } from './delivery/routes/logs.js';
import { dlqRouter } from './delivery/routes/dlq.js';
import { flowControlRouter } from './delivery/routes/flow-control.js';
import { keysRouter } from './delivery/routes/keys.js';
import { enqueueHandler, publishHandler, triggerHandler } from './delivery/routes/messages.js';
import { queuesRouter } from './delivery/routes/queues.js';
import { schedulesHandler } from './delivery/routes/schedules.js';
import { topicsRouter } from './delivery/routes/topics.js';
import { workflowsRouter } from './delivery/routes/workflows.js';
import type { DeliveryService } from './delivery/service.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Requests for the management interface (for its fault scope). */
function managementPathPattern(serviceNames: string[]): RegExp {
  const names = serviceNames.map(escapeRegExp).join('|');
  return new RegExp(`^/v2/(?:vector|search|(?:${names || 'qstash'})/(?:users?|stats))(?:/|$)`, 'i');
}

/** Requests of each optional endpoint group (knob absentEndpoints). */
function absentEndpointPattern(serviceNames: string[]): Record<AbsentEndpointGroup, RegExp> {
  const names = serviceNames.map(escapeRegExp).join('|') || 'qstash';
  return {
    workflows: /^\/v2\/workflows(?:\/|$)/,
    globalParallelism: /^\/v2\/globalParallelism(?:\/|$)/,
    flowControl: /^\/v2\/flowControl(?:\/|$)/,
    qstashStats: new RegExp(`^/v2/(?:${names})/stats(?:/|$)`, 'i'),
  };
}

function onlyWhen(test: (req: Parameters<RequestHandler>[0]) => boolean, handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (!test(req)) {
      next();
      return;
    }
    return handler(req, res, next);
  };
}

export function createApp(service: DeliveryService, management: Management, report: (line: string) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(`${ADMIN_PREFIX}/management`, management.adminRouter);
  app.use(ADMIN_PREFIX, adminRouter(service));

  // Optional endpoint groups switched off (knob absentEndpoints) answer 404 as a service without them.
  const absent = absentEndpointPattern(service.options.serviceNames);
  app.use((req, res, next) => {
    const groups = service.knobs.absentEndpoints;
    if (groups.length === 0 || !groups.some((group) => absent[group].test(req.path))) {
      next();
      return;
    }
    sendError(res, 404, `no route for ${req.method} ${req.path.slice(0, 200)}`);
  });

  const auth = bearerAuth(service.options.token);
  const logFaults = faultInjector(service, 'logs');
  app.get('/v2/logs', logFaults, auth, logsHandler(service, 'logs'));
  app.get('/v2/events', logFaults, auth, logsHandler(service, 'events'));
  app.use(
    '/v2/schedules',
    onlyWhen((req) => req.method === 'GET', faultInjector(service, 'schedules')),
    auth,
    schedulesHandler(service),
  );
  // Writes are faulted only when the `publish` scope is asked for (not by default).
  const publishFaults = faultInjector(service, 'publish');
  app.use('/v2/enqueue', publishFaults, auth, enqueueHandler(service));
  app.use('/v2/publish', publishFaults, auth, publishHandler(service));
  app.use('/v2/trigger', publishFaults, auth, triggerHandler(service));
  // Reads of queues, URL Groups, DLQ, flow control and global parallelism: the `inventory` scope.
  app.use(
    ['/v2/queues', '/v2/topics', '/v2/dlq', '/v2/flowControl', '/v2/globalParallelism'],
    onlyWhen((req) => req.method === 'GET', faultInjector(service, 'inventory')),
  );
  app.use('/v2/keys', auth);
  app.use(keysRouter(service));
  app.use('/v2/topics', auth);
  app.use(topicsRouter(service));
  app.use('/v2/queues', auth);
  app.use(queuesRouter(service));
  app.use('/v2/dlq', auth);
  app.use(dlqRouter(service));
  app.use(['/v2/flowControl', '/v2/globalParallelism'], auth);
  app.use(flowControlRouter(service));
  // Workflow logs are faulted only when the `workflows` scope is asked for (not by default).
  app.use(
    '/v2/workflows',
    onlyWhen((req) => req.method === 'GET', faultInjector(service, 'workflows')),
    auth,
  );
  app.use(workflowsRouter(service));

  const managementPaths = managementPathPattern(service.options.serviceNames);
  app.use(onlyWhen((req) => managementPaths.test(req.path), faultInjector(service, 'management')));
  app.use(management.router);

  app.use((req, res) => {
    sendError(res, 404, `no route for ${req.method} ${req.path.slice(0, 200)}`);
  });

  const errorHandler: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    const { status, message } = describeError(error);
    if (status >= 500)
      report(`emulator: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    sendError(res, status, message);
  };
  app.use(errorHandler);
  return app;
}
