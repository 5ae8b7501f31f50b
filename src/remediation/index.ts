// Remediation as the exporter runs it: the Alertmanager webhook route and its metrics, built from
// the configuration. See docs/active-checks.md.
import type { Router } from 'express';
import type { Registry } from 'prom-client';
import type { DeliveryClient } from '../api/delivery.js';
import type { ExporterConfig } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { RemediationMetrics } from './metrics.js';
import { remediationRouter } from './webhook.js';

export { REMEDIATION_WEBHOOK_PATH, SCHEDULE_LABEL, selectTargets } from './webhook.js';
export { pauseSchedules, PAUSE_RESULTS, type PauseOutcome, type PauseResult } from './pauser.js';
export { parseWebhook, type WebhookPayload, type WebhookAlert } from './alertmanager.js';

export interface RemediationHandle {
  readonly name: 'remediation';
  readonly registry: Registry;
  /** The webhook route, mounted ahead of the server's basic auth (it checks its bearer token). */
  readonly router: Router;
}

export interface RemediationDeps {
  /** Each watched region's QStash client, by region name. */
  deliveries: ReadonlyMap<string, Pick<DeliveryClient, 'listSchedules' | 'pauseSchedule'>>;
  logger: Logger;
}

/** Remediation of an enabled configuration (config checks guarantee the bearer token). */
export function createRemediation(config: ExporterConfig, deps: RemediationDeps): RemediationHandle {
  const { bearerToken, alerts, dryRun } = config.remediation;
  if (bearerToken === null) throw new Error('createRemediation needs remediation.bearerToken');
  const metrics = new RemediationMetrics();
  const logger = deps.logger.child({ component: 'remediation' });
  logger.info({ alerts, dryRun }, `remediation webhook enabled${dryRun ? ' in dry-run mode' : ''}`);
  return {
    name: 'remediation',
    registry: metrics.registry,
    router: remediationRouter({ deliveries: deps.deliveries, bearerToken, alerts, dryRun, metrics, logger }),
  };
}
