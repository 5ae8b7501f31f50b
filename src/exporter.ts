// The daemon: self metrics, API clients (only those with credentials), collectors, the runner
// polling them in the background, and the HTTP server reading their snapshots. close() lets the
// poll in flight finish (collectors save their state in close) and stops the server, within 10 s.

import type { RequestReport } from './api/http.js';
import { createDeliveryClient, createManagementClient } from './api/index.js';
import type { ManagementClient } from './api/management.js';
import { buildCollectors, type CollectorRegion } from './collectors/index.js';
import { CollectorRunner, describeError } from './collectors/runner.js';
import { cannotListenText, isListenError } from './common/listen.js';
import { hostForUrl } from './common/url.js';
import { PollSchedule } from './collectors/poll-schedule.js';
import { ConfigError, configSecrets, type ExporterConfig, type QStashRegionConfig } from './config/index.js';
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
  const logRequest = (report: RequestReport): void => {
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
  // Each region its own clients: its own connections, rate-limit budget and request metrics.
  const hooks = (region: string | null) => ({
    onRequest: (report: RequestReport): void => {
      selfMetrics.onRequestIn(region)(report);
      logRequest(report);
    },
    logger: region === null ? apiLogger : apiLogger.child({ qstash_region: region }),
    signal: clientsShutdown.signal,
  });
  // The management API's requests carry no qstash_region: it is the account's API. Each region
  // reads its QStash user through a client of its own (chosen by its token); the first region's
  // is also the account's client (search, vector, Redis), so one region means one client (one
  // pool, one report of a proxy or certificate problem). Every management client keeps the one
  // wait a 429 asks for.
  const secrets = configSecrets(config);
  const regions: CollectorRegion[] = [];
  let management: ManagementClient | null = null;
  for (const region of config.qstash.regions) {
    const regionManagement = createManagementClient(config, region, {
      ...hooks(null),
      callGate: management?.callGate,
    });
    management ??= regionManagement;
    const name = await regionName(region, regionManagement, logger, secrets);
    const delivery = createDeliveryClient(config, region, hooks(name));
    selfMetrics.watchUpstreamClock('qstash', delivery.upstreamClock, name);
    selfMetrics.watchCallGate('qstash', delivery.callGate, name);
    regions.push({ name, url: region.url, token: region.token, delivery, management: regionManagement });
  }
  management ??= createManagementClient(config, null, hooks(null));
  const delivery = regions[0]?.delivery ?? null;
  if (management !== null) selfMetrics.watchUpstreamClock('management', management.upstreamClock);
  if (management !== null) selfMetrics.watchCallGate('management', management.callGate);
  const closeClients = async (): Promise<void> => {
    clientsShutdown.abort(new Error('exporter is stopping'));
    await Promise.allSettled([
      ...regions.flatMap((region) => [region.delivery?.close(), region.management?.close()]),
      regions.some((region) => region.management === management) ? undefined : management?.close(),
    ]);
  };

  const schedule = new PollSchedule(config.collectors);
  let collectors;
  try {
    collectors = await buildCollectors(config, { delivery, management, selfMetrics, logger, schedule, regions });
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
    secrets,
  });
  // Active checks (off by default): their registries follow the collectors' on /metrics, their
  // routes sit ahead of basic auth and authenticate themselves (docs/active-checks.md).
  const probes = config.probe.enabled
    ? config.qstash.regions.map((region, index) =>
        createProbe(config, {
          delivery: regions[index]!.delivery!,
          region: { ...region, name: regions[index]!.name },
          routePerRegion: regions.length > 1,
          logger,
        }),
      )
    : [];
  const remediation =
    config.remediation.enabled && regions.length > 0
      ? createRemediation(config, {
          deliveries: new Map(regions.map((region) => [region.name, region.delivery!])),
          logger,
        })
      : null;
  const activeChecks = [...probes, remediation].filter((check) => check !== null);
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
  for (const probe of probes) probe.start();
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
        await Promise.all([runner.stop(), ...probes.map((probe) => probe.close()), runningServer.close()]);
        await closeClients();
        logger.info({ durationMs: Date.now() - started }, 'upstash-exporter stopped');
      })();
      return closing;
    },
  };
}

/**
 * A region's name: as the configuration found it, or, for a token whose URL names no region,
 * learnt from the account record (the QStash user of that token) when the management API is
 * configured, else the SDKs' default region, said once in the log with how to set it.
 */
async function regionName(
  region: QStashRegionConfig,
  management: ManagementClient | null,
  logger: Logger,
  secrets: readonly string[],
): Promise<string> {
  if (region.nameFrom !== 'assumed') return region.name;
  if (management !== null) {
    try {
      const { account, selectedBy } = await management.qstashUser();
      if (selectedBy === 'token' && typeof account.region === 'string' && account.region !== '') return account.region;
    } catch (error) {
      logger.debug(
        { err: describeError(error, secrets) },
        'the region of QSTASH_TOKEN could not be learnt from the account record',
      );
    }
  }
  // Said once at start, at info: a local or proxied URL is a normal setup, not a fault.
  logger.info(
    { qstash_region: region.name, qstashUrl: region.url },
    `the QStash URL names no region: its series are labelled qstash_region="${region.name}" (the SDKs' default region); set QSTASH_REGION (or --qstash-region) to the token's region if it is another`,
  );
  return region.name;
}
