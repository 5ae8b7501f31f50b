// Options of createEmulator(): listen address, credentials, plan, header prefix, PRNG seed,
// delivery limits and the initial knobs. Defaults are the documented development values.
import type { PlanProfile } from './management/index.js';
import { DEFAULT_KNOBS, mergeKnobs, parseKnobsPatch, type Knobs } from './knobs.js';
import { DEV_SIGNING_KEYS } from './delivery/signing.js';

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

export interface ResolvedOptions extends Omit<EmulatorOptions, 'knobs'> {
  knobs: Knobs;
}

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
  return {
    ...merged,
    knobs: mergeKnobs({ ...DEFAULT_KNOBS, faultScope: [...DEFAULT_KNOBS.faultScope] }, parseKnobsPatch(merged.knobs)),
  };
}
