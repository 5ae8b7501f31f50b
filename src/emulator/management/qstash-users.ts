// The regional QStash users as the management API serves them, and their official usage
// (GET /v2/qstash/stats/{id}). Two versions of the API (the `managementApi` knob):
//   current  GET /v2/qstash/users, /user/{id}, /stats/{id} and the legacy /user and /stats; the
//            record has region, read_only_token, budget, max_bandwidth_per_second,
//            prometheus_enabled (text), no password; reserved_type "" / qstash_fixed_* (2026-03+).
//   legacy   only GET /v2/qstash/user and /v2/qstash/stats; the record has password and no region;
//            reserved_type paid / qstash_enterprise_* (the spec's version).
import { PERIOD_SHAPES, periodTimes, type Point, type StatsPeriod } from './periods.js';
import { reservedTypeForService, type PlanProfile } from './plans.js';
import type { AccountRecord } from './records.js';
import { DAY_MS, formatServiceTime, startOfUtcDay, startOfUtcMonth, weekdayName } from './time-format.js';

export const MANAGEMENT_API_VERSIONS = ['current', 'legacy'] as const;
export type ManagementApiVersion = (typeof MANAGEMENT_API_VERSIONS)[number];

/** Fields only the current record has. */
const CURRENT_ONLY = [
  'region',
  'read_only_token',
  'budget',
  'max_bandwidth_per_second',
  'prometheus_enabled',
  'modifying_state',
  'deletion_time',
] as const;

export type ServedAccount = Partial<AccountRecord> & Pick<AccountRecord, 'id' | 'token' | 'reserved_type'>;

/** reserved_type in the current vocabulary: `paid` became "", `qstash_enterprise_*` became `qstash_fixed_*`. */
function currentReservedType(reservedType: string): string {
  if (reservedType === 'paid') return '';
  return reservedType.replace(/^qstash_enterprise_/, 'qstash_fixed_');
}

/** One user as served under /v2/<serviceName>/... in the given API version. */
export function serveAccount(
  record: AccountRecord,
  apiVersion: ManagementApiVersion,
  serviceName: string,
): ServedAccount {
  if (apiVersion === 'legacy') {
    const legacy: Partial<AccountRecord> = { ...record };
    for (const field of CURRENT_ONLY) delete legacy[field];
    return {
      ...legacy,
      id: record.id,
      token: record.token,
      reserved_type: reservedTypeForService(record.reserved_type, serviceName),
    };
  }
  const { password: _password, ...current } = record;
  return { ...current, reserved_type: reservedTypeForService(currentReservedType(record.reserved_type), serviceName) };
}

/** What the delivery side billed (src/emulator/delivery/usage-ledger.ts), read by the stats. */
export interface TrafficReader {
  between(fromMs: number, toMs: number): { requests: number; bytes: number };
  day(ms: number): { requests: number; bytes: number };
  dlqMessages(): number;
}

/** No traffic: the user of another region, whose delivery API this emulator does not serve. */
export const NO_TRAFFIC: TrafficReader = {
  between: () => ({ requests: 0, bytes: 0 }),
  day: () => ({ requests: 0, bytes: 0 }),
  dlqMessages: () => 0,
};

/** Pay-as-you-go price: $1 per 100,000 messages (pricing page). */
export const QSTASH_PAYG_PRICE_PER_MESSAGE = 1 / 100_000;

export interface QStashStatsRecord {
  days: string[];
  daily_requests: Array<Point & { workflow_message: number; workflow_run: number }>;
  daily_billings: Point[];
  daily_bandwidths: Point[];
  daily_used: Point[];
  daily_used_workflow: Point[];
  daily_bandwidth_used: Point[];
  daily_qstash_messages: Array<{ id: string; data_points: Point[] }>;
  daily_workflow_messages: Array<{ id: string; data_points: Point[] }>;
  dlq_message_count: number;
  total_monthly_billing: number;
}

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * The stats of one user at `nowMs`. Daily series: one point per day of the current UTC month,
 * future days included with 0 (as documented), each at the current time of day. Series over the
 * period: 60 points (240 for 30d) at the vector stats' steps, each the requests or bytes of its step.
 */
export function qstashStats(
  user: AccountRecord,
  plan: PlanProfile,
  traffic: TrafficReader,
  nowMs: number,
  period: StatsPeriod,
): QStashStatsRecord {
  const monthStart = startOfUtcMonth(nowMs);
  const timeOfDay = nowMs - startOfUtcDay(nowMs);
  const dayStarts: number[] = [];
  for (let day = monthStart; new Date(day).getUTCMonth() === new Date(monthStart).getUTCMonth(); day += DAY_MS)
    dayStarts.push(day);
  const dayOf = (start: number) => (start > nowMs ? { requests: 0, bytes: 0 } : traffic.day(start));
  const billing = (requests: number): number =>
    plan === 'payg' ? round3(requests * QSTASH_PAYG_PRICE_PER_MESSAGE) : 0;
  const daily = (value: (start: number) => number): Point[] =>
    dayStarts.map((start) => ({ x: formatServiceTime(start + timeOfDay, 'nanos'), y: value(start) }));

  const { stepMs } = PERIOD_SHAPES[period];
  const times = periodTimes(nowMs, period);
  const stepped = (value: (from: number, to: number) => number): Point[] =>
    times.map((ms) => ({ x: formatServiceTime(ms, 'millis'), y: value(ms, ms + stepMs) }));

  const dailyBillings = daily((start) => billing(dayOf(start).requests));
  const monthly =
    plan === 'fixed' ? user.reserved_price : round3(dailyBillings.reduce((sum, point) => sum + point.y, 0));
  return {
    days: dayStarts.map(weekdayName),
    daily_requests: dayStarts.map((start) => ({
      x: formatServiceTime(start + timeOfDay, 'nanos'),
      y: dayOf(start).requests,
      workflow_message: 0,
      workflow_run: 0,
    })),
    daily_billings: dailyBillings,
    daily_bandwidths: daily((start) => dayOf(start).bytes),
    daily_used: stepped((from, to) => traffic.between(from, to).requests),
    daily_used_workflow: stepped(() => 0),
    daily_bandwidth_used: stepped((from, to) => traffic.between(from, to).bytes),
    daily_qstash_messages: [],
    daily_workflow_messages: [],
    dlq_message_count:
      user.max_dlq_size >= 0 ? Math.min(traffic.dlqMessages(), user.max_dlq_size) : traffic.dlqMessages(),
    total_monthly_billing: monthly,
  };
}
