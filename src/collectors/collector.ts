// The contract every collector implements (docs/architecture.md, "Collector framework").
// Polling happens in the background into snapshots; a scrape only reads them.

import type { Registry } from 'prom-client';
import type { DeliveryClient } from '../api/delivery.js';
import type { ManagementClient } from '../api/management.js';
import type { ExporterConfig } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import type { SelfMetrics } from '../metrics/self.js';
import type { CollectorName } from '../config/collector-catalogue.js';
import type { PollSchedule } from './poll-schedule.js';

export type { CollectorName } from '../config/collector-catalogue.js';
export { COLLECTOR_NAMES } from '../config/collector-catalogue.js';

/** One watched QStash region as its collectors see it: its name, credentials and clients. */
export interface CollectorRegion {
  /** `eu-central-1`, `us-east-1`: the value of the `qstash_region` label. */
  name: string;
  url: string;
  token: string;
  /** This region's QStash client. */
  delivery: DeliveryClient | null;
  /** The management client reading this region's QStash user; null without email and API key. */
  management: ManagementClient | null;
}

export interface CollectorDeps {
  /** This instance's QStash client (its region's); null without a token. */
  delivery: DeliveryClient | null;
  /** Management API client (a region-scoped instance: the one reading its region's user); null without email and API key. */
  management: ManagementClient | null;
  /** The region a region-scoped instance watches (buildCollectors sets it); null/absent for account-scoped ones. */
  region?: CollectorRegion | null;
  /** The state file (absent: the configuration's); a region-scoped instance keeps its region's part of it. */
  stateFile?: string | null;
  /** Every watched region, for buildCollectors (absent: the configuration's regions with the clients above). */
  regions?: readonly CollectorRegion[];
  selfMetrics: SelfMetrics;
  logger: Logger;
  /** Wall clock, unix ms (tests inject one). */
  now?: () => number;
  /** When the runner polls each collector (absent: a collector is not told, e.g. in tests driving polls themselves). */
  schedule?: PollSchedule;
}

/**
 * Builds one collector from the configuration, or returns null when a dependency it needs is
 * missing (the configuration normally disables such a collector already).
 */
export type CollectorFactory = (config: ExporterConfig, deps: CollectorDeps) => Collector | null;

export interface PollContext {
  /** Aborted when the exporter shuts down and the poll outlives the stop deadline. */
  signal: AbortSignal;
  /** Wall clock in unix milliseconds (injectable for tests). */
  now(): number;
  /** Child logger bound to `{ collector: name }`. */
  logger: Logger;
  /** The QStash region of a region-scoped instance (buildCollectors' wrapper sets it), for self metrics about its calls. */
  qstashRegion?: string;
}

export interface Collector {
  readonly name: CollectorName;
  /** The QStash region of a region-scoped instance (buildCollectors sets it); null/absent: the account's. */
  readonly region?: string | null;
  /** The metrics as of the last successful poll. Read by /metrics; never touches the network. */
  readonly registry: Registry;
  /** One poll: fetch, build the next snapshot, swap it in. Rejects on failure and keeps the
   *  previous snapshot (served with collector_success 0). */
  poll(ctx: PollContext): Promise<void>;
  /** Shutdown hook after the last poll (the logs collector writes its checkpoint here). */
  close?(): Promise<void>;
  /** One short line on what the last successful poll saw, for the landing page (never a secret). */
  summary?(): string | undefined;
  /**
   * A tick that comes while a poll runs starts the next poll as soon as that one ends, instead
   * of being skipped: for a walk that stops its cycle when the next poll is due, so falling
   * behind costs no interval (the logs and workflows collectors).
   */
  readonly deferOverlappingTick?: boolean;
}

/** The region a QStash collector reads: the one it was built for, else the configuration's first (tests). */
export function qstashRegionOf(
  config: ExporterConfig,
  deps: CollectorDeps,
): { name: string; url: string; token: string } | null {
  return deps.region ?? config.qstash.regions[0] ?? null;
}
