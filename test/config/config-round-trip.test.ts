// check-config's YAML is itself a configuration file: printed with every setting away from its
// default and loaded back, it gives the same configuration. A setting the renderer leaves out
// comes back at its default, and the test names it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  COLLECTOR_NAMES,
  loadConfig,
  MASK,
  renderConfigYaml,
  SETTINGS,
  type ExporterConfig,
} from '../../src/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-round-trip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The secrets, which check-config prints as *** : given again, as variables, when loading back. */
const SECRETS = {
  QSTASH_TOKEN: 'tok_round_trip_1',
  QSTASH_CURRENT_SIGNING_KEY: 'sig_current_1',
  QSTASH_NEXT_SIGNING_KEY: 'sig_next_1',
  UPSTASH_API_KEY: 'key_round_trip_2',
  REMEDIATION_BEARER_TOKEN: 'bearer-round-trip-0123456789abcdef',
};

/** A CA certificate for http.ca_file (made once with openssl; only its PEM form is checked). */
const CA_PEM = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBhjCCAS2gAwIBAgIUfISrMUqD16f7j8hTaYxHReAn5kowCgYIKoZIzj0EAwIw',
  'GDEWMBQGA1UEAwwNcm91bmQtdHJpcC1jYTAgFw0yNjExMjgwNTU0MjNaGA8yMTI2',
  'MTEwNDA1NTQyM1owGDEWMBQGA1UEAwwNcm91bmQtdHJpcC1jYTBZMBMGByqGSM49',
  'AgEGCCqGSM49AwEHA0IABIn2w7HprcMU/8vwwyN2Iumq6VaHlGLzIRflQaxhygX/',
  'pCoNy36qdAE/voBlAkypVZ/XdWRfaf7pkYFTnEBIIXujUzBRMB0GA1UdDgQWBBT8',
  'ilh6r58BiaWWCI8bIXSZb0FGOjAfBgNVHSMEGDAWgBT8ilh6r58BiaWWCI8bIXSZ',
  'b0FGOjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIA+vljwypWfY',
  'wOposjwENjdZFGTVSGyJaqXt5lVdhSi2AiAtuSHU66MFQsx3q592IVeufTaGam2+',
  'xzAPYwFP56GAiw==',
  '-----END CERTIFICATE-----',
].join('\n');

/** Every setting but --config, each at a value other than its default (intervals cron-exact). */
function everySettingChanged(): string[] {
  const webConfig = join(dir, 'web-config.yml');
  writeFileSync(webConfig, 'basic_auth_users: {}\n');
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, `${CA_PEM}\n`);
  return [
    ...[
      '--listen-address',
      '127.0.0.1:9911',
      '--qstash-url',
      'http://127.0.0.1:7001/q',
      '--qstash-region',
      'us-east-1',
      '--management-url',
      'http://127.0.0.1:7002/m',
    ],
    ...['--upstash-email', 'ops@example.com', '--disable-collector', 'search', '--state-file', join(dir, 'state.json')],
    ...[
      '--poll-interval',
      'logs=10s,schedules=2m,queues=20s,url_groups=10m,dlq=2m,flow_control=1m,account=15m,search=10m,vector=2m,usage=2m,workflows=1m,redis=5m',
    ],
    ...['--web-config-file', webConfig, '--no-openmetrics', '--log-level', 'debug', '--log-format', 'pretty'],
    ...['--header-prefix', 'Svc-', '--account-path', '/v2/svc/user', '--web-max-connections', '64'],
    ...[
      '--http-connect-timeout',
      '2s',
      '--http-headers-timeout',
      '3s',
      '--http-body-timeout',
      '4s',
      '--http-max-retries',
      '5',
    ],
    ...['--no-http-proxy-from-environment', '--http-proxy-url', 'http://proxy.example:3128'],
    ...['--http-no-proxy', '.internal.example', '--http-no-proxy', '10.0.0.0/8', '--http-ca-file', caFile],
    ...[
      '--http-retry-base-delay',
      '100ms',
      '--http-retry-max-delay',
      '5s',
      '--http-max-rate-limit-wait',
      '1m',
      '--http-max-retry-after',
      '10m',
      '--rate-limit-share',
      '0.25',
    ],
    ...[
      '--logs-path',
      '/v2/logs',
      '--logs-page-size',
      '250',
      '--logs-max-page-mib',
      '8',
      '--logs-ingestion-delay',
      '20s',
    ],
    ...[
      '--logs-overlap',
      '2s',
      '--logs-lateness-horizon',
      '10m',
      '--logs-max-pages',
      '50',
      '--logs-parallel-slices',
      '8',
    ],
    ...[
      '--logs-label',
      'url',
      '--logs-label',
      'label',
      '--logs-series-limit',
      '500',
      '--logs-message-tracker-size',
      '1000',
    ],
    ...[
      '--vector-index',
      'idx-a',
      '--vector-index',
      'idx-b',
      '--no-vector-discovery',
      '--redis-database',
      'db-round-trip',
      '--no-redis-discovery',
      '--vector-stats-period',
      '7d',
      '--dlq-max-pages',
      '20',
    ],
    ...['--flow-control-key', 'k1', '--flow-control-key', 'k2', '--flow-control-max-keys', '30'],
    ...['--probe-enabled', '--probe-interval', '2m', '--probe-timeout', '45s', '--probe-queue', 'q-probe'],
    ...['--probe-receiver-url', 'https://ex.example.com/probe/in?x=1', '--probe-receiver-path', '/probe/in'],
    ...['--probe-workflow-url', 'https://ex.example.com/wf', '--probe-insecure-receiver'],
    ...[
      '--remediation-enabled',
      '--remediation-alert',
      'UpstashScheduleRunsFailing',
      '--remediation-alert',
      'OtherAlert',
      '--remediation-dry-run',
    ],
  ];
}

function at(document: unknown, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], document);
}

/** A collector switched off names where: by the flag at first, by the file's key once loaded back. */
function withoutOrigins(config: ExporterConfig): ExporterConfig {
  const copy = structuredClone(config);
  for (const name of COLLECTOR_NAMES) {
    const collector = copy.collectors[name];
    if (collector.disabledReason?.startsWith('switched off by ') === true)
      collector.disabledReason = 'switched off by (origin)';
  }
  return { ...copy, configFile: null };
}

describe('check-config output loads back as the same configuration', () => {
  const config = loadConfig(everySettingChanged(), SECRETS);
  const rendered = renderConfigYaml(config);
  const printed = YAML.parse(rendered) as Record<string, unknown>;

  it('prints every YAML key of the settings table, each away from its default', () => {
    const defaults = YAML.parse(renderConfigYaml(loadConfig([], { QSTASH_TOKEN: 'tok_default' }))) as Record<
      string,
      unknown
    >;
    // One region given by QSTASH_TOKEN prints as qstash_token again; the list of regions is
    // the other form (the test below).
    const keys = SETTINGS.filter((spec) => spec.notInYaml !== true && spec.key !== 'qstash_regions').flatMap((spec) =>
      spec.key === 'poll_interval' ? COLLECTOR_NAMES.map((name) => `poll_interval.${name}`) : [spec.key],
    );
    for (const key of keys) {
      expect(at(printed, key), `check-config leaves out ${key}`).toBeDefined();
      // A masked secret reads *** whatever its value; loading back proves it is the one given.
      if (at(printed, key) === MASK) continue;
      expect(at(printed, key), `${key} is at its default: the test would not see it lost`).not.toEqual(
        at(defaults, key),
      );
    }
  });

  it('loads back equal, field for field', () => {
    const path = join(dir, 'printed.yaml');
    writeFileSync(path, rendered);
    const again = loadConfig(['--config', path], SECRETS);
    expect(withoutOrigins(again)).toEqual(withoutOrigins(config));
    expect(again.collectors.search.disabledReason).toBe(`switched off by disabled_collectors in ${path}`);
  });
});

describe('check-config prints several regions as the list qstash_regions', () => {
  it('loads back equal, each token given again by its region variable', () => {
    const regional = {
      EU_CENTRAL_1_QSTASH_TOKEN: 'tok_eu_round_trip',
      EU_CENTRAL_1_QSTASH_URL: 'http://127.0.0.1:7101',
      EU_CENTRAL_1_QSTASH_CURRENT_SIGNING_KEY: 'sig_eu_current',
      EU_CENTRAL_1_QSTASH_NEXT_SIGNING_KEY: 'sig_eu_next',
      US_EAST_1_QSTASH_TOKEN: 'tok_us_round_trip',
    };
    const config = loadConfig(['--state-file', 'none'], regional);
    const rendered = renderConfigYaml(config);
    expect(YAML.parse(rendered)).toMatchObject({
      qstash_regions: [
        { name: 'eu-central-1', url: 'http://127.0.0.1:7101', token: MASK, current_signing_key: MASK },
        { name: 'us-east-1', url: 'https://qstash-us-east-1.upstash.io', token: MASK },
      ],
    });
    expect(YAML.parse(rendered)).not.toHaveProperty('qstash_token');
    const path = join(dir, 'regions.yaml');
    writeFileSync(path, rendered);
    const tokensOnly = {
      EU_CENTRAL_1_QSTASH_TOKEN: regional.EU_CENTRAL_1_QSTASH_TOKEN,
      EU_CENTRAL_1_QSTASH_CURRENT_SIGNING_KEY: regional.EU_CENTRAL_1_QSTASH_CURRENT_SIGNING_KEY,
      EU_CENTRAL_1_QSTASH_NEXT_SIGNING_KEY: regional.EU_CENTRAL_1_QSTASH_NEXT_SIGNING_KEY,
      US_EAST_1_QSTASH_TOKEN: regional.US_EAST_1_QSTASH_TOKEN,
    };
    expect(withoutOrigins(loadConfig(['--config', path], tokensOnly)).qstash).toEqual(withoutOrigins(config).qstash);
  });
});
