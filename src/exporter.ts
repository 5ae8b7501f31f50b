// The daemon: self metrics, API clients (only those with credentials), collectors, the runner
// polling them in the background, and the HTTP server reading their snapshots. close() lets the
// poll in flight finish (collectors save their state in close) and stops the server, within 10 s.

import type { RequestReport } from './api/http.js';
import { createApiClients } from './api/index.js';
import { buildCollectors } from './collectors/index.js';
import { CollectorRunner } from './collectors/runner.js';
import { cannotListenText, isListenError } from './common/listen.js';
import { hostForUrl } from './common/url.js';
import { PollSchedule } from './collectors/poll-schedule.js';
import { ConfigError, configSecrets, type ExporterConfig } from './config/index.js';
import type { Logger } from './logging/index.js';
import { createdAtProcessStart } from './metrics/openmetrics.js';
import { buildRevision, SelfMetrics } from './metrics/self.js';
import { createProbe } from './probe/index.js';
import { createRemediation } from './remediation/index.js';
import { exporterView, startServer, type ExporterView } from './server/index.js';
import { OverviewHistory } from './server/overview.js';
import { VERSION } from './version.js';

export interface ExporterHandle {
  /** Base URL of the HTTP server (bound port included). */
  url: string;
  close(): Promise<void>;
}

export async function startExporter(config: ExporterConfig, logger: Logger): Promise<ExporterHandle> {
  const selfMetrics = new SelfMetrics({ version: VERSION, revision: buildRevision() });
  // Cancels every upstream request and retry wait once the runner has given up on its polls.
  const clientsShutdown = new AbortController();
  const apiLogger = logger.child({ component: 'api' });
  const onRequest = (report: RequestReport): void => {
    selfMetrics.onRequest(report);
    const ok = report.code.startsWith('2');
    // Built only when it is logged: this runs after every upstream request.
    if (!apiLogger.isLevelEnabled(ok ? 'trace' : 'debug')) return;
    const fields = {
      api: report.api,
      method: report.method,
      endpoint: report.endpoint,
      code: report.code,
      durationSeconds: report.durationSeconds,
    };
    if (ok) apiLogger.trace(fields, 'upstream request');
    else apiLogger.debug(fields, 'upstream request failed');
  };
  const { delivery, management } = createApiClients(config, {
    onRequest,
    logger: apiLogger,
    signal: clientsShutdown.signal,
  });
  if (delivery !== null) selfMetrics.watchUpstreamClock('qstash', delivery.upstreamClock);
  if (management !== null) selfMetrics.watchUpstreamClock('management', management.upstreamClock);
  if (delivery !== null) selfMetrics.watchCallGate('qstash', delivery.callGate);
  if (management !== null) selfMetrics.watchCallGate('management', management.callGate);
  const closeClients = async (): Promise<void> => {
    clientsShutdown.abort(new Error('exporter is stopping'));
    await Promise.allSettled([delivery?.close(), management?.close()]);
  };

  const schedule = new PollSchedule(config.collectors);
  let collectors;
  try {
    collectors = await buildCollectors(config, { delivery, management, selfMetrics, logger, schedule });
  } catch (error) {
    // A state file that cannot be restored (StateFileError): nothing else was started.
    await closeClients();
    throw error;
  }
  const runner = new CollectorRunner({
    collectors,
    settings: config.collectors,
    schedule,
    selfMetrics,
    logger: logger.child({ component: 'runner' }),
    secrets: configSecrets(config),
  });
  // Active checks (off by default): their registries follow the collectors' on /metrics, their
  // routes sit ahead of basic auth and authenticate themselves (docs/active-checks.md).
  const probe = config.probe.enabled && delivery !== null ? createProbe(config, { delivery, logger }) : null;
  const remediation =
    config.remediation.enabled && delivery !== null ? createRemediation(config, { delivery, logger }) : null;
  const activeChecks = [probe, remediation].filter((check) => check !== null);
  const baseView = exporterView(VERSION, selfMetrics, runner);
  const view: ExporterView = {
    ...baseView,
    // Their counters start at 0 with the process: that is their OpenMetrics created time. They
    // move with incoming requests, not with polls: rendered on every scrape (live).
    registries: () => [
      ...baseView.registries(),
      ...activeChecks.map(({ name, registry }) => ({ name, registry, createdOf: createdAtProcessStart(), live: true })),
    ],
  };
  // The landing page's last hour: a fixed-size ring sampled from the same registries.
  const history = new OverviewHistory(() => view.registries());
  view.history = history;

  let server;
  try {
    server = await startServer({
      listen: config.listen,
      webConfigFile: config.webConfigFile,
      openMetrics: config.openMetrics,
      maxConnections: config.web.maxConnections,
      view,
      logger: logger.child({ component: 'http' }),
      extraRouters: activeChecks.map((check) => check.router),
    });
  } catch (error) {
    // Nothing polled yet; release what was built (collectors close, clients' pools).
    await runner.stop(0);
    await closeClients();
    // An address in use (or not ours) is the user's to change: one line, exit 2, for run and demo.
    if (isListenError(error))
      throw new ConfigError(
        'listen_address',
        cannotListenText('--listen-address', `${hostForUrl(config.listen.host)}:${config.listen.port}`, error),
      );
    throw error;
  }
  // Sampled before the first poll: the base of the first windows is what the process started with.
  history.start();
  runner.start();
  probe?.start();
  logger.info(
    { url: server.url, tls: server.tls, collectors: runner.enabled, version: VERSION },
    `upstash-exporter listening on ${server.url} with collectors: ${runner.enabled.join(', ') || 'none'}`,
  );

  let closing: Promise<void> | undefined;
  const runningServer = server;
  return {
    url: server.url,
    close: () => {
      closing ??= (async () => {
        const started = Date.now();
        history.stop();
        await Promise.all([runner.stop(), probe?.close(), runningServer.close()]);
        await closeClients();
        logger.info({ durationMs: Date.now() - started }, 'upstash-exporter stopped');
      })();
      return closing;
    },
  };
}
