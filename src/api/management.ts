// ManagementClient: the Upstash developer API with Basic auth (account email : API key).
// Account record (the regional QStash user), official QStash usage, search index list and stats,
// vector index list and stats.
import { ApiNotFoundError, ApiRequestError } from './errors.js';
import { HttpClient } from './http.js';
import type { CallGate } from './call-gate.js';
import type { UpstreamClock } from './upstream-clock.js';
import type { CommonClientOptions } from './http.js';
import { parseWith } from './schemas/common.js';
import type { SchemaContext } from './schemas/common.js';
import {
  accountSchema,
  qstashStatsSchema,
  qstashUserListSchema,
  searchIndexListSchema,
  vectorIndexListSchema,
  vectorStatsSchema,
} from './schemas/management.js';
import type { Account, QStashStats, SearchIndex, VectorIndex, VectorStats } from './schemas/management.js';
import type { CallOptions } from './delivery.js';

export type {
  Account,
  QStashStats,
  SearchIndex,
  UsagePoint,
  VectorIndex,
  VectorStats,
  VectorStatsSeriesName,
} from './schemas/management.js';
export { VECTOR_STATS_SERIES } from './schemas/management.js';

/** The periods the search and vector stats endpoints take (the configuration offers the same). */
export type VectorStatsPeriod = '1h' | '3h' | '12h' | '1d' | '3d' | '7d' | '30d';

export interface ManagementClientOptions extends CommonClientOptions {
  email: string;
  apiKey: string;
  /** Path of the account record; `/v2/qstash/user` on the real service. */
  accountPath?: string;
  /** The configured QStash token: the regional user whose `token` equals it is the exporter's. */
  qstashToken?: string | null;
  /** Region of the configured QStash URL (qstashRegionOfUrl), the second way to choose a user. */
  qstashRegion?: string | null;
}

/** How the QStash user was chosen: its token, its region, or the legacy single-user endpoint. */
export type QStashUserSelection = 'token' | 'region' | 'legacy';

export interface QStashUser {
  account: Account;
  selectedBy: QStashUserSelection;
}

/** Which stats path answered: with the user id (current), or without (before 2026-03). */
export type QStashStatsPath = 'id' | 'legacy';

export interface QStashUsage {
  stats: QStashStats;
  path: QStashStatsPath;
}

/** Period of the QStash stats: the documented default (the daily series ignore it). */
export const QSTASH_STATS_PERIOD = '1h';

/**
 * The region of a QStash URL: `qstash-us-east-1.upstash.io` is us-east-1, the historic
 * `qstash.upstash.io` is eu-central-1 (multi-region docs); any other host has none.
 */
export function qstashRegionOfUrl(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host === 'qstash.upstash.io') return 'eu-central-1';
  return /^qstash-([a-z0-9-]+)\.upstash\.io$/.exec(host)?.[1] ?? null;
}

const ENDPOINTS = {
  search: '/v2/search',
  searchStats: '/v2/search/:id/stats',
  vectorIndexes: '/v2/vector/index',
  vectorStats: '/v2/vector/index/:id/stats',
} as const;

export class ManagementClient {
  private readonly http: HttpClient;
  private readonly accountPath: string;
  /** `/v2/qstash` of `/v2/qstash/user`: where users and stats live; null for another path. */
  private readonly servicePrefix: string | null;
  private readonly qstashToken: string | null;
  private readonly qstashRegion: string | null;
  /** `absent` after a 404 before any answer (an older service): the legacy record until restart. */
  private usersPath: 'unknown' | 'present' | 'absent' = 'unknown';
  private statsById: 'unknown' | 'present' | 'absent' = 'unknown';

  constructor(options: ManagementClientOptions) {
    this.http = new HttpClient({
      ...options,
      api: 'management',
      credentials: { scheme: 'basic', username: options.email, password: options.apiKey },
    });
    this.accountPath = options.accountPath ?? '/v2/qstash/user';
    this.servicePrefix = this.accountPath.endsWith('/user') ? this.accountPath.slice(0, -'/user'.length) : null;
    this.qstashToken = options.qstashToken ?? null;
    this.qstashRegion = options.qstashRegion ?? null;
  }

  /** The management API's clock, from the Date header of its answers. */
  get upstreamClock(): UpstreamClock {
    return this.http.upstreamClock;
  }

  /** The wait the service asked for, kept by every request of this client. */
  get callGate(): CallGate {
    return this.http.callGate;
  }

  /**
   * The exporter's QStash user: of GET /v2/qstash/users the record whose token is the configured
   * QStash token, else the one in the QStash URL's region, else the legacy GET /v2/qstash/user.
   * A service without the list (404 before it ever answered) is asked the legacy path until restart.
   */
  async qstashUser(call: CallOptions = {}): Promise<QStashUser> {
    const usersPath = this.servicePrefix === null ? null : `${this.servicePrefix}/users`;
    if (usersPath !== null && this.usersPath !== 'absent') {
      let list: ReturnType<typeof qstashUserListSchema.parse> | undefined;
      try {
        list = parseWith(qstashUserListSchema, await this.get(usersPath, usersPath, call), context(usersPath));
        this.usersPath = 'present';
      } catch (error) {
        if (!(error instanceof ApiNotFoundError) || this.usersPath === 'present') throw error;
        this.usersPath = 'absent';
      }
      if (list !== undefined) {
        const byToken = this.qstashToken === null ? undefined : list.find((user) => user.token === this.qstashToken);
        if (byToken !== undefined)
          return { account: parseWith(accountSchema, byToken, context(usersPath)), selectedBy: 'token' };
        const byRegion =
          this.qstashRegion === null ? undefined : list.find((user) => user.region === this.qstashRegion);
        if (byRegion !== undefined)
          return { account: parseWith(accountSchema, byRegion, context(usersPath)), selectedBy: 'region' };
      }
    }
    return { account: await this.account(call), selectedBy: 'legacy' };
  }

  /**
   * Official usage of a QStash user: GET /v2/qstash/stats/{id}?period=, or the older
   * GET /v2/qstash/stats?period= (no id) after the first answers 404 before it ever answered.
   */
  async qstashStats(userId: string | undefined, call: CallOptions = {}): Promise<QStashUsage> {
    if (this.servicePrefix === null) {
      throw new ApiRequestError(
        `the stats path cannot be derived from the account path ${this.accountPath} (it does not end in /user)`,
        context(this.accountPath),
      );
    }
    const query = `?period=${QSTASH_STATS_PERIOD}`;
    const legacyPath = `${this.servicePrefix}/stats`;
    if (userId !== undefined && userId !== '' && this.statsById !== 'absent') {
      const endpoint = `${legacyPath}/:id`;
      try {
        const data = await this.get(endpoint, `${legacyPath}/${encodeURIComponent(userId)}${query}`, call);
        this.statsById = 'present';
        return { stats: parseWith(qstashStatsSchema, data, context(endpoint)), path: 'id' };
      } catch (error) {
        if (!(error instanceof ApiNotFoundError) || this.statsById === 'present') throw error;
        this.statsById = 'absent';
      }
    }
    const data = await this.get(legacyPath, `${legacyPath}${query}`, call);
    return { stats: parseWith(qstashStatsSchema, data, context(legacyPath)), path: 'legacy' };
  }

  /** The account record with its plan limits (secret fields removed). */
  async account(call: CallOptions = {}): Promise<Account> {
    return parseWith(
      accountSchema,
      await this.get(this.accountPath, this.accountPath, call),
      context(this.accountPath),
    );
  }

  /** Search indexes of the account (secret fields removed). */
  async listSearchIndexes(call: CallOptions = {}): Promise<SearchIndex[]> {
    const data = await this.get(ENDPOINTS.search, ENDPOINTS.search, call);
    return parseWith(searchIndexListSchema, data, context(ENDPOINTS.search));
  }

  /** Usage of one search index over `period` (default 1h): the vector stats shape. */
  async searchStats(indexId: string, period: VectorStatsPeriod = '1h', call: CallOptions = {}): Promise<VectorStats> {
    if (typeof indexId !== 'string' || indexId === '') {
      throw new ApiRequestError('a non-empty search index id is required', context(ENDPOINTS.searchStats));
    }
    const path = `/v2/search/${encodeURIComponent(indexId)}/stats?period=${encodeURIComponent(period)}`;
    const data = await this.get(ENDPOINTS.searchStats, path, call);
    return parseWith(vectorStatsSchema, data, context(ENDPOINTS.searchStats));
  }

  /** Vector indexes of the account (secret fields removed). */
  async listVectorIndexes(call: CallOptions = {}): Promise<VectorIndex[]> {
    const data = await this.get(ENDPOINTS.vectorIndexes, ENDPOINTS.vectorIndexes, call);
    return parseWith(vectorIndexListSchema, data, context(ENDPOINTS.vectorIndexes));
  }

  /** Usage counters and time series of one vector index over `period` (default 1h). */
  async vectorStats(indexId: string, period: VectorStatsPeriod = '1h', call: CallOptions = {}): Promise<VectorStats> {
    if (typeof indexId !== 'string' || indexId === '') {
      throw new ApiRequestError('a non-empty vector index id is required', context(ENDPOINTS.vectorStats));
    }
    const path = `/v2/vector/index/${encodeURIComponent(indexId)}/stats?period=${encodeURIComponent(period)}`;
    const data = await this.get(ENDPOINTS.vectorStats, path, call);
    return parseWith(vectorStatsSchema, data, context(ENDPOINTS.vectorStats));
  }

  /**
   * One GET of the developer API with these credentials, through the request core (timeouts,
   * retries, rate-limit pacing, the request hook): the raw JSON, for a product's own calls
   * (src/collectors/<product>/) to parse with its schemas. `endpoint` is the route template the
   * self metrics and errors name, `path` the concrete path.
   */
  getJson(endpoint: string, path: string, call: CallOptions = {}): Promise<unknown> {
    return this.get(endpoint, path, call);
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private get(endpoint: string, path: string, call: CallOptions): Promise<unknown> {
    return this.http.request({
      method: 'GET',
      endpoint,
      path,
      response: 'json',
      ...(call.signal ? { signal: call.signal } : {}),
    });
  }
}

function context(endpoint: string): SchemaContext {
  return { api: 'management', endpoint, method: 'GET' };
}
