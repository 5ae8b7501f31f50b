// The emulated Redis databases: plan limits by type, the starting databases (several plans, one
// suspended, one near its disk threshold) and the records GET /v2/redis/databases serves, in the
// OpenAPI's `Database` shape with its secrets (`password`, `rest_token`, `read_only_rest_token`).
import { z } from 'zod';
import { ManagementError } from '../errors.js';
import { deterministicHostLabel, deterministicSecret, deterministicUuid } from '../ids.js';
import { unixSeconds } from '../time-format.js';

export const REDIS_TYPES = ['free', 'payg', 'pro', 'paid'] as const;
export type RedisType = (typeof REDIS_TYPES)[number];
export const REDIS_STATES = ['active', 'suspended', 'passive'] as const;
export type RedisState = (typeof REDIS_STATES)[number];

const MB = 1024 * 1024;
const GB = 1024 * MB;

interface PlanLimits {
  db_max_clients: number;
  db_max_request_size: number;
  db_max_entry_size: number;
  db_disk_threshold: number;
  db_memory_threshold: number;
  db_max_commands_per_second: number;
  db_request_limit: number;
  db_resource_size: string;
}

/** Limits by plan type (plausible figures of the pricing page; the OpenAPI gives none). */
export const REDIS_PLAN_LIMITS: Record<RedisType, PlanLimits> = {
  free: {
    db_max_clients: 1_000,
    db_max_request_size: 10 * MB,
    db_max_entry_size: 100 * MB,
    db_disk_threshold: 256 * MB,
    db_memory_threshold: 256 * MB,
    db_max_commands_per_second: 1_000,
    db_request_limit: 500_000,
    db_resource_size: 'S',
  },
  payg: {
    db_max_clients: 10_000,
    db_max_request_size: 10 * MB,
    db_max_entry_size: 100 * MB,
    db_disk_threshold: 100 * GB,
    db_memory_threshold: 3 * GB,
    db_max_commands_per_second: 10_000,
    db_request_limit: -1,
    db_resource_size: 'M',
  },
  pro: {
    db_max_clients: 100_000,
    db_max_request_size: 100 * MB,
    db_max_entry_size: 500 * MB,
    db_disk_threshold: 200 * GB,
    db_memory_threshold: 10 * GB,
    db_max_commands_per_second: 16_000,
    // The OpenAPI's example, beyond 2^53: a JSON reader must not choke on it.
    db_request_limit: Number('8024278031528736858'),
    db_resource_size: 'L',
  },
  paid: {
    db_max_clients: 10_000,
    db_max_request_size: 10 * MB,
    db_max_entry_size: 100 * MB,
    db_disk_threshold: 50 * GB,
    db_memory_threshold: 5 * GB,
    db_max_commands_per_second: 10_000,
    db_request_limit: -1,
    db_resource_size: 'M',
  },
};

/** How busy a database is: fractions of its limits its figures move around (traffic of stats.ts). */
export const newRedisDatabaseSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  type: z.enum(REDIS_TYPES).default('payg'),
  primary_region: z.string().min(1).default('us-east-1'),
  state: z.enum(REDIS_STATES).default('active'),
  /** Storage as a fraction of the disk threshold (the middle of its slow swing). */
  storage_fraction: z.number().min(0).max(2).default(0.3),
  /** Connections as a fraction of max clients. */
  connections_fraction: z.number().min(0).max(2).default(0.2),
  /** Commands per second as a fraction of the maximum. */
  throughput_fraction: z.number().min(0).max(2).default(0.1),
  /** Monthly budget, USD (0: none). */
  budget: z.number().int().min(0).default(0),
  /** Share of reads answered from an existing key. */
  hit_ratio: z.number().min(0).max(1).default(0.9),
});
export type NewRedisDatabase = z.input<typeof newRedisDatabaseSchema>;

/** A change of a database's state or figures (admin PATCH): the same fields, none required. */
export const redisDatabasePatchSchema = z.strictObject({
  state: z.enum(REDIS_STATES).optional(),
  storage_fraction: z.number().min(0).max(2).optional(),
  connections_fraction: z.number().min(0).max(2).optional(),
  throughput_fraction: z.number().min(0).max(2).optional(),
  budget: z.number().int().min(0).optional(),
  hit_ratio: z.number().min(0).max(1).optional(),
});
export type RedisProfile = z.output<typeof newRedisDatabaseSchema>;

export function parseNewDatabase(input: unknown): RedisProfile {
  const result = newRedisDatabaseSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ManagementError(
    'ERR_EMULATOR_INPUT',
    `invalid Redis database: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`,
  );
}

/** The starting databases: three healthy ones of three plans, one near its disk threshold, one suspended. */
export const INITIAL_REDIS_DATABASES: readonly { input: NewRedisDatabase; ageMs: number }[] = [
  {
    input: { name: 'orders-cache', type: 'pro', primary_region: 'us-east-1', budget: 2_000, throughput_fraction: 0.25 },
    ageMs: 400 * 86_400_000,
  },
  {
    input: { name: 'dev-playground', type: 'free', primary_region: 'us-central1', connections_fraction: 0.05 },
    ageMs: 30 * 86_400_000,
  },
  {
    input: {
      name: 'sessions',
      type: 'payg',
      primary_region: 'eu-west-1',
      storage_fraction: 0.95,
      // 20 commands/s: about $100 a month, well within its budget.
      throughput_fraction: 0.002,
      budget: 500,
    },
    ageMs: 200 * 86_400_000,
  },
  {
    input: { name: 'legacy-jobs', type: 'payg', primary_region: 'ap-southeast-1', state: 'suspended' },
    ageMs: 700 * 86_400_000,
  },
];

export interface RedisDatabaseEntry {
  id: string;
  profile: RedisProfile;
  createdMs: number;
  password: string;
  restToken: string;
  readOnlyRestToken: string;
  endpoint: string;
}

export function buildDatabase(
  email: string,
  seed: string,
  profile: RedisProfile,
  createdMs: number,
): RedisDatabaseEntry {
  return {
    id: deterministicUuid(`redis:${seed}`),
    profile,
    createdMs,
    password: deterministicSecret(email, `redis-password:${seed}`).slice(0, 32),
    restToken: deterministicSecret(email, `redis-rest:${seed}`),
    readOnlyRestToken: deterministicSecret(email, `redis-rest-ro:${seed}`),
    endpoint: `${deterministicHostLabel(`redis:${seed}`)}.upstash.io`,
  };
}

/** The record as the API serves it; `hideCredentials` is GET /redis/database/{id}?credentials=hide. */
export function servedDatabase(entry: RedisDatabaseEntry, hideCredentials = false): Record<string, unknown> {
  const { profile } = entry;
  const limits = REDIS_PLAN_LIMITS[profile.type];
  return {
    database_id: entry.id,
    database_name: profile.name,
    database_type: 'Pay as You Go',
    region: 'global',
    port: 6379,
    creation_time: unixSeconds(entry.createdMs),
    state: profile.state,
    ...(hideCredentials
      ? {}
      : { password: entry.password, rest_token: entry.restToken, read_only_rest_token: entry.readOnlyRestToken }),
    user_email: 'owner',
    endpoint: entry.endpoint,
    tls: true,
    eviction: profile.type !== 'free',
    auto_upgrade: false,
    consistent: false,
    modifying_state: '',
    ...limits,
    type: profile.type,
    budget: profile.budget,
    primary_region: profile.primary_region,
    primary_members: [profile.primary_region],
    all_members: [profile.primary_region],
    read_regions: [],
    db_type: 'pebble',
    db_conn_idle_timeout: 21_600_000_000_000,
    db_lua_timeout: 250_000_000,
    db_lua_credits_per_min: 10_000_000_000,
    db_store_max_idle: 900_000_000_000,
    db_max_loads_per_sec: 1_000_000,
    db_acl_enabled: 'false',
    db_acl_default_user_status: 'true',
    db_eviction: profile.type !== 'free',
    last_plan_upgrade_time: 0,
    replicas: 1,
    customer_id: 'owner',
    daily_backup_enabled: false,
    prometheus_enabled: 'false',
    prod_pack_enabled: false,
    securityAddons: { ipWhitelisting: false, vpcPeering: false, privateLink: false, tlsMutualAuth: false },
  };
}
