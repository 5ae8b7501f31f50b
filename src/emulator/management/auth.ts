// HTTP Basic authentication of the management API: username = account email, password =
// management API key, as the real API asks. Applied per route, never router-wide, because
// the management router is mounted at the root of an app that also serves the delivery API.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ManagementError } from './errors.js';
import { sendError } from './http.js';

const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;

/** Email and key from a Basic header, or undefined when the header is not valid Basic. */
export function parseBasicCredentials(header: string): { user: string; password: string } | undefined {
  const match = BASIC.exec(header);
  const encoded = match?.[1];
  if (encoded === undefined || encoded.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Constant-time comparison of two strings of any length (compares their digests). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function basicAuth(email: string, apiKey: string): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    let failure: string | undefined;
    if (header === undefined || header.trim() === '') {
      failure = 'missing Authorization header';
    } else {
      const credentials = parseBasicCredentials(header);
      if (!credentials) {
        failure = 'Authorization header is not valid HTTP Basic credentials';
      } else {
        // Both compared, always, so the answer time does not tell which one is wrong.
        const userOk = sameSecret(credentials.user, email);
        const keyOk = sameSecret(credentials.password, apiKey);
        if (!userOk || !keyOk) failure = 'wrong email or API key';
      }
    }
    if (failure === undefined) {
      next();
      return;
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="upstash management API"');
    sendError(res, new ManagementError('ERR_EMULATOR_AUTH', failure));
  };
}
