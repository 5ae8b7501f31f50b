// What the runner (runner.ts) reports of each collector: its status, read by the landing page and
// the readiness probe, and the text of a failed poll, short and without secrets.

import { errorCode } from '../common/errors.js';
import { createScrubber } from '../logging/index.js';
import type { CollectorName } from './collector.js';

const MAX_ERROR_TEXT = 300;

export interface CollectorStatus {
  name: CollectorName;
  /** The QStash region of a region-scoped instance; null for an account-scoped or disabled one. */
  region: string | null;
  /** A collector object exists and is scheduled. */
  enabled: boolean;
  /** Why it is off (from the configuration), null when enabled. */
  disabledReason: string | null;
  /** A poll is in flight right now. */
  running: boolean;
  /** The poll in flight runs past its deadline (runner.ts, pollDeadlineMs): counted as failed already. */
  overdue: boolean;
  /** Effective interval (after rounding to a cron-expressible one), ms; null when disabled. */
  intervalMs: number | null;
  /** The cron expression scheduling it; null when disabled. */
  schedule: string | null;
  /** The collector's own line on what its last successful poll saw (Collector.summary), null if none. */
  summary: string | null;
  /** Result of the last finished poll; null before the first one ends. */
  lastOutcome: 'success' | 'failure' | null;
  /** When the last successful poll ended, unix ms. */
  lastSuccess: number | null;
  /** `CODE: message` of the last failed poll (sanitized, short); kept after a later success. */
  lastError: string | null;
  /** When the last failed poll ended, unix ms. */
  lastErrorAt: number | null;
  /** Duration of the last finished poll, seconds. */
  lastDuration: number | null;
  everSucceeded: boolean;
}

/** The history part of a status before any poll has ended. */
export const NO_POLL_YET = {
  running: false,
  overdue: false,
  lastOutcome: null,
  lastSuccess: null,
  lastError: null,
  lastErrorAt: null,
  lastDuration: null,
  everSucceeded: false,
  summary: null,
} as const satisfies Partial<CollectorStatus>;

/** An error its API client has logged already (a wait the service asked for, said once). */
export function loggedByClient(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { loggedByClient?: unknown }).loggedByClient === true;
}

/**
 * `CODE: message` of an error, on one line, short, with secrets removed: the configured ones
 * (and their URL-encoded form), plus anything shaped like a credential (Authorization schemes,
 * `user:password@` in URLs, `token=` query parameters). For the landing page and the logs.
 */
export function describeError(error: unknown, secrets: readonly string[] = []): string {
  const code = errorCode(error);
  const raw = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  const message = createScrubber(
    secrets,
    '***',
  )(raw.replace(/\s*[\r\n]+\s*/g, ' ').trim())
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 ***')
    .replace(/(\/\/)[^/@\s]*@/g, '$1***@')
    .replace(/([?&](?:token|api_?key|password|key)=)[^&\s]*/gi, '$1***');
  const text = message === '' ? code : `${code}: ${message}`;
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 3)}...` : text;
}

/** The runner's key of a collector instance: its name and its region. */
export function instanceKey(name: CollectorName, region: string | null): string {
  return region === null ? name : `${name}\u0000${region}`;
}

/** How logs and messages name an instance: `logs`, or `logs (us-east-1)` for a region's. */
export function instanceName(name: CollectorName, region: string | null): string {
  return region === null ? name : `${name} (${region})`;
}
