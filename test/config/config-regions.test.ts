// The watched QStash regions (issue 35): the SDKs' own multi-region environment as it is, the
// single-region settings of before, the flags and the YAML list, their one-line errors, and
// check-config printing every region with its secrets masked.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ConfigError, configSecrets, loadConfig, renderConfigYaml } from '../../src/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-regions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An app's .env in the SDKs' migration mode, pasted as it is (upstash/docs qstash/howto/multi-region.mdx). */
const MIGRATION_ENV = {
  QSTASH_REGION: 'US_EAST_1',
  US_EAST_1_QSTASH_URL: 'https://qstash-us-east-1.upstash.io',
  US_EAST_1_QSTASH_TOKEN: 'tok_us_1',
  US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: 'sig_us_current',
  US_EAST_1_QSTASH_NEXT_SIGNING_KEY: 'sig_us_next',
  EU_CENTRAL_1_QSTASH_URL: 'https://qstash.upstash.io',
  EU_CENTRAL_1_QSTASH_TOKEN: 'tok_eu_1',
  EU_CENTRAL_1_QSTASH_CURRENT_SIGNING_KEY: 'sig_eu_current',
  EU_CENTRAL_1_QSTASH_NEXT_SIGNING_KEY: 'sig_eu_next',
};

function configError(argv: string[], env: Record<string, string>): ConfigError {
  try {
    loadConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).not.toContain('\n');
    return error as ConfigError;
  }
  throw new Error('expected a configuration error');
}

const regionsOf = (argv: string[], env: Record<string, string>) =>
  loadConfig(argv, env).qstash.regions.map(({ name, nameFrom, url, token }) => ({ name, nameFrom, url, token }));

describe('the SDKs environment', () => {
  it('watches every region whose <REGION>_QSTASH_TOKEN is set, with its URL and keys, QSTASH_REGION or not', () => {
    const config = loadConfig([], MIGRATION_ENV);
    expect(config.qstash.regions).toEqual([
      {
        name: 'eu-central-1',
        nameFrom: 'variable',
        url: 'https://qstash.upstash.io',
        token: 'tok_eu_1',
        currentSigningKey: 'sig_eu_current',
        nextSigningKey: 'sig_eu_next',
      },
      {
        name: 'us-east-1',
        nameFrom: 'variable',
        url: 'https://qstash-us-east-1.upstash.io',
        token: 'tok_us_1',
        currentSigningKey: 'sig_us_current',
        nextSigningKey: 'sig_us_next',
      },
    ]);
    const { QSTASH_REGION: _primary, ...withoutRegion } = MIGRATION_ENV;
    expect(loadConfig([], withoutRegion).qstash.regions).toEqual(config.qstash.regions);
    // Every collector of the QStash token is on.
    expect(config.collectors.logs.enabled).toBe(true);
  });

  it("takes a region's public URL when its <REGION>_QSTASH_URL is not set", () => {
    expect(regionsOf([], { US_EAST_1_QSTASH_TOKEN: 'tok_us' })).toEqual([
      { name: 'us-east-1', nameFrom: 'variable', url: 'https://qstash-us-east-1.upstash.io', token: 'tok_us' },
    ]);
  });

  it('QSTASH_TOKEN repeating a region token (the SDKs fallback) is that region, its keys filling in', () => {
    const config = loadConfig([], {
      US_EAST_1_QSTASH_TOKEN: 'tok_us',
      QSTASH_TOKEN: 'tok_us',
      QSTASH_CURRENT_SIGNING_KEY: 'sig_c',
      QSTASH_NEXT_SIGNING_KEY: 'sig_n',
    });
    expect(config.qstash.regions).toHaveLength(1);
    expect(config.qstash.regions[0]).toMatchObject({ name: 'us-east-1', currentSigningKey: 'sig_c' });
  });
});

describe('QSTASH_TOKEN alone: one region, as before', () => {
  it('is named by its URL, else QSTASH_REGION / --qstash-region, else assumed eu-central-1', () => {
    expect(regionsOf([], { QSTASH_TOKEN: 't' })).toEqual([
      { name: 'eu-central-1', nameFrom: 'url', url: 'https://qstash.upstash.io', token: 't' },
    ]);
    expect(regionsOf([], { QSTASH_TOKEN: 't', QSTASH_URL: 'https://qstash-us-east-1.upstash.io' })).toEqual([
      { name: 'us-east-1', nameFrom: 'url', url: 'https://qstash-us-east-1.upstash.io', token: 't' },
    ]);
    expect(regionsOf([], { QSTASH_TOKEN: 't', QSTASH_URL: 'http://127.0.0.1:8080' })).toEqual([
      { name: 'eu-central-1', nameFrom: 'assumed', url: 'http://127.0.0.1:8080', token: 't' },
    ]);
    expect(
      regionsOf(['--qstash-region', 'us-east-1'], { QSTASH_TOKEN: 't', QSTASH_URL: 'http://127.0.0.1:8080' }),
    ).toEqual([{ name: 'us-east-1', nameFrom: 'qstash_region', url: 'http://127.0.0.1:8080', token: 't' }]);
    // Without a URL, the region named is reached at its public URL.
    expect(regionsOf([], { QSTASH_TOKEN: 't', QSTASH_REGION: 'US_EAST_1' })).toEqual([
      { name: 'us-east-1', nameFrom: 'qstash_region', url: 'https://qstash-us-east-1.upstash.io', token: 't' },
    ]);
  });
});

describe('flags and YAML', () => {
  it('takes --qstash-region-token <region>=<token> (and -file), --qstash-region-url, over the environment', () => {
    const tokenFile = join(dir, 'us-token');
    writeFileSync(tokenFile, 'tok_us_file\n');
    expect(
      regionsOf(
        [
          '--qstash-region-token',
          'eu-central-1=tok_eu_flag',
          '--qstash-region-token-file',
          `us-east-1=${tokenFile}`,
          '--qstash-region-url',
          'us-east-1=http://127.0.0.1:9001',
        ],
        { EU_CENTRAL_1_QSTASH_TOKEN: 'tok_eu_env' },
      ),
    ).toEqual([
      { name: 'eu-central-1', nameFrom: 'setting', url: 'https://qstash.upstash.io', token: 'tok_eu_flag' },
      { name: 'us-east-1', nameFrom: 'setting', url: 'http://127.0.0.1:9001', token: 'tok_us_file' },
    ]);
  });

  it('takes the YAML list qstash_regions, a token also from a file', () => {
    const tokenFile = join(dir, 'eu-token');
    writeFileSync(tokenFile, 'tok_eu_yaml_file\n');
    const yaml = join(dir, 'regions.yaml');
    writeFileSync(
      yaml,
      YAML.stringify({
        qstash_regions: [
          { name: 'eu-central-1', token_file: 'eu-token' },
          { name: 'US_EAST_1', url: 'http://127.0.0.1:9002', token: 'tok_us_yaml' },
        ],
      }),
    );
    expect(regionsOf(['--config', yaml], {})).toEqual([
      { name: 'eu-central-1', nameFrom: 'setting', url: 'https://qstash.upstash.io', token: 'tok_eu_yaml_file' },
      { name: 'us-east-1', nameFrom: 'setting', url: 'http://127.0.0.1:9002', token: 'tok_us_yaml' },
    ]);
  });
});

describe('one-line errors', () => {
  it('the same token for two regions', () => {
    const error = configError([], { EU_CENTRAL_1_QSTASH_TOKEN: 'tok_same', US_EAST_1_QSTASH_TOKEN: 'tok_same' });
    expect(error.message).toBe(
      'EU_CENTRAL_1_QSTASH_TOKEN and US_EAST_1_QSTASH_TOKEN hold the same token for eu-central-1 and us-east-1; each region has its own token (Upstash console, QStash, that region)',
    );
    expect(error.message).not.toContain('tok_same');
  });

  it('an unknown region name', () => {
    expect(configError(['--qstash-region-token', 'ap-south-1=tok'], {}).message).toBe(
      '--qstash-region-token: "ap-south-1" is not a known QStash region; use one of eu-central-1, us-east-1',
    );
    expect(configError([], { QSTASH_TOKEN: 't', QSTASH_REGION: 'mars' }).message).toMatch(
      /^QSTASH_REGION: "mars" is not a known QStash region/,
    );
  });

  it('a region without a token', () => {
    expect(configError([], { US_EAST_1_QSTASH_URL: 'https://qstash-us-east-1.upstash.io' }).message).toBe(
      'US_EAST_1_QSTASH_URL is set but us-east-1 has no token: set US_EAST_1_QSTASH_TOKEN (or --qstash-region-token us-east-1=<token>, token in qstash_regions)',
    );
  });

  it("a URL naming one region under another's name", () => {
    expect(
      configError([], { US_EAST_1_QSTASH_TOKEN: 't', US_EAST_1_QSTASH_URL: 'https://qstash-eu-central-1.upstash.io' })
        .message,
    ).toBe(
      `US_EAST_1_QSTASH_URL: "https://qstash-eu-central-1.upstash.io" is the URL of eu-central-1, given as us-east-1's; give each region its own URL`,
    );
    expect(
      configError([], {
        QSTASH_TOKEN: 't',
        QSTASH_URL: 'https://qstash-us-east-1.upstash.io',
        QSTASH_REGION: 'eu-central-1',
      }).message,
    ).toMatch(/^QSTASH_URL: .* is the URL of us-east-1, but QSTASH_REGION says eu-central-1/);
  });

  it('one signing key of a region without the other', () => {
    expect(
      configError([], { US_EAST_1_QSTASH_TOKEN: 't', US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: 'sig' }).message,
    ).toMatch(/^US_EAST_1_QSTASH_CURRENT_SIGNING_KEY is set but us-east-1's next signing key is not/);
  });
});

describe('secrets', () => {
  it('configSecrets holds every region token and keys; check-config masks them and prints every region', () => {
    const config = loadConfig([], MIGRATION_ENV);
    const secrets = configSecrets(config);
    for (const name of Object.keys(MIGRATION_ENV).filter((key) => /TOKEN|SIGNING_KEY/.test(key)))
      expect(secrets).toContain(MIGRATION_ENV[name as keyof typeof MIGRATION_ENV]);
    const printed = renderConfigYaml(config);
    for (const secret of secrets) expect(printed).not.toContain(secret);
    expect(printed).toContain('#  eu-central-1: https://qstash.upstash.io (its <REGION>_QSTASH_TOKEN variable)');
    expect(printed).toContain('#  us-east-1: https://qstash-us-east-1.upstash.io');
  });
});

const CLI = resolve('dist/cli.js');

describe.skipIf(!existsSync(CLI))('the built binary (npm run build first)', () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env } },
        (e, o, s) =>
          done({ status: e === null ? 0 : typeof e.code === 'number' ? e.code : null, stdout: o, stderr: s }),
      );
    });

  it('check-config with the migration-mode .env prints both regions, masked; a duplicate token exits 2 in one line', async () => {
    const ok = await run(['check-config', '--state-file', 'none'], MIGRATION_ENV);
    expect(ok.status).toBe(0);
    const document = YAML.parse(ok.stdout) as { qstash_regions: unknown };
    expect(document.qstash_regions).toEqual([
      {
        name: 'eu-central-1',
        url: 'https://qstash.upstash.io',
        token: '***',
        current_signing_key: '***',
        next_signing_key: '***',
      },
      {
        name: 'us-east-1',
        url: 'https://qstash-us-east-1.upstash.io',
        token: '***',
        current_signing_key: '***',
        next_signing_key: '***',
      },
    ]);
    const failed = await run(['check-config'], { ...MIGRATION_ENV, US_EAST_1_QSTASH_TOKEN: 'tok_eu_1' });
    expect(failed.status).toBe(2);
    expect(failed.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(/hold the same token for eu-central-1 and us-east-1/);
    expect(failed.stderr).not.toContain('tok_eu_1');
  });
});
