// The account's records (one regional QStash user each), their builder and the emulator's
// starting data. Field names and types follow the real API (./README.md says where they differ
// from the documented ones); unix seconds for every creation time. The products' records (search,
// vector, Redis) are in their own folders.
import { deterministicSecret, deterministicUuid } from './ids.js';
import { ACCOUNT_LIMITS, type AccountLimits, type PlanProfile } from './plans.js';
import { DAY_MS, unixSeconds } from './time-format.js';

/**
 * Everything the emulator knows of one regional QStash user. What is served is a view of it
 * (qstash-users.ts): the current record (region, read_only_token, budget, ...; no password) or
 * the legacy one (password; no region), as the `managementApi` knob says.
 */
export interface AccountRecord extends AccountLimits {
  customer_id: string;
  id: string;
  password: string;
  token: string;
  read_only_token: string;
  active: boolean;
  state: 'active' | 'passive';
  last_plan_upgrade_time: number;
  prod_pack_enabled: boolean;
  created_by: string;
  creation_time: number;
  region: string;
  budget: number;
  max_bandwidth_per_second: number;
  /** Text, as the current service sends it. */
  prometheus_enabled: 'true' | 'false';
  modifying_state: string;
  deletion_time: number;
}

/** Whose records they are: the account's email (the seed of its ids and fake secrets). */
export interface Owner {
  email: string;
}

/** The region whose user keeps the seeds of the single-user emulator (ids unchanged since then). */
export const PRIMARY_REGION = 'eu-central-1';
/** Plan of a regional user the emulator does not serve a delivery API for. */
export const UNSERVED_REGION_PLAN: PlanProfile = 'free';

/** Bytes per second a plan may move (the record's max_bandwidth_per_second; no documented figures). */
const BANDWIDTH_PER_SECOND: Record<PlanProfile, number> = { free: 10_485_760, payg: 104_857_600, fixed: 524_288_000 };

function userSeed(email: string, region: string): string {
  return region === PRIMARY_REGION ? email : `${email}:${region}`;
}

/**
 * The token of a regional user when none is given: deterministic, so a region's client and the
 * record listing it agree on every start (a region's delivery token in a multi-region emulator).
 */
export function regionalUserToken(email: string, region: string): string {
  return deterministicSecret(email, `qstash-token:${email}:${region}`);
}

/** One regional QStash user; `token` is its region's delivery token. */
export function buildAccount(
  owner: Owner,
  plan: PlanProfile,
  createdMs: number,
  region: string,
  token: string,
): AccountRecord {
  const created = unixSeconds(createdMs);
  const seed = userSeed(owner.email, region);
  return {
    customer_id: owner.email,
    id: deterministicUuid(`account:${seed}`),
    password: deterministicSecret(owner.email, `account-password:${seed}`),
    token,
    read_only_token: deterministicSecret(owner.email, `qstash-read-only-token:${seed}`),
    active: true,
    state: 'active',
    last_plan_upgrade_time: created,
    ...ACCOUNT_LIMITS[plan],
    prod_pack_enabled: false,
    created_by: owner.email,
    creation_time: created,
    region,
    budget: 0,
    max_bandwidth_per_second: BANDWIDTH_PER_SECOND[plan],
    prometheus_enabled: 'false',
    modifying_state: '',
    deletion_time: 0,
  };
}

/** Starting data, created this long before the emulator starts. */
export const ACCOUNT_AGE_MS = 400 * DAY_MS;
