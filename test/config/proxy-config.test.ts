// The egress proxy and CA settings (http.proxy_from_environment, http.proxy_url, http.no_proxy,
// http.ca_file): the environment's proxy variables read by loadConfig from the environment it is
// given, user input refused in one line that never shows a proxy's password (exit 2 from the
// CLI), and the password kept out of check-config's output and in the list of secrets to scrub.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configSecrets, loadConfig, renderConfigYaml } from '../../src/config/index.js';

const TOKEN = { QSTASH_TOKEN: 'tok_proxy_test' };
const PASSWORD = 'CANARY-proxy-secret';
const dir = mkdtempSync(join(tmpdir(), 'proxy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toMatch(/[\r\n]/);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('the proxy settings', () => {
  it('follow the environment by default, its variables in either case; --no-http-proxy-from-environment ignores them', () => {
    const env = { ...TOKEN, https_proxy: 'http://corp:3128', NO_PROXY: '.internal' };
    expect(loadConfig([], env).http.proxy).toEqual({
      url: null,
      noProxy: [],
      fromEnvironment: true,
      environment: {
        httpsProxy: { name: 'https_proxy', value: 'http://corp:3128' },
        httpProxy: null,
        noProxy: { name: 'NO_PROXY', value: '.internal' },
      },
    });
    const off = loadConfig(['--no-http-proxy-from-environment'], env).http.proxy;
    expect(off.fromEnvironment).toBe(false);
    expect(off.environment).toEqual({ httpsProxy: null, httpProxy: null, noProxy: null });
  });

  it('http.proxy_url replaces the environment; http.no_proxy goes with it', () => {
    const config = loadConfig(['--http-proxy-url', 'proxy.corp:8080', '--http-no-proxy', '10.0.0.0/8'], {
      ...TOKEN,
      HTTPS_PROXY: 'http://ignored:1',
    });
    expect(config.http.proxy).toMatchObject({ url: 'proxy.corp:8080', noProxy: ['10.0.0.0/8'] });
    expect(config.http.proxy.environment.httpsProxy).toBe(null);
    const alone = configError(() => loadConfig(['--http-no-proxy', 'a.example'], TOKEN));
    expect(alone.key).toBe('http.no_proxy');
    expect(alone.message).toContain('NO_PROXY');
  });

  it('refuses a proxy URL it cannot use, naming the variable and never the value', () => {
    for (const value of [`socks5://u:${PASSWORD}@h:1`, `http://u:${PASSWORD}@h:1/path`]) {
      const fromEnv = configError(() => loadConfig([], { ...TOKEN, HTTPS_PROXY: value }));
      expect(fromEnv.key).toBe('HTTPS_PROXY');
      expect(fromEnv.message).toMatch(/^HTTPS_PROXY /);
      expect(fromEnv.message).not.toContain(PASSWORD);
      const fromFlag = configError(() => loadConfig(['--http-proxy-url', value], TOKEN));
      expect(fromFlag.key).toBe('http.proxy_url');
      expect(fromFlag.message).not.toContain(PASSWORD);
    }
    // Ignored when the environment is not followed.
    expect(() =>
      loadConfig(['--no-http-proxy-from-environment'], { ...TOKEN, HTTPS_PROXY: 'socks5://h:1' }),
    ).not.toThrow();
  });

  it('check-config prints the password as *** and the secrets list holds it with its Basic credentials', () => {
    const flagged = loadConfig(['--http-proxy-url', `http://egress:${PASSWORD}@proxy:3128`], TOKEN);
    expect(renderConfigYaml(flagged)).toContain('proxy_url: http://egress:***@proxy:3128');
    const fromEnv = loadConfig([], { ...TOKEN, HTTP_PROXY: `http://egress:${PASSWORD}@proxy:3128`, no_proxy: 'x' });
    const yaml = renderConfigYaml(fromEnv);
    expect(yaml).toContain('#  HTTP_PROXY=http://egress:***@proxy:3128');
    expect(yaml).toContain('#  no_proxy=x');
    for (const config of [flagged, fromEnv]) {
      expect(renderConfigYaml(config)).not.toContain(PASSWORD);
      expect(configSecrets(config)).toEqual(
        expect.arrayContaining([PASSWORD, Buffer.from(`egress:${PASSWORD}`).toString('base64')]),
      );
    }
  });
});

describe('http.ca_file', () => {
  it('a missing, unreadable or non-PEM file is refused in one line naming it', () => {
    const missing = configError(() => loadConfig(['--http-ca-file', join(dir, 'nope.pem')], TOKEN));
    expect(missing.key).toBe('http.ca_file');
    expect(missing.message).toContain('ENOENT');
    const text = join(dir, 'not-pem.txt');
    writeFileSync(text, 'hello\n');
    expect(configError(() => loadConfig(['--http-ca-file', text], TOKEN)).message).toContain('no PEM certificate');
    expect(configError(() => loadConfig(['--http-ca-file', dir], TOKEN)).message).toContain('EISDIR');
  });

  it('the CLI exits 2 with that one line and no stack trace', () => {
    const result = spawnSync(
      process.execPath,
      ['dist/cli.js', 'check-config', '--http-ca-file', join(dir, 'absent-ca.pem')],
      { env: { PATH: process.env.PATH ?? '', ...TOKEN }, encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('absent-ca.pem');
    expect(lines[0]).toContain('ENOENT');
  });
});
