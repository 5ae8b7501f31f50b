// The Alertmanager webhook receiver: POST /-/remediation/alertmanager on the exporter's server,
// outside its basic auth (Alertmanager sends one Authorization header, and it carries this
// bearer token). For every firing alert whose name is on the allowlist and that has a
// `schedule_id` label, the schedule is paused (idempotent: already paused is fine), but only on
// the alert's own evidence as the service tells it now: the alert has not ended, the schedule's
// last run did not succeed meanwhile, and nobody resumed it since the webhook last paused it (a person who
// resumes a schedule has decided; the webhook does not fight them). A wrong or
// missing token is 401 before the body is even read, and nothing is paused; an address that
// sent too many wrong tokens has its wrong tokens answered 429 for a while (FailureThrottle),
// while the right token always gets through (Alertmanager may share its address).
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { DeliveryClient, Schedule } from '../api/delivery.js';
import type { Logger } from '../logging/index.js';
import { parseWebhook, type WebhookAlert } from './alertmanager.js';
import type { IgnoredReason, RemediationMetrics } from './metrics.js';
import { lastRunSucceeded, pauseSchedules, type LeftAloneResult, type PauseOutcome } from './pauser.js';

export const REMEDIATION_WEBHOOK_PATH = '/-/remediation/alertmanager';
/** The label naming the schedule on the failing-schedule alerts (deploy/rules). */
export const SCHEDULE_LABEL = 'schedule_id';
const MAX_BODY = '1mb';
/** At most one warning per this interval about refused requests (the path is public). */
const WARN_INTERVAL_MS = 60_000;
/** Wrong tokens an address may send before it has to wait between tries. */
export const FREE_FAILURES = 10;
/** The wait after the first failure beyond the free ones; it doubles with each further one. */
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 5 * 60_000;
/** An address with no failure for this long starts afresh. */
const FORGET_AFTER_MS = 60 * 60_000;
/** Addresses followed at most (the least recently failing go first). */
const MAX_ADDRESSES = 10_000;
/**
 * A schedule the webhook paused and a person resumed is left alone for this long, whatever
 * alert fires for it: the person is working on it.
 */
export const LEAVE_RESUMED_MS = 24 * 60 * 60_000;

export interface WebhookOptions {
  /**
   * Each watched region's QStash client, by region name: an alert's schedule is paused in the
   * region its `qstash_region` label names (with one region, an alert without it means that one).
   */
  deliveries: ReadonlyMap<string, Pick<DeliveryClient, 'listSchedules' | 'pauseSchedule'>>;
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
  /** The alert's `qstash_region` label, '' when it has none. */
  region: string;
}

/** The alert label naming the region of the schedule to pause. */
export const REGION_LABEL = 'qstash_region';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant-time check of `Authorization: Bearer <token>` (digests, so lengths do not leak either). */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

interface Failures {
  count: number;
  lastAt: number;
  blockedUntil: number;
}

/**
 * Failed bearer checks per client address (the TCP peer: a forwarded-for header is the
 * client's word). After FREE_FAILURES, a wrong token from that address is answered 429 without
 * more ado for a while, 1 s doubling up to 5 min: it sheds the load and the log lines of a
 * guesser. The right token is never held back, nor does it clear the address: behind a shared
 * address (a NAT, a proxy) Alertmanager and a guesser are different clients. What makes guessing
 * hopeless is the token itself, long and not trivially weak (checked at start).
 */
export class FailureThrottle {
  readonly #entries = new Map<string, Failures>();
  readonly #now: () => number;
  readonly #maxAddresses: number;

  constructor(now: () => number = Date.now, maxAddresses = MAX_ADDRESSES) {
    this.#now = now;
    this.#maxAddresses = maxAddresses;
  }

  /** How long `address` must still wait, ms; 0 when it may try. */
  waitMs(address: string): number {
    const entry = this.#entries.get(address);
    if (entry === undefined) return 0;
    const now = this.#now();
    if (now - entry.lastAt > FORGET_AFTER_MS) {
      this.#entries.delete(address);
      return 0;
    }
    return Math.max(0, entry.blockedUntil - now);
  }

  fail(address: string): void {
    const now = this.#now();
    const previous = this.#entries.get(address);
    const count = previous === undefined || now - previous.lastAt > FORGET_AFTER_MS ? 1 : previous.count + 1;
    const waitMs = count <= FREE_FAILURES ? 0 : Math.min(FIRST_WAIT_MS * 2 ** (count - FREE_FAILURES - 1), MAX_WAIT_MS);
    // Deleted and set again: the map's order is then least recently failing first.
    this.#entries.delete(address);
    if (this.#entries.size >= this.#maxAddresses) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(address, { count, lastAt: now, blockedUntil: now + waitMs });
  }

  /** Addresses followed now. */
  get size(): number {
    return this.#entries.size;
  }
}

/** An alert Alertmanager still calls firing but whose end time has passed has ended. */
function ended(alert: WebhookAlert, now: number): boolean {
  const endsAt = alert.endsAt === undefined ? Number.NaN : Date.parse(alert.endsAt);
  // Alertmanager writes 0001-01-01 for "no end known".
  return Number.isFinite(endsAt) && endsAt > 0 && endsAt <= now;
}

/** The alerts to act on, and why each other alert is left alone. */
export function selectTargets(
  alerts: readonly WebhookAlert[],
  allowlist: ReadonlySet<string>,
  now: number = Date.now(),
): { targets: Target[]; ignored: IgnoredReason[] } {
  const targets: Target[] = [];
  const ignored: IgnoredReason[] = [];
  for (const alert of alerts) {
    const alertname = alert.labels.alertname ?? '';
    const scheduleId = alert.labels[SCHEDULE_LABEL]?.trim() ?? '';
    const region = alert.labels[REGION_LABEL]?.trim() ?? '';
    if (alert.status !== 'firing' || ended(alert, now)) ignored.push('resolved');
    else if (!allowlist.has(alertname)) ignored.push('not_allowed');
    else if (scheduleId === '') ignored.push('no_schedule_id');
    else if (!targets.some((target) => target.scheduleId === scheduleId && target.region === region))
      targets.push({ scheduleId, alertname, region });
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
    warnThrottled(
      { problem },
      'remediation webhook: refused a request that is not an Alertmanager version 4 notification',
    );
    res.status(status).json({ error: `not an Alertmanager webhook notification (version 4): ${problem}` });
  };

  /** When the webhook paused each schedule of each region (ms), to leave one a person resumed since alone. */
  const pausedAt = new Map<string, number>();
  const pausedKey = (region: string, scheduleId: string): string => `${region} ${scheduleId}`;
  const leaveAlone = (region: string, schedule: Schedule): LeftAloneResult | undefined => {
    const at = pausedAt.get(pausedKey(region, schedule.scheduleId));
    // Running now though the webhook paused it: a person resumed it.
    if (at !== undefined && now() - at < LEAVE_RESUMED_MS) return 'resumed_by_person';
    if (lastRunSucceeded(schedule)) return 'not_failing';
    return undefined;
  };

  const throttle = new FailureThrottle(now);
  const router = Router();
  const authenticate = (req: Request, res: Response, next: NextFunction): void => {
    // The right token first, in constant time: it passes whatever others sent from its address.
    if (bearerMatches(req.get('authorization'), expected)) {
      next();
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const waitMs = throttle.waitMs(address);
    if (waitMs > 0) {
      metrics.webhooks.inc({ result: 'throttled' });
      warnThrottled(
        { remoteAddress: address },
        'remediation webhook: refused a request from an address that sent too many wrong bearer tokens',
      );
      res.setHeader('Retry-After', String(Math.ceil(waitMs / 1000)));
      res.status(429).json({ error: 'too many failed attempts; retry later' });
      return;
    }
    throttle.fail(address);
    metrics.webhooks.inc({ result: 'unauthorized' });
    warnThrottled({ remoteAddress: address }, 'remediation webhook: refused a request without the bearer token');
    res.setHeader('WWW-Authenticate', 'Bearer realm="upstash-exporter remediation"');
    res.status(401).json({ error: 'unauthorized' });
  };

  router.post(
    REMEDIATION_WEBHOOK_PATH,
    authenticate,
    express.json({ limit: MAX_BODY, type: () => true }),
    async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      const parsed = parseWebhook(req.body);
      if ('problem' in parsed) {
        invalid(res, 400, parsed.problem);
        return;
      }
      metrics.webhooks.inc({ result: 'accepted' });
      const selected = selectTargets(parsed.payload.alerts, allowlist, now());
      const { ignored } = selected;
      // Each target to its region's client; one whose region is not watched (or, with several
      // regions, not named) is refused: pausing a schedule of the same id elsewhere would be wrong.
      const byRegion = new Map<string, Target[]>();
      for (const target of selected.targets) {
        const region =
          target.region === '' && options.deliveries.size === 1 ? [...options.deliveries.keys()][0]! : target.region;
        if (!options.deliveries.has(region)) {
          ignored.push('no_region');
          continue;
        }
        byRegion.set(region, [...(byRegion.get(region) ?? []), target]);
      }
      for (const reason of ignored) metrics.ignored.inc({ reason });
      const actions: { action: string; scheduleId: string; region: string; alertname: string; result: string }[] = [];
      let failed = false;
      for (const [region, targets] of byRegion) {
        const outcomes = await pauseSchedules(
          options.deliveries.get(region)!,
          targets.map((t) => t.scheduleId),
          { dryRun: options.dryRun, leaveAlone: (schedule) => leaveAlone(region, schedule) },
        );
        for (const outcome of outcomes) {
          if (outcome.result === 'paused') pausedAt.set(pausedKey(region, outcome.scheduleId), now());
          const alertname = targets.find((t) => t.scheduleId === outcome.scheduleId)?.alertname ?? '';
          record(outcome, alertname);
          failed ||= outcome.result === 'error';
          actions.push({
            action: 'pause_schedule',
            scheduleId: outcome.scheduleId,
            region,
            alertname,
            result: outcome.result,
          });
        }
      }
      // Pausing is idempotent: a failed call answers 503 so Alertmanager sends the notification again.
      res.status(failed ? 503 : 200).json({ dryRun: options.dryRun, actions, ignored: ignored.length });
    },
  );
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
    const fields = {
      action: 'pause_schedule',
      scheduleId: outcome.scheduleId,
      alertname,
      result: outcome.result,
      dryRun: options.dryRun,
    };
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
      case 'not_failing':
        logger.info(
          fields,
          `remediation: left schedule ${outcome.scheduleId} running: its last run succeeded (alert ${alertname})`,
        );
        break;
      case 'resumed_by_person':
        logger.info(
          fields,
          `remediation: left schedule ${outcome.scheduleId} running: it was resumed after the webhook paused it (alert ${alertname})`,
        );
        break;
      case 'not_found':
        logger.warn(fields, `remediation: schedule ${outcome.scheduleId} of alert ${alertname} does not exist`);
        break;
      case 'error':
        logger.error({ ...fields, err: outcome.error }, `remediation: pausing schedule ${outcome.scheduleId} failed`);
        break;
    }
  }

  return router;
}
