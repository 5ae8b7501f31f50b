// Verification of the service's request signature (`Upstash-Signature`): an HS256 JWT signed
// with the account's current signing key (or, around a rotation, the next one). Same rules as
// the official SDK's Receiver: the signature must match one of the two keys, `iss` must be
// "Upstash", `exp`/`nbf` must hold, `sub` must be the URL the service was asked to call, and
// `body` the base64url SHA-256 of the bytes received (padding ignored). node:crypto only.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureProblem =
  | 'missing'
  | 'malformed'
  | 'unsupported_algorithm'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_subject'
  | 'body_mismatch';

/** A refused signature. `problem` is safe to log and count: it never holds the token or a key. */
export class SignatureError extends Error {
  readonly code = 'ERR_PROBE_SIGNATURE';

  constructor(
    readonly problem: SignatureProblem,
    message: string,
  ) {
    super(message);
    this.name = 'SignatureError';
  }
}

export interface SigningKeys {
  current: string;
  next: string;
}

export interface VerifyRequest {
  /** The header's value; undefined when the request had none. */
  signature: string | undefined;
  /** The body as received. */
  body: Buffer;
  /** URLs the token's `sub` may name (the destinations the exporter gave the service). */
  allowedSubjects: readonly string[];
  /** Unix milliseconds. */
  nowMs: number;
}

export interface VerifiedClaims {
  subject: string;
  /** `jti`, when present. */
  tokenId?: string;
  /** Which key matched: a match on `next` means the service signs with a rotated key. */
  key: 'current' | 'next';
}

/** Allowed clock difference between the service and the exporter for `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** A signature header longer than this is refused before any parsing. */
const MAX_TOKEN_LENGTH = 8 * 1024;

function decodeJson(part: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function hmacMatches(key: string, signingInput: string, signature: Buffer): boolean {
  const expected = createHmac('sha256', key).update(signingInput).digest();
  return expected.length === signature.length && timingSafeEqual(expected, signature);
}

function withoutPadding(text: string): string {
  return text.replace(/=+$/, '');
}

/** base64url SHA-256 of the body, unpadded: what the `body` claim must say. */
export function bodyHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url');
}

/** Checks one signature; returns the claims the receiver needs, or throws SignatureError. */
export function verifySignature(request: VerifyRequest, keys: SigningKeys): VerifiedClaims {
  const token = request.signature?.trim();
  if (token === undefined || token === '') throw new SignatureError('missing', 'the request has no signature header');
  if (token.length > MAX_TOKEN_LENGTH) throw new SignatureError('malformed', 'the signature is too long to be a token');
  const parts = token.split('.');
  if (parts.length !== 3) throw new SignatureError('malformed', 'the signature is not a compact JWT');
  const [headerPart = '', payloadPart = '', signaturePart = ''] = parts;
  const header = decodeJson(headerPart);
  const claims = decodeJson(payloadPart);
  if (header === undefined || claims === undefined || !/^[A-Za-z0-9_-]+$/.test(signaturePart)) {
    throw new SignatureError('malformed', 'the signature is not a compact JWT');
  }
  // Only HS256: accepting the algorithm the token names is the classic `alg: none` hole.
  if (header.alg !== 'HS256') throw new SignatureError('unsupported_algorithm', 'the signature does not use HS256');

  const signingInput = `${headerPart}.${payloadPart}`;
  const signature = Buffer.from(signaturePart, 'base64url');
  let key: VerifiedClaims['key'];
  if (hmacMatches(keys.current, signingInput, signature)) key = 'current';
  else if (hmacMatches(keys.next, signingInput, signature)) key = 'next';
  else throw new SignatureError('bad_signature', 'the signature matches neither signing key');

  if (claims.iss !== 'Upstash') throw new SignatureError('wrong_issuer', 'the token was not issued by Upstash');
  const nowSeconds = request.nowMs / 1000;
  if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds - CLOCK_TOLERANCE_SECONDS) {
    throw new SignatureError('expired', 'the token has expired');
  }
  if (
    claims.nbf !== undefined &&
    (typeof claims.nbf !== 'number' || claims.nbf > nowSeconds + CLOCK_TOLERANCE_SECONDS)
  ) {
    throw new SignatureError('not_yet_valid', 'the token is not valid yet');
  }
  if (typeof claims.sub !== 'string' || !request.allowedSubjects.includes(claims.sub)) {
    throw new SignatureError('wrong_subject', 'the token was issued for another URL');
  }
  if (typeof claims.body !== 'string' || withoutPadding(claims.body) !== bodyHash(request.body)) {
    throw new SignatureError('body_mismatch', 'the body does not match the signed hash');
  }
  return { subject: claims.sub, key, ...(typeof claims.jti === 'string' ? { tokenId: claims.jti } : {}) };
}
