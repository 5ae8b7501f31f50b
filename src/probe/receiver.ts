// The probe receiver: POST <receiver path> on the exporter's own server, reachable WITHOUT the
// exporter's basic auth (the service cannot send it). Its protection is the service's signature:
// with signing keys configured, a request without a valid `<prefix>Signature` for one of the
// probe URLs and this exact body is refused with 401. Verified deliveries are matched to the
// probes waiting for them; anything else is counted and answered without side effects.
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logging/index.js';
import { parseProbeBody } from './body.js';
import type { ProbeMetrics, ReceiptResult } from './metrics.js';
import type { PendingProbes } from './pending.js';
import { SignatureError, verifySignature, type SigningKeys } from './signature.js';

/** Probe bodies are about 120 bytes; anything much larger is not one. */
const MAX_BODY_BYTES = 16 * 1024;
/** At most one warning per this interval about refused deliveries (the path is public). */
const WARN_INTERVAL_MS = 60_000;

export interface ReceiverOptions {
  path: string;
  /** Prefix of the service's headers: the signature is `<prefix>Signature`. */
  headerPrefix: string;
  /** null only with --probe-insecure-receiver: unsigned deliveries are accepted. */
  keys: SigningKeys | null;
  /** The probe URLs: a signature must name one of them. */
  allowedSubjects: readonly string[];
  pending: PendingProbes;
  metrics: ProbeMetrics;
  logger: Logger;
  now?: () => number;
}

export function probeReceiverRouter(options: ReceiverOptions): Router {
  const { pending, metrics, logger } = options;
  const now = options.now ?? Date.now;
  const signatureHeader = `${options.headerPrefix}Signature`;
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  const count = (result: ReceiptResult): void => metrics.receipts.inc({ result });
  const refuse = (
    res: Response,
    status: number,
    result: ReceiptResult,
    error: string,
    fields: Record<string, unknown> = {},
  ): void => {
    count(result);
    const at = now();
    if (at - lastWarnAt >= WARN_INTERVAL_MS) {
      lastWarnAt = at;
      logger.warn(
        { result, ...fields },
        `probe receiver refused a request: ${error} (further refusals for a minute are only counted)`,
      );
    } else {
      logger.debug({ result, ...fields }, `probe receiver refused a request: ${error}`);
    }
    res.status(status).json({ error });
  };

  const handle = (req: Request, res: Response): void => {
    const receivedAtMs = now();
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    res.setHeader('Cache-Control', 'no-store');
    let subject: string | null = null;
    if (options.keys !== null) {
      try {
        subject = verifySignature(
          { signature: req.get(signatureHeader), body, allowedSubjects: options.allowedSubjects, nowMs: receivedAtMs },
          options.keys,
        ).subject;
      } catch (error) {
        if (!(error instanceof SignatureError)) throw error;
        refuse(res, 401, 'invalid_signature', 'invalid signature', { problem: error.problem });
        return;
      }
    }
    const probe = parseProbeBody(body);
    if (probe === undefined) {
      refuse(res, 400, 'invalid_body', 'not a probe message');
      return;
    }
    const result = pending.receive(probe, subject, receivedAtMs);
    if (result === 'invalid_body') {
      refuse(res, 400, result, 'the probe was not sent to this URL', { probeId: probe.id });
      return;
    }
    count(result);
    logger.debug({ probeId: probe.id, kind: probe.kind, result }, 'probe receiver: delivery');
    // 2xx for every verified probe, late or not ours, so the service does not retry it.
    res.status(200).json({ result });
  };

  const readBody = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
  const router = Router();
  // Matched by exact comparison, not as an express route pattern: the path is user input.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.path !== options.path) {
      next();
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      res.status(405).json({ error: `method ${req.method} not allowed: the probe receiver answers POST` });
      return;
    }
    readBody(req, res, (error?: unknown) => {
      if (error === undefined || error === null) {
        // This callback runs after the body arrived, outside express' own try: pass any throw on.
        try {
          handle(req, res);
        } catch (thrown) {
          next(thrown);
        }
        return;
      }
      // Body-reading errors (too large, aborted) end here, not in the server's 500.
      const status = typeof error === 'object' ? (error as { status?: unknown }).status : undefined;
      if (typeof status !== 'number' || status < 400 || status >= 500) {
        next(error);
        return;
      }
      refuse(res, status, 'invalid_body', status === 413 ? 'body too large for a probe message' : 'unreadable body');
    });
  });
  return router;
}
