// Authentication of the delivery interface: `Authorization: Bearer <token>` or the
// `qstash_token` query parameter, like the service. Anything else is 401 `{"error": ...}`.
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { EmulatorAuthError } from './errors.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of the query parameter, read from the raw URL (express may have parsed it differently). */
function queryToken(rawUrl: string): string | undefined {
  const questionMark = rawUrl.indexOf('?');
  if (questionMark === -1) return undefined;
  return new URLSearchParams(rawUrl.slice(questionMark + 1)).get('qstash_token') ?? undefined;
}

export function bearerAuth(token: string): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization;
    let given: string | undefined;
    if (header !== undefined) {
      const match = /^Bearer\s+(.+)$/i.exec(header.trim());
      if (!match) {
        next(new EmulatorAuthError('unauthorized: the Authorization header must be "Bearer <token>"'));
        return;
      }
      given = match[1]!.trim();
    } else {
      given = queryToken(req.originalUrl);
    }
    if (given === undefined) {
      next(new EmulatorAuthError('unauthorized: missing Authorization header'));
      return;
    }
    if (!sameSecret(given, token)) {
      next(new EmulatorAuthError('unauthorized: invalid token'));
      return;
    }
    next();
  };
}
