// Starts the HTTP(S) server on the configured address. TLS and basic auth come from the
// exporter-toolkit web config file, validated strictly before anything listens.

import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { RequestHandler } from 'express';
import { hostForUrl } from '../common/url.js';
import type { Logger } from '../logging/index.js';
import { createApp, type ExporterView } from './app.js';
import { answerClientError } from './client-error.js';
import { limitConnections, type ConnectionLimit } from './connection-limit.js';
import { WebConfigWatcher } from './web-config.js';

export { exporterView, type ExporterView } from './app.js';
export { METRICS_CONTENT_TYPE } from './metrics-endpoint.js';

export interface ServerOptions {
  listen: { host: string; port: number };
  /** exporter-toolkit web config file, or null for plain HTTP without auth. */
  webConfigFile: string | null;
  view: ExporterView;
  logger: Logger;
  /** How often the web config file may be stat()ed for changes, ms. */
  webConfigCheckIntervalMs?: number;
  /**
   * Routers of the active checks (probe receiver, remediation webhook), mounted ahead of basic
   * auth and client-certificate checks: callers that cannot send the exporter's credentials
   * reach them, so each must authenticate its own requests (signature, bearer token).
   */
  extraRouters?: readonly RequestHandler[];
  /** Serve OpenMetrics to scrapers that ask for it (default true). */
  openMetrics?: boolean;
  /** Connections served at once (--web-max-connections); more wait their turn. */
  maxConnections?: number;
  /** The server's timeouts; the defaults below unless a test wants them short. */
  timeouts?: Partial<ServerTimeouts>;
}

export interface ServerTimeouts {
  /** From a connection's first byte (or the end of the previous request) to the end of the request headers, ms. */
  headersMs: number;
  /** A whole request, body included, ms. */
  requestMs: number;
  /** A TLS handshake, from the TCP connection on, ms. */
  tlsHandshakeMs: number;
  /** An idle keep-alive connection between requests, ms. */
  keepAliveMs: number;
  /** A connection waiting for a slot under the connection cap, ms. */
  waitForSlotMs: number;
}

/** Default of --web-max-connections (Prometheus' --web.max-connections has 512 too). */
export const DEFAULT_MAX_CONNECTIONS = 512;

// A slow or idle client must not hold the exporter: scrapes are small and quick.
export const DEFAULT_SERVER_TIMEOUTS: Readonly<ServerTimeouts> = {
  headersMs: 10_000,
  requestMs: 30_000,
  tlsHandshakeMs: 10_000,
  keepAliveMs: 5_000,
  waitForSlotMs: 30_000,
};

/**
 * How often node checks the headers and request timeouts; it checks every 30 s by default, so
 * an idle socket was held for up to 40 s instead of the 10 s of headersMs.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

export interface ExporterServer {
  /** Base URL, e.g. `https://127.0.0.1:9824/` (the bound port when 0 was asked). */
  url: string;
  port: number;
  tls: boolean;
  /** Connections served and waiting under the cap. */
  connections: ConnectionLimit;
  close(): Promise<void>;
}

/** Time given to open keep-alive connections to finish a request before they are cut. */
const CLOSE_GRACE_MS = 1_000;

/** Throws ConfigError when the web config file is invalid; rejects when the address is taken. */
export async function startServer(options: ServerOptions): Promise<ExporterServer> {
  const { logger } = options;
  let httpsServer: HttpsServer | undefined;
  const webConfig =
    options.webConfigFile === null
      ? null
      : await WebConfigWatcher.open(options.webConfigFile, {
          logger,
          checkIntervalMs: options.webConfigCheckIntervalMs,
          // New certificates apply to new connections without a restart.
          onTlsChange: (tls) => httpsServer?.setSecureContext(tls.options),
        });

  const app = createApp({
    view: options.view,
    logger,
    webConfig,
    extraRouters: options.extraRouters ?? [],
    openMetrics: options.openMetrics ?? true,
  });
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts };
  const serverOptions = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, timeouts.headersMs),
  };
  const tls = webConfig?.current.tls ?? null;
  if (tls !== null)
    httpsServer = createHttpsServer(
      { ...tls.options, ...serverOptions, handshakeTimeout: timeouts.tlsHandshakeMs },
      app,
    );
  const server: Server = httpsServer ?? createHttpServer(serverOptions, app);
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const connections = limitConnections(server, {
    maxConnections,
    maxWaiting: maxConnections,
    maxWaitMs: timeouts.waitForSlotMs,
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(options.listen.port, options.listen.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('clientError', answerClientError(logger));
  server.on('tlsClientError', (error: Error) => logger.debug({ err: error.message }, 'TLS handshake failed'));

  const address = server.address() as AddressInfo;
  const host = hostForUrl(address.address);
  const scheme = tls === null ? 'http' : 'https';
  return {
    url: `${scheme}://${host}:${address.port}/`,
    port: address.port,
    tls: tls !== null,
    connections,
    close: () => closeServer(server, connections),
  };
}

function closeServer(server: Server, connections: ConnectionLimit): Promise<void> {
  return new Promise((resolve) => {
    connections.closeWaiting();
    const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
