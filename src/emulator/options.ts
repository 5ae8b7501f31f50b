// Options of createEmulator(): listen address, credentials, plan, header prefix, PRNG seed,
// delivery limits, the initial knobs and the regions served. Defaults are the documented
// development values.
import { regionalUserToken, type PlanProfile } from './management/index.js';
import { DEFAULT_KNOBS, mergeKnobs, parseKnobsPatch, type Knobs } from './knobs.js';
import { DEV_SIGNING_KEYS } from './delivery/signing.js';
import { DEFAULT_REGION, isRegionName, regionalDevSigningKeys } from './regions.js';

export type { PlanProfile };

export interface EmulatorOptions {
  /** Address to listen on; loopback by default. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Delivery token (Bearer) of the QStash interface. */
  token: string;
  /** Basic-auth user (account email) and password (API key) of the management interface. */
  email: string;
  apiKey: string;
  /** Plan profile: default retries and delivery timeout, and the management account record. */
  plan: PlanProfile;
  /** Prefix of the service's own headers: `Upstash-` like the real service, or e.g. `Svc-`. */
  headerPrefix: string;
  /** Seed of the PRNG behind the fault ratios and ids, so runs are reproducible. */
  seed: number;
  /** Deliver to hosts other than loopback (127.0.0.0/8, localhost, ::1). Off by default. */
  allowRemoteDestinations: boolean;
  /** Request body limit in bytes for enqueue, publish, schedules and trigger (413 above it). */
  maxBodyBytes: number;
  /** Delivery attempts in flight at once, across all messages. */
  concurrency: number;
  /** Service names under which the management account record is served: /v2/<name>/user. */
  serviceNames: string[];
  /** Initial knobs (time scale, retention, faults...). */
  knobs: Partial<Knobs>;
  /** Key every delivery is signed with (`Upstash-Signature`); rotation makes `nextSigningKey` current. */
  currentSigningKey: string;
  nextSigningKey: string;
  /**
   * The QStash regions served, each its own delivery API (store, token, signing keys, knobs) at
   * its own address; the management API (one, account-wide) is served on every one of them.
   * Empty: one region, `eu-central-1`. The first region takes the options above for what it
   * does not set; a later one listens on `host` at a free port, with its own public development
   * token and signing keys (regions.ts), the same plan and a copy of the knobs.
   */
  regions: Array<string | RegionOptions>;
}

/** One region of a multi-region emulator; unset fields as `EmulatorOptions.regions` says. */
export interface RegionOptions {
  /** As the account records spell it: `eu-central-1`, `us-east-1`. */
  name: string;
  host?: string;
  port?: number;
  token?: string;
  currentSigningKey?: string;
  nextSigningKey?: string;
  plan?: PlanProfile;
  knobs?: Partial<Knobs>;
}

/** Public development credentials, used when none are given (printed by the CLI at start). */
export const DEV_CREDENTIALS = Object.freeze({
  // The official QStash dev server's public token (base64 of a JSON user/password pair).
  token: 'eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=',
  email: 'dev@emulator.local',
  apiKey: 'emulator-dev-api-key',
});

export const DEFAULT_OPTIONS: Readonly<EmulatorOptions> = Object.freeze({
  host: '127.0.0.1',
  port: 0,
  token: DEV_CREDENTIALS.token,
  email: DEV_CREDENTIALS.email,
  apiKey: DEV_CREDENTIALS.apiKey,
  plan: 'payg',
  headerPrefix: 'Upstash-',
  seed: 1,
  allowRemoteDestinations: false,
  maxBodyBytes: 1024 * 1024,
  concurrency: 64,
  serviceNames: ['qstash', 'svc'],
  knobs: {},
  currentSigningKey: DEV_SIGNING_KEYS.current,
  nextSigningKey: DEV_SIGNING_KEYS.next,
  regions: [],
});

export interface PlanDefaults {
  /** Retries when the message does not say (free 3, paid plans 5; docs/emulator.md). */
  retries: number;
  /** Longest delivery request, in ms; Upstash-Timeout may only shorten it. */
  timeoutMs: number;
}

const MINUTE = 60_000;
export const PLAN_DEFAULTS: Readonly<Record<PlanProfile, PlanDefaults>> = Object.freeze({
  free: { retries: 3, timeoutMs: 15 * MINUTE },
  payg: { retries: 5, timeoutMs: 120 * MINUTE },
  fixed: { retries: 5, timeoutMs: 360 * MINUTE },
});

/** Retries of a workflow trigger when the request does not say. */
export const TRIGGER_DEFAULT_RETRIES = 3;

/** The options of one region's delivery API (and its share of the account). */
export interface ResolvedOptions extends Omit<EmulatorOptions, 'knobs' | 'regions'> {
  /** The region served with these options. */
  region: string;
  knobs: Knobs;
}

/** One ResolvedOptions per region served, the first region first; throws TypeError on a bad one. */
export function resolveRegionOptions(partial: Partial<EmulatorOptions>): ResolvedOptions[] {
  const first = resolveOptions(partial);
  const regions = (partial.regions ?? []).map((region) => (typeof region === 'string' ? { name: region } : region));
  if (regions.length === 0) return [first];
  const resolved = regions.map((region, index): ResolvedOptions => {
    if (typeof region.name !== 'string' || !isRegionName(region.name))
      throw new TypeError(`region names look like eu-central-1 or us-east-1, got ${JSON.stringify(region.name)}`);
    const defaults: ResolvedOptions =
      index === 0
        ? first
        : {
            ...first,
            port: 0,
            token: regionalUserToken(first.email, region.name),
            currentSigningKey: regionalDevSigningKeys(region.name).current,
            nextSigningKey: regionalDevSigningKeys(region.name).next,
          };
    const { name, knobs, ...fields } = region;
    const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    const options = resolveOptions({ ...defaults, ...defined, knobs: { ...defaults.knobs, ...knobs }, regions: [] });
    return { ...options, region: name };
  });
  for (const [index, region] of resolved.entries()) {
    const other = resolved.slice(0, index).find((earlier) => earlier.region === region.region);
    if (other) throw new TypeError(`region ${region.region} is given twice`);
    // The same token in two regions would let one region's client into the other.
    const sameToken = resolved.slice(0, index).find((earlier) => earlier.token === region.token);
    if (sameToken) throw new TypeError(`regions ${sameToken.region} and ${region.region} have the same token`);
  }
  return resolved;
}

/** The options of a single-region emulator (the first region's, when several are given). */
export function resolveOptions(partial: Partial<EmulatorOptions>): ResolvedOptions {
  const defined = Object.fromEntries(
    Object.entries(partial).filter(([, value]) => value !== undefined),
  ) as Partial<EmulatorOptions>;
  const merged = { ...DEFAULT_OPTIONS, ...defined };
  if (!/^[A-Za-z][A-Za-z0-9]*-$/.test(merged.headerPrefix)) {
    throw new TypeError(`headerPrefix must be letters and digits ending in "-", got "${merged.headerPrefix}"`);
  }
  if (!Number.isInteger(merged.concurrency) || merged.concurrency < 1) {
    throw new TypeError('concurrency must be a positive integer');
  }
  if (!Number.isInteger(merged.maxBodyBytes) || merged.maxBodyBytes < 1) {
    throw new TypeError('maxBodyBytes must be a positive integer');
  }
  for (const key of ['currentSigningKey', 'nextSigningKey'] as const) {
    if (typeof merged[key] !== 'string' || merged[key].trim() === '')
      throw new TypeError(`${key} must be a non-empty string`);
  }
  if (typeof merged.token !== 'string' || merged.token.trim() === '')
    throw new TypeError('token must be a non-empty string');
  const { regions, ...single } = merged;
  const first = regions[0];
  return {
    ...single,
    region: (typeof first === 'string' ? first : first?.name) ?? DEFAULT_REGION,
    knobs: mergeKnobs({ ...DEFAULT_KNOBS, faultScope: [...DEFAULT_KNOBS.faultScope] }, parseKnobsPatch(merged.knobs)),
  };
}
