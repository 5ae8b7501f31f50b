// Fault injection on the read endpoints a poller uses (logs, schedules, management; workflow
// logs when the `workflows` scope is asked for), and on the writes (enqueue, publish, trigger)
// when the `publish` scope is asked for: added
// latency, the daily-limit 429 (`RateLimit-*` headers, one-shot knob), a per-second burst rate
// limit answered 429 with `Burst-RateLimit-*` headers (sent on successful answers too), 5xx answers, malformed bodies (200 with text that is not JSON) and
// truncated bodies (the connection closes halfway through the declared length), storms (every
// request answered 401, 429 with Retry-After, or 5xx while set) and hangs (no answer while set).
import type { RequestHandler, Response } from 'express';
import type { FaultScope } from './knobs.js';
import type { DeliveryService } from './delivery/service.js';

const INJECTED_STATUSES = [500, 502, 503] as const;
/** How often a held request (the `hang` knob) looks whether it may go on. */
const HANG_CHECK_MS = 50;
const DAY_MS = 86_400_000;
/** The free plan's daily request limit, what the daily-limit 429 reports. */
const DAILY_LIMIT = 1000;

interface Window {
  second: number;
  used: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Breaks a JSON text so no parser accepts it, keeping its size about the same. */
function malform(text: string): string {
  return `${text.slice(0, Math.max(1, text.length - 1))},}`.replace(/^./, '{<');
}

function serialize(body: unknown): string {
  return JSON.stringify(body) ?? 'null';
}

function answerMalformed(res: Response): void {
  res.json = (body: unknown): Response => {
    res.type('application/json').send(malform(serialize(body)));
    return res;
  };
}

function answerTruncated(res: Response): void {
  res.json = (body: unknown): Response => {
    const text = Buffer.from(serialize(body));
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', String(text.length));
    res.write(text.subarray(0, Math.floor(text.length / 2)), () => {
      // Closing before the declared length is what a cut connection looks like to the client.
      res.destroy();
    });
    return res;
  };
}

export function faultInjector(service: DeliveryService, scope: FaultScope): RequestHandler {
  const window: Window = { second: 0, used: 0 };
  return async (_req, res, next) => {
    const knobs = service.knobs;
    if (!knobs.faultScope.includes(scope)) {
      next();
      return;
    }
    if (knobs.latencyMs > 0) await sleep(knobs.latencyMs);
    if (knobs.hang) {
      // Held until the knob is turned off or the client gives up (its connection closes).
      while (service.knobs.hang && !res.destroyed && !res.writableEnded) await sleep(HANG_CHECK_MS);
      if (res.destroyed) return;
    }
    const storm = service.knobs.stormStatus;
    if (storm !== null) {
      if (storm === 429) {
        const second = Math.floor(Date.now() / 1000);
        res.setHeader('Burst-RateLimit-Limit', String(Math.max(1, knobs.rateLimitPerSecond)));
        res.setHeader('Burst-RateLimit-Remaining', '0');
        res.setHeader('Burst-RateLimit-Reset', String(second + Math.max(1, knobs.stormRetryAfterSeconds)));
        if (knobs.stormRetryAfterSeconds > 0) res.setHeader('Retry-After', String(knobs.stormRetryAfterSeconds));
        res.status(429).json({ error: 'Exceeded burst rate limit' });
      } else if (storm === 401 || storm === 403) {
        res.status(storm).json({ error: storm === 401 ? 'Unauthorized' : 'Forbidden' });
      } else {
        res.status(storm).json({ error: 'injected server error' });
      }
      return;
    }

    if (service.takeOneShot('dailyLimitNext')) {
      // The daily limit: `RateLimit-*` (not `Burst-`) headers, which is how the SDK tells them apart.
      const resetSeconds = Math.ceil((Math.floor(Date.now() / DAY_MS) + 1) * (DAY_MS / 1000));
      res.setHeader('RateLimit-Limit', String(DAILY_LIMIT));
      res.setHeader('RateLimit-Remaining', '0');
      res.setHeader('RateLimit-Reset', String(resetSeconds));
      res.status(429).json({ error: `daily ratelimit of ${DAILY_LIMIT} requests exceeded` });
      return;
    }

    if (knobs.rateLimitPerSecond > 0) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== window.second) {
        window.second = second;
        window.used = 0;
      }
      window.used++;
      res.setHeader('Burst-RateLimit-Limit', String(knobs.rateLimitPerSecond));
      res.setHeader('Burst-RateLimit-Remaining', String(Math.max(0, knobs.rateLimitPerSecond - window.used)));
      res.setHeader('Burst-RateLimit-Reset', String(second + 1));
      if (window.used > knobs.rateLimitPerSecond) {
        res.status(429).json({ error: 'Exceeded burst rate limit' });
        return;
      }
    }

    if (service.takeOneShot('failNext')) {
      res.status(500).json({ error: 'injected server error' });
      return;
    }
    if (service.random.chance(knobs.errorRatio)) {
      const status = INJECTED_STATUSES[Math.floor(service.random.next() * INJECTED_STATUSES.length)]!;
      res.status(status).json({ error: 'injected server error' });
      return;
    }
    if (service.takeOneShot('malformedNext') || service.random.chance(knobs.malformedRatio)) {
      answerMalformed(res);
    } else if (service.takeOneShot('truncatedNext') || service.random.chance(knobs.truncatedRatio)) {
      answerTruncated(res);
    }
    next();
  };
}
