// Remediation's metric families as data (src/metrics/families.ts): RemediationMetrics creates
// each from its row, docs/metrics.md's "Remediation" table is written from them.
import type { Family } from '../metrics/families.js';
import { PAUSE_RESULTS } from './pauser.js';

export const REMEDIATION_ACTIONS = ['pause_schedule'] as const;
export const WEBHOOK_RESULTS = ['accepted', 'unauthorized', 'throttled', 'invalid'] as const;
export const IGNORED_REASONS = ['resolved', 'not_allowed', 'no_schedule_id', 'no_region'] as const;

export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];
export type IgnoredReason = (typeof IGNORED_REASONS)[number];

export const REMEDIATION_FAMILIES = {
  webhooks: {
    name: 'upstash_remediation_webhooks_total',
    type: 'counter',
    labelNames: ['result'],
    labelValues: { result: WEBHOOK_RESULTS },
    meaning:
      'Alertmanager notifications received by result: accepted, unauthorized (wrong or missing bearer token), throttled (refused unread: the address sent too many wrong tokens), invalid (not a version 4 webhook payload)',
    source: 'each request to the remediation webhook',
  },
  actions: {
    name: 'upstash_remediation_actions_total',
    type: 'counter',
    labelNames: ['action', 'result'],
    labelValues: { action: REMEDIATION_ACTIONS, result: PAUSE_RESULTS },
    meaning:
      'Remediation actions by result: paused, already_paused, dry_run, not_found, error, not_failing (its last run succeeded since), resumed_by_person (resumed after the webhook paused it)',
    details: 'In dry-run mode, the action is not taken (`dry_run`).',
    source: 'each firing alert of an accepted notification',
  },
  ignored: {
    name: 'upstash_remediation_alerts_ignored_total',
    type: 'counter',
    labelNames: ['reason'],
    labelValues: { reason: IGNORED_REASONS },
    meaning:
      'Alerts of accepted notifications that caused no action: resolved (or ended), not_allowed (name not on the allowlist), no_schedule_id, no_region (no qstash_region label while several regions are watched, or a region not watched)',
    source: 'each alert of an accepted notification',
  },
} as const satisfies Record<string, Family>;
