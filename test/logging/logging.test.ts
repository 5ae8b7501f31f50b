import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configSecrets, loadConfig } from '../../src/config/index.js';
import { createLogger, createScrubber, REDACTED, type LoggerOptions } from '../../src/logging/index.js';

// Canary secrets: if any of these strings reaches the output, redaction failed.
const TOKEN = 'CANARY_TOKEN_eyJVc2VySUQiOiJhYmMifQ==';
const API_KEY = 'CANARY_APIKEY_0f9e8d7c';
const EMAIL = 'ops@example.com';
const BASIC = Buffer.from(`${EMAIL}:${API_KEY}`).toString('base64');
// The password of the proxy URL the environment names, and the Proxy-Authorization made of it.
const PROXY_PASSWORD = 'CANARY_PROXYPW_9b2c';
const PROXY_URL = `http://egress:${PROXY_PASSWORD}@proxy.corp.example:3128`;
const PROXY_BASIC = Buffer.from(`egress:${PROXY_PASSWORD}`).toString('base64');

/** A logger writing into memory; `text()` is everything written so far. */
function capture(options: Partial<LoggerOptions> = {}): {
  logger: ReturnType<typeof createLogger>;
  text: () => string;
} {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const secrets = configSecrets(
    loadConfig([], { QSTASH_TOKEN: TOKEN, UPSTASH_EMAIL: EMAIL, UPSTASH_API_KEY: API_KEY, HTTPS_PROXY: PROXY_URL }),
  );
  const logger = createLogger({ level: 'trace', format: 'json', secrets, destination, ...options });
  return { logger, text: () => chunks.join('') };
}

function expectNoCanary(text: string): void {
  expect(text).not.toContain('CANARY');
  expect(text).not.toContain(BASIC);
  expect(text).not.toContain(PROXY_BASIC);
}

describe('createLogger', () => {
  it('writes one JSON object per line with a level label and an ISO time', () => {
    const { logger, text } = capture();
    logger.info({ collector: 'logs' }, 'poll finished');
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', collector: 'logs', msg: 'poll finished' });
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('honours the level', () => {
    const { logger, text } = capture({ level: 'warn' });
    logger.info('hidden');
    logger.warn('shown');
    expect(
      text()
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { msg: string }).msg),
    ).toEqual(['shown']);
  });

  it('scrubs secret values from messages, interpolations and arbitrary fields', () => {
    const { logger, text } = capture();
    logger.info(`token is ${TOKEN}`);
    logger.info('key %s and header Basic %s', API_KEY, BASIC);
    logger.info({ proxy: PROXY_URL, sent: { 'x-proxy': `Basic ${PROXY_BASIC}` } }, `through ${PROXY_URL}`);
    logger.warn(
      { detail: `Bearer ${TOKEN}`, url: `http://127.0.0.1/?key=${encodeURIComponent(TOKEN)}`, list: [API_KEY] },
      'odd',
    );
    expectNoCanary(text());
    expect(text().match(new RegExp(REDACTED.replace(/[[\]]/g, '\\$&'), 'g'))?.length).toBeGreaterThanOrEqual(9);
  });

  it('scrubs nested errors and their causes, messages and stacks', () => {
    const { logger, text } = capture();
    const inner = new Error(`upstream said 401 for ${TOKEN}`);
    const outer = new Error(`request failed with key ${API_KEY}`, { cause: inner });
    logger.error({ err: outer }, 'poll failed');
    logger.error({ error: new TypeError(`Basic ${BASIC}`) }, 'other key');
    logger.error(outer);
    const lines = text().trim().split('\n');
    expect(lines).toHaveLength(3);
    expectNoCanary(text());
    expect(text()).toContain('poll failed');
    expect(JSON.parse(lines[0]!)).toMatchObject({ err: { type: 'Error', message: expect.stringContaining(REDACTED) } });
  });

  it('redacts credential keys at any reachable depth, secrets known or not', () => {
    // These values are not in `secrets`: only the key-based redaction can hide them.
    const { logger, text } = capture({ secrets: [] });
    logger.info(
      {
        headers: { authorization: 'Bearer OTHER_CANARY_1', 'proxy-authorization': 'Basic OTHER_CANARY_2' },
        request: { options: { headers: { Authorization: 'Bearer OTHER_CANARY_3' } } },
        account: { token: 'OTHER_CANARY_4', password: 'OTHER_CANARY_5', read_only_token: 'OTHER_CANARY_6' },
        a: { b: { c: { d: { apiKey: 'OTHER_CANARY_7' } } } },
      },
      'records',
    );
    expect(text()).not.toContain('OTHER_CANARY');
    expect(JSON.parse(text())).toMatchObject({ headers: { authorization: REDACTED }, account: { token: REDACTED } });
  });

  it("redacts keys named like a secret that no list names (a new product's record fields)", () => {
    const { logger, text } = capture({ secrets: [] });
    logger.info(
      {
        databases: [{ database_id: 'db-1', rest_token: 'OTHER_CANARY_1', read_only_rest_token: 'OTHER_CANARY_2' }],
        a: { b: { c: { db_password: 'OTHER_CANARY_3', clientSecretValue: 'OTHER_CANARY_4' } } },
        selectedBy: 'token',
      },
      'records',
    );
    expect(text()).not.toContain('OTHER_CANARY');
    expect(JSON.parse(text())).toMatchObject({
      databases: [{ database_id: 'db-1', rest_token: REDACTED }],
      selectedBy: 'token',
    });
  });

  it('child loggers inherit the scrub', () => {
    const { logger, text } = capture();
    logger
      .child({ component: 'api' })
      .child({ endpoint: '/v2/logs' })
      .debug({ sent: { hdr: `Bearer ${TOKEN}` } }, `sent ${API_KEY}`);
    expectNoCanary(text());
    expect(JSON.parse(text())).toMatchObject({ component: 'api', endpoint: '/v2/logs' });
  });

  it('pretty format is scrubbed too', () => {
    const { logger, text } = capture({ format: 'pretty' });
    logger.info({ nested: { value: TOKEN } }, `pretty ${API_KEY}`);
    logger.error({ err: new Error(`boom ${TOKEN}`) }, 'failed');
    expect(text()).toContain('pretty');
    expect(text()).not.toMatch(/^\{/); // not JSON lines
    expectNoCanary(text());
  });

  it('secrets with JSON-special characters are caught in their escaped form', () => {
    const secret = 'CANARY"quote\\back';
    const { logger, text } = capture({ secrets: [secret] });
    logger.info({ field: secret }, secret);
    expect(text()).not.toContain('CANARY');
  });
});

describe('createScrubber', () => {
  it('replaces every occurrence, the longest secret first', () => {
    const scrub = createScrubber(['abc', 'abcdef', '']);
    expect(scrub('x abcdef y abc z')).toBe(`x ${REDACTED} y ${REDACTED} z`);
  });

  it('is the identity with no secrets', () => {
    expect(createScrubber([])('unchanged')).toBe('unchanged');
  });

  it('replaces the encoded forms an upstream may echo: base64 and base64url at any offset, hex, any letter case', () => {
    const secret = 'sk_Live-Canary+Token/42?x=1';
    const scrub = createScrubber([secret]);
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const forms = [
      secret,
      secret.toUpperCase(),
      secret.toLowerCase(),
      JSON.stringify(secret).slice(1, -1),
      encodeURIComponent(secret),
      encodeURIComponent(secret).toLowerCase(),
      b64(secret),
      b64(secret).replace(/=+$/, ''),
      Buffer.from(secret).toString('base64url'),
      Buffer.from(secret).toString('hex'),
      Buffer.from(secret).toString('hex').toUpperCase(),
    ];
    for (const form of forms) expect(scrub(`echo: ${form} end`), form).toBe(`echo: ${REDACTED} end`);
    // Inside a longer base64 text (a Basic header), at each of the three byte offsets.
    for (const user of ['u', 'us', 'usr']) {
      const header = b64(`${user}:${secret}`);
      const scrubbed = scrub(`Authorization: Basic ${header}`);
      expect(scrubbed, user).toContain(REDACTED);
      // What is left: the user's characters, and at most a few bits of the secret's first and last byte.
      const userChars = Math.ceil(((user.length + 1) * 8) / 6);
      expect(scrubbed.replace(/.*Basic /, '').replace(REDACTED, '').length, user).toBeLessThanOrEqual(userChars + 4);
    }
  });

  it('leaves short encoded forms alone: they could match a number by chance', () => {
    const scrub = createScrubber(['abc']);
    expect(scrub('id 616263 and YWJj stay; abc and ABC go')).toBe(
      `id 616263 and YWJj stay; ${REDACTED} and ${REDACTED} go`,
    );
  });
});
