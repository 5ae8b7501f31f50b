// The API clients as the configuration asks for them. The one place that turns the exporter's
// http settings (timeouts, retries) and credentials into client options, for the daemon and for
// the one-shot commands alike.
import { VERSION } from '../version.js';
import { DeliveryClient } from './delivery.js';
import type { CommonClientOptions } from './http.js';
import type { ProxySettings } from './proxy-choice.js';
import { ManagementClient, qstashRegionOfUrl } from './management.js';

/**
 * The settings the clients are built from: the part of the exporter's configuration they read,
 * declared here so the clients depend on no configuration module (ExporterConfig fits it).
 */
export interface ApiClientSettings {
  qstash: { headerPrefix: string; logsPath: string };
  management: { url: string; email: string | null; apiKey: string | null; accountPath: string };
  http: {
    timeouts: { connectMs: number; headersMs: number; bodyMs: number };
    retry: {
      maxRetries: number;
      baseDelayMs: number;
      maxDelayMs: number;
      maxRateLimitWaitMs: number;
      /** null: a 429's wait is honoured whole. */
      maxRetryAfterMs: number | null;
      rateLimitShare: number;
    };
    proxy: ProxySettings;
    /**
     * Extra CAs for the upstream, the PEM text the configuration read (once, at start: every
     * client trusts that same text); null: Node's own.
     */
    caFile: { pem: string } | null;
  };
  logs: { maxPageBytes: number };
}

/** What the caller adds to every client: the request hook, the logger and a shutdown signal. */
export type ApiClientHooks = Pick<CommonClientOptions, 'onRequest' | 'logger' | 'signal' | 'callGate'>;

function commonOptions(config: ApiClientSettings, hooks: ApiClientHooks): Omit<CommonClientOptions, 'baseUrl'> {
  return {
    timeouts: {
      connectTimeoutMs: config.http.timeouts.connectMs,
      headersTimeoutMs: config.http.timeouts.headersMs,
      bodyTimeoutMs: config.http.timeouts.bodyMs,
    },
    retry: {
      maxRetries: config.http.retry.maxRetries,
      baseDelayMs: config.http.retry.baseDelayMs,
      maxDelayMs: config.http.retry.maxDelayMs,
      maxRateLimitWaitMs: config.http.retry.maxRateLimitWaitMs,
      ...(config.http.retry.maxRetryAfterMs === null ? {} : { maxRetryAfterMs: config.http.retry.maxRetryAfterMs }),
      // Spend the rate-limit budget on requests that succeed, not on 429s.
      paceRateLimit: true,
    },
    rateLimitShare: config.http.retry.rateLimitShare,
    connection: {
      proxy: config.http.proxy,
      caPem: config.http.caFile?.pem ?? null,
    },
    ...hooks,
    userAgent: `upstash-exporter/${VERSION}`,
  };
}

/** One QStash region's credentials: its URL and token. */
export interface QStashCredentials {
  url: string;
  token: string;
}

/** The QStash client of one region. */
export function createDeliveryClient(
  config: ApiClientSettings,
  region: QStashCredentials,
  hooks: ApiClientHooks = {},
): DeliveryClient {
  return new DeliveryClient({
    ...commonOptions(config, hooks),
    baseUrl: region.url,
    token: region.token,
    headerPrefix: config.qstash.headerPrefix,
    logsPath: config.qstash.logsPath,
    logsMaxPageBytes: config.logs.maxPageBytes,
  });
}

/**
 * The management client, or null when the email or the API key is missing. With a region's
 * credentials, it reads that region's QStash user (chosen by its token, else its URL's region).
 */
export function createManagementClient(
  config: ApiClientSettings,
  region: QStashCredentials | null,
  hooks: ApiClientHooks = {},
): ManagementClient | null {
  if (config.management.email === null || config.management.apiKey === null) return null;
  return new ManagementClient({
    ...commonOptions(config, hooks),
    baseUrl: config.management.url,
    email: config.management.email,
    apiKey: config.management.apiKey,
    accountPath: config.management.accountPath,
    // To choose the regional QStash user (its token, else its URL's region).
    qstashToken: region?.token ?? null,
    qstashRegion: region === null ? null : qstashRegionOfUrl(region.url),
  });
}
