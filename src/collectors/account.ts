// The account collector: the exporter's regional QStash user of the management API with its plan
// limits, one gauge per limit in base units. A fresh snapshot per poll. The user is the record of
// GET /v2/qstash/users whose token is the configured QStash token, else the one in the QStash
// URL's region, else the legacy GET /v2/qstash/user (ManagementClient.qstashUser); which one is
// said by a log line when it changes and by the selected_by label of upstash_qstash_account_info,
// next to its region. The record's secrets (password, token, read_only_token) are removed by the
// client already and no field here is read from them. A field the record does not carry leaves
// its family out rather than exporting a made-up 0.

import type { Registry } from 'prom-client';
import type { Account, ManagementClient, QStashUser } from '../api/management.js';
import type { Logger } from '../logging/index.js';
import type { PollContext } from './collector.js';
import type { CollectorFactory } from './collector.js';
import { flagValue, limitValue, registerGauge, UNLIMITED_NOTE, type GaugeSpec } from './inventory/gauges.js';
import { SnapshotCollector, type InventoryBounds } from './inventory/snapshot-collector.js';
import { polledIntervalMs } from './poll-schedule.js';
import { fieldRows, gaugeRows, type FamilyRow } from './families.js';

/** The limit fields of the record (the schema also lets unknown fields through). */
/** The record the families read, as the docs name it (HELP names the exact path). */
const USER_RECORD = 'the QStash user record (GET /v2/qstash/users, else GET /v2/qstash/user)';

type LimitField =
  | 'max_message_size'
  | 'max_requests_per_day'
  | 'max_requests_per_day_hard'
  | 'max_endpoints_per_topic'
  | 'max_requests_per_second'
  | 'max_dlq_size'
  | 'max_retries'
  | 'max_topics'
  | 'max_schedules'
  | 'max_events_size'
  | 'max_dlq_retention_time_milis'
  | 'max_delay'
  | 'max_parallelism'
  | 'max_global_parallelism'
  | 'max_queues'
  | 'max_bandwidth_per_second'
  | 'timeout';

interface LimitSpec {
  name: string;
  field: LimitField;
  meaning: string;
  /** Divisor into base units (ms -> s: 1000). */
  divisor?: number;
  /** Upstream unit, said in HELP when it differs from the exported one. */
  upstreamUnit?: string;
}

/** One gauge per plan limit, in the order of the record. */
export const PLAN_LIMITS: readonly LimitSpec[] = [
  {
    name: 'upstash_qstash_plan_max_message_size_bytes',
    field: 'max_message_size',
    meaning: 'Largest message body the plan accepts, bytes',
  },
  {
    name: 'upstash_qstash_plan_max_requests_per_day',
    field: 'max_requests_per_day',
    meaning:
      'Soft daily request limit of the plan (requests still pass past it); compare with upstash_qstash_usage_daily_requests (official), else upstash_qstash_daily_messages (derived from CREATED entries)',
  },
  {
    name: 'upstash_qstash_plan_max_requests_per_day_hard',
    field: 'max_requests_per_day_hard',
    meaning: 'Hard daily request limit of the plan, where publish, enqueue and batch are rejected until 00:00 UTC',
  },
  {
    name: 'upstash_qstash_plan_max_endpoints_per_url_group',
    field: 'max_endpoints_per_topic',
    meaning: 'Most endpoints in one URL Group (topic)',
  },
  {
    name: 'upstash_qstash_plan_max_requests_per_second',
    field: 'max_requests_per_second',
    meaning: 'Most requests per second the plan accepts',
  },
  {
    name: 'upstash_qstash_plan_max_dlq_messages',
    field: 'max_dlq_size',
    meaning: 'Most messages kept in the dead-letter queue; compare with upstash_qstash_usage_dlq_messages',
  },
  {
    name: 'upstash_qstash_plan_max_retries',
    field: 'max_retries',
    meaning: 'Most delivery retries a message may ask for',
  },
  { name: 'upstash_qstash_plan_max_url_groups', field: 'max_topics', meaning: 'Most URL Groups (topics)' },
  {
    name: 'upstash_qstash_plan_max_schedules',
    field: 'max_schedules',
    meaning: 'Most schedules; compare with sum(upstash_qstash_schedules)',
  },
  {
    name: 'upstash_qstash_plan_max_log_events',
    field: 'max_events_size',
    meaning: 'Most log events the service keeps',
  },
  {
    name: 'upstash_qstash_plan_max_dlq_retention_seconds',
    field: 'max_dlq_retention_time_milis',
    meaning: 'How long the dead-letter queue keeps a message, seconds',
    divisor: 1000,
    upstreamUnit: 'milliseconds',
  },
  {
    name: 'upstash_qstash_plan_max_delay_seconds',
    field: 'max_delay',
    meaning: 'Longest delay a message may ask for, seconds',
  },
  {
    name: 'upstash_qstash_plan_max_parallelism',
    field: 'max_parallelism',
    meaning: 'Most parallel deliveries of one queue or flow-control key',
  },
  {
    name: 'upstash_qstash_plan_max_global_parallelism',
    field: 'max_global_parallelism',
    meaning: 'Most parallel deliveries across the account',
  },
  { name: 'upstash_qstash_plan_max_queues', field: 'max_queues', meaning: 'Most queues' },
  {
    name: 'upstash_qstash_plan_max_bandwidth_bytes_per_second',
    field: 'max_bandwidth_per_second',
    meaning: 'Most bandwidth per second, bytes (current record only)',
  },
  {
    name: 'upstash_qstash_plan_timeout_seconds',
    field: 'timeout',
    meaning: 'Longest a delivery request may take, seconds',
  },
];

/** Plain (unlabelled) gauges of the account record besides the limits. */
interface ValueSpec {
  name: string;
  meaning: string;
  field:
    | 'active'
    | 'prod_pack_enabled'
    | 'creation_time'
    | 'last_plan_upgrade_time'
    | 'reserved_price'
    | 'budget'
    | 'prometheus_enabled';
  value: (account: Account) => number | undefined;
}

const positive = (value: number | undefined): number | undefined =>
  value !== undefined && value > 0 ? value : undefined;

export const ACCOUNT_VALUES: readonly ValueSpec[] = [
  {
    name: 'upstash_qstash_account_active',
    meaning: 'Whether the account is active (1) or not (0)',
    field: 'active',
    value: (a) => (a.active === undefined ? undefined : flagValue(a.active)),
  },
  {
    name: 'upstash_qstash_account_prod_pack_enabled',
    meaning: 'Whether the Prod Pack add-on is enabled (1) or not (0)',
    field: 'prod_pack_enabled',
    value: (a) => (a.prod_pack_enabled === undefined ? undefined : flagValue(a.prod_pack_enabled)),
  },
  {
    name: 'upstash_qstash_account_created_timestamp_seconds',
    meaning: 'When the account was created, unix seconds',
    field: 'creation_time',
    value: (a) => positive(a.creation_time),
  },
  {
    name: 'upstash_qstash_account_last_plan_upgrade_timestamp_seconds',
    meaning: 'When the plan last changed, unix seconds',
    field: 'last_plan_upgrade_time',
    value: (a) => positive(a.last_plan_upgrade_time),
  },
  {
    name: 'upstash_qstash_account_reserved_price',
    meaning: 'Price of the reserved (fixed) plan; the currency is not given by the API',
    field: 'reserved_price',
    value: (a) => a.reserved_price,
  },
  {
    name: 'upstash_qstash_account_budget',
    meaning:
      'Monthly spending budget of the user; the currency is not given by the API, 0 for none (current record only)',
    field: 'budget',
    value: (a) => a.budget,
  },
  {
    name: 'upstash_qstash_account_prometheus_enabled',
    meaning:
      'Whether Upstash\'s own Prometheus endpoint is enabled (1) or not (0); the record sends the text "true"/"false" (current record only)',
    field: 'prometheus_enabled',
    value: (a) => (a.prometheus_enabled === 'true' ? 1 : a.prometheus_enabled === 'false' ? 0 : undefined),
  },
];

export const ACCOUNT_INFO = {
  name: 'upstash_qstash_account_info',
  meaning:
    'The QStash user, value 1; plan is the plan type (free, paid), reserved_plan the reserved tier ("" for none), ' +
    'region its region ("" on the legacy record), selected_by how it was chosen (token, region, legacy)',
  source: `state, type, reserved_type, region of ${USER_RECORD}`,
  labelNames: ['state', 'plan', 'reserved_plan', 'region', 'selected_by'],
} as const satisfies GaugeSpec<string>;

/** Every family of the collector, in the order of docs/metrics.md. */
export const ACCOUNT_FAMILY_ROWS: readonly FamilyRow[] = [
  ...gaugeRows([ACCOUNT_INFO]),
  ...fieldRows(ACCOUNT_VALUES, [], USER_RECORD),
  ...fieldRows(PLAN_LIMITS, [], USER_RECORD),
];

export interface AccountCollectorOptions {
  /** Series cap and self-counters (SelfMetrics.seriesCounters); defaults in tests. */
  bounds?: InventoryBounds;
  client: Pick<ManagementClient, 'qstashUser'>;
  intervalMs: number;
  /** Path of the legacy account record, named in HELP. */
  accountPath: string;
}

/** Log line of a selection, said when it changes. */
export function selectionMessage(user: QStashUser): string {
  const region = user.account.region ?? 'unknown';
  switch (user.selectedBy) {
    case 'token':
      return `QStash user chosen by the configured QStash token (region ${region})`;
    case 'region':
      return `QStash user chosen by the region of the QStash URL (region ${region}): no listed user has the configured token`;
    case 'legacy':
      return "QStash user read from the legacy single-user endpoint: the user list is absent, or no user has the configured token or the QStash URL's region";
  }
}

export class AccountCollector extends SnapshotCollector<'account', QStashUser> {
  readonly #client: Pick<ManagementClient, 'qstashUser'>;
  readonly #source: string;
  #lastSelection: string | undefined;
  #summary: string | undefined;

  constructor(options: AccountCollectorOptions) {
    super('account', options.intervalMs, options.bounds);
    this.#client = options.client;
    const prefix = options.accountPath.endsWith('/user') ? options.accountPath.slice(0, -'/user'.length) : null;
    this.#source =
      prefix === null
        ? `GET ${options.accountPath}`
        : `the QStash user of GET ${prefix}/users (else GET ${options.accountPath})`;
  }

  protected async fetch(ctx: PollContext): Promise<QStashUser> {
    const user = await this.#client.qstashUser({ signal: ctx.signal });
    const selection = `${user.selectedBy}/${user.account.id ?? ''}`;
    if (selection !== this.#lastSelection) {
      this.#lastSelection = selection;
      ctx.logger.info({ selectedBy: user.selectedBy, region: user.account.region ?? '' }, selectionMessage(user));
    }
    return user;
  }

  /** The landing page's line: the user's region and how it was chosen. */
  summary(): string | undefined {
    return this.#summary;
  }

  protected fill(registry: Registry, { account, selectedBy }: QStashUser, _logger: Logger): void {
    this.#summary = `region ${account.region ?? 'unknown (legacy record)'}, QStash user chosen by ${selectedBy}`;
    const infoSpec = { ...ACCOUNT_INFO, source: `state, type, reserved_type, region of ${this.#source}` };
    registerGauge(registry, infoSpec, this.families).set(
      {
        state: account.state ?? '',
        plan: account.type ?? '',
        reserved_plan: account.reserved_type ?? '',
        region: account.region ?? '',
        selected_by: selectedBy,
      },
      1,
    );

    for (const spec of ACCOUNT_VALUES) {
      const value = spec.value(account);
      if (value === undefined) continue;
      const source = `${spec.field} of ${this.#source}`;
      registerGauge(registry, { name: spec.name, meaning: spec.meaning, source, labelNames: [] }, this.families).set(
        value,
      );
    }

    for (const limit of PLAN_LIMITS) {
      const raw = account[limit.field];
      if (typeof raw !== 'number') continue;
      const unit = limit.upstreamUnit === undefined ? '' : `, in ${limit.upstreamUnit}`;
      const source = `${limit.field} of ${this.#source}${unit}; ${UNLIMITED_NOTE}`;
      registerGauge(registry, { name: limit.name, meaning: limit.meaning, source, labelNames: [] }, this.families).set(
        limitValue(raw, limit.divisor),
      );
    }
  }
}

export const createAccountCollector: CollectorFactory = (config, deps) =>
  deps.management === null
    ? null
    : new AccountCollector({
        client: deps.management,
        intervalMs: polledIntervalMs('account', config, deps.schedule),
        bounds: deps.selfMetrics.seriesCounters,
        accountPath: config.management.accountPath,
      });
