// The package a user installs: `npm pack` on a copy of the sources (its prepack builds dist/
// afresh), then `npm install -g` of the tarball into an empty prefix (dependencies from the npm
// cache or registry), then the installed `upstash-exporter`: --version, check-config and run
// against the emulator. The tarball carries the compiled code, the dashboards and the deploy
// files, not the tests, the benchmarks, the TypeScript sources or source maps.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { ROOT } from '../support/demo-helpers.js';
import { parseExposition, sleep } from '../support/exporter-e2e-helpers.js';
import { spawnExporter } from '../support/exporter-child.js';

const run = promisify(execFile);
const PACK_AND_INSTALL_MS = 120_000;

let work: string;
let bin: string;
/** The installed package's folder. */
let installed: string;
let tarballFiles: string[];
let emulator: EmulatorHandle;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'upstash-exporter-pack-'));
  const copy = join(work, 'source');
  await mkdir(copy);
  for (const entry of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'README.md',
    'LICENSE',
    'src',
    'dashboards',
    'deploy',
  ]) {
    await cp(join(ROOT, entry), join(copy, entry), { recursive: true });
  }
  // The build tools of the checkout (prepack runs tsc); the installed package gets its own dependencies.
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const env = {
    ...process.env,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: copy,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarballFiles = info!.files.map((file) => file.path);
  const prefix = join(work, 'prefix');
  await run('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', join(work, info!.filename)], {
    cwd: work,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  bin = join(prefix, 'bin', 'upstash-exporter');
  installed = join(prefix, 'lib', 'node_modules', 'upstash-exporter');
  emulator = await createEmulator({});
}, PACK_AND_INSTALL_MS);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed package, installed globally into an empty prefix', () => {
  it('carries the compiled code, dashboards and deploy files, and nothing for development', async () => {
    expect(tarballFiles).toContain('dist/cli.js');
    expect(tarballFiles).toContain('dist/emulator/main.js');
    expect(tarballFiles).toContain('dashboards/upstash-overview.json');
    expect(tarballFiles).toContain('deploy/rules/upstash-exporter.rules.yml');
    // The licence package.json names, in full, and the repository the registry links the
    // README's relative links against.
    expect(tarballFiles).toContain('LICENSE');
    const licence = await readFile(join(installed, 'LICENSE'), 'utf8');
    expect(licence).toContain('Apache License');
    expect(licence).toContain('Version 2.0, January 2004');
    expect(licence).toContain('END OF TERMS AND CONDITIONS');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      license: string;
      repository?: { url?: string };
      homepage?: string;
    };
    expect(manifest.license).toBe('Apache-2.0');
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w-]+\/upstash-exporter\.git$/);
    expect(manifest.homepage).toMatch(/^https:\/\/github\.com\/[\w-]+\/upstash-exporter#readme$/);
    const unwanted = tarballFiles.filter(
      (path) =>
        /^(test|bench|src|tmp)\//.test(path) ||
        path.endsWith('.map') ||
        path.endsWith('.ts') ||
        path.includes('.test.') ||
        path.startsWith('dashboards/src/') ||
        path.startsWith('deploy/container/') ||
        path.startsWith('deploy/kubernetes/generator/'),
    );
    expect(unwanted).toEqual([]);
    // Every compiled module has its source in this checkout: nothing stale from an older build.
    const sources = new Set(
      (await readdir(join(ROOT, 'src'), { recursive: true })).map((path) => `dist/${path.replace(/\.ts$/, '.js')}`),
    );
    expect(tarballFiles.filter((path) => path.startsWith('dist/') && !sources.has(path))).toEqual([]);
  });

  it('upstash-exporter --version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await run(bin, ['--version']);
    expect(stdout).toContain(version);
  });

  it('check-config accepts a configuration for the emulator and exits 0, the token masked', async () => {
    const { stdout } = await run(
      bin,
      [
        'check-config',
        '--qstash-url',
        emulator.url,
        '--management-url',
        emulator.url,
        '--upstash-email',
        emulator.credentials.email,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          QSTASH_TOKEN: emulator.credentials.token,
          UPSTASH_API_KEY: emulator.credentials.apiKey,
        },
      },
    );
    expect(stdout).toContain(emulator.url);
    expect(stdout).not.toContain(emulator.credentials.token);
    expect(stdout).not.toContain(emulator.credentials.apiKey);
  });

  it('demo prints a paste line with the installed command, not node dist/cli.js', async () => {
    const child = spawn(
      bin,
      ['demo', '--listen-address', '127.0.0.1:0', '--emulator-address', '127.0.0.1:0', '--log-level', 'warn'],
      { cwd: work, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    try {
      const deadline = Date.now() + 30_000;
      while (!/state file:/.test(out) && Date.now() < deadline && child.exitCode === null) await sleep(100);
      expect(out).toContain('an exporter reading it');
      expect(out).not.toContain('dist/cli.js');
      expect(out).toMatch(/^\s+upstash-exporter run --qstash-url /m);
    } finally {
      child.kill('SIGKILL');
    }
  }, 45_000);

  it('run reads the emulator and serves its metrics', async () => {
    const exporter = await spawnExporter(
      [
        bin,
        'run',
        '--listen-address',
        '127.0.0.1:0',
        '--qstash-url',
        emulator.url,
        '--management-url',
        emulator.url,
        '--upstash-email',
        emulator.credentials.email,
        '--upstash-api-key',
        emulator.credentials.apiKey,
        '--state-file',
        'none',
        '--log-format',
        'json',
      ],
      emulator.credentials.token,
      children,
    );
    let families = parseExposition('');
    for (let i = 0; i < 50; i++) {
      families = parseExposition(await (await fetch(`${exporter.url}/metrics`)).text());
      if (
        families.get('upstash_qstash_plan_max_requests_per_day')?.samples.length &&
        families.get('upstash_qstash_schedules')?.samples.length
      )
        break;
      await sleep(200);
    }
    expect(families.get('upstash_qstash_plan_max_requests_per_day')?.samples.length).toBeGreaterThan(0);
    expect(families.get('upstash_qstash_schedules')?.samples.length).toBeGreaterThan(0);
    expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
  });
});
