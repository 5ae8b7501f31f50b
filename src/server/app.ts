// The express application: routes, security headers, client certificates and basic auth.
// Everything here reads state kept elsewhere (snapshots, runner status); nothing calls upstream.

import { instanceName } from '../collectors/runner.js';
import type { TLSSocket } from 'node:tls';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from '../logging/index.js';
import type { CollectorRunner, CollectorStatus } from '../collectors/runner.js';
import type { SelfMetrics } from '../metrics/self.js';
import { LANDING_CSP, renderLanding } from './landing.js';
import { readOverview, type OverviewHistory } from './overview.js';
import { metricsHandler, type NamedRegistry } from './metrics-endpoint.js';
import { clientCertificateProblem } from '../config/web-config-file.js';
import { BasicAuthChecker, parseBasicAuthorization, type WebConfigWatcher } from './web-config.js';
import { errorMessage } from '../common/errors.js';

/** What the server shows: implemented by CollectorRunner plus the self registry. */
export interface ExporterView {
  version: string;
  /** Registries rendered by /metrics, in order (self metrics first). */
  registries(): readonly NamedRegistry[];
  /**
   * Moves whenever a registry not marked `live` may show something new (a poll ended); /metrics
   * keeps its rendered bytes until then. Absent: rendered on every scrape.
   */
  generation?(): number;
  status(): CollectorStatus[];
  ready(): boolean;
  /** The enabled collectors not yet succeeded, a region's as `name (region)`. */
  waitingFor(): string[];
  /** Samples of the last hour for the landing page's windows and plots; absent: counts since start, no plots. */
  history?: OverviewHistory;
}

/** The view of a running exporter: self metrics first, then each collector's snapshot. */
export function exporterView(version: string, selfMetrics: SelfMetrics, runner: CollectorRunner): ExporterView {
  return {
    version,
    registries: () => [
      { name: 'self', registry: selfMetrics.registry, createdOf: selfMetrics.createdOf },
      ...runner.registries(),
      { name: 'process', registry: selfMetrics.processRegistry, createdOf: selfMetrics.createdOf, live: true },
    ],
    generation: () => selfMetrics.generation,
    status: () => runner.status(),
    ready: () => runner.ready(),
    waitingFor: () => runner.waitingFor(),
  };
}

export interface AppOptions {
  view: ExporterView;
  logger: Logger;
  /** TLS/basic-auth settings, kept current from the file; null without --web-config-file. */
  webConfig: WebConfigWatcher | null;
  now?: () => number;
  /** Mounted before basic auth; each authenticates its own requests (see ServerOptions). */
  extraRouters?: readonly RequestHandler[];
  /** Serve OpenMetrics to scrapers that ask for it (default true; --no-openmetrics). */
  openMetrics?: boolean;
}

const READY_RETRY_AFTER_MAX_S = 60;
/** The server's own paths (GET and HEAD); another method on them is 405 with `Allow`. */
const READ_ONLY_PATHS: ReadonlySet<string> = new Set([
  '/',
  '/metrics',
  '/-/healthy',
  '/healthz',
  '/-/ready',
  '/readyz',
]);

export function createApp(options: AppOptions): Express {
  const { view, logger, webConfig } = options;
  const now = options.now ?? Date.now;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Exact paths only, as Prometheus and its exporters: `/METRICS` and `/metrics/` are 404.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);

  for (const router of options.extraRouters ?? []) app.use(router);

  if (webConfig !== null) {
    const checker = new BasicAuthChecker();
    app.use((req: Request, res: Response, next: NextFunction) => {
      void guard(req, res, webConfig, checker, logger).then((allowed) => {
        if (allowed) next();
      }, next);
    });
  }

  app.get('/metrics', metricsHandler(view, logger, { openMetrics: options.openMetrics ?? true }));

  const healthy = (_req: Request, res: Response): void => {
    res.setHeader('Cache-Control', 'no-store');
    res.type('text/plain').send('Healthy.\n');
  };
  app.get(['/-/healthy', '/healthz'], healthy);

  const ready = (_req: Request, res: Response): void => {
    res.setHeader('Cache-Control', 'no-store');
    // Ready stays ready after a later failure (docs/http.md); a poll past its deadline is said anyway.
    const overdue = view
      .status()
      .filter((s) => s.overdue)
      .map((s) => `${s.name}: ${s.lastError ?? 'poll overdue'}\n`)
      .join('');
    if (view.ready()) {
      res.type('text/plain').send(`Ready.\n${overdue}`);
      return;
    }
    const waiting = view.waitingFor();
    res.setHeader('Retry-After', String(retryAfterSeconds(view.status(), waiting)));
    res
      .status(503)
      .type('text/plain')
      .send(`Not ready: waiting for the first successful poll of ${waiting.join(', ')}.\n${overdue}`);
  };
  app.get(['/-/ready', '/readyz'], ready);

  app.get('/', (_req: Request, res: Response, next: NextFunction) => {
    const at = now();
    readOverview(view.registries(), view.history ?? null, at).then((overview) => {
      res.setHeader('Cache-Control', 'no-store');
      // Added to a policy of the web config file, if any: a browser enforces both.
      const configured = res.getHeader('Content-Security-Policy');
      res.setHeader(
        'Content-Security-Policy',
        configured === undefined ? LANDING_CSP : [String(configured), LANDING_CSP],
      );
      res
        .type('html')
        .send(
          renderLanding({ version: view.version, statuses: view.status(), ready: view.ready(), now: at, overview }),
        );
    }, next);
  });

  app.use((req: Request, res: Response) => {
    if (READ_ONLY_PATHS.has(req.path)) {
      res.setHeader('Allow', 'GET, HEAD');
      res.status(405).type('text/plain').send(`Method ${req.method} not allowed: ${req.path} answers GET and HEAD.\n`);
      return;
    }
    res.status(404).type('text/plain').send('Not found. See / for the endpoints.\n');
  });
  // Express recognises an error handler by its four parameters.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err: errorMessage(error) }, 'HTTP handler failed');
    if (!res.headersSent) res.status(500).type('text/plain').send('Internal error.\n');
    else res.end();
  });
  return app;
}

/** Seconds a probe should wait: the shortest interval of a collector still waiting, bounded. */
function retryAfterSeconds(statuses: readonly CollectorStatus[], waiting: readonly string[]): number {
  const intervals = statuses
    .filter((s) => waiting.includes(instanceName(s.name, s.region)) && s.intervalMs !== null)
    .map((s) => Math.ceil((s.intervalMs ?? 0) / 1000));
  const shortest = intervals.length === 0 ? 5 : Math.min(...intervals);
  return Math.min(Math.max(shortest, 1), READY_RETRY_AFTER_MAX_S);
}

/** Security headers, client certificate and basic auth; answers the request itself when refused. */
async function guard(
  req: Request,
  res: Response,
  webConfig: WebConfigWatcher,
  checker: BasicAuthChecker,
  logger: Logger,
): Promise<boolean> {
  await webConfig.refresh();
  const config = webConfig.current;
  for (const [name, value] of Object.entries(config.headers)) res.setHeader(name, value);

  if (config.tls !== null && 'getPeerCertificate' in req.socket) {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    const problem = clientCertificateProblem(config.tls.clientAuthType, {
      authorized: socket.authorized,
      hasCertificate: peer !== null && Object.keys(peer).length > 0,
    });
    if (problem !== null) {
      res.status(403).type('text/plain').send(`Forbidden: ${problem}.\n`);
      return false;
    }
  }

  // Probes that cannot send credentials reach the health endpoints the file leaves open.
  if (config.users.size === 0 || config.authExcludedPaths.has(req.path)) return true;
  const credentials = parseBasicAuthorization(req.headers.authorization);
  const verdict =
    credentials === null ? 'refused' : await checker.check(config.users, credentials.user, credentials.password);
  if (verdict === 'ok') return true;
  if (verdict === 'busy') {
    // Too many password checks wait already (a flood of new passwords): no queue without end.
    res.setHeader('Retry-After', '1');
    res.status(503).type('text/plain').send('Too many password checks in progress; retry shortly.\n');
    return false;
  }
  if (credentials !== null) logger.debug({ path: req.path }, 'basic auth refused');
  res.setHeader('WWW-Authenticate', 'Basic realm="upstash-exporter", charset="UTF-8"');
  res.status(401).type('text/plain').send('Unauthorized.\n');
  return false;
}
