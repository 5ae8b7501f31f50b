// The connection of one API client to its upstream origin: a keep-alive Pool straight to it, or
// the same pool through an egress proxy (undici's ProxyAgent: HTTPS and HTTP through CONNECT,
// credentials of the proxy URL sent as Proxy-Authorization), chosen once per client by
// proxy-choice.ts; extra CAs (http.ca_file) trusted for the upstream. A connection that cannot
// be made (a certificate not trusted, a proxy that is down or refuses the CONNECT) is logged
// once, naming its cause, until a request gets an answer again; each failed request is still
// reported by the request core as an error (api_requests_total{code="error"}).
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { Pool, ProxyAgent, type Dispatcher } from 'undici';
import type { ApiName } from './errors.js';
import { NETWORK_CODES_BEFORE_SEND } from './failures.js';
import type { ApiLogger, TimeoutOptions } from './http-types.js';
import { redactProxyUrl, routeFor, type ProxyRoute, type UpstreamConnection } from './proxy-choice.js';

export interface DispatcherOptions {
  api: ApiName;
  connections: number;
  timeouts: TimeoutOptions;
  /** Absent: direct, Node's CAs (the clients built outside createApiClients, in tests). */
  connection?: UpstreamConnection;
  logger?: ApiLogger & { info?(object: object, message: string): void };
}

/** The dispatcher of one client, requests sent to `base`'s origin (they need not name it). */
export function createDispatcher(base: URL, options: DispatcherOptions): Dispatcher {
  const { timeouts, connections } = options;
  const route: ProxyRoute = options.connection
    ? routeFor(base, options.connection.proxy)
    : { proxy: null, reason: 'no proxy settings' };
  const ca = options.connection?.caPem ? trustedCas(options.connection.caPem) : undefined;
  const tlsOptions = { timeout: timeouts.connectTimeoutMs, ...(ca === undefined ? {} : { ca }) };
  const poolOptions = {
    connections,
    headersTimeout: timeouts.headersTimeoutMs,
    bodyTimeout: timeouts.bodyTimeoutMs,
  };
  const host = base.host;
  const watch = new ConnectionWatch(options, host, route);
  if (route.proxy === null) {
    const pool = new Pool(base.origin, { ...poolOptions, connect: tlsOptions });
    options.logger?.debug({ api: options.api, host, reason: route.reason }, 'upstream reached directly');
    // Watched through the pool's connection events, not by wrapping each request's handler: the
    // wrapped handlers (undici's compose) kept the body's socket chunks alive longer
    // (docs/performance.md, Memory, "Socket chunks").
    pool.on('connectionError', (_origin, _targets, error) => watch.failed(error));
    pool.on('connect', () => watch.answered());
    return pool;
  }
  const dispatcher = new ProxyAgent({
    uri: route.proxy.href,
    ...poolOptions,
    requestTls: tlsOptions,
    proxyTls: tlsOptions,
    // The proxy's own pool (its CONNECTs): the same header deadline as the upstream's.
    clientFactory: (origin, opts) => new Pool(origin, { ...opts, headersTimeout: timeouts.headersTimeoutMs }),
  });
  const via = redactProxyUrl(route.proxy);
  (options.logger?.info ?? options.logger?.debug)?.call(
    options.logger,
    { api: options.api, host, proxy: via, source: route.source },
    `${options.api} API reached through proxy ${via} (${route.source})`,
  );
  // Through a proxy each request's handler is wrapped: a refused CONNECT reaches only the request.
  return dispatcher.compose((dispatch) => (opts, handler) => {
    return dispatch({ ...opts, origin: opts.origin ?? base.origin }, watch.handler(handler));
  });
}

/** Node's CAs (NODE_EXTRA_CA_CERTS included) and the given PEM bundle. */
function trustedCas(pem: string): string[] {
  const own = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  if (own !== undefined) return [...own('default'), pem];
  // Node 20 has no getCACertificates: its roots, then NODE_EXTRA_CA_CERTS read as Node reads it.
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  let extraPem: string[] = [];
  if (extra !== undefined && extra !== '') {
    try {
      extraPem = [readFileSync(extra, 'utf8')];
    } catch {
      // Node itself warns about an unreadable NODE_EXTRA_CA_CERTS at start.
    }
  }
  return [...tls.rootCertificates, ...extraPem, pem];
}

const PROXY_REFUSAL = /^Proxy response \((\d+)\) !== 200/;

/** A proxy that answered the CONNECT with another status than 200. */
export class ProxyRefusedError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, cause: unknown) {
    super(`the proxy refused the tunnel (CONNECT answered ${status})`, { cause });
    this.name = 'ProxyRefusedError';
    this.status = status;
    this.code = `ERR_PROXY_CONNECT_${status}`;
  }
}

type Problem = { key: string; fields: Record<string, unknown>; message: string };

/** The TLS error code of a failed connection, when it is a TLS failure. */
function tlsCode(error: { code?: unknown; cause?: unknown }): string | null {
  const code = typeof error.code === 'string' ? error.code : '';
  if (code === 'UND_ERR_PRX_TLS' && typeof error.cause === 'object' && error.cause !== null) {
    return tlsCode(error.cause);
  }
  return /CERT|SELF_SIGNED|UNABLE_TO_|^ERR_TLS_|^ERR_SSL_|HOSTNAME_MISMATCH/.test(code) ? code : null;
}

/** Logs a connection problem once, and its end once, for one client. */
class ConnectionWatch {
  #reported: string | null = null;
  readonly #options: DispatcherOptions;
  readonly #host: string;
  readonly #proxy: string | null;

  constructor(options: DispatcherOptions, host: string, route: ProxyRoute) {
    this.#options = options;
    this.#host = host;
    this.#proxy = route.proxy === null ? null : redactProxyUrl(route.proxy);
  }

  /** `handler` (undici's new handler interface) wrapped to watch the outcome. */
  handler(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
    return {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, status, headers, socket) =>
        handler.onRequestUpgrade?.(controller, status, headers, socket),
      onResponseStart: (controller, status, headers, message) => {
        this.answered();
        handler.onResponseStart?.(controller, status, headers, message);
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, this.failed(error)),
    };
  }

  /** A connection or an answer came: a problem reported before has ended. */
  answered(): void {
    if (this.#reported === null) return;
    this.#reported = null;
    const { logger, api } = this.#options;
    (logger?.info ?? logger?.warn)?.call(
      logger,
      { api, host: this.#host, ...(this.#proxy === null ? {} : { proxy: this.#proxy }) },
      `${api} API reachable again`,
    );
  }

  /** Reports the cause of a failed connection once; a proxy's refusal becomes a ProxyRefusedError. */
  failed(error: Error): Error {
    const problem = this.#problem(error);
    if (problem === null) return error;
    if (problem.key !== this.#reported) {
      this.#reported = problem.key;
      this.#options.logger?.warn({ api: this.#options.api, ...problem.fields }, problem.message);
    }
    const refusal = PROXY_REFUSAL.exec(error.message);
    return refusal && this.#proxy !== null ? new ProxyRefusedError(Number(refusal[1]), error) : error;
  }

  #problem(error: Error & { code?: unknown }): Problem | null {
    const host = this.#host;
    const api = this.#options.api;
    const tls = tlsCode(error);
    if (tls !== null) {
      return {
        key: `tls:${tls}`,
        fields: { host, code: tls },
        message: `${api} API: TLS with ${host} failed (${tls}); if its certificate comes from a private CA, name that CA's PEM file in http.ca_file or NODE_EXTRA_CA_CERTS`,
      };
    }
    if (this.#proxy === null) return null;
    const refusal = PROXY_REFUSAL.exec(error.message);
    if (refusal) {
      const status = Number(refusal[1]);
      const hint =
        status === 407 || status === 401
          ? 'the proxy wants credentials, or others: check user:password@ in the proxy URL'
          : status === 403
            ? 'the proxy does not allow this host or port'
            : 'see the proxy log';
      return {
        key: `refused:${status}`,
        fields: { host, proxy: this.#proxy, status },
        message: `${api} API: proxy ${this.#proxy} refused the CONNECT to ${host} with status ${status}; ${hint}`,
      };
    }
    const code = typeof error.code === 'string' ? error.code : '';
    // Connect-phase codes: with a proxy, the connection that failed is the one to the proxy.
    if (NETWORK_CODES_BEFORE_SEND.has(code)) {
      return {
        key: `unreachable:${code}`,
        fields: { host, proxy: this.#proxy, code },
        message: `${api} API: proxy ${this.#proxy} cannot be reached (${code})`,
      };
    }
    return null;
  }
}
