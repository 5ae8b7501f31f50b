// Configuration of the active checks: off by default; the probe refuses to start its public
// receiver without signing keys (unless --probe-insecure-receiver), without a receiver URL or on
// one of the exporter's own paths; remediation needs its bearer token; secrets (signing keys,
// bearer token) come from values or files, are masked by check-config and scrubbed from logs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { configSecrets, ConfigError, loadConfig, renderConfigYaml } from '../../src/config/index.js';

const TOKEN = { QSTASH_TOKEN: 'tok_probe_config' };
const KEYS = { QSTASH_CURRENT_SIGNING_KEY: 'sig_current_canary_1', QSTASH_NEXT_SIGNING_KEY: 'sig_next_canary_2' };
const PROBE = ['--probe-enabled', '--probe-receiver-url', 'https://exporter.example.com/probe/receive?from=qstash'];
const dir = mkdtempSync(join(tmpdir(), 'probe-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configError(argv: string[], env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).not.toMatch(/[\r\n]/);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('both active checks are off, with the documented defaults', () => {
    const config = loadConfig([], TOKEN);
    expect(config.probe).toEqual({
      enabled: false,
      intervalMs: 60_000,
      timeoutMs: 30_000,
      queue: 'upstash-exporter-probe',
      receiverUrl: null,
      receiverPath: '/probe/receive',
      workflowUrl: null,
      insecureReceiver: false,
    });
    expect(config.remediation).toEqual({
      enabled: false,
      bearerToken: null,
      alerts: ['UpstashScheduleRunsFailing'],
      dryRun: false,
    });
    expect(config.qstash.regions[0]).toMatchObject({ currentSigningKey: null, nextSigningKey: null });
  });
});

describe('probe', () => {
  it('an enabled probe with keys and a receiver URL (kept verbatim, query included)', () => {
    const config = loadConfig(
      [...PROBE, '--probe-interval', '30s', '--probe-timeout', '10s', '--probe-queue', 'canary.q'],
      { ...TOKEN, ...KEYS },
    );
    expect(config.probe).toMatchObject({
      enabled: true,
      intervalMs: 30_000,
      timeoutMs: 10_000,
      queue: 'canary.q',
      receiverUrl: 'https://exporter.example.com/probe/receive?from=qstash',
    });
    expect(config.qstash.regions[0]).toMatchObject({
      currentSigningKey: KEYS.QSTASH_CURRENT_SIGNING_KEY,
      nextSigningKey: KEYS.QSTASH_NEXT_SIGNING_KEY,
    });
  });

  it('refuses to start the receiver without signing keys, unless --probe-insecure-receiver', () => {
    const error = configError(PROBE, TOKEN);
    expect(error.key).toBe('qstash_current_signing_key');
    expect(error.message).toContain('QSTASH_NEXT_SIGNING_KEY');
    expect(error.message).toContain('--probe-insecure-receiver');
    expect(loadConfig([...PROBE, '--probe-insecure-receiver'], TOKEN).probe.insecureReceiver).toBe(true);
  });

  it('needs both signing keys, the token and a receiver URL', () => {
    expect(configError([], { ...TOKEN, QSTASH_CURRENT_SIGNING_KEY: 'sig_x' }).message).toMatch(
      /^QSTASH_CURRENT_SIGNING_KEY is set but QSTASH_NEXT_SIGNING_KEY is not/,
    );
    expect(configError(['--probe-enabled'], { ...TOKEN, ...KEYS }).key).toBe('probe.receiver_url');
    expect(configError(PROBE, { UPSTASH_EMAIL: 'a@b.c', UPSTASH_API_KEY: 'k', ...KEYS }).message).toMatch(
      /^--probe-enabled turns the probe on, but enqueueing needs the QStash token/,
    );
  });

  it('refuses receiver paths the exporter serves itself, and bad URLs and queue names', () => {
    for (const path of ['/metrics', '/', '/healthz', '/-/ready', '/-/remediation/alertmanager']) {
      expect(configError([...PROBE, '--probe-receiver-path', path], { ...TOKEN, ...KEYS }).key).toBe(
        'probe.receiver_path',
      );
    }
    expect(configError(['--probe-receiver-url', 'ftp://x/y'], TOKEN).message).toMatch(/not an http or https URL/);
    expect(configError(['--probe-receiver-url', 'https://u:p@x/y'], TOKEN).message).not.toContain('u:p');
    expect(configError(['--probe-workflow-url', 'https://x/y#frag'], TOKEN).key).toBe('probe.workflow_url');
    expect(configError(['--probe-queue', 'a queue'], TOKEN).key).toBe('probe.queue');
  });

  it('signing keys from files, in YAML', () => {
    const current = join(dir, 'current');
    writeFileSync(current, 'sig_from_file_current\n');
    const yaml = join(dir, 'probe.yaml');
    writeFileSync(
      yaml,
      YAML.stringify({
        qstash_token: 'tok',
        qstash_current_signing_key_file: current,
        qstash_next_signing_key: 'sig_inline_next',
        probe: {
          enabled: true,
          receiver_url: 'https://exporter.example.com/probe',
          receiver_path: '/canary',
          interval: '2m',
        },
      }),
    );
    const config = loadConfig(['--config', yaml], {});
    expect(config.qstash.regions[0]).toMatchObject({
      currentSigningKey: 'sig_from_file_current',
      nextSigningKey: 'sig_inline_next',
    });
    expect(config.probe).toMatchObject({ enabled: true, receiverPath: '/canary', intervalMs: 120_000 });
  });
});

/** Bearer tokens of the length the exporter accepts (32 characters or more). */
const BEARER_CANARY = 'bearer-canary-77-0123456789abcdef';
const BEARER_FROM_FILE = 'bearer-from-file-0123456789abcdef';

describe('remediation', () => {
  it('refuses a bearer token shorter than 32 characters, naming the key and not the token', () => {
    const short = 'short-bearer-canary-31-chars-xx';
    expect(short).toHaveLength(31);
    const error = configError(['--remediation-enabled', '--remediation-bearer-token', short], TOKEN);
    expect(error.key).toBe('remediation.bearer_token');
    expect(error.message).toContain('fewer than 32');
    expect(error.message).not.toContain(short);
    expect(
      loadConfig(['--remediation-enabled', '--remediation-bearer-token', `${short}y`], TOKEN).remediation.bearerToken,
    ).toBe(`${short}y`);
    // Off, the token is not used and not judged.
    expect(loadConfig(['--remediation-bearer-token', 'x'], TOKEN).remediation.enabled).toBe(false);
  });

  it('refuses a long but trivial bearer token (one character repeated, few characters, a piece repeated)', () => {
    for (const [weak, reason] of [
      ['a'.repeat(32), '1 different character'],
      ['ab'.repeat(20), '2 different characters'],
      ['0123456'.repeat(5), '7 different characters'],
      ['0123456789abcdef'.repeat(2), 'a piece of 16 characters repeated'],
    ] as const) {
      const error = configError(['--remediation-enabled', '--remediation-bearer-token', weak], TOKEN);
      expect(error.key, weak).toBe('remediation.bearer_token');
      expect(error.message).toContain(`the token is weak: ${reason.startsWith('a piece') ? '' : 'it uses '}${reason}`);
      expect(error.message).not.toContain(weak);
    }
    // What `openssl rand -hex 16` prints passes.
    const random = 'f3a91c07d25e48b6a0c4e19d7b2f5386';
    expect(
      loadConfig(['--remediation-enabled', '--remediation-bearer-token', random], TOKEN).remediation.bearerToken,
    ).toBe(random);
  });

  it('needs a bearer token and the QStash token', () => {
    expect(configError(['--remediation-enabled'], TOKEN).key).toBe('remediation.bearer_token');
    expect(
      configError(['--remediation-enabled', '--remediation-bearer-token', 'b'], {
        UPSTASH_EMAIL: 'a@b.c',
        UPSTASH_API_KEY: 'k',
      }).key,
    ).toBe('remediation.enabled');
  });

  it('alert allowlist from repeated flags, a comma list, or the default; names are checked', () => {
    const env = { ...TOKEN, REMEDIATION_BEARER_TOKEN: BEARER_CANARY };
    expect(
      loadConfig(['--remediation-enabled', '--remediation-alert', 'A', '--remediation-alert', 'B:c'], env).remediation
        .alerts,
    ).toEqual(['A', 'B:c']);
    expect(loadConfig(['--remediation-enabled'], { ...env, REMEDIATION_ALERTS: 'X, Y' }).remediation.alerts).toEqual([
      'X',
      'Y',
    ]);
    expect(loadConfig(['--remediation-enabled', '--remediation-dry-run'], env).remediation).toEqual({
      enabled: true,
      bearerToken: BEARER_CANARY,
      alerts: ['UpstashScheduleRunsFailing'],
      dryRun: true,
    });
    expect(configError(['--remediation-alert', 'not an alert'], env).key).toBe('remediation.alerts');
    expect(configError([], { ...env, REMEDIATION_ALERTS: ' , ' }).key).toBe('remediation.alerts');
  });

  it('the bearer token from a file; both value and file is an error', () => {
    const file = join(dir, 'bearer');
    writeFileSync(file, `${BEARER_FROM_FILE}\n`);
    expect(
      loadConfig(['--remediation-enabled'], { ...TOKEN, REMEDIATION_BEARER_TOKEN_FILE: file }).remediation.bearerToken,
    ).toBe(BEARER_FROM_FILE);
    expect(configError([], { ...TOKEN, REMEDIATION_BEARER_TOKEN_FILE: file, REMEDIATION_BEARER_TOKEN: 'x' }).key).toBe(
      'remediation.bearer_token',
    );
  });
});

describe('secrets of the active checks', () => {
  it('check-config masks the signing keys and the bearer token, the logger scrubs them, and the output loads again', () => {
    const env = { ...TOKEN, ...KEYS, REMEDIATION_BEARER_TOKEN: BEARER_CANARY };
    const config = loadConfig([...PROBE, '--remediation-enabled', '--state-file', 'none'], env);
    const printed = renderConfigYaml(config);
    for (const secret of [KEYS.QSTASH_CURRENT_SIGNING_KEY, KEYS.QSTASH_NEXT_SIGNING_KEY, BEARER_CANARY]) {
      expect(printed).not.toContain(secret);
      expect(configSecrets(config)).toContain(secret);
    }
    const document = YAML.parse(printed) as Record<string, unknown>;
    expect(document).toMatchObject({
      qstash_current_signing_key: '***',
      qstash_next_signing_key: '***',
      probe: { enabled: true, interval: '1m', timeout: '30s', receiver_path: '/probe/receive' },
      remediation: { enabled: true, bearer_token: '***', alerts: ['UpstashScheduleRunsFailing'], dry_run: false },
    });
    // With the masked secrets put back, the printed file is the same configuration.
    const reloaded = join(dir, 'reloaded.yaml');
    const placeholder = 'placeholder-put-back-for-each-masked-secret';
    writeFileSync(reloaded, printed.replaceAll("'***'", placeholder).replaceAll('***', placeholder));
    const again = loadConfig(['--config', reloaded], {});
    expect(again.probe).toEqual(config.probe);
    expect({ ...again.remediation, bearerToken: null }).toEqual({ ...config.remediation, bearerToken: null });
  });
});
