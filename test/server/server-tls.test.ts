// TLS, client certificates and basic auth from an exporter-toolkit web config file, with a real
// HTTPS client against certificates made by openssl in a temp folder; and the strict validation
// of that file.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CollectorRunner } from '../../src/collectors/runner.js';
import { ConfigError } from '../../src/config/index.js';
import { SelfMetrics } from '../../src/metrics/self.js';
import { exporterView, startServer, type ExporterServer, type ServerOptions } from '../../src/server/index.js';
import { loadWebConfig } from '../../src/config/web-config-file.js';
import { BasicAuthChecker, parseBasicAuthorization } from '../../src/server/web-config.js';
import { captureLogger, type CapturedLogger } from '../support/exporter-e2e-helpers.js';
import { collectorSettings } from '../support/collector-settings.js';

const opensslAvailable = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
if (!opensslAvailable && process.env.CI === 'true') throw new Error('openssl is required under CI for the TLS tests');

let dir = '';
const files = { serverCert: '', serverKey: '', clientCert: '', clientKey: '' };
// Low cost keeps the test fast; the cost is part of the hash, so the server uses it as given.
const password = 'correct horse battery staple';
let hash = '';

function openssl(args: string[]): void {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-tls-'));
  hash = bcrypt.hashSync(password, 4);
  if (!opensslAvailable) return;
  const selfSigned = (name: string, san: string): void =>
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${san}`,
    ]);
  selfSigned('server', 'IP:127.0.0.1');
  selfSigned('client', 'DNS:client.test');
  files.serverCert = join(dir, 'server.crt');
  files.serverKey = join(dir, 'server.key');
  files.clientCert = join(dir, 'client.crt');
  files.clientKey = join(dir, 'client.key');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const servers: ExporterServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(
  webConfigYaml: string,
  name = 'web.yml',
  options: Pick<ServerOptions, 'timeouts'> = {},
): Promise<{ server: ExporterServer; path: string; log: CapturedLogger }> {
  const path = join(dir, name);
  writeFileSync(path, webConfigYaml);
  const log = captureLogger('debug');
  const selfMetrics = new SelfMetrics({ version: '1.0.0', processMetrics: false });
  const runner = new CollectorRunner({
    collectors: [],
    settings: collectorSettings({}, 'off'),
    selfMetrics,
    logger: log.logger,
  });
  const server = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    webConfigFile: path,
    view: exporterView('1.0.0', selfMetrics, runner),
    logger: log.logger,
    webConfigCheckIntervalMs: 0,
    ...options,
  });
  servers.push(server);
  return { server, path, log };
}

interface HttpsOptions {
  auth?: { user: string; password: string };
  clientCert?: boolean;
}

function httpsGet(
  url: string,
  path: string,
  options: HttpsOptions = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.auth !== undefined)
      headers.Authorization = `Basic ${Buffer.from(`${options.auth.user}:${options.auth.password}`).toString('base64')}`;
    const req = httpsRequest(
      new URL(path, url),
      {
        headers,
        agent: false,
        // Trust exactly the test's self-signed server certificate.
        ca: readPem(files.serverCert),
        ...(options.clientCert === true ? { cert: readPem(files.clientCert), key: readPem(files.clientKey) } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function readPem(path: string): string {
  return readFileSync(path, 'utf8');
}

describe('HTTPS with basic auth', () => {
  it.skipIf(!opensslAvailable)('answers 200 to the right password, 401 to a wrong or missing one', async () => {
    const { server } = await serve(
      [
        'tls_server_config:',
        '  cert_file: server.crt', // relative to the web config file's folder
        '  key_file: server.key',
        'basic_auth_users:',
        `  prometheus: '${hash}'`,
        'http_server_config:',
        '  headers:',
        '    X-Frame-Options: deny',
      ].join('\n'),
    );
    expect(server.tls).toBe(true);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);

    const ok = await httpsGet(server.url, '/metrics', { auth: { user: 'prometheus', password } });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(ok.headers['x-frame-options']).toBe('deny');
    expect(ok.body).toContain('upstash_exporter_build_info');
    // Again: served from the cache of successful checks.
    expect((await httpsGet(server.url, '/metrics', { auth: { user: 'prometheus', password } })).status).toBe(200);

    for (const auth of [{ user: 'prometheus', password: 'wrong' }, { user: 'nobody', password }, undefined]) {
      const refused = await httpsGet(server.url, '/metrics', { auth });
      expect(refused.status).toBe(401);
      expect(String(refused.headers['www-authenticate'])).toMatch(/^Basic /);
      expect(refused.body).not.toContain('upstash_exporter');
    }
    // Every endpoint is behind the auth, as with the exporter-toolkit.
    expect((await httpsGet(server.url, '/-/healthy')).status).toBe(401);
    expect((await httpsGet(server.url, '/-/healthy', { auth: { user: 'prometheus', password } })).status).toBe(200);
  });

  it.skipIf(!opensslAvailable)(
    'closes a connection that does not finish its TLS handshake within the handshake timeout',
    async () => {
      const tls = ['tls_server_config:', '  cert_file: server.crt', '  key_file: server.key'].join('\n');
      const { server } = await serve(tls, 'handshake.yml', { timeouts: { tlsHandshakeMs: 1_000 } });
      // A TCP connection that never starts the handshake (node's default holds it for 120 s).
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      const opened = Date.now();
      const closed = await new Promise<number>((resolve) => {
        const giveUp = setTimeout(() => resolve(Number.POSITIVE_INFINITY), 5_000);
        socket.on('close', () => {
          clearTimeout(giveUp);
          resolve(Date.now());
        });
        socket.resume();
      });
      socket.destroy();
      expect(closed - opened).toBeLessThan(3_000);
      // The server still answers a client that does shake hands.
      expect((await httpsGet(server.url, '/-/healthy')).status).toBe(200);
    },
  );

  it.skipIf(!opensslAvailable)('re-reads the users when the file changes', async () => {
    const { server, path } = await serve(
      [
        'tls_server_config:',
        '  cert_file: server.crt',
        '  key_file: server.key',
        'basic_auth_users:',
        `  alice: '${hash}'`,
      ].join('\n'),
      'reload.yml',
    );
    expect((await httpsGet(server.url, '/', { auth: { user: 'alice', password } })).status).toBe(200);
    const newHash = bcrypt.hashSync('new password', 4);
    // A different size guarantees a different signature even within one mtime tick.
    writeFileSync(
      path,
      [
        'tls_server_config:',
        '  cert_file: server.crt',
        '  key_file: server.key',
        'basic_auth_users:',
        `  bob: '${newHash}'`,
        `  carol: '${newHash}'`,
      ].join('\n'),
    );
    expect((await httpsGet(server.url, '/', { auth: { user: 'alice', password } })).status).toBe(401);
    expect((await httpsGet(server.url, '/', { auth: { user: 'bob', password: 'new password' } })).status).toBe(200);
  });

  it('leaves the health endpoints listed in basic_auth_excluded_paths open, and nothing else', async () => {
    const { server } = await serve(
      [
        'basic_auth_users:',
        `  prometheus: '${hash}'`,
        'basic_auth_excluded_paths: [/-/healthy, /-/ready, /healthz, /readyz]',
      ].join('\n'),
      'health-open.yml',
    );
    // A probe without credentials (Docker's HEALTHCHECK, a kubelet) gets its answer.
    for (const path of ['/-/healthy', '/healthz', '/-/ready', '/readyz']) {
      expect((await fetch(new URL(path, server.url))).status, path).toBe(200);
      expect((await fetch(new URL(path, server.url), { method: 'HEAD' })).status, path).toBe(200);
    }
    // Everything else still asks for the password: metrics, the landing page, spellings of the
    // open paths that are not theirs.
    for (const path of ['/metrics', '/', '/-/healthy/', '/-/Healthy', '/-/%68ealthy', '/-/healthy/../../metrics']) {
      const refused = await fetch(new URL(path, server.url));
      expect(refused.status, path).toBe(401);
      expect(await refused.text()).not.toContain('upstash_exporter');
    }
    const basicAuth = `Basic ${Buffer.from(`prometheus:${password}`).toString('base64')}`;
    expect((await fetch(new URL('/metrics', server.url), { headers: { Authorization: basicAuth } })).status).toBe(200);
  });

  it('answers 503 with Retry-After to password checks beyond the waiting bound; a scraper with remembered credentials passes', async () => {
    const costly = bcrypt.hashSync(password, 10);
    const { server } = await serve(['basic_auth_users:', `  alice: '${costly}'`].join('\n'), 'flood.yml');
    const basic = (secret: string): string => `Basic ${Buffer.from(`alice:${secret}`).toString('base64')}`;
    expect((await fetch(new URL('/metrics', server.url), { headers: { Authorization: basic(password) } })).status).toBe(
      200,
    );
    // 40 new wrong passwords at once: one checked, 32 waiting, the rest refused at once.
    const flood = Array.from({ length: 40 }, (_, i) =>
      fetch(new URL('/-/healthy', server.url), { headers: { Authorization: basic(`wrong-${i}`) } }),
    );
    const scraper = await fetch(new URL('/metrics', server.url), { headers: { Authorization: basic(password) } });
    expect(scraper.status).toBe(200);
    const answers = await Promise.all(flood);
    const busy = answers.filter((answer) => answer.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((answer) => answer.headers.get('retry-after') === '1')).toBe(true);
    expect(answers.filter((answer) => answer.status === 401).length).toBeLessThanOrEqual(33);
    expect(busy.length + answers.filter((answer) => answer.status === 401).length).toBe(40);
  });

  it('keeps the previous settings when the changed file is invalid', async () => {
    const { server, path, log } = await serve(['basic_auth_users:', `  alice: '${hash}'`].join('\n'), 'plain.yml');
    expect(server.tls).toBe(false);
    writeFileSync(path, 'basic_auth_users:\n  alice: not-a-bcrypt-hash-at-all\n');
    const answer = await fetch(new URL('/-/healthy', server.url), {
      headers: { Authorization: `Basic ${Buffer.from(`alice:${password}`).toString('base64')}` },
    });
    expect(answer.status).toBe(200);
    expect(log.text()).toContain('web config file changed but is invalid');
  });

  it.skipIf(!opensslAvailable)('requires a trusted client certificate with RequireAndVerifyClientCert', async () => {
    const { server } = await serve(
      [
        'tls_server_config:',
        '  cert_file: server.crt',
        '  key_file: server.key',
        '  client_auth_type: RequireAndVerifyClientCert',
        '  client_ca_file: client.crt',
        '  min_version: TLS12',
      ].join('\n'),
      'mtls.yml',
    );
    expect((await httpsGet(server.url, '/metrics', { clientCert: true })).status).toBe(200);
    await expect(httpsGet(server.url, '/metrics')).rejects.toThrow();
  });
});

describe('web config validation', () => {
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const expectConfigError = (path: string, pattern: RegExp): void => {
    let caught: unknown;
    try {
      loadWebConfig(path);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.code).toBe('ERR_CONFIG');
    expect(error.key).toBe('web_config_file');
    expect(error.message).not.toContain('\n');
    expect(error.message).toMatch(pattern);
  };

  it('accepts an empty file (no TLS, no auth)', () => {
    const config = loadWebConfig(write('empty.yml', ''));
    expect(config.tls).toBeNull();
    expect(config.users.size).toBe(0);
  });

  it('leaves only health endpoints open: another path in basic_auth_excluded_paths is refused with one line', () => {
    expect(
      loadWebConfig(write('open-health.yml', 'basic_auth_excluded_paths: [/-/healthy, /-/ready]\n')).authExcludedPaths,
    ).toEqual(new Set(['/-/healthy', '/-/ready']));
    expectConfigError(
      write('open-metrics.yml', 'basic_auth_excluded_paths: [/-/healthy, /metrics]\n'),
      /basic_auth_excluded_paths\.1: only the health endpoints can be left open: \/-\/healthy, \/healthz, \/-\/ready, \/readyz/,
    );
  });

  it('rejects unknown keys, bad hashes, missing files and incomplete TLS with one line', () => {
    expectConfigError(write('unknown.yml', 'basic_auth_user:\n  a: b\n'), /basic_auth_user/);
    expectConfigError(
      write('http2.yml', 'http_server_config:\n  http2: false\n'),
      /http_server_config: Unrecognized key.*http2/,
    );
    expectConfigError(
      write('hash.yml', 'basic_auth_users:\n  alice: plaintext\n'),
      /basic_auth_users\.alice: must be a bcrypt hash/,
    );
    expectConfigError(write('colon.yml', `basic_auth_users:\n  "a:b": '${hash}'\n`), /cannot contain ":"/);
    expectConfigError(
      write('nokey.yml', 'tls_server_config:\n  cert_file: server.crt\n'),
      /exactly one of key_file or key/,
    );
    expectConfigError(
      write(
        'noca.yml',
        'tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n',
      ),
      /client_ca_file: is required/,
    );
    expectConfigError(
      write('authtype.yml', 'tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Sometimes\n'),
      /client_auth_type/,
    );
    expectConfigError(
      write('missing.yml', 'tls_server_config:\n  cert_file: does-not-exist.crt\n  key_file: does-not-exist.key\n'),
      /cert_file does-not-exist\.crt cannot be read \(ENOENT\)/,
    );
    expectConfigError(write('yaml.yml', 'basic_auth_users: [unclosed\n'), /not valid YAML/);
    expectConfigError(join(dir, 'absent.yml'), /cannot be read \(ENOENT\)/);
  });

  it.skipIf(!opensslAvailable)('accepts the example of docs/http.md', async () => {
    const doc = readFileSync(new URL('../../docs/http.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const yaml = (example ?? '')
      .replace('/etc/upstash-exporter/tls.crt', files.serverCert)
      .replace('/etc/upstash-exporter/tls.key', files.serverKey)
      .replace('/etc/upstash-exporter/clients-ca.crt', files.clientCert);
    const config = loadWebConfig(write('doc-example.yml', yaml));
    expect(config.tls?.clientAuthType).toBe('RequireAndVerifyClientCert');
    expect(config.tls?.options.minVersion).toBe('TLSv1.2');
    expect(config.headers['X-Frame-Options']).toBe('deny');
    expect(await bcrypt.compare('change-me', config.users.get('prometheus') ?? '')).toBe(true);
  });

  it.skipIf(!opensslAvailable)('rejects a key that does not match the certificate', () => {
    expectConfigError(
      write('mismatch.yml', 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n'),
      /TLS certificate or key is not usable/,
    );
  });

  it('makes startServer fail before listening', async () => {
    const log = captureLogger('debug');
    const selfMetrics = new SelfMetrics({ version: '1.0.0', processMetrics: false });
    const runner = new CollectorRunner({
      collectors: [],
      settings: collectorSettings({}, 'off'),
      selfMetrics,
      logger: log.logger,
    });
    await expect(
      startServer({
        listen: { host: '127.0.0.1', port: 0 },
        webConfigFile: write('bad.yml', 'nope: 1\n'),
        view: exporterView('1', selfMetrics, runner),
        logger: log.logger,
      }),
    ).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('basic auth checks', () => {
  it('remembers successes and failures, keyed by user, password and hash', async () => {
    const checker = new BasicAuthChecker();
    const users = new Map([['alice', hash]]);
    expect(await checker.check(users, 'alice', 'wrong')).toBe('refused');
    expect(checker.cached).toBe(1);
    expect(await checker.check(users, 'alice', password)).toBe('ok');
    expect(checker.cached).toBe(2);
    const started = performance.now();
    expect(await checker.check(users, 'alice', password)).toBe('ok');
    expect(await checker.check(users, 'alice', 'wrong')).toBe('refused');
    expect(performance.now() - started).toBeLessThan(5);
    // A changed hash (password rotated in the file) misses the cache.
    expect(await checker.check(new Map([['alice', bcrypt.hashSync('other', 4)]]), 'alice', password)).toBe('refused');
    expect(await checker.check(users, 'mallory', password)).toBe('refused');
    await checker.close();
  });

  it('forgets a failure after its time, a success later', async () => {
    let now = 0;
    const checker = new BasicAuthChecker({ failureTtlMs: 1_000, successTtlMs: 60_000, now: () => now });
    const users = new Map([['alice', hash]]);
    await checker.check(users, 'alice', 'wrong');
    await checker.check(users, 'alice', password);
    expect(checker.cached).toBe(2);
    now = 1_001;
    // The expired failure is checked again (and remembered again); the success is still there.
    expect(await checker.check(users, 'alice', 'wrong')).toBe('refused');
    expect(await checker.check(users, 'alice', password)).toBe('ok');
    await checker.close();
  });

  it('runs bcrypt off the event loop, one check at a time, and answers busy beyond the waiting bound', async () => {
    // Cost 10, as in real files: about 50-100 ms of CPU per check.
    const costly = bcrypt.hashSync(password, 10);
    const users = new Map([['alice', costly]]);
    const checker = new BasicAuthChecker({ maxPending: 3 });
    const start = performance.eventLoopUtilization();
    // Distinct wrong passwords: nothing to remember between them.
    const verdicts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => checker.check(users, 'alice', `wrong-${i}`)),
    );
    const busy = performance.eventLoopUtilization(start);
    // One runs, three wait, four are told to come back.
    expect(verdicts.filter((v) => v === 'refused')).toHaveLength(4);
    expect(verdicts.filter((v) => v === 'busy')).toHaveLength(4);
    // The main thread was mostly idle while the worker hashed (on the main thread this is near 1).
    expect(busy.utilization).toBeLessThan(0.5);
    // The same wrong password, asked twice at once, is one check.
    const twice = await Promise.all([checker.check(users, 'alice', 'again'), checker.check(users, 'alice', 'again')]);
    expect(twice).toEqual(['refused', 'refused']);
    await checker.close();
  });

  it('parses Basic authorization headers', () => {
    const encode = (s: string): string => `Basic ${Buffer.from(s).toString('base64')}`;
    expect(parseBasicAuthorization(encode('u:p:with:colons'))).toEqual({ user: 'u', password: 'p:with:colons' });
    expect(parseBasicAuthorization(encode('nocolon'))).toBeNull();
    expect(parseBasicAuthorization('Bearer abc')).toBeNull();
    expect(parseBasicAuthorization(undefined)).toBeNull();
  });
});
