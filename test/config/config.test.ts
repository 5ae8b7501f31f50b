import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { COLLECTOR_NEEDS } from '../../src/config/collector-catalogue.js';
import { PollSchedule } from '../../src/collectors/poll-schedule.js';
import { formatDuration, parseDuration } from '../../src/common/duration.js';
import {
  COLLECTOR_NAMES,
  ConfigError,
  configSecrets,
  loadConfig,
  maskConfig,
  renderConfigYaml,
  type ExporterConfig,
} from '../../src/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function file(content: string, name = `file-${++fileCount}`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const TOKEN = { QSTASH_TOKEN: 'tok_test_123' };
const MANAGEMENT = { UPSTASH_EMAIL: 'ops@example.com', UPSTASH_API_KEY: 'key_test_456' };

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.code).toBe('ERR_CONFIG');
    expect(configError.message).not.toMatch(/[\r\n]/);
    return configError;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('fills every setting from the defaults when only a token is given', () => {
    const config = loadConfig([], TOKEN);
    expect(config).toEqual<ExporterConfig>({
      configFile: null,
      listen: { host: '0.0.0.0', port: 9824 },
      web: { maxConnections: 512 },
      webConfigFile: null,
      openMetrics: true,
      stateFile: resolve('upstash-exporter-state.json'),
      log: { level: 'info', format: 'json' },
      qstash: {
        regions: [
          {
            name: 'eu-central-1',
            nameFrom: 'url',
            url: 'https://qstash.upstash.io',
            token: 'tok_test_123',
            currentSigningKey: null,
            nextSigningKey: null,
          },
        ],
        headerPrefix: 'Upstash-',
        logsPath: '/v2/events',
      },
      management: { url: 'https://api.upstash.com', email: null, apiKey: null, accountPath: '/v2/qstash/user' },
      collectors: {
        logs: { enabled: true, intervalMs: 15_000, disabledReason: null },
        schedules: { enabled: true, intervalMs: 60_000, disabledReason: null },
        queues: { enabled: true, intervalMs: 30_000, disabledReason: null },
        url_groups: { enabled: true, intervalMs: 300_000, disabledReason: null },
        dlq: { enabled: true, intervalMs: 60_000, disabledReason: null },
        flow_control: { enabled: true, intervalMs: 30_000, disabledReason: null },
        account: { enabled: false, intervalMs: 300_000, disabledReason: 'no UPSTASH_EMAIL + UPSTASH_API_KEY' },
        search: { enabled: false, intervalMs: 300_000, disabledReason: 'no UPSTASH_EMAIL + UPSTASH_API_KEY' },
        vector: { enabled: false, intervalMs: 60_000, disabledReason: 'no UPSTASH_EMAIL + UPSTASH_API_KEY' },
        usage: { enabled: false, intervalMs: 60_000, disabledReason: 'no UPSTASH_EMAIL + UPSTASH_API_KEY' },
        workflows: { enabled: true, intervalMs: 30_000, disabledReason: null },
        redis: { enabled: false, intervalMs: 60_000, disabledReason: 'no UPSTASH_EMAIL + UPSTASH_API_KEY' },
      },
      http: {
        timeouts: { connectMs: 5_000, headersMs: 10_000, bodyMs: 30_000 },
        retry: {
          maxRetries: 3,
          baseDelayMs: 200,
          maxDelayMs: 10_000,
          maxRateLimitWaitMs: 30_000,
          maxRetryAfterMs: null,
          rateLimitShare: 0.5,
        },
        proxy: {
          url: null,
          noProxy: [],
          fromEnvironment: true,
          environment: { httpsProxy: null, httpProxy: null, noProxy: null },
        },
        caFile: null,
      },
      logs: {
        ingestionDelayMs: 15_000,
        overlapMs: 5_000,
        latenessHorizonMs: 300_000,
        maxPagesPerCycle: 1000,
        maxParallelSlices: 4,
        pageSize: 1000,
        maxPageBytes: 32 * 1024 * 1024,
        labels: [],
        seriesLimit: 2000,
        messageTrackerSize: 100_000,
      },
      vector: { indexIds: [], discovery: true, statsPeriod: '1h' },
      redis: { databaseIds: [], discovery: true },
      dlq: { maxPages: 10 },
      flowControl: { keys: [], maxKeys: 100 },
      probe: {
        enabled: false,
        intervalMs: 60_000,
        timeoutMs: 30_000,
        queue: 'upstash-exporter-probe',
        receiverUrl: null,
        receiverPath: '/probe/receive',
        workflowUrl: null,
        insecureReceiver: false,
      },
      remediation: { enabled: false, bearerToken: null, alerts: ['UpstashScheduleRunsFailing'], dryRun: false },
    });
  });

  it('management credentials alone enable account, search, vector, usage and redis', () => {
    const config = loadConfig([], MANAGEMENT);
    expect(COLLECTOR_NAMES.filter((name) => config.collectors[name].enabled)).toEqual([
      'account',
      'search',
      'vector',
      'usage',
      'redis',
    ]);
    expect(config.collectors.logs.disabledReason).toBe('no QSTASH_TOKEN');
  });
});

describe('precedence: flags > environment > YAML > defaults', () => {
  const yaml = file(
    [
      'listen_address: 127.0.0.1:1111',
      'log_level: debug',
      'qstash_url: http://yaml.example:1',
      'http:',
      '  max_retries: 7',
      '  connect_timeout: 1s',
      'vector:',
      '  index_ids: [from-yaml]',
      '  stats_period: 1d',
    ].join('\n'),
    'precedence.yaml',
  );

  it.each([
    // [what, flags, env, expected]
    [
      'YAML over defaults',
      [],
      {},
      { port: 1111, level: 'debug', url: 'http://yaml.example:1', retries: 7, ids: ['from-yaml'] },
    ],
    [
      'environment over YAML',
      [],
      {
        LISTEN_ADDRESS: '127.0.0.1:2222',
        LOG_LEVEL: 'warn',
        QSTASH_URL: 'http://env.example:2',
        HTTP_MAX_RETRIES: '8',
        UPSTASH_VECTOR_INDEX_IDS: 'env-a, env-b',
      },
      { port: 2222, level: 'warn', url: 'http://env.example:2', retries: 8, ids: ['env-a', 'env-b'] },
    ],
    [
      'flags over environment',
      [
        '--listen-address',
        '127.0.0.1:3333',
        '--log-level=error',
        '--qstash-url',
        'http://flag.example:3/',
        '--http-max-retries',
        '9',
        '--vector-index',
        'flag-a',
        '--vector-index',
        'flag-b',
      ],
      {
        LISTEN_ADDRESS: '127.0.0.1:2222',
        LOG_LEVEL: 'warn',
        QSTASH_URL: 'http://env.example:2',
        HTTP_MAX_RETRIES: '8',
        UPSTASH_VECTOR_INDEX_IDS: 'env-a',
      },
      { port: 3333, level: 'error', url: 'http://flag.example:3', retries: 9, ids: ['flag-a', 'flag-b'] },
    ],
  ])('%s', (_what, flags, env, expected) => {
    const config = loadConfig(['--config', yaml, ...flags], { ...TOKEN, ...env });
    expect({
      port: config.listen.port,
      level: config.log.level,
      url: config.qstash.regions[0]!.url,
      retries: config.http.retry.maxRetries,
      ids: config.vector.indexIds,
    }).toEqual(expected);
    // Keys no source overrides keep their YAML value.
    expect(config.http.timeouts.connectMs).toBe(1_000);
    expect(config.vector.statsPeriod).toBe('1d');
    expect(config.configFile).toBe(yaml);
  });

  it('CONFIG_FILE names the file when --config does not', () => {
    expect(loadConfig([], { ...TOKEN, CONFIG_FILE: yaml }).listen.port).toBe(1111);
  });

  it('a repeated single-valued flag keeps its last value', () => {
    expect(loadConfig(['--log-level', 'debug', '--log-level', 'trace'], TOKEN).log.level).toBe('trace');
  });

  it('switches: --no-vector-discovery, --vector-discovery=false, env and YAML', () => {
    expect(loadConfig(['--no-vector-discovery'], MANAGEMENT).vector.discovery).toBe(false);
    expect(loadConfig(['--vector-discovery=false'], MANAGEMENT).vector.discovery).toBe(false);
    expect(loadConfig([], { ...MANAGEMENT, UPSTASH_VECTOR_DISCOVERY: 'false' }).vector.discovery).toBe(false);
    expect(
      loadConfig(['--vector-discovery'], { ...MANAGEMENT, UPSTASH_VECTOR_DISCOVERY: 'false' }).vector.discovery,
    ).toBe(true);
    const off = file('vector:\n  discovery: false\n');
    expect(loadConfig(['--config', off], MANAGEMENT).vector.discovery).toBe(false);
  });

  it('Redis: ids by flag, env and YAML, the discovery switch, a bad id named in one line', () => {
    expect(loadConfig(['--redis-database', 'db-1', '--redis-database', 'db-2'], MANAGEMENT).redis).toEqual({
      databaseIds: ['db-1', 'db-2'],
      discovery: true,
    });
    expect(loadConfig([], { ...MANAGEMENT, UPSTASH_REDIS_DATABASE_IDS: 'a,b' }).redis.databaseIds).toEqual(['a', 'b']);
    expect(loadConfig(['--no-redis-discovery'], MANAGEMENT).redis.discovery).toBe(false);
    const yamlFile = file('redis:\n  database_ids: [from-yaml]\n  discovery: false\n');
    expect(loadConfig(['--config', yamlFile], MANAGEMENT).redis).toEqual({
      databaseIds: ['from-yaml'],
      discovery: false,
    });
    expect(() => loadConfig(['--redis-database', 'has space'], MANAGEMENT)).toThrow(
      /--redis-database: "has space" is not a Redis database id/,
    );
  });
});

describe('poll intervals', () => {
  const intervals = (config: ExporterConfig): Record<string, number> =>
    Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, config.collectors[name].intervalMs]));
  const defaults = intervals(loadConfig([], TOKEN));

  it('one duration sets every collector', () => {
    expect(intervals(loadConfig(['--poll-interval', '30s'], TOKEN))).toEqual(
      Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, 30_000])),
    );
  });

  it('name=duration pairs set single collectors, comma-separated or repeated', () => {
    const config = loadConfig(['--poll-interval', 'logs=5s,account=10m', '--poll-interval', 'vector=2m'], TOKEN);
    expect(intervals(config)).toEqual({ ...defaults, logs: 5_000, account: 600_000, vector: 120_000 });
  });

  it('each source overrides only the collectors it names', () => {
    const yaml = file('poll_interval:\n  logs: 1m\n  search: 1h\n');
    const config = loadConfig(['--config', yaml, '--poll-interval', 'logs=20s'], { ...TOKEN, POLL_INTERVAL: '2m' });
    // YAML logs=1m, search=1h; env sets all to 2m; the flag sets logs to 20s.
    expect(intervals(config)).toEqual({
      ...Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, 120_000])),
      logs: 20_000,
    });
  });

  it('YAML takes one duration too', () => {
    const yaml = file('poll_interval: 45s\n');
    expect(loadConfig(['--config', yaml], TOKEN).collectors.schedules.intervalMs).toBe(45_000);
  });

  it('rejects unknown collectors, bad durations and too-fast polling', () => {
    expect(configError(() => loadConfig([], { ...TOKEN, POLL_INTERVAL: 'log=5s' })).message).toBe(
      `POLL_INTERVAL: "log" is not a known collector; did you mean logs? (one of ${COLLECTOR_NAMES.join(', ')})`,
    );
    expect(configError(() => loadConfig(['--poll-interval', 'logs=5'], TOKEN))).toMatchObject({
      key: 'poll_interval.logs',
      message:
        '--poll-interval: "5" is not a duration (a number needs a unit (ms, s, m, h or d)); write a number and a unit, e.g. 15s, 5m, 1h30m or 500ms',
    });
    expect(configError(() => loadConfig(['--poll-interval', '10ms'], TOKEN)).message).toBe(
      '--poll-interval: "10ms" is too short; use at least 100ms',
    );
    const yaml = file('poll_interval:\n  logs: 15\n');
    expect(configError(() => loadConfig(['--config', yaml], TOKEN)).message).toBe(
      `poll_interval.logs in ${yaml}: 15 has no unit; write a number and a unit, e.g. 15s`,
    );
  });
});

describe('rate limit share', () => {
  it('takes a number above 0 and at most 1, from a flag, the environment or YAML, and refuses anything else naming the key', () => {
    expect(loadConfig(['--rate-limit-share', '1'], TOKEN).http.retry.rateLimitShare).toBe(1);
    expect(loadConfig([], { ...TOKEN, RATE_LIMIT_SHARE: '.3' }).http.retry.rateLimitShare).toBe(0.3);
    for (const bad of ['0', '1.5', '50%', 'half', '-0.5', '']) {
      const error = configError(() => loadConfig(['--rate-limit-share', bad], TOKEN));
      expect(error.key).toBe('http.rate_limit_share');
      expect(error.message).toMatch(/^--rate-limit-share: /);
    }
    expect(configError(() => loadConfig(['--rate-limit-share', '0'], TOKEN)).message).toBe(
      '--rate-limit-share: 0 is out of range; use a number above 0 and at most 1, e.g. 0.5',
    );
    const yaml = file('http: { rate_limit_share: 2 }\n');
    expect(configError(() => loadConfig(['--config', yaml], TOKEN)).message).toBe(
      `http.rate_limit_share in ${yaml}: 2 is out of range; use a number above 0 and at most 1, e.g. 0.5`,
    );
  });
});

describe('secrets', () => {
  it('reads each secret from a *_FILE variable, dropping the trailing newline', () => {
    const token = file('tok_from_file\n');
    const email = file('file@example.com\r\n');
    const key = file('key_from_file\n\n');
    const config = loadConfig([], { QSTASH_TOKEN_FILE: token, UPSTASH_EMAIL_FILE: email, UPSTASH_API_KEY_FILE: key });
    expect(config.qstash.regions[0]!.token).toBe('tok_from_file');
    expect(config.management.email).toBe('file@example.com');
    expect(config.management.apiKey).toBe('key_from_file');
  });

  it('reads secrets from --*-file flags and *_file YAML keys (relative to the YAML file)', () => {
    const sub = join(dir, 'secrets');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'token'), 'tok_yaml_file\n');
    writeFileSync(join(sub, 'api-key'), 'key_flag_file');
    const yaml = join(sub, 'config.yaml');
    writeFileSync(yaml, 'qstash_token_file: token\nupstash_email: y@example.com\n');
    const config = loadConfig(['--config', yaml, '--upstash-api-key-file', join(sub, 'api-key')], {});
    expect(config.qstash.regions[0]!.token).toBe('tok_yaml_file');
    expect(config.management.apiKey).toBe('key_flag_file');
  });

  it('a file at a higher precedence beats a value at a lower one', () => {
    const token = file('tok_flag_file');
    expect(loadConfig(['--qstash-token-file', token], { QSTASH_TOKEN: 'tok_env' }).qstash.regions[0]!.token).toBe(
      'tok_flag_file',
    );
    expect(loadConfig(['--qstash-token', 'tok_flag'], { QSTASH_TOKEN_FILE: token }).qstash.regions[0]!.token).toBe(
      'tok_flag',
    );
  });

  it('refuses a value and a file in the same source', () => {
    const token = file('tok');
    expect(configError(() => loadConfig([], { QSTASH_TOKEN: 'x', QSTASH_TOKEN_FILE: token })).message).toBe(
      'QSTASH_TOKEN and QSTASH_TOKEN_FILE are both set; keep only one of them',
    );
  });

  it('names an unreadable file by path and never shows what a file holds', () => {
    const missing = join(dir, 'missing-token');
    expect(configError(() => loadConfig([], { QSTASH_TOKEN_FILE: missing }))).toMatchObject({
      key: 'qstash_token_file',
      message: `QSTASH_TOKEN_FILE: cannot read ${missing} (ENOENT); check the path and that the exporter may read it`,
    });
    expect(configError(() => loadConfig([], { QSTASH_TOKEN_FILE: dir })).message).toContain(
      `cannot read ${dir} (EISDIR)`,
    );
    const broken = file('CANARY_SECRET_a1b2 with a space\n');
    const error = configError(() => loadConfig([], { UPSTASH_EMAIL: 'e@example.com', UPSTASH_API_KEY_FILE: broken }));
    expect(error.message).toBe(
      `UPSTASH_API_KEY_FILE (${broken}) contains whitespace or control characters (value not shown); check that the management API key was copied whole`,
    );
    expect(error.message).not.toContain('CANARY');
  });

  it('refuses empty secrets from a variable, a flag or a file', () => {
    expect(configError(() => loadConfig([], { QSTASH_TOKEN: '' })).message).toBe(
      'QSTASH_TOKEN is empty; set it to your QStash token or unset it',
    );
    expect(configError(() => loadConfig(['--qstash-token='], {})).message).toBe(
      '--qstash-token is empty; set it to your QStash token or unset it',
    );
    const blank = file('\n');
    expect(configError(() => loadConfig(['--qstash-token-file', blank], {})).message).toBe(
      `--qstash-token-file (${blank}) is empty; set it to your QStash token or unset it`,
    );
  });

  it('needs both management credentials', () => {
    expect(configError(() => loadConfig([], { UPSTASH_EMAIL: 'e@example.com' }))).toMatchObject({
      key: 'upstash_api_key',
      message:
        'UPSTASH_EMAIL is set but UPSTASH_API_KEY is not: the management API needs both; set UPSTASH_API_KEY (or UPSTASH_API_KEY_FILE, --upstash-api-key)',
    });
  });

  it('with no credentials at all, names both ways and the demo', () => {
    const error = configError(() => loadConfig([], {}));
    expect(error.key).toBe('credentials');
    expect(error.message).toContain('QSTASH_TOKEN');
    expect(error.message).toContain('UPSTASH_EMAIL + UPSTASH_API_KEY');
    expect(error.message).toContain('upstash-exporter demo');
  });

  it('maskConfig and renderConfigYaml hide secrets; configSecrets lists them with the Basic credentials', () => {
    const config = loadConfig([], { ...TOKEN, ...MANAGEMENT });
    const masked = maskConfig(config);
    expect(masked.qstash.regions[0]!.token).toBe('***');
    expect(masked.management.apiKey).toBe('***');
    expect(config.qstash.regions[0]!.token).toBe('tok_test_123'); // the original is untouched
    const basic = Buffer.from('ops@example.com:key_test_456').toString('base64');
    expect(configSecrets(config)).toEqual(['tok_test_123', 'key_test_456', basic]);
    const yaml = renderConfigYaml(config);
    for (const secret of configSecrets(config)) expect(yaml).not.toContain(secret);
  });
});

describe('YAML file', () => {
  it('suggests the closest key for a typo, at the top and inside sections', () => {
    const top = file('poll_intervall: 30s\n');
    expect(configError(() => loadConfig(['--config', top], TOKEN))).toMatchObject({
      key: 'poll_intervall',
      message: `${top}: unknown key poll_intervall; did you mean poll_interval?`,
    });
    const nested = file('http:\n  conect_timeout: 5s\n');
    expect(configError(() => loadConfig(['--config', nested], TOKEN)).message).toBe(
      `${nested}: unknown key http.conect_timeout; did you mean http.connect_timeout?`,
    );
    const misplaced = file('connect_timeout: 5s\n');
    expect(configError(() => loadConfig(['--config', misplaced], TOKEN)).message).toBe(
      `${misplaced}: unknown key connect_timeout; did you mean http.connect_timeout?`,
    );
    const far = file('completely_unrelated: 1\n');
    expect(configError(() => loadConfig(['--config', far], TOKEN)).message).toBe(
      `${far}: unknown key completely_unrelated; see docs/configuration.md for the keys`,
    );
  });

  it('names the flat keys for a section guessed from the flag groups (qstash:, upstash:), never quoting a value', () => {
    const guessed = file('qstash:\n  url: https://qstash.upstash.io\n  token: CANARY_SECTION_TOKEN\n');
    const error = configError(() => loadConfig(['--config', guessed], {}));
    expect(error).toMatchObject({
      key: 'qstash',
      message: `${guessed}: unknown section qstash; these settings are top-level keys: write qstash_url, qstash_token (not qstash: with keys below it)`,
    });
    const management = file('upstash:\n  email: a@b.c\n  api_key: k\n');
    expect(configError(() => loadConfig(['--config', management], TOKEN)).message).toContain(
      'write upstash_email, upstash_api_key',
    );
    const bare = file('qstash: yes\n');
    expect(configError(() => loadConfig(['--config', bare], TOKEN)).message).toMatch(
      /unknown key qstash; the keys of that group are top-level: qstash_url, qstash_token,/,
    );
  });

  it('reports syntax errors by position without quoting the file', () => {
    const broken = file('qstash_token: CANARY_IN_YAML\nlog_level: [info\n');
    const error = configError(() => loadConfig(['--config', broken], {}));
    expect(error.message).toMatch(
      new RegExp(`^${broken}: invalid YAML at line \\d+, column \\d+: .+; fix the syntax$`),
    );
    expect(error.message).not.toContain('CANARY');
    const duplicate = file('log_level: info\nlog_level: CANARY_DUP\n');
    expect(configError(() => loadConfig(['--config', duplicate], TOKEN)).message).toBe(
      `${duplicate}: invalid YAML at line 2, column 1: Map keys must be unique; fix the syntax`,
    );
  });

  it('refuses a file that is not a map, a section that is not a map, and empty values', () => {
    const list = file('- a\n- b\n');
    expect(configError(() => loadConfig(['--config', list], TOKEN)).message).toBe(
      `${list}: the file must be a map of settings (key: value), not a list`,
    );
    const section = file('http: 5s\n');
    expect(configError(() => loadConfig(['--config', section], TOKEN)).message).toBe(
      `http in ${section} must be a section: http: on one line, then keys such as connect_timeout: indented below it`,
    );
    const empty = file('log_level:\n');
    expect(configError(() => loadConfig(['--config', empty], TOKEN)).message).toBe(
      `log_level in ${empty} has no value; give it one of fatal, error, warn, info, debug, trace, silent or remove the key`,
    );
  });

  it('an empty file is an empty configuration; a missing one is an error', () => {
    expect(loadConfig(['--config', file('')], TOKEN).log.level).toBe('info');
    const missing = join(dir, 'nope.yaml');
    expect(configError(() => loadConfig(['--config', missing], TOKEN)).message).toBe(
      `--config: cannot read the configuration file ${missing} (ENOENT); check the path and its permissions`,
    );
  });

  it('reads every section with YAML types', () => {
    const yaml = file(
      [
        'qstash_token: tok_yaml',
        'upstash_email: y@example.com',
        'upstash_api_key: key_yaml',
        'disabled_collectors: [search]',
        'state_file: none',
        'log_format: pretty',
        'header_prefix: Svc-',
        'account_path: /v2/svc/user',
        'http: { headers_timeout: 2s, body_timeout: 3s, retry_base_delay: 1s, retry_max_delay: 2s, max_rate_limit_wait: 0, rate_limit_share: 0.25 }',
        'logs: { path: /v2/logs, ingestion_delay: 0s, overlap: 30s, max_pages: 5, page_size: 100, max_page_mib: 8, labels: [url, schedule_id, url], series_limit: 10, message_tracker_size: 50 }',
        'vector: { index_ids: [a, b, a], stats_period: 7d }',
      ].join('\n'),
    );
    const config = loadConfig(['--config', yaml], {});
    expect(config.collectors.search).toEqual({
      enabled: false,
      intervalMs: 300_000,
      disabledReason: `switched off by disabled_collectors in ${yaml}`,
    });
    expect(config.stateFile).toBeNull();
    expect(config.log.format).toBe('pretty');
    expect(config.qstash).toMatchObject({ headerPrefix: 'Svc-', logsPath: '/v2/logs' });
    expect(config.management.accountPath).toBe('/v2/svc/user');
    expect(config.http.timeouts).toEqual({ connectMs: 5_000, headersMs: 2_000, bodyMs: 3_000 });
    expect(config.http.retry).toEqual({
      maxRetries: 3,
      baseDelayMs: 1_000,
      maxDelayMs: 2_000,
      maxRateLimitWaitMs: 0,
      maxRetryAfterMs: null,
      rateLimitShare: 0.25,
    });
    expect(config.logs).toEqual({
      ingestionDelayMs: 0,
      overlapMs: 30_000,
      latenessHorizonMs: 300_000,
      maxPagesPerCycle: 5,
      maxParallelSlices: 4,
      pageSize: 100,
      maxPageBytes: 8 * 1024 * 1024,
      labels: ['url', 'schedule_id'],
      seriesLimit: 10,
      messageTrackerSize: 50,
    });
    expect(config.vector).toEqual({ indexIds: ['a', 'b'], discovery: true, statsPeriod: '7d' });
  });

  it('check-config output loads back as the same configuration', () => {
    const config = loadConfig(
      [
        '--poll-interval',
        'logs=7s',
        '--logs-label',
        'url',
        '--disable-collector',
        'search',
        '--listen-address',
        '[::1]:0',
      ],
      { ...TOKEN, ...MANAGEMENT },
    );
    const rendered = renderConfigYaml(config);
    expect(YAML.parse(rendered)).toMatchObject({
      qstash_token: '***',
      upstash_api_key: '***',
      listen_address: '[::1]:0',
    });
    const again = loadConfig(
      ['--config', file(rendered), '--qstash-token', 'tok_test_123', '--upstash-api-key', 'key_test_456'],
      {},
    );
    // Only the origin named in the reason differs: the flag became a key of the file.
    expect(again.collectors.search.disabledReason).toMatch(/^switched off by disabled_collectors in /);
    again.collectors.search.disabledReason = config.collectors.search.disabledReason;
    // The interval printed is the one the runner uses (7s asked runs every 6s): the same schedule.
    expect(again.collectors.logs.intervalMs).toBe(6000);
    expect(new PollSchedule(again.collectors).plan('logs').expression).toBe(
      new PollSchedule(config.collectors).plan('logs').expression,
    );
    again.collectors.logs.intervalMs = config.collectors.logs.intervalMs;
    expect({ ...again, configFile: null }).toEqual(config);
  });
});

describe('validation of single values', () => {
  it.each<[string, string[], Record<string, string>, string, string]>([
    [
      'bad URL scheme',
      ['--qstash-url', 'ftp://example.com'],
      {},
      'qstash_url',
      '--qstash-url: "ftp://example.com" is not an http or https URL; write e.g. https://qstash.upstash.io',
    ],
    [
      'not a URL',
      [],
      { UPSTASH_MANAGEMENT_URL: 'api.upstash.com' },
      'management_url',
      'UPSTASH_MANAGEMENT_URL: "api.upstash.com" is not a URL; write an http:// or https:// URL, e.g. https://api.upstash.com',
    ],
    [
      'URL with credentials',
      ['--qstash-url', 'https://user:CANARY_PW@example.com'],
      {},
      'qstash_url',
      '--qstash-url: the URL must not carry a user or password; remove them and use the credential settings',
    ],
    [
      'URL with a query',
      ['--qstash-url', 'https://example.com/?a=1'],
      {},
      'qstash_url',
      '--qstash-url: "https://example.com/?a=1" has a query or fragment; give the base URL only, e.g. https://qstash.upstash.io',
    ],
    [
      'bad log level',
      [],
      { LOG_LEVEL: 'verbose' },
      'log_level',
      'LOG_LEVEL: "verbose" is not a known log level; use one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      'log level typo',
      ['--log-level', 'debg'],
      {},
      'log_level',
      '--log-level: "debg" is not a known log level; did you mean debug? (one of fatal, error, warn, info, debug, trace, silent)',
    ],
    [
      'bad log format',
      ['--log-format', 'text'],
      {},
      'log_format',
      '--log-format: "text" is not a known log format; use one of json, pretty',
    ],
    [
      'bad listen address',
      ['--listen-address', '9824'],
      {},
      'listen_address',
      '--listen-address: "9824" is not host:port; write e.g. 0.0.0.0:9824, 127.0.0.1:9824 or [::]:9824 (port 0-65535)',
    ],
    [
      'port out of range',
      [],
      { LISTEN_ADDRESS: '0.0.0.0:70000' },
      'listen_address',
      'LISTEN_ADDRESS: "0.0.0.0:70000" is not host:port; write e.g. 0.0.0.0:9824, 127.0.0.1:9824 or [::]:9824 (port 0-65535)',
    ],
    [
      'unknown collector',
      ['--disable-collector', 'vectr'],
      {},
      'disabled_collectors',
      `--disable-collector: "vectr" is not a known collector; did you mean vector? (one of ${COLLECTOR_NAMES.join(', ')})`,
    ],
    [
      'unknown opt-in label',
      [],
      { LOGS_LABELS: 'queue' },
      'logs.labels',
      'LOGS_LABELS: "queue" is not a known opt-in label; use one of schedule_id, label, url',
    ],
    [
      'bad stats period',
      ['--vector-stats-period', '2h'],
      {},
      'vector.stats_period',
      '--vector-stats-period: "2h" is not a known stats period; did you mean 1h? (one of 1h, 3h, 12h, 1d, 3d, 7d, 30d)',
    ],
    [
      'not a whole number',
      ['--logs-max-pages', '1.5'],
      {},
      'logs.max_pages',
      '--logs-max-pages: "1.5" is not a whole number; write digits only, e.g. 1',
    ],
    [
      'number out of range',
      [],
      { LOGS_SERIES_LIMIT: '0' },
      'logs.series_limit',
      'LOGS_SERIES_LIMIT: 0 is out of range; use a number at least 1',
    ],
    [
      'bad duration',
      [],
      { HTTP_CONNECT_TIMEOUT: 'fast' },
      'http.connect_timeout',
      'HTTP_CONNECT_TIMEOUT: "fast" is not a duration (expected <number><unit> pairs with unit ms, s, m, h or d); write a number and a unit, e.g. 15s, 5m, 1h30m or 500ms',
    ],
    [
      'zero timeout',
      ['--http-body-timeout', '0s'],
      {},
      'http.body_timeout',
      '--http-body-timeout: "0s" is too short; use at least 1ms',
    ],
    [
      'timer overflow',
      ['--logs-overlap', '30d'],
      {},
      'logs.overlap',
      '--logs-overlap: "30d" is too long; use at most 24d20h31m23s647ms',
    ],
    [
      'retry delays inverted',
      ['--http-retry-base-delay', '20s'],
      {},
      'http.retry_base_delay',
      '--http-retry-base-delay: the retry base delay is longer than the retry max delay; make the base delay shorter or the max delay longer',
    ],
    [
      'bad boolean',
      [],
      { UPSTASH_VECTOR_DISCOVERY: 'maybe' },
      'vector.discovery',
      'UPSTASH_VECTOR_DISCOVERY: "maybe" is not a boolean; write true or false',
    ],
    [
      'bad header prefix',
      ['--header-prefix', 'Up stash-'],
      {},
      'header_prefix',
      '--header-prefix: "Up stash-" is not a valid HTTP header name prefix; use letters, digits and dashes, e.g. Upstash-',
    ],
    [
      'bad path',
      ['--logs-path', 'v2/logs'],
      {},
      'logs.path',
      '--logs-path: "v2/logs" is not a URL path; write a path starting with /, e.g. /v2/events',
    ],
    [
      'bad vector id',
      ['--vector-index', '../x'],
      {},
      'vector.index_ids',
      '--vector-index: "../x" is not a vector index id; ids use letters, digits, dots, dashes and underscores',
    ],
    ['unknown flag', ['--qstash-tokn', 'x'], {}, 'argv', 'unknown flag --qstash-tokn: did you mean --qstash-token?'],
    ['missing flag value', ['--log-level'], {}, 'log_level', '--log-level needs a value: write --log-level <level>'],
    [
      'positional argument',
      ['extra'],
      {},
      'argv',
      'unexpected argument "extra": options are written --name value; run upstash-exporter --help for the list',
    ],
    [
      'value on a negated switch',
      ['--no-vector-discovery=true'],
      {},
      'vector.discovery',
      '--no-vector-discovery takes no value: write --no-vector-discovery or --vector-discovery=false',
    ],
    [
      'every collector off',
      ['--disable-collector', COLLECTOR_NAMES.filter((name) => COLLECTOR_NEEDS[name] === 'qstash').join(',')],
      {},
      'disabled_collectors',
      '--disable-collector switches off every collector the credentials enable; leave at least one on',
    ],
    [
      'empty path',
      [],
      { STATE_FILE: '' },
      'state_file',
      'STATE_FILE is empty; give a file path, or none to disable the state file',
    ],
  ])('%s', (_what, flags, env, key, message) => {
    const error = configError(() => loadConfig(flags, { ...TOKEN, ...env }));
    expect(error.key).toBe(key);
    expect(error.message).toBe(message);
    expect(error.message).not.toContain('CANARY');
  });

  it('checks that the state file directory and the web config file exist', () => {
    const noDir = join(dir, 'no-such-dir', 'state.json');
    expect(configError(() => loadConfig(['--state-file', noDir], TOKEN)).message).toBe(
      `--state-file: the directory ${join(dir, 'no-such-dir')} does not exist; create it, choose another path, or write none to disable the state file`,
    );
    expect(loadConfig(['--state-file', join(dir, 'state.json')], TOKEN).stateFile).toBe(join(dir, 'state.json'));
    expect(loadConfig([], { ...TOKEN, STATE_FILE: 'None' }).stateFile).toBeNull();
    const missing = join(dir, 'web.yml');
    expect(configError(() => loadConfig([], { ...TOKEN, WEB_CONFIG_FILE: missing })).message).toBe(
      `WEB_CONFIG_FILE: cannot read ${missing} (ENOENT); check the path or unset it`,
    );
    const web = file('basic_auth_users: {}\n', 'web-config.yml');
    expect(loadConfig(['--web-config-file', web], TOKEN).webConfigFile).toBe(web);
  });

  it('accepts listen addresses in every usual form', () => {
    expect(loadConfig(['--listen-address', ':9000'], TOKEN).listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(loadConfig(['--listen-address', '[::]:9000'], TOKEN).listen).toEqual({ host: '::', port: 9000 });
    expect(loadConfig(['--listen-address', 'localhost:0'], TOKEN).listen).toEqual({ host: 'localhost', port: 0 });
  });
});

describe('poll intervals in the printed configuration', () => {
  it('are the ones the runner schedules, whatever was asked', () => {
    const asked = ['1s', '7s', '13s', '45s', '90s', '7m', '50m', '5h', '36h'];
    for (const interval of asked) {
      const config = loadConfig(['--poll-interval', `logs=${interval}`, '--state-file', 'none'], {
        QSTASH_TOKEN: 'tok',
      });
      const printed = (YAML.parse(renderConfigYaml(config)) as { poll_interval: Record<string, string> }).poll_interval
        .logs;
      const scheduled = new PollSchedule(config.collectors).plan('logs');
      expect(parseDuration(printed ?? ''), interval).toBe(scheduled.intervalMs);
      expect(
        renderConfigYaml(config).includes(`# ${formatDuration(parseDuration(interval))} asked, rounded to`),
        interval,
      ).toBe(!scheduled.exact);
    }
  });
});
