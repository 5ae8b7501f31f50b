// The account's mutable state (its regional QStash users, their plans and usage) and everything
// that reads it. Both the HTTP routes and in-process callers (the app's EmulatorHandle, tests) go
// through this class; inputs are validated the same way on both paths. The products (search,
// vector, Redis) are resources of their own (./resources.ts).
import { ManagementError } from './errors.js';
import { accountPatchSchema, parseInput, type AccountPatch } from './inputs.js';
import type { StatsPeriod } from './periods.js';
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
import { KNOWN_REGIONS } from '../regions.js';
import {
  ACCOUNT_AGE_MS,
  UNSERVED_REGION_PLAN,
  buildAccount,
  regionalUserToken,
  type AccountRecord,
  type Owner,
} from './records.js';
import { unixSeconds } from './time-format.js';

/** A region whose delivery API the emulator serves, and so whose QStash user it knows. */
export interface ServedRegion {
  /** As the records spell it: `eu-central-1`, `us-east-1`. */
  region: string;
  /** The region's delivery token: the user's `token`. */
  token: string;
  plan: PlanProfile;
  /** What that region's delivery API billed: the user's official usage. None by default. */
  traffic?: TrafficReader;
}

export interface ManagementStateOptions {
  email: string;
  /** Token, plan and traffic of the first (or only) region when `regions` is not given. */
  deliveryToken: string;
  plan: PlanProfile;
  now: () => number;
  traffic?: TrafficReader;
  /** Which version of the API is served (the `managementApi` knob); current by default. */
  apiVersion?: () => ManagementApiVersion;
  /**
   * The regions served, in order; the first one's user is the primary (the legacy path's).
   * Default: one, eu-central-1, with `deliveryToken`, `plan` and `traffic`. The account also
   * lists a user in each known region not served (free plan, no traffic), as before regions.
   */
  regions?: ServedRegion[];
}

/** One regional user: its record, the plan it was built from, and what it billed. */
interface RegionalUser {
  region: string;
  plan: PlanProfile;
  record: AccountRecord;
  traffic: TrafficReader;
}

/** The account as the management API would serve it right now (GET /state adds each resource's fields). */
export interface AccountSnapshot {
  /** The clock reading (epoch ms) the snapshot was taken at. */
  now: number;
  plan: PlanProfile;
  /** The record the legacy path GET /v2/qstash/user serves (the primary user). */
  account: ServedAccount;
  /** Every regional user as GET /v2/qstash/users serves them (empty on the legacy API version). */
  users: ServedAccount[];
}

export class ManagementState {
  private readonly owner: Owner;
  private readonly startMs: number;
  private readonly served: ServedRegion[];
  /** Assigned by reset(), which the constructor calls: the served regions first, in order. */
  private users!: RegionalUser[];

  constructor(private readonly options: ManagementStateOptions) {
    this.owner = { email: options.email };
    this.served =
      options.regions && options.regions.length > 0
        ? options.regions
        : [
            {
              region: 'eu-central-1',
              token: options.deliveryToken,
              plan: options.plan,
              ...(options.traffic ? { traffic: options.traffic } : {}),
            },
          ];
    this.startMs = Math.floor(options.now() / 1000) * 1000;
    this.reset();
  }

  /** Back to the starting data: the configured plans. */
  reset(): void {
    const created = this.startMs - ACCOUNT_AGE_MS;
    const unserved = KNOWN_REGIONS.filter((region) => !this.served.some((served) => served.region === region));
    this.users = [
      ...this.served.map(({ region, token, plan, traffic }) => ({
        region,
        plan,
        record: buildAccount(this.owner, plan, created, region, token),
        traffic: traffic ?? NO_TRAFFIC,
      })),
      ...unserved.map((region) => ({
        region,
        plan: UNSERVED_REGION_PLAN,
        record: buildAccount(
          this.owner,
          UNSERVED_REGION_PLAN,
          created,
          region,
          regionalUserToken(this.owner.email, region),
        ),
        traffic: NO_TRAFFIC,
      })),
    ];
  }

  /** The plan in force of a region's user (the primary's without a region). */
  currentPlan(region?: string): PlanProfile {
    return this.user(region).plan;
  }

  /** The regions whose users the account lists, primary first. */
  regions(): string[] {
    return this.users.map((user) => user.region);
  }

  /** A region's user; the primary without a region; throws ERR_EMULATOR_NOT_FOUND for an unknown one. */
  private user(region?: string): RegionalUser {
    const user = region === undefined ? this.users[0] : this.users.find((candidate) => candidate.region === region);
    if (!user) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', `no QStash user in region ${String(region)}`);
    return user;
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
    return serveAccount(this.user().record, this.apiVersion(), serviceName);
  }

  /** Every regional user as GET /v2/<serviceName>/users serves them. */
  usersFor(serviceName: string): ServedAccount[] {
    return this.users.map(({ record }) => serveAccount(record, this.apiVersion(), serviceName));
  }

  /** One user by id, as GET /v2/<serviceName>/user/{id} serves it. */
  userFor(serviceName: string, id: string): ServedAccount {
    const user = this.usersFor(serviceName).find((candidate) => candidate.id === id);
    if (!user) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'user not found');
    return user;
  }

  /**
   * Official usage of a user (GET /v2/qstash/stats/{id}); without an id, of the primary user
   * (the older GET /v2/qstash/stats). A served region's usage is its delivery API's real traffic.
   */
  qstashStats(id: string | undefined, period: StatsPeriod = '1h'): QStashStatsRecord {
    const user = id === undefined ? this.user() : this.users.find((candidate) => candidate.record.id === id);
    if (!user) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', 'user not found');
    return qstashStats(user.record, user.plan, user.traffic, this.options.now(), period);
  }

  /**
   * Changes the account. `plan` first resets every limit to that profile and stamps
   * `last_plan_upgrade_time`; the other fields then override. Setting only one of `state` and
   * `active` keeps the other consistent (`passive` <-> `active: false`). Without a region, the
   * primary user changes.
   */
  patchAccount(patch: AccountPatch, region?: string): ServedAccount {
    const user = this.user(region);
    const { plan, ...fields } = parseInput(accountPatchSchema, patch, 'account patch');
    let next: AccountRecord = { ...user.record };
    if (plan !== undefined) {
      next = { ...next, ...ACCOUNT_LIMITS[plan], last_plan_upgrade_time: unixSeconds(this.options.now()) };
      user.plan = plan;
    }
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) (next as unknown as Record<string, unknown>)[key] = value;
    }
    if (fields.state !== undefined && fields.active === undefined) next.active = fields.state === 'active';
    if (fields.active !== undefined && fields.state === undefined) next.state = fields.active ? 'active' : 'passive';
    user.record = next;
    return serveAccount(next, this.apiVersion(), 'qstash');
  }

  snapshot(): AccountSnapshot {
    return {
      now: this.options.now(),
      plan: this.currentPlan(),
      account: this.account(),
      users: this.apiVersion() === 'legacy' ? [] : this.usersFor('qstash'),
    };
  }
}
