// The families the landing page's overview reads (overview.ts), and their reading: each from every
// registry /metrics renders that has it (one per QStash region for a region-scoped collector,
// with the registry's own labels, qstash_region), so each figure is a value /metrics also shows.

import type { Registry } from 'prom-client';
import { registryLabelsOf } from '../metrics/default-labels.js';
import { ACCOUNT_INFO, PLAN_LIMITS } from '../collectors/account.js';
import { DLQ_FAMILIES } from '../collectors/dlq.js';
import { LOGS_FAMILIES, LOGS_WALK_FAMILIES } from '../collectors/logs/families.js';
import { QUEUE_FAMILIES } from '../collectors/queues.js';
import { REDIS_FAMILIES, REDIS_TOTALS } from '../collectors/redis/families.js';
import { USAGE_VALUES } from '../collectors/usage.js';
import { WORKFLOW_FAMILIES } from '../collectors/workflows/families.js';

/** The name of the family of `list` that reads `field` (the collectors' field-spec lists). */
const nameOf = <F extends string>(list: readonly { name: string; field: F }[], field: F): string =>
  list.find((spec) => spec.field === field)!.name;

/**
 * Every family the overview reads, so a reader can find each figure on /metrics: the collectors'
 * own declarations. The probe's are spelt here: the probe sits beside the server (no import).
 */
export const OVERVIEW_METRICS = {
  events: LOGS_FAMILIES.events.name,
  logLag: LOGS_WALK_FAMILIES.lag.name,
  lateEvents: LOGS_WALK_FAMILIES.late.name,
  missedLateEvents: LOGS_WALK_FAMILIES.missedLate.name,
  usageDailyRequests: nameOf(USAGE_VALUES, 'daily_requests'),
  dailyMessages: LOGS_FAMILIES.daily.name,
  softDailyLimit: nameOf(PLAN_LIMITS, 'max_requests_per_day'),
  hardDailyLimit: nameOf(PLAN_LIMITS, 'max_requests_per_day_hard'),
  accountInfo: ACCOUNT_INFO.name,
  dlqSize: DLQ_FAMILIES.size.name,
  dlqOldest: DLQ_FAMILIES.oldest.name,
  queueLag: QUEUE_FAMILIES.lag.name,
  queuePaused: QUEUE_FAMILIES.paused.name,
  workflowRuns: WORKFLOW_FAMILIES.runs.name,
  workflowsInProgress: WORKFLOW_FAMILIES.inProgress.name,
  workflowOldestRunAge: WORKFLOW_FAMILIES.oldestRunAge.name,
  probeSuccess: 'upstash_probe_success',
  probeLastSuccess: 'upstash_probe_last_success_timestamp_seconds',
  probeDeliveryDuration: 'upstash_probe_delivery_duration_seconds',
  redisState: REDIS_FAMILIES.state.name,
  redisMonthlyBilling: nameOf(REDIS_TOTALS, 'total_monthly_billing'),
} as const;

/** What the overview reads: the registries /metrics renders. */
export interface RegistrySource {
  registry: Registry;
}

export interface Sample {
  labels: Readonly<Partial<Record<string, string | number>>>;
  value: number;
}

/** The series of one family from every registry that has it, in /metrics order; null when none does. */
async function read(sources: readonly RegistrySource[], name: string): Promise<Sample[] | null> {
  let samples: Sample[] | null = null;
  for (const { registry } of sources) {
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue;
    const family = await metric.get();
    const own = registryLabelsOf(registry) ?? {};
    samples ??= [];
    for (const v of family.values) samples.push({ labels: { ...v.labels, ...own }, value: v.value });
  }
  return samples;
}

export function sum(samples: readonly Sample[], match: (labels: Sample['labels']) => boolean = () => true): number {
  let total = 0;
  for (const s of samples) if (match(s.labels)) total += s.value;
  return total;
}

/** The sum of a family's series over every region, or null without series. */
export function total(samples: readonly Sample[] | null): number | null {
  return samples === null || samples.length === 0 ? null : sum(samples);
}

/** The largest value of a family's series over every region, or null without series. */
export function largest(samples: readonly Sample[] | null): number | null {
  return samples === null || samples.length === 0 ? null : Math.max(...samples.map((s) => s.value));
}

/** The value of an unlabelled family in the first region that has it (the daily card's), or null. */
export function single(samples: readonly Sample[] | null): number | null {
  return samples === null || samples.length === 0 ? null : samples[0]!.value;
}

export type Families = Readonly<Record<string, Sample[] | null>>;

/** Each named family once (a family with many series is read once per page or sample). */
export async function readFamilies(sources: readonly RegistrySource[], names: readonly string[]): Promise<Families> {
  const families = await Promise.all(names.map((name) => read(sources, name)));
  return Object.fromEntries(names.map((name, i) => [name, families[i] ?? null]));
}
