// `upstash-exporter emulator`: flags and environment into options, one-line errors with the
// exporter's ERR_CONFIG code (exit 2 in the CLI), the start banner and a clean shutdown.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseListenAddress } from '../../src/emulator/listen-address.js';
import { parseEmulatorArgs, runEmulatorCli } from '../../src/emulator/main.js';
import { DEV_CREDENTIALS } from '../../src/emulator/options.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('flags', () => {
  it('maps every flag to options and knobs', () => {
    const settings = parseEmulatorArgs(
      [
        '--listen-address',
        '127.0.0.1:9999',
        '--qstash-token',
        'tok',
        '--time-scale',
        '60',
        '--log-retention',
        '500',
        '--log-visibility-delay',
        '2s',
        '--latency',
        '150ms',
        '--rate-limit',
        '10',
        '--error-ratio',
        '0.1',
        '--malformed-ratio',
        '0.05',
        '--truncated-ratio',
        '0.02',
        '--omit-state',
        '--fault-scope',
        'logs,management',
        '--header-prefix',
        'Svc',
        '--plan',
        'free',
        '--seed',
        '42',
        '--allow-remote-destinations',
        '--max-body-bytes',
        '2048',
        '--concurrency',
        '8',
      ],
      { UPSTASH_EMAIL: 'me@example.com' },
    );
    expect(settings.options).toMatchObject({
      host: '127.0.0.1',
      port: 9999,
      token: 'tok',
      email: 'me@example.com',
      apiKey: DEV_CREDENTIALS.apiKey,
      headerPrefix: 'Svc-',
      plan: 'free',
      seed: 42,
      allowRemoteDestinations: true,
      maxBodyBytes: 2048,
      concurrency: 8,
      knobs: {
        timeScale: 60,
        logRetention: 500,
        logVisibilityDelayMs: 2000,
        latencyMs: 150,
        rateLimitPerSecond: 10,
        errorRatio: 0.1,
        malformedRatio: 0.05,
        truncatedRatio: 0.02,
        omitState: true,
        faultScope: ['logs', 'management'],
      },
    });
    expect(settings.defaults).toEqual({ token: false, email: false, apiKey: true });
  });

  it('reads the credential environment and secret files, defaulting to the development credentials', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulator-cli-'));
    try {
      writeFileSync(join(dir, 'key'), 'file-key\n');
      const settings = parseEmulatorArgs([], { QSTASH_TOKEN: 'env-token', UPSTASH_API_KEY_FILE: join(dir, 'key') });
      expect(settings.options).toMatchObject({
        host: '127.0.0.1',
        port: 8787,
        token: 'env-token',
        apiKey: 'file-key',
        email: DEV_CREDENTIALS.email,
      });
      expect(parseEmulatorArgs([], {}).options.token).toBe(DEV_CREDENTIALS.token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--bogus'], '--bogus'],
    [['--time-scale', 'fast'], '--time-scale'],
    [['--time-scale', '0'], '--time-scale'],
    [['--error-ratio', '1.5'], '--error-ratio'],
    [['--log-retention', '0'], '--log-retention'],
    [['--latency', '10 minutes'], '--latency'],
    [['--log-visibility-delay', '5'], '--log-visibility-delay'],
    [['--plan', 'gold'], '--plan'],
    [['--header-prefix', 'X_'], '--header-prefix'],
    [['--listen-address', 'nowhere'], '--listen-address'],
    [['--listen-address', '127.0.0.1:70000'], '--listen-address'],
    [['--fault-scope', 'logs,everything'], '--fault-scope'],
    [['--qstash-token-file', '/nonexistent/file'], '--qstash-token-file'],
    [['--seed', '1.5'], '--seed'],
  ])('%j is one line naming %s, with code ERR_CONFIG', (argv, flag) => {
    try {
      parseEmulatorArgs(argv, {});
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'ERR_CONFIG', flag });
      expect((error as Error).message.startsWith(flag)).toBe(true);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('parses listen addresses', () => {
    expect(parseListenAddress('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListenAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
  });
});

describe('--regions', () => {
  it("reads each region's address and the SDKs' <REGION>_QSTASH_* variables", () => {
    const settings = parseEmulatorArgs(['--listen-address', '127.0.0.1:8700', '--regions', 'eu-central-1,us-east-1'], {
      US_EAST_1_QSTASH_TOKEN: 'us-token',
      US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: 'sig_us_current',
      US_EAST_1_QSTASH_NEXT_SIGNING_KEY: 'sig_us_next',
    });
    expect(settings.options.regions).toEqual([
      { name: 'eu-central-1', host: '127.0.0.1', port: 8700 },
      {
        name: 'us-east-1',
        host: '127.0.0.1',
        port: 8701,
        token: 'us-token',
        currentSigningKey: 'sig_us_current',
        nextSigningKey: 'sig_us_next',
      },
    ]);
    expect(settings.regions).toEqual([
      { name: 'eu-central-1', token: true, signingKeys: true },
      { name: 'us-east-1', token: false, signingKeys: false },
    ]);
    const explicit = parseEmulatorArgs(['--regions', 'us-east-1=127.0.0.1:0,ap-southeast-1=[::1]:9000'], {
      QSTASH_TOKEN: 'first-token',
    });
    expect(explicit.options.regions).toEqual([
      { name: 'us-east-1', host: '127.0.0.1', port: 0, token: 'first-token' },
      { name: 'ap-southeast-1', host: '::1', port: 9000 },
    ]);
    expect(explicit.defaults.token).toBe(false);
  });

  it('refuses bad region lists with one line naming the flag or variable', () => {
    const refused = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      try {
        parseEmulatorArgs(argv, env);
      } catch (error) {
        return error as { code: string; flag: string; message: string };
      }
      throw new Error('accepted');
    };
    expect(refused(['--regions', 'eu-central-1,mars'])).toMatchObject({ code: 'ERR_CONFIG', flag: '--regions' });
    expect(refused(['--regions', 'eu-central-1,eu-central-1']).message).toContain('given twice');
    expect(refused(['--regions', 'eu-central-1,']).flag).toBe('--regions');
    expect(refused(['--regions', 'us-east-1=nowhere']).message).toContain('host:port');
    expect(refused(['--regions', 'us-east-1'], { US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: 'sig_x' }).flag).toBe(
      'US_EAST_1_QSTASH_NEXT_SIGNING_KEY',
    );
  });

  it('serves every region, prints the migration-mode environment, and refuses one token for two regions', async () => {
    const output: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(String(chunk));
      return true;
    });
    const before = process.listeners('SIGINT');
    await runEmulatorCli(['--listen-address', '127.0.0.1:0', '--regions', 'eu-central-1,us-east-1'], {
      US_EAST_1_QSTASH_TOKEN: 'us-secret-token',
    });
    const banner = output.join('');
    const euUrl = /EU_CENTRAL_1_QSTASH_URL=(\S+)/.exec(banner)?.[1];
    const usUrl = /US_EAST_1_QSTASH_URL=(\S+)/.exec(banner)?.[1];
    expect(euUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(usUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(usUrl).not.toBe(euUrl);
    expect(banner).toContain('QSTASH_REGION=EU_CENTRAL_1');
    expect(banner).toContain(`EU_CENTRAL_1_QSTASH_TOKEN=${DEV_CREDENTIALS.token}`);
    expect(banner).toMatch(/US_EAST_1_QSTASH_CURRENT_SIGNING_KEY=sig_\S{28}\n/);
    expect(banner).toContain(`UPSTASH_API_KEY=${DEV_CREDENTIALS.apiKey}`);
    // A token given in the environment is used, never printed.
    expect(banner).not.toContain('us-secret-token');
    const status = (url: string, token: string) =>
      fetch(`${url}/v2/logs`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await status(usUrl!, 'us-secret-token')).toBe(200);
    expect(await status(euUrl!, 'us-secret-token')).toBe(401);
    const added = process.listeners('SIGINT').filter((listener) => !before.includes(listener));
    (added[0] as (signal: NodeJS.Signals) => void)('SIGINT');
    await vi.waitFor(() => expect(output.join('')).toContain('stopped'));

    await expect(
      runEmulatorCli(['--listen-address', '127.0.0.1:0', '--regions', 'eu-central-1,us-east-1'], {
        QSTASH_TOKEN: 'shared',
        US_EAST_1_QSTASH_TOKEN: 'shared',
      }),
    ).rejects.toMatchObject({ code: 'ERR_CONFIG', flag: '--regions', message: expect.stringContaining('same token') });
  });
});

describe('running', () => {
  it('prints the URL and development credentials, serves, and stops on SIGTERM', async () => {
    const output: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(String(chunk));
      return true;
    });
    const listenersBefore = process.listeners('SIGTERM');
    const sigintBefore = process.listeners('SIGINT');
    await runEmulatorCli(['--listen-address', '127.0.0.1:0', '--time-scale', '10'], {});
    const added = process.listeners('SIGTERM').filter((listener) => !listenersBefore.includes(listener));
    expect(added).toHaveLength(1);
    const banner = output.join('');
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    expect(url).toBeDefined();
    expect(banner).toContain(`QSTASH_TOKEN=${DEV_CREDENTIALS.token}`);
    expect(banner).toContain(`UPSTASH_API_KEY=${DEV_CREDENTIALS.apiKey}`);
    expect(banner).toContain(
      `node dist/cli.js run --qstash-url ${url} --qstash-token ${DEV_CREDENTIALS.token} --management-url ${url} --upstash-email ${DEV_CREDENTIALS.email} --upstash-api-key ${DEV_CREDENTIALS.apiKey}`,
    );
    const knobs = (await (await fetch(`${url}/__emulator/knobs`)).json()) as { timeScale: number };
    expect(knobs.timeScale).toBe(10);
    expect(
      (await fetch(`${url}/v2/logs`, { headers: { authorization: `Bearer ${DEV_CREDENTIALS.token}` } })).status,
    ).toBe(200);

    (added[0] as (signal: NodeJS.Signals) => void)('SIGTERM');
    await vi.waitFor(() => expect(output.join('')).toContain('stopped'));
    await expect(fetch(`${url}/v2/logs`)).rejects.toThrow();
    expect(process.listeners('SIGTERM')).toEqual(listenersBefore);
    expect(process.listeners('SIGINT')).toEqual(sigintBefore);
  });

  it('does not print credentials given by flags, and reports a busy port as a usage error', async () => {
    const output: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.push(String(chunk));
      return true;
    });
    const before = process.listeners('SIGINT');
    await runEmulatorCli(
      [
        '--listen-address',
        '127.0.0.1:0',
        '--qstash-token',
        'very-secret',
        '--upstash-email',
        'a@b.c',
        '--upstash-api-key',
        'also-secret',
      ],
      {},
    );
    const banner = output.join('');
    expect(banner).not.toContain('very-secret');
    expect(banner).not.toContain('also-secret');
    // The paste line names the variables holding them instead.
    expect(banner).toContain('--qstash-token "$QSTASH_TOKEN"');
    expect(banner).toContain('--upstash-api-key "$UPSTASH_API_KEY"');
    const port = /127\.0\.0\.1:(\d+)/.exec(banner)![1]!;
    await expect(runEmulatorCli(['--listen-address', `127.0.0.1:${port}`], {})).rejects.toMatchObject({
      code: 'ERR_CONFIG',
      flag: '--listen-address',
    });
    const added = process.listeners('SIGINT').filter((listener) => !before.includes(listener));
    (added[0] as (signal: NodeJS.Signals) => void)('SIGINT');
    await vi.waitFor(() => expect(output.join('')).toContain('stopped'));
  });
});
