// The one list of collectors. Adding a collector touches its own module and one row here,
// nothing else: the configuration (collector names, poll intervals, the credentials check,
// --help and docs/configuration.md), the runner, the server and the self metrics all work from
// this list. It has no static imports, so the configuration reads it without reaching the
// collectors (every import arrow points down); a row loads its collector when the exporter
// starts, and a disabled collector's module is never loaded.

/** Which client a collector needs: the QStash token, or the management API's email and key. */
export type CollectorNeeds = 'qstash' | 'management';

export const COLLECTOR_CATALOGUE = [
  // keepsState: the collector checkpoints its counters in the state file (--state-file).
  { name: 'logs', defaultInterval: '15s', needs: 'qstash', keepsState: true, load: async () => (await import('./logs/index.js')).createLogsCollector },
  { name: 'schedules', defaultInterval: '60s', needs: 'qstash', load: async () => (await import('./schedules.js')).createSchedulesCollector },
  // Queues, URL Groups, DLQ and flow control (delivery API).
  { name: 'queues', defaultInterval: '30s', needs: 'qstash', load: async () => (await import('./queues.js')).createQueuesCollector },
  { name: 'url_groups', defaultInterval: '5m', needs: 'qstash', load: async () => (await import('./url-groups.js')).createUrlGroupsCollector },
  { name: 'dlq', defaultInterval: '60s', needs: 'qstash', load: async () => (await import('./dlq.js')).createDlqCollector },
  { name: 'flow_control', defaultInterval: '30s', needs: 'qstash', load: async () => (await import('./flow-control.js')).createFlowControlCollector },
  { name: 'account', defaultInterval: '5m', needs: 'management', load: async () => (await import('./account.js')).createAccountCollector },
  { name: 'search', defaultInterval: '5m', needs: 'management', load: async () => (await import('./search.js')).createSearchCollector },
  { name: 'vector', defaultInterval: '60s', needs: 'management', load: async () => (await import('./vector.js')).createVectorCollector },
  // Official QStash usage (GET /v2/qstash/stats/{id}): today's requests against the daily limits.
  { name: 'usage', defaultInterval: '60s', needs: 'management', load: async () => (await import('./usage.js')).createUsageCollector },
  { name: 'workflows', defaultInterval: '30s', needs: 'qstash', keepsState: true, load: async () => (await import('./workflows/index.js')).createWorkflowsCollector },
] as const;

export type CollectorName = (typeof COLLECTOR_CATALOGUE)[number]['name'];

/** Collector names in the canonical order (polls, metrics, docs). */
export const COLLECTOR_NAMES: readonly CollectorName[] = COLLECTOR_CATALOGUE.map((entry) => entry.name);

export const DEFAULT_POLL_INTERVALS = Object.fromEntries(COLLECTOR_CATALOGUE.map((entry) => [entry.name, entry.defaultInterval])) as Record<CollectorName, string>;

export const COLLECTOR_NEEDS = Object.fromEntries(COLLECTOR_CATALOGUE.map((entry) => [entry.name, entry.needs])) as Record<CollectorName, CollectorNeeds>;

/** The collectors that checkpoint their counters in the state file. */
export const COLLECTORS_KEEPING_STATE: readonly CollectorName[] = COLLECTOR_CATALOGUE.filter((entry) => 'keepsState' in entry && entry.keepsState).map((entry) => entry.name);
