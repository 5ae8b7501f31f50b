// Remediation's metric families (declared in families.ts), in one long-lived registry with every series pre-set to 0.
import { Counter, type Registry } from 'prom-client';
import { createRegistry } from '../metrics/snapshot.js';
import { PAUSE_RESULTS } from './pauser.js';

import { metricOptions } from '../metrics/families.js';
import { IGNORED_REASONS, REMEDIATION_ACTIONS, REMEDIATION_FAMILIES, WEBHOOK_RESULTS } from './families.js';

export {
  IGNORED_REASONS,
  REMEDIATION_ACTIONS,
  WEBHOOK_RESULTS,
  type IgnoredReason,
  type WebhookResult,
} from './families.js';

export class RemediationMetrics {
  readonly registry: Registry = createRegistry();
  readonly webhooks: Counter<'result'>;
  readonly actions: Counter<'action' | 'result'>;
  readonly ignored: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    this.webhooks = new Counter({ ...metricOptions(REMEDIATION_FAMILIES.webhooks), registers });
    this.actions = new Counter({ ...metricOptions(REMEDIATION_FAMILIES.actions), registers });
    this.ignored = new Counter({ ...metricOptions(REMEDIATION_FAMILIES.ignored), registers });
    for (const result of WEBHOOK_RESULTS) this.webhooks.inc({ result }, 0);
    for (const action of REMEDIATION_ACTIONS)
      for (const result of PAUSE_RESULTS) this.actions.inc({ action, result }, 0);
    for (const reason of IGNORED_REASONS) this.ignored.inc({ reason }, 0);
  }
}
