// The Alertmanager webhook receiver: POST /-/remediation/alertmanager on the exporter's server,
// outside its basic auth (Alertmanager sends one Authorization header, and it carries this
// bearer token). For every firing alert whose name is on the allowlist and that has a
// `schedule_id` label, the schedule is paused (idempotent: already paused is fine). A wrong or
// missing token is 401 before the body is even read, and nothing is paused.
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { DeliveryClient } from '../api/delivery.js';
import type { Logger } from '../logging/index.js';
import { parseWebhook, type WebhookAlert } from './alertmanager.js';
import type { IgnoredReason, RemediationMetrics } from './metrics.js';
import { pauseSchedules, type PauseOutcome } from './pauser.js';

export const REMEDIATION_WEBHOOK_PATH = '/-/remediation/alertmanager';
/** The label naming the schedule on the failing-schedule alerts (deploy/rules). */
export const SCHEDULE_LABEL = 'schedule_id';
const MAX_BODY = '1mb';
/** At most one warning per this interval about refused requests (the path is public). */
const WARN_INTERVAL_MS = 60_000;

export interface WebhookOptions {
  delivery: Pick<DeliveryClient, 'listSchedules' | 'pauseSchedule'>;
  bearerToken: string;
  /** Alert names acted on. */
  alerts: readonly string[];
  dryRun: boolean;
  metrics: RemediationMetrics;
  logger: Logger;
  now?: () => number;
}

interface Target {
  scheduleId: string;
  alertname: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant-time check of `Authorization: Bearer <token>` (digests, so lengths do not leak either). */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

/** The alerts to act on, and why each other alert is left alone. */
export function selectTargets(alerts: readonly WebhookAlert[], allowlist: ReadonlySet<string>): { targets: Target[]; ignored: IgnoredReason[] } {
  const targets: Target[] = [];
  const ignored: IgnoredReason[] = [];
  for (const alert of alerts) {
    const alertname = alert.labels.alertname ?? '';
    const scheduleId = alert.labels[SCHEDULE_LABEL]?.trim() ?? '';
    if (alert.status !== 'firing') ignored.push('resolved');
    else if (!allowlist.has(alertname)) ignored.push('not_allowed');
    else if (scheduleId === '') ignored.push('no_schedule_id');
    else if (!targets.some((target) => target.scheduleId === scheduleId)) targets.push({ scheduleId, alertname });
  }
  return { targets, ignored };
}

export function remediationRouter(options: WebhookOptions): Router {
  const { metrics, logger } = options;
  const now = options.now ?? Date.now;
  const expected = digest(options.bearerToken);
  const allowlist = new Set(options.alerts);
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  const warnThrottled = (fields: Record<string, unknown>, message: string): void => {
    const at = now();
    if (at - lastWarnAt >= WARN_INTERVAL_MS) {
      lastWarnAt = at;
      logger.warn(fields, `${message} (further refusals for a minute are only counted)`);
    } else {
      logger.debug(fields, message);
    }
  };
  const invalid = (res: Response, status: number, problem: string): void => {
    metrics.webhooks.inc({ result: 'invalid' });
    warnThrottled({ problem }, 'remediation webhook: refused a request that is not an Alertmanager version 4 notification');
    res.status(status).json({ error: `not an Alertmanager webhook notification (version 4): ${problem}` });
  };

  const router = Router();
  const authenticate = (req: Request, res: Response, next: NextFunction): void => {
    if (bearerMatches(req.get('authorization'), expected)) {
      next();
      return;
    }
    metrics.webhooks.inc({ result: 'unauthorized' });
    warnThrottled({ remoteAddress: req.socket.remoteAddress }, 'remediation webhook: refused a request without the bearer token');
    res.setHeader('WWW-Authenticate', 'Bearer realm="upstash-exporter remediation"');
    res.status(401).json({ error: 'unauthorized' });
  };

  router.post(REMEDIATION_WEBHOOK_PATH, authenticate, express.json({ limit: MAX_BODY, type: () => true }), async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    const parsed = parseWebhook(req.body);
    if ('problem' in parsed) {
      invalid(res, 400, parsed.problem);
      return;
    }
    metrics.webhooks.inc({ result: 'accepted' });
    const { targets, ignored } = selectTargets(parsed.payload.alerts, allowlist);
    for (const reason of ignored) metrics.ignored.inc({ reason });
    const outcomes = targets.length === 0 ? [] : await pauseSchedules(options.delivery, targets.map((t) => t.scheduleId), { dryRun: options.dryRun });
    const actions = outcomes.map((outcome) => {
      const alertname = targets.find((t) => t.scheduleId === outcome.scheduleId)?.alertname ?? '';
      record(outcome, alertname);
      return { action: 'pause_schedule', scheduleId: outcome.scheduleId, alertname, result: outcome.result };
    });
    // Pausing is idempotent: a failed call answers 503 so Alertmanager sends the notification again.
    const failed = outcomes.some((outcome) => outcome.result === 'error');
    res.status(failed ? 503 : 200).json({ dryRun: options.dryRun, actions, ignored: ignored.length });
  });
  router.all(REMEDIATION_WEBHOOK_PATH, (req: Request, res: Response) => {
    res.setHeader('Allow', 'POST');
    res.status(405).json({ error: `method ${req.method} not allowed: the remediation webhook answers POST` });
  });

  router.use(REMEDIATION_WEBHOOK_PATH, (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
    if (typeof status !== 'number' || status < 400 || status >= 500) {
      next(error);
      return;
    }
    invalid(res, status, status === 413 ? 'body too large' : 'body is not JSON');
  });

  function record(outcome: PauseOutcome, alertname: string): void {
    metrics.actions.inc({ action: 'pause_schedule', result: outcome.result });
    const fields = { action: 'pause_schedule', scheduleId: outcome.scheduleId, alertname, result: outcome.result, dryRun: options.dryRun };
    switch (outcome.result) {
      case 'paused':
        logger.info(fields, `remediation: paused schedule ${outcome.scheduleId} (alert ${alertname})`);
        break;
      case 'already_paused':
        logger.info(fields, `remediation: schedule ${outcome.scheduleId} is already paused (alert ${alertname})`);
        break;
      case 'dry_run':
        logger.info(fields, `remediation (dry run): would pause schedule ${outcome.scheduleId} (alert ${alertname})`);
        break;
      case 'not_found':
        logger.warn(fields, `remediation: schedule ${outcome.scheduleId} of alert ${alertname} does not exist`);
        break;
      case 'error':
        logger.error({ ...fields, error: outcome.error }, `remediation: pausing schedule ${outcome.scheduleId} failed`);
        break;
    }
  }

  return router;
}
