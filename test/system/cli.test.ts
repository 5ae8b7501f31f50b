// The binary as users run it: `node dist/cli.js ...` in a child process (build first:
// `npm run build`, which `npm test` does through pretest).
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import bcrypt from 'bcryptjs';

const CLI = resolve('dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-cli-'));
const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with exactly the given variables (nothing inherited but PATH), in the temp dir. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        done({ status, stdout, stderr });
      },
    );
  });
}

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Exit 2, nothing on stdout, exactly one line on stderr that equals or matches `line`. */
function expectConfigFailure(result: Result, line: string | RegExp): void {
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.endsWith('\n')).toBe(true);
  const lines = result.stderr.slice(0, -1).split('\n');
  expect(lines).toHaveLength(1);
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
}

describe('check-config error contract: one line on stderr, exit 2', () => {
  it('no credentials: names QSTASH_TOKEN, UPSTASH_EMAIL + UPSTASH_API_KEY and the demo', async () => {
    const result = await cli(['check-config']);
    expectConfigFailure(
      result,
      'no credentials: set QSTASH_TOKEN (logs, schedules, queues, url_groups, dlq, flow_control and workflows collectors) or UPSTASH_EMAIL + UPSTASH_API_KEY (account, search, vector, usage and redis collectors), as variables, *_FILE variables or flags; to try the exporter without an account run: upstash-exporter demo',
    );
  });

  it('unknown YAML key, with the closest known key', async () => {
    const config = file('typo.yaml', 'qstash_token: tok\nlogs:\n  ingestion_dela: 5s\n');
    expectConfigFailure(
      await cli(['check-config', '--config', config]),
      `${config}: unknown key logs.ingestion_dela; did you mean logs.ingestion_delay?`,
    );
  });

  it('bad duration', async () => {
    expectConfigFailure(
      await cli(['check-config'], { QSTASH_TOKEN: 'tok', POLL_INTERVAL: '1h30' }),
      'POLL_INTERVAL: "1h30" is not a duration (a number needs a unit (ms, s, m, h or d)); write a number and a unit, e.g. 15s, 5m, 1h30m or 500ms',
    );
  });

  it('bad URL', async () => {
    expectConfigFailure(
      await cli(['check-config', '--management-url', 'ftp://api.upstash.com'], {
        UPSTASH_EMAIL: 'e@example.com',
        UPSTASH_API_KEY: 'k',
      }),
      '--management-url: "ftp://api.upstash.com" is not an http or https URL; write e.g. https://api.upstash.com',
    );
  });

  it('unreadable secret file: names the path', async () => {
    const missing = join(dir, 'no-such-token');
    expectConfigFailure(
      await cli(['check-config'], { QSTASH_TOKEN_FILE: missing }),
      `QSTASH_TOKEN_FILE: cannot read ${missing} (ENOENT); check the path and that the exporter may read it`,
    );
  });

  it('a secret file with a broken value: names the path, never the content', async () => {
    const broken = file('broken-key', 'CANARY_KEY_7f3e9 trailing words\n');
    const result = await cli(['check-config', '--upstash-api-key-file', broken], { UPSTASH_EMAIL: 'e@example.com' });
    expectConfigFailure(
      result,
      `--upstash-api-key-file (${broken}) contains whitespace or control characters (value not shown); check that the management API key was copied whole`,
    );
    expect(result.stderr).not.toContain('CANARY');
  });

  it('empty token', async () => {
    expectConfigFailure(
      await cli(['check-config'], { QSTASH_TOKEN: '' }),
      'QSTASH_TOKEN is empty; set it to your QStash token or unset it',
    );
  });

  it('a remediation bearer token under 32 characters: names the key, never the token', async () => {
    const token = file('short-bearer', 'CANARY-bearer-31-characters-xyz\n');
    const result = await cli(['check-config', '--remediation-enabled', '--remediation-bearer-token-file', token], {
      QSTASH_TOKEN: 'tok',
    });
    expectConfigFailure(
      result,
      `--remediation-bearer-token-file: the token has 31 characters, fewer than 32; use a random one, e.g. openssl rand -hex 32`,
    );
    expect(result.stderr).not.toContain('CANARY');
  });

  it('web.max_connections out of range', async () => {
    expectConfigFailure(
      await cli(['check-config', '--web-max-connections', '0'], { QSTASH_TOKEN: 'tok' }),
      '--web-max-connections: 0 is out of range; use a number between 1 and 65535',
    );
  });

  it('unknown collector name', async () => {
    expectConfigFailure(
      await cli(['check-config', '--disable-collector', 'shedules'], { QSTASH_TOKEN: 'tok' }),
      '--disable-collector: "shedules" is not a known collector; did you mean schedules? (one of logs, schedules, queues, url_groups, dlq, flow_control, account, search, vector, usage, workflows, redis)',
    );
  });

  it('bad log level', async () => {
    expectConfigFailure(
      await cli(['check-config'], { QSTASH_TOKEN: 'tok', LOG_LEVEL: 'loud' }),
      'LOG_LEVEL: "loud" is not a known log level; use one of fatal, error, warn, info, debug, trace, silent',
    );
  });

  it('unknown flag', async () => {
    expectConfigFailure(
      await cli(['check-config', '--poll-intervals', '5s'], { QSTASH_TOKEN: 'tok' }),
      'unknown flag --poll-intervals: did you mean --poll-interval?',
    );
  });

  it('the same contract holds for run', async () => {
    expectConfigFailure(
      await cli(['run', '--log-format', 'xml'], { QSTASH_TOKEN: 'tok' }),
      '--log-format: "xml" is not a known log format; use one of json, pretty',
    );
    expectConfigFailure(await cli([]), /^no credentials: /);
  });

  it('an unknown command suggests the closest one', async () => {
    expectConfigFailure(
      await cli(['check-confg']),
      'unknown command "check-confg": did you mean check-config? commands are run, check-config, emulator, demo, pause-schedule, slo; see upstash-exporter --help',
    );
  });
});

const opensslAvailable = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
if (!opensslAvailable && process.env.CI === 'true')
  throw new Error('openssl is required under CI for the web config checks');

describe('check-config refuses every web config file run refuses, with the same line', () => {
  /** A self-signed certificate and its key, made by openssl in the temp dir. */
  function selfSigned(name: string): void {
    const made = spawnSync(
      'openssl',
      [
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
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  }

  const cases: Array<[string, () => string, RegExp]> = [
    [
      'a plaintext password',
      () => 'basic_auth_users:\n  alice: correct-horse\n',
      /basic_auth_users\.alice: must be a bcrypt hash/,
    ],
    [
      'an unknown key',
      () => `basic_auth_users:\n  alice: '${bcrypt.hashSync('pw', 4)}'\nhttp_server_config:\n  compression: true\n`,
      /http_server_config: Unrecognized key: "compression"/,
    ],
    [
      'a missing certificate',
      () => 'tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n',
      /cert_file absent\.crt cannot be read \(ENOENT\)/,
    ],
    [
      "a certificate with another certificate's key",
      () => 'tls_server_config:\n  cert_file: one.crt\n  key_file: two.key\n',
      /the TLS certificate or key is not usable \(.*key values mismatch/,
    ],
  ];

  it.skipIf(!opensslAvailable).each(cases)(
    '%s: exit 2, one line, from check-config as from run',
    async (name, content, reason) => {
      if (!existsSync(join(dir, 'one.crt'))) {
        selfSigned('one');
        selfSigned('two');
      }
      const web = file(`web-${name.replace(/\W+/g, '-')}.yml`, content());
      const env = { QSTASH_TOKEN: 'tok', QSTASH_URL: 'http://127.0.0.1:9' };
      const checked = await cli(['check-config', '--web-config-file', web], env);
      expectConfigFailure(
        checked,
        new RegExp(`^web config file ${web.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*${reason.source}`),
      );
      const run = await cli(['run', '--web-config-file', web, '--listen-address', '127.0.0.1:0'], env);
      expectConfigFailure(run, checked.stderr.trimEnd());
    },
  );
});

describe('check-config prints the poll intervals the runner uses', () => {
  it('7s and 45s, which node-cron cannot step by, print as 6s and 1m with the reason', async () => {
    const result = await cli(['check-config', '--poll-interval', 'logs=7s,schedules=45s'], { QSTASH_TOKEN: 'tok' });
    expect(result.status).toBe(0);
    expect(YAML.parse(result.stdout)).toMatchObject({ poll_interval: { logs: '6s', schedules: '1m', queues: '30s' } });
    const why = 'a cron step must divide a minute, an hour or a day';
    expect(result.stdout).toContain(`  logs: 6s # 7s asked, rounded to 6s: ${why}\n`);
    expect(result.stdout).toContain(`  schedules: 1m # 45s asked, rounded to 1m: ${why}\n`);
    expect(result.stdout).toContain(`#  logs: on, every 6s (7s asked, rounded to 6s: ${why})\n`);
    expect(result.stdout).toContain('#  queues: on, every 30s\n');
  });
});

describe('run on an address in use', () => {
  let occupied: Server;
  let port: number;
  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((done) => occupied.listen(0, '127.0.0.1', done));
    port = (occupied.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((done) => occupied.close(() => done()));
  });

  it('exits 2 with the one line the demo gives, no stack trace', async () => {
    const args = [
      'run',
      '--listen-address',
      `127.0.0.1:${port}`,
      '--qstash-url',
      'http://127.0.0.1:9',
      '--state-file',
      'none',
    ];
    const line = `--listen-address: cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another with --listen-address`;
    expectConfigFailure(await cli([...args, '--log-level', 'warn'], { QSTASH_TOKEN: 'tok' }), line);
    // At the default level the start is logged as usual; the refusal is still that one line, no error log.
    const result = await cli(args, { QSTASH_TOKEN: 'tok' });
    expect(result.status).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.filter((text) => !text.startsWith('{'))).toEqual([line]);
    expect(
      lines
        .filter((text) => text.startsWith('{'))
        .map((text) => (JSON.parse(text) as { level: string | number }).level),
    ).not.toContainEqual(expect.stringMatching(/error|fatal/));
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });
});

describe('check-config on a valid configuration', () => {
  it('prints the effective configuration as YAML with secrets masked, and exits 0', async () => {
    const token = 'CANARY_TOKEN_3b1f0c';
    const apiKey = 'CANARY_APIKEY_9d2e4a';
    const email = 'ops@example.com';
    const keyFile = file('api-key', `${apiKey}\n`);
    const result = await cli(['check-config', '--poll-interval', 'logs=5s'], {
      QSTASH_TOKEN: token,
      UPSTASH_EMAIL: email,
      UPSTASH_API_KEY_FILE: keyFile,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    for (const secret of [token, apiKey, Buffer.from(`${email}:${apiKey}`).toString('base64'), 'CANARY']) {
      expect(result.stdout).not.toContain(secret);
    }
    const printed = YAML.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({
      qstash_token: '***',
      upstash_api_key: '***',
      upstash_email: email,
      listen_address: '0.0.0.0:9824',
      poll_interval: { logs: '5s', schedules: '1m', account: '5m', search: '5m', vector: '1m' },
      state_file: join(dir, 'upstash-exporter-state.json'),
      http: { connect_timeout: '5s', max_retries: 3 },
      logs: { path: '/v2/events', overlap: '5s', page_size: 1000, max_page_mib: 32 },
      vector: { discovery: true, stats_period: '1h' },
    });
    expect(result.stdout).toContain('#  logs: on, every 5s');
  });

  it('flags beat environment beat the YAML file', async () => {
    const config = file(
      'layers.yaml',
      'qstash_token: tok_yaml\nlisten_address: 127.0.0.1:1001\nlog_level: debug\nlog_format: pretty\n',
    );
    const result = await cli(['check-config', '--config', config, '--listen-address', '127.0.0.1:1003'], {
      LISTEN_ADDRESS: '127.0.0.1:1002',
      LOG_LEVEL: 'warn',
    });
    expect(result.status).toBe(0);
    expect(YAML.parse(result.stdout)).toMatchObject({
      listen_address: '127.0.0.1:1003',
      log_level: 'warn',
      log_format: 'pretty',
    });
  });
});

describe('other commands', () => {
  it('--version prints the package version', async () => {
    const result = await cli(['--version']);
    expect(result).toEqual({ status: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it('--help lists every flag and exits 0, also after a command', async () => {
    const result = await cli(['--help']);
    expect(result.status).toBe(0);
    for (const flag of [
      '--listen-address',
      '--qstash-token',
      '--poll-interval',
      '--[no-]vector-discovery',
      '--logs-message-tracker-size',
      'QSTASH_TOKEN_FILE',
    ]) {
      expect(result.stdout).toContain(flag);
    }
    expect((await cli(['check-config', '--help'])).stdout).toBe(result.stdout);
    // The demo's port flags, often needed (9824 and 8787 are often taken), are named at the top level.
    expect(result.stdout).toContain(
      'upstash-exporter demo [--listen-address host:port] [--emulator-address host:port]',
    );
  });

  it('emulator is dispatched to the emulator module, whose usage errors keep the exit-2 contract', async () => {
    expectConfigFailure(await cli(['emulator', '--no-such-emulator-flag']), /--no-such-emulator-flag/);
  });

  it('demo --help and -h print the demo help, not the general one, and start nothing', async () => {
    const general = (await cli(['--help'])).stdout;
    const result = await cli(['demo', '--help']);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^Usage: upstash-exporter demo \[flags\]\n/);
    for (const flag of [
      '--listen-address <value>',
      '--emulator-address <value>',
      '--time-scale <value>',
      '--state-file <value>',
      '--seed <value>',
      '-h, --help',
    ]) {
      expect(result.stdout).toContain(flag);
    }
    expect(result.stdout).not.toBe(general);
    expect(result.stdout).not.toContain('--qstash-token');
    expect((await cli(['demo', '-h'])).stdout).toBe(result.stdout);
    expect((await cli(['demo', '--seed', '7', '--help'])).stdout).toBe(result.stdout);
  });

  it('demo is dispatched to the demo module, whose usage errors keep the exit-2 contract', async () => {
    expectConfigFailure(await cli(['demo', '--no-such-demo-flag']), /--no-such-demo-flag/);
  });

  it('run starts the exporter with a redacting logger and exits 0 on SIGTERM', async () => {
    const token = 'CANARY_RUN_TOKEN_55aa';
    // Loopback only: the upstream URLs point at a closed port, the server at an ephemeral one.
    const args = [
      '--log-level',
      'debug',
      '--state-file',
      'none',
      '--listen-address',
      '127.0.0.1:0',
      '--qstash-url',
      'http://127.0.0.1:9',
      '--management-url',
      'http://127.0.0.1:9',
    ];
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', QSTASH_TOKEN: token },
    });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // Once it has started, ask it to stop, once (a second signal means "exit now", status 1).
      if (!signalled && stderr.includes('starting upstash-exporter') && child.exitCode === null) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    const status = await new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    expect(status).toBe(0);
    expect(stdout).toBe('');
    const lines = stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'starting upstash-exporter', version: PACKAGE_VERSION });
    expect(stderr).not.toContain(token);
  });
});
