// The one list of collectors, as plain data: name, default poll interval, the credentials it
// needs, whether it keeps state. Adding a collector touches its own module, its row here and its
// loader in src/collectors/index.ts (a missing loader does not compile). The configuration
// (collector names, poll intervals, the credentials check, --help and docs/configuration.md),
// the runner, the server and the self metrics all work from this list. It imports nothing, so
// every module may read it without reaching the collectors.

/** Which client a collector needs: the QStash token, or the management API's email and key. */
export type CollectorNeeds = 'qstash' | 'management';

/**
 * `region`: one instance per watched QStash region, its series labelled `qstash_region` (the
 * delivery API's collectors, and account and usage, which read the region's QStash user of the
 * management API); `account`: one instance for the account.
 */
export type CollectorScope = 'region' | 'account';

export const COLLECTOR_CATALOGUE = [
  // keepsState: the collector checkpoints its counters in the state file (--state-file).
  { name: 'logs', defaultInterval: '15s', needs: 'qstash', scope: 'region', keepsState: true },
  { name: 'schedules', defaultInterval: '60s', needs: 'qstash', scope: 'region' },
  // Queues, URL Groups, DLQ and flow control (delivery API).
  { name: 'queues', defaultInterval: '30s', needs: 'qstash', scope: 'region' },
  { name: 'url_groups', defaultInterval: '5m', needs: 'qstash', scope: 'region' },
  { name: 'dlq', defaultInterval: '60s', needs: 'qstash', scope: 'region' },
  { name: 'flow_control', defaultInterval: '30s', needs: 'qstash', scope: 'region' },
  { name: 'account', defaultInterval: '5m', needs: 'management', scope: 'region' },
  { name: 'search', defaultInterval: '5m', needs: 'management', scope: 'account' },
  { name: 'vector', defaultInterval: '60s', needs: 'management', scope: 'account' },
  // Official QStash usage (GET /v2/qstash/stats/{id}): today's requests against the daily limits.
  { name: 'usage', defaultInterval: '60s', needs: 'management', scope: 'region' },
  { name: 'workflows', defaultInterval: '30s', needs: 'qstash', scope: 'region', keepsState: true },
  // Redis databases of the account (developer API): one instance for the account, not per region.
  { name: 'redis', defaultInterval: '60s', needs: 'management', scope: 'account' },
] as const satisfies readonly {
  name: string;
  defaultInterval: string;
  needs: CollectorNeeds;
  scope: CollectorScope;
  keepsState?: boolean;
}[];

export type CollectorName = (typeof COLLECTOR_CATALOGUE)[number]['name'];

/** Collector names in the canonical order (polls, metrics, docs). */
export const COLLECTOR_NAMES: readonly CollectorName[] = COLLECTOR_CATALOGUE.map((entry) => entry.name);

export const DEFAULT_POLL_INTERVALS = Object.fromEntries(
  COLLECTOR_CATALOGUE.map((entry) => [entry.name, entry.defaultInterval]),
) as Record<CollectorName, string>;

export const COLLECTOR_NEEDS = Object.fromEntries(
  COLLECTOR_CATALOGUE.map((entry) => [entry.name, entry.needs]),
) as Record<CollectorName, CollectorNeeds>;

export const COLLECTOR_SCOPES = Object.fromEntries(
  COLLECTOR_CATALOGUE.map((entry) => [entry.name, entry.scope]),
) as Record<CollectorName, CollectorScope>;

/** The collectors that checkpoint their counters in the state file. */
export const COLLECTORS_KEEPING_STATE: readonly CollectorName[] = COLLECTOR_CATALOGUE.filter(
  (entry) => 'keepsState' in entry && entry.keepsState,
).map((entry) => entry.name);
