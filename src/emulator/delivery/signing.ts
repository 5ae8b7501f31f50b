// Request signing like the service: every delivery carries `<prefix>Signature`, an HS256 JWT
// (header {alg: HS256, typ: JWT}) signed with the current signing key, with claims iss "Upstash",
// sub = the destination URL, iat/nbf = now, exp = now + 5 min, a unique jti, and body = the
// base64url SHA-256 of the delivered body. The official SDK's Receiver verifies it with the
// current key, then the next one. The keys rotate like the service's: next becomes current and a
// fresh next is generated (POST /v2/keys/rotate).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { RequestSigner } from './http-delivery.js';

/** Public signing keys of the official QStash development server (qstash-js src/dev-server/constants.ts). */
export const DEV_SIGNING_KEYS = Object.freeze({
  current: 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r',
  next: 'sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs',
});

/** Lifetime of a signature, like the service's. */
export const SIGNATURE_LIFETIME_SECONDS = 300;

export interface SigningKeyPair {
  current: string;
  next: string;
}

/** The emulator's signing keys; rotation changes what later deliveries are signed with. */
export class SigningKeys {
  private keys: SigningKeyPair;

  constructor(initial: SigningKeyPair) {
    this.keys = { ...initial };
  }

  get(): SigningKeyPair {
    return { ...this.keys };
  }

  /** next becomes current and a fresh next is generated; answers the new pair. */
  rotate(): SigningKeyPair {
    this.keys = { current: this.keys.next, next: newSigningKey() };
    return this.get();
  }
}

/** A key shaped like the service's (`sig_` and 28 random characters). */
export function newSigningKey(): string {
  return `sig_${randomBytes(21).toString('base64url')}`;
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The body claim. The service writes it with Go's padded URL alphabet (a trailing `=`); the
 * SDK strips padding on both sides before comparing, so receivers must too.
 */
export function bodyHashClaim(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export interface SignOptions {
  url: string;
  body: Buffer;
  key: string;
  /** Unix milliseconds. */
  nowMs: number;
}

/** One signature: the compact JWT. */
export function signDelivery(options: SignOptions): string {
  const issuedAt = Math.floor(options.nowMs / 1000);
  const header = base64urlJson({ alg: 'HS256', typ: 'JWT' });
  const payload = base64urlJson({
    iss: 'Upstash',
    sub: options.url,
    exp: issuedAt + SIGNATURE_LIFETIME_SECONDS,
    nbf: issuedAt,
    iat: issuedAt,
    jti: `jwt_${randomBytes(12).toString('hex')}`,
    body: bodyHashClaim(options.body),
  });
  const signature = createHmac('sha256', options.key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** The dispatcher's signer: `<prefix>Signature` with the key that is current at each attempt. */
export function createRequestSigner(
  keys: SigningKeys,
  headerPrefix: string,
  now: () => number = Date.now,
): RequestSigner {
  const header = `${headerPrefix}Signature`;
  return ({ url, body }) => ({ [header]: signDelivery({ url, body, key: keys.get().current, nowMs: now() }) });
}
