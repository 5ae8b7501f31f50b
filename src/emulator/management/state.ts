// The management side's mutable state (account, search and vector indexes) and everything that
// reads it. Both the HTTP routes and in-process callers (the app's EmulatorHandle, tests) go
// through this class; inputs are validated the same way on both paths.
import { ManagementError } from './errors.js';
import {
  accountPatchSchema,
  newSearchIndexSchema,
  newVectorIndexSchema,
  parseInput,
  type AccountPatch,
  type NewSearchIndex,
  type NewVectorIndex,
  type StatsPeriod,
} from './inputs.js';
import { ACCOUNT_LIMITS, type PlanProfile } from './plans.js';
import {
  NO_TRAFFIC,
  qstashStats,
  serveAccount,
  type ManagementApiVersion,
  type QStashStatsRecord,
  type ServedAccount,
  type TrafficReader,
} from './qstash-users.js';
import {
  ACCOUNT_AGE_MS,
  SECONDARY_PLAN,
  SECONDARY_REGION,
  INITIAL_SEARCH_INDEXES,
  INITIAL_VECTOR_INDEXES,
  buildAccount,
  buildSearchIndex,
  buildVectorIndex,
  type AccountRecord,
  type Owner,
  type SearchIndexEntry,
  type ServedSearchIndex,
  type ServedVectorIndex,
  type VectorIndexEntry,
} from './records.js';
import { searchAsVectorRecord, searchTraffic } from './search-stats.js';
import { unixSeconds } from './time-format.js';
import {
  throughputVector,
  vectorStats,
  vectorStatsScalars,
  type VectorStats,
  type VectorStatsScalars,
} from './vector-stats.js';

export interface ManagementStateOptions {
  email: string;
  deliveryToken: string;
  plan: PlanProfile;
  now: () => number;
  /** What the delivery side billed: the primary user's official usage. None by default. */
  traffic?: TrafficReader;
  /** Which version of the API is served (the `managementApi` knob); current by default. */
  apiVersion?: () => ManagementApiVersion;
}

/** Everything the management API would serve right now, for tests to compare an exporter with. */
export interface ManagementSnapshot {
  /** The clock reading (epoch ms) the snapshot was taken at. */
  now: number;
  plan: PlanProfile;
  /** The record the legacy path GET /v2/qstash/user serves (the primary user). */
  account: ServedAccount;
  /** Every regional user as GET /v2/qstash/users serves them (empty on the legacy API version). */
  users: ServedAccount[];
  searchIndexes: ServedSearchIndex[];
  vectorIndexes: ServedVectorIndex[];
  /** Scalar statistics per vector index id (the series are on the stats endpoint). */
  vectorStats: Record<string, VectorStatsScalars>;
}

export class ManagementState {
  private readonly owner: Owner;
  private readonly startMs: number;
  // Assigned by reset(), which the constructor calls.
  private plan!: PlanProfile;
  private accountRecord!: AccountRecord;
  /** The user of the other region (its own token and plan, no traffic here). */
  private secondaryRecord!: AccountRecord;
  private search = new Map<string, SearchIndexEntry>();
  private vector = new Map<string, VectorIndexEntry>();
  /** Counts indexes added after start, so their ids stay deterministic (and unique per name). */
  private additions = 0;

  constructor(private readonly options: ManagementStateOptions) {
    this.owner = { email: options.email, deliveryToken: options.deliveryToken };
    this.startMs = Math.floor(options.now() / 1000) * 1000;
    this.reset();
  }

  /** Back to the starting data: the configured plan, the two search and two vector indexes. */
  reset(): void {
    this.plan = this.options.plan;
    this.accountRecord = buildAccount(this.owner, this.plan, this.startMs - ACCOUNT_AGE_MS);
    this.secondaryRecord = buildAccount(this.owner, SECONDARY_PLAN, this.startMs - ACCOUNT_AGE_MS, SECONDARY_REGION);
    this.additions = 0;
    this.search = new Map();
    for (const { input, ageMs } of INITIAL_SEARCH_INDEXES) {
      const entry = buildSearchIndex(this.owner, `search:${input.name}`, input, this.startMs - ageMs);
      this.search.set(entry.record.id, entry);
    }
    this.vector = new Map();
    for (const { input, ageMs } of INITIAL_VECTOR_INDEXES) {
      const entry = buildVectorIndex(this.owner, `vector:${input.name}`, input, this.startMs - ageMs);
      this.vector.set(entry.record.id, entry);
    }
  }

  currentPlan(): PlanProfile {
    return this.plan;
  }

  /** The primary user as the legacy path serves it. */
  account(): ServedAccount {
    return this.accountFor('qstash');
  }

  apiVersion(): ManagementApiVersion {
    return this.options.apiVersion?.() ?? 'current';
  }

  /** The primary user as served under the legacy path /v2/<serviceName>/user. */
  accountFor(serviceName: string): ServedAccount {
    return serveAccount(this.accountRecord, this.apiVersion(), serviceName);
  }

  /** Every regional user as GET /v2/<serviceName>/users serves them. */
  usersFor(serviceName: string): ServedAccount[] {
    return [this.accountRecord, this.secondaryRecord].map((record) =>
      serveAccount(record, this.apiVersion(), serviceName),
    );
  }

  /** One user by id, as GET /v2/<serviceName>/user/{id} serves it. */
  userFor(serviceName: string, id: string): ServedAccount {
    const user = this.usersFor(serviceName).find((candidate) => candidate.id === id);
    if (!user) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'user not found');
    return user;
  }

  /**
   * Official usage of a user (GET /v2/qstash/stats/{id}); without an id, of the primary user
   * (the older GET /v2/qstash/stats). The primary user's usage is the emulator's real traffic.
   */
  qstashStats(id: string | undefined, period: StatsPeriod = '1h'): QStashStatsRecord {
    const now = this.options.now();
    if (id === undefined || id === this.accountRecord.id) {
      return qstashStats(this.accountRecord, this.plan, this.options.traffic ?? NO_TRAFFIC, now, period);
    }
    if (id === this.secondaryRecord.id)
      return qstashStats(this.secondaryRecord, SECONDARY_PLAN, NO_TRAFFIC, now, period);
    throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'user not found');
  }

  /**
   * Changes the account. `plan` first resets every limit to that profile and stamps
   * `last_plan_upgrade_time`; the other fields then override. Setting only one of `state` and
   * `active` keeps the other consistent (`passive` <-> `active: false`).
   */
  patchAccount(patch: AccountPatch): ServedAccount {
    const { plan, ...fields } = parseInput(accountPatchSchema, patch, 'account patch');
    let next: AccountRecord = { ...this.accountRecord };
    if (plan !== undefined) {
      next = { ...next, ...ACCOUNT_LIMITS[plan], last_plan_upgrade_time: unixSeconds(this.options.now()) };
      this.plan = plan;
    }
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) (next as unknown as Record<string, unknown>)[key] = value;
    }
    if (fields.state !== undefined && fields.active === undefined) next.active = fields.state === 'active';
    if (fields.active !== undefined && fields.state === undefined) next.state = fields.active ? 'active' : 'passive';
    this.accountRecord = next;
    return this.account();
  }

  searchIndexes(): ServedSearchIndex[] {
    return [...this.search.values()].map((entry) => this.serveSearch(entry));
  }

  searchIndex(id: string): ServedSearchIndex {
    return this.serveSearch(this.findSearch(id));
  }

  /** Usage of a search index: the vector stats shape, from its query rate (searchTraffic). */
  searchStats(id: string, period: StatsPeriod = '1h'): VectorStats {
    const entry = this.findSearch(id);
    return vectorStats(searchAsVectorRecord(entry.record), searchTraffic(entry), this.options.now(), period);
  }

  addSearchIndex(input: NewSearchIndex = {}): ServedSearchIndex {
    const parsed = parseInput(newSearchIndexSchema, input, 'search index');
    this.additions += 1;
    const name = parsed.name ?? `search-index-${this.additions}`;
    const entry = buildSearchIndex(
      this.owner,
      `search:${name}:${this.additions}`,
      { ...parsed, name },
      this.options.now(),
    );
    this.search.set(entry.record.id, entry);
    return this.serveSearch(entry);
  }

  deleteSearchIndex(id: string): void {
    this.findSearch(id);
    this.search.delete(id);
  }

  vectorIndexes(): ServedVectorIndex[] {
    return [...this.vector.values()].map((entry) => this.serveVector(entry));
  }

  vectorIndex(id: string): ServedVectorIndex {
    return this.serveVector(this.findVector(id));
  }

  vectorStats(id: string, period: StatsPeriod = '1h'): VectorStats {
    const { record, traffic } = this.findVector(id);
    return vectorStats(record, traffic, this.options.now(), period);
  }

  addVectorIndex(input: NewVectorIndex = {}): ServedVectorIndex {
    const parsed = parseInput(newVectorIndexSchema, input, 'vector index');
    this.additions += 1;
    const name = parsed.name ?? `vector-index-${this.additions}`;
    const entry = buildVectorIndex(
      this.owner,
      `vector:${name}:${this.additions}`,
      { ...parsed, name },
      this.options.now(),
    );
    this.vector.set(entry.record.id, entry);
    return this.serveVector(entry);
  }

  deleteVectorIndex(id: string): void {
    this.findVector(id);
    this.vector.delete(id);
  }

  snapshot(): ManagementSnapshot {
    const now = this.options.now();
    const stats: Record<string, VectorStatsScalars> = {};
    for (const { record, traffic } of this.vector.values()) {
      stats[record.id] = vectorStatsScalars(record, traffic, now);
    }
    return {
      now,
      plan: this.plan,
      account: this.account(),
      users: this.apiVersion() === 'legacy' ? [] : this.usersFor('qstash'),
      searchIndexes: this.searchIndexes(),
      vectorIndexes: this.vectorIndexes(),
      vectorStats: stats,
    };
  }

  private findSearch(id: string): SearchIndexEntry {
    const entry = this.search.get(id);
    if (!entry) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'search index not found');
    return entry;
  }

  private findVector(id: string): VectorIndexEntry {
    const entry = this.vector.get(id);
    if (!entry) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'vector index not found');
    return entry;
  }

  private serveSearch({ record, queriesPerMinute }: SearchIndexEntry): ServedSearchIndex {
    return {
      ...record,
      throughput_vector: throughputVector(queriesPerMinute, record.creation_time * 1000, this.options.now()),
    };
  }

  private serveVector({ record, traffic }: VectorIndexEntry): ServedVectorIndex {
    return {
      ...record,
      throughput_vector: throughputVector(traffic.queries_per_minute, record.creation_time * 1000, this.options.now()),
    };
  }
}
