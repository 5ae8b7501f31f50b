// Remediation's metric families, in one long-lived registry with every series pre-set to 0.
import { Counter, type Registry } from 'prom-client';
import { createRegistry } from '../metrics/snapshot.js';
import { PAUSE_RESULTS } from './pauser.js';

export const REMEDIATION_ACTIONS = ['pause_schedule'] as const;
export const WEBHOOK_RESULTS = ['accepted', 'unauthorized', 'throttled', 'invalid'] as const;
export const IGNORED_REASONS = ['resolved', 'not_allowed', 'no_schedule_id', 'no_region'] as const;

export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];
export type IgnoredReason = (typeof IGNORED_REASONS)[number];

export class RemediationMetrics {
  readonly registry: Registry = createRegistry();
  readonly webhooks: Counter<'result'>;
  readonly actions: Counter<'action' | 'result'>;
  readonly ignored: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    this.webhooks = new Counter({
      name: 'upstash_remediation_webhooks_total',
      help: 'Alertmanager notifications received by result: accepted, unauthorized (wrong or missing bearer token), throttled (refused unread: the address sent too many wrong tokens), invalid (not a version 4 webhook payload)',
      labelNames: ['result'] as const,
      registers,
    });
    this.actions = new Counter({
      name: 'upstash_remediation_actions_total',
      help: 'Remediation actions by result: paused, already_paused, dry_run, not_found, error, not_failing (its last run succeeded since), resumed_by_person (resumed after the webhook paused it)',
      labelNames: ['action', 'result'] as const,
      registers,
    });
    this.ignored = new Counter({
      name: 'upstash_remediation_alerts_ignored_total',
      help: 'Alerts of accepted notifications that caused no action: resolved (or ended), not_allowed (name not on the allowlist), no_schedule_id, no_region (no qstash_region label while several regions are watched, or a region not watched)',
      labelNames: ['reason'] as const,
      registers,
    });
    for (const result of WEBHOOK_RESULTS) this.webhooks.inc({ result }, 0);
    for (const action of REMEDIATION_ACTIONS)
      for (const result of PAUSE_RESULTS) this.actions.inc({ action, result }, 0);
    for (const reason of IGNORED_REASONS) this.ignored.inc({ reason }, 0);
  }
}
