// The uids of the shipped dashboards (their file names, and the targets of panel links), in one
// place so that dashboards can link to each other without importing each other.
export const DELIVERIES_UID = 'upstash-qstash-deliveries';
export const EXPORTER_HEALTH_UID = 'upstash-exporter-health';
export const INDEXES_UID = 'upstash-indexes';
export const OVERVIEW_UID = 'upstash-overview';
export const QUEUES_UID = 'upstash-qstash-queues';
export const QUOTAS_UID = 'upstash-plan-quotas';
export const SCHEDULES_UID = 'upstash-qstash-schedules';
export const SLOS_UID = 'upstash-slos';
export const WORKFLOWS_UID = 'upstash-workflows';
