// The emulator signs every delivery like the service (`Upstash-Signature`, HS256 JWT), and the
// official SDK's Receiver is the judge: it accepts the emulator's signatures with the default
// development keys, with custom keys, after a rotation (the emulator signs with what the
// receiver calls "next"), for GET deliveries and callbacks; it refuses tampered bodies and other
// URLs. The exporter's own verifier (src/probe/signature.ts) must reach the SDK's verdict on the
// same signatures, and on forged tokens built here with node:crypto.
import { createHmac } from 'node:crypto';
import { Receiver } from '@upstash/qstash';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, DEV_SIGNING_KEYS, type EmulatorHandle } from '../../src/emulator/index.js';
import { parseEmulatorArgs } from '../../src/emulator/main.js';
import { bodyHashClaim, signDelivery } from '../../src/emulator/delivery/signing.js';
import { SignatureError, verifySignature, type SigningKeys } from '../../src/probe/signature.js';
import {
  sdkClient,
  startDestination,
  waitFor,
  type Destination,
  type RecordedRequest,
} from '../support/emulator-helpers.js';

const KEY_A = 'sig_TestKeyAAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'sig_TestKeyBBBBBBBBBBBBBBBBBBBBBB';
const KEY_C = 'sig_TestKeyCCCCCCCCCCCCCCCCCCCCCC';

let destination: Destination;
const emulators: EmulatorHandle[] = [];

async function emulatorWith(options: Parameters<typeof createEmulator>[0] = {}): Promise<EmulatorHandle> {
  const emulator = await createEmulator({ knobs: { timeScale: 1000 }, ...options });
  emulators.push(emulator);
  return emulator;
}

beforeAll(async () => {
  destination = await startDestination();
});

afterEach(async () => {
  await Promise.all(emulators.splice(0).map((emulator) => emulator.close()));
  destination.requests.length = 0;
});

afterAll(async () => {
  await destination.close();
});

/** Verdict of the official SDK: true, or the error's message. */
async function sdkVerdict(
  keys: SigningKeys,
  request: { signature: string; body: string; url: string },
): Promise<true | string> {
  try {
    return (await new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next }).verify(request))
      ? true
      : 'verify() answered false';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Verdict of the exporter's verifier: true, or the problem. */
function ourVerdict(
  keys: SigningKeys,
  request: { signature: string; body: string; url: string },
  nowMs = Date.now(),
): true | string {
  try {
    verifySignature(
      { signature: request.signature, body: Buffer.from(request.body), allowedSubjects: [request.url], nowMs },
      keys,
    );
    return true;
  } catch (error) {
    if (error instanceof SignatureError) return error.problem;
    throw error;
  }
}

function signatureOf(request: RecordedRequest, header = 'upstash-signature'): string {
  const value = request.headers[header];
  expect(typeof value, `${header} header`).toBe('string');
  return value as string;
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A JWT built by hand, for the cases the emulator never produces. */
function forge(header: Record<string, unknown>, claims: Record<string, unknown>, key: string): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part(header)}.${part(claims)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

describe('the emulator signs deliveries like the service', () => {
  it('default development keys: the SDK Receiver accepts; the claims are those of the service', async () => {
    const emulator = await emulatorWith();
    expect(emulator.signingKeys()).toEqual(DEV_SIGNING_KEYS);
    const url = `${destination.url}/hook?x=1`;
    await sdkClient(emulator).publishJSON({ url, body: { hello: 'world' } });
    const [request] = await destination.waitForRequests(1);
    const signature = signatureOf(request!);
    const keys = { current: DEV_SIGNING_KEYS.current, next: DEV_SIGNING_KEYS.next };
    expect(await sdkVerdict(keys, { signature, body: request!.body, url })).toBe(true);
    expect(ourVerdict(keys, { signature, body: request!.body, url })).toBe(true);

    const header = JSON.parse(Buffer.from(signature.split('.')[0]!, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = claimsOf(signature);
    expect(claims).toMatchObject({ iss: 'Upstash', sub: url });
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs(Number(claims.iat) - now)).toBeLessThanOrEqual(2);
    expect(claims.nbf).toBe(claims.iat);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(300);
    expect(claims.jti).toMatch(/^jwt_[0-9a-f]+$/);
    // Go's padded URL alphabet, as the service writes it.
    expect(claims.body).toBe(bodyHashClaim(Buffer.from(request!.body)));
    expect(claims.body).toMatch(/=$/);
  });

  it('the SDK and the exporter refuse a tampered body and another URL', async () => {
    const emulator = await emulatorWith({ currentSigningKey: KEY_A, nextSigningKey: KEY_B });
    const url = `${destination.url}/orders`;
    await sdkClient(emulator).publish({ url, body: 'original body' });
    const [request] = await destination.waitForRequests(1);
    const signature = signatureOf(request!);
    const keys = { current: KEY_A, next: KEY_B };
    for (const forged of [
      { signature, body: 'tampered body', url },
      { signature, body: request!.body, url: `${destination.url}/elsewhere` },
    ]) {
      expect(await sdkVerdict(keys, forged)).not.toBe(true);
      expect(ourVerdict(keys, forged)).not.toBe(true);
    }
    expect(ourVerdict(keys, { signature, body: 'tampered body', url })).toBe('body_mismatch');
    expect(ourVerdict(keys, { signature, body: request!.body, url: `${destination.url}/elsewhere` })).toBe(
      'wrong_subject',
    );
  });

  it('a rotated setup: the emulator signs with the key the receiver calls "next", and both verifiers accept', async () => {
    const emulator = await emulatorWith({ currentSigningKey: KEY_B, nextSigningKey: KEY_C });
    const url = `${destination.url}/rotated`;
    await sdkClient(emulator).publish({ url, body: 'after rotation' });
    const [request] = await destination.waitForRequests(1);
    const receiverKeys = { current: KEY_A, next: KEY_B };
    const signature = signatureOf(request!);
    expect(await sdkVerdict(receiverKeys, { signature, body: request!.body, url })).toBe(true);
    expect(
      verifySignature(
        { signature, body: Buffer.from(request!.body), allowedSubjects: [url], nowMs: Date.now() },
        receiverKeys,
      ).key,
    ).toBe('next');
    // A receiver that knows neither key refuses.
    expect(await sdkVerdict({ current: KEY_A, next: KEY_C }, { signature, body: request!.body, url })).not.toBe(true);
    expect(ourVerdict({ current: KEY_A, next: KEY_C }, { signature, body: request!.body, url })).toBe('bad_signature');
  });

  it('GET /v2/keys and POST /v2/keys/rotate: after one rotation the old pair still verifies, after two it does not', async () => {
    const emulator = await emulatorWith({ currentSigningKey: KEY_A, nextSigningKey: KEY_B });
    const auth = { authorization: `Bearer ${emulator.credentials.token}` };
    expect((await fetch(`${emulator.url}/v2/keys`)).status).toBe(401);
    expect(await (await fetch(`${emulator.url}/v2/keys`, { headers: auth })).json()).toEqual({
      current: KEY_A,
      next: KEY_B,
    });
    const receiverKeys = { current: KEY_A, next: KEY_B };
    const url = `${destination.url}/rotation`;

    const first = (await (
      await fetch(`${emulator.url}/v2/keys/rotate`, { method: 'POST', headers: auth })
    ).json()) as SigningKeys;
    expect(first.current).toBe(KEY_B);
    expect(first.next).toMatch(/^sig_[A-Za-z0-9_-]{28}$/);
    expect(emulator.signingKeys()).toEqual(first);
    await sdkClient(emulator).publish({ url, body: 'one rotation' });
    const [once] = await destination.waitForRequests(1);
    expect(await sdkVerdict(receiverKeys, { signature: signatureOf(once!), body: once!.body, url })).toBe(true);

    await fetch(`${emulator.url}/v2/keys/rotate`, { method: 'POST', headers: auth });
    await sdkClient(emulator).publish({ url, body: 'two rotations' });
    const [, twice] = await destination.waitForRequests(2);
    expect(await sdkVerdict(receiverKeys, { signature: signatureOf(twice!), body: twice!.body, url })).not.toBe(true);
    expect(ourVerdict(receiverKeys, { signature: signatureOf(twice!), body: twice!.body, url })).toBe('bad_signature');
  });

  it('GET deliveries sign the empty body they carry; callbacks are signed for the callback URL', async () => {
    const emulator = await emulatorWith();
    const keys = { current: DEV_SIGNING_KEYS.current, next: DEV_SIGNING_KEYS.next };
    const url = `${destination.url}/get-me`;
    const callback = `${destination.url}/callback`;
    await sdkClient(emulator).publish({ url, method: 'GET', body: 'not sent with GET', callback });
    await waitFor(() => destination.requests.some((r) => r.url === '/callback'));
    const get = destination.requests.find((r) => r.url === '/get-me')!;
    expect(get.method).toBe('GET');
    expect(get.body).toBe('');
    expect(await sdkVerdict(keys, { signature: signatureOf(get), body: '', url })).toBe(true);
    const back = destination.requests.find((r) => r.url === '/callback')!;
    expect(await sdkVerdict(keys, { signature: signatureOf(back), body: back.body, url: callback })).toBe(true);
    expect(ourVerdict(keys, { signature: signatureOf(back), body: back.body, url: callback })).toBe(true);
  });

  it('with another header prefix the signature travels as <prefix>Signature', async () => {
    const emulator = await emulatorWith({ headerPrefix: 'Svc-' });
    const url = `${destination.url}/svc`;
    const response = await fetch(`${emulator.url}/v2/publish/${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.credentials.token}` },
      body: 'prefixed',
    });
    expect(response.status).toBe(200);
    const [request] = await destination.waitForRequests(1);
    expect(request!.headers['upstash-signature']).toBeUndefined();
    const signature = signatureOf(request!, 'svc-signature');
    expect(await sdkVerdict({ ...DEV_SIGNING_KEYS }, { signature, body: 'prefixed', url })).toBe(true);
  });
});

describe('the exporter verifier reaches the SDK verdict on forged tokens', () => {
  const keys = { current: KEY_A, next: KEY_B };
  const url = 'https://exporter.example.com/probe/receive';
  const body = '{"probe":"upstash-exporter-probe"}';
  const now = Math.floor(Date.now() / 1000);
  const good = {
    iss: 'Upstash',
    sub: url,
    iat: now,
    nbf: now,
    exp: now + 300,
    jti: 'jwt_1',
    body: bodyHashClaim(Buffer.from(body)),
  };
  const hs256 = { alg: 'HS256', typ: 'JWT' };

  const cases: Array<{ name: string; token: string; accepted: boolean; problem?: string }> = [
    { name: 'valid, current key', token: forge(hs256, good, KEY_A), accepted: true },
    { name: 'valid, next key', token: forge(hs256, good, KEY_B), accepted: true },
    {
      name: 'body claim without padding',
      token: forge(hs256, { ...good, body: good.body.replace(/=+$/, '') }, KEY_A),
      accepted: true,
    },
    {
      name: 'emulator signDelivery',
      token: signDelivery({ url, body: Buffer.from(body), key: KEY_A, nowMs: Date.now() }),
      accepted: true,
    },
    { name: 'unknown key', token: forge(hs256, good, KEY_C), accepted: false, problem: 'bad_signature' },
    {
      name: 'expired',
      token: forge(hs256, { ...good, iat: now - 900, nbf: now - 900, exp: now - 600 }, KEY_A),
      accepted: false,
      problem: 'expired',
    },
    {
      name: 'not valid yet',
      token: forge(hs256, { ...good, nbf: now + 600, exp: now + 900 }, KEY_A),
      accepted: false,
      problem: 'not_yet_valid',
    },
    {
      name: 'wrong issuer',
      token: forge(hs256, { ...good, iss: 'Mallory' }, KEY_A),
      accepted: false,
      problem: 'wrong_issuer',
    },
    {
      name: 'other URL',
      token: forge(hs256, { ...good, sub: 'https://evil.example/' }, KEY_A),
      accepted: false,
      problem: 'wrong_subject',
    },
    {
      name: 'other body',
      token: forge(hs256, { ...good, body: bodyHashClaim(Buffer.from('other')) }, KEY_A),
      accepted: false,
      problem: 'body_mismatch',
    },
    {
      name: 'alg none',
      token: `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(good)).toString('base64url')}.`,
      accepted: false,
    },
    { name: 'HS512', token: forge({ alg: 'HS512' }, good, KEY_A), accepted: false, problem: 'unsupported_algorithm' },
    { name: 'not a JWT', token: 'hello', accepted: false, problem: 'malformed' },
  ];

  it.each(cases)('$name', async ({ token, accepted, problem }) => {
    const request = { signature: token, body, url };
    const sdk = await sdkVerdict(keys, request);
    const ours = ourVerdict(keys, request);
    expect(sdk === true, `SDK said ${String(sdk)}`).toBe(accepted);
    expect(ours === true, `exporter said ${String(ours)}`).toBe(accepted);
    if (problem !== undefined) expect(ours).toBe(problem);
  });

  it('a missing header is refused as missing', () => {
    expect(() =>
      verifySignature({ signature: undefined, body: Buffer.alloc(0), allowedSubjects: [url], nowMs: Date.now() }, keys),
    ).toThrow(expect.objectContaining({ code: 'ERR_PROBE_SIGNATURE', problem: 'missing' }));
  });
});

describe('emulator flags for the signing keys', () => {
  it('--current-signing-key and --next-signing-key (or the QSTASH_* variables) set the pair; half a pair is a usage error', () => {
    expect(parseEmulatorArgs(['--current-signing-key', KEY_A, '--next-signing-key', KEY_B], {}).options).toMatchObject({
      currentSigningKey: KEY_A,
      nextSigningKey: KEY_B,
    });
    expect(
      parseEmulatorArgs([], { QSTASH_CURRENT_SIGNING_KEY: KEY_B, QSTASH_NEXT_SIGNING_KEY: KEY_C }).options,
    ).toMatchObject({ currentSigningKey: KEY_B, nextSigningKey: KEY_C });
    expect(parseEmulatorArgs([], {}).options).toMatchObject({
      currentSigningKey: DEV_SIGNING_KEYS.current,
      nextSigningKey: DEV_SIGNING_KEYS.next,
    });
    expect(() => parseEmulatorArgs(['--current-signing-key', KEY_A], {})).toThrow(
      expect.objectContaining({ code: 'ERR_CONFIG', message: expect.stringContaining('--next-signing-key') }),
    );
    expect(() => parseEmulatorArgs(['--current-signing-key', ' '], {})).toThrow(
      expect.objectContaining({ code: 'ERR_CONFIG' }),
    );
  });
});
