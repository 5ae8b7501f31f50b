// Prometheus, Alertmanager and promtool for the tests: found on PATH (Debian packages
// prometheus and prometheus-alertmanager), started on free 127.0.0.1 ports with temporary
// storage, stopped and cleaned up after.
//
// Skip-unless-CI: a test file whose binaries are missing is skipped with a message saying what to
// install; under CI=true their absence fails it instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import YAML from 'yaml';

/** The Debian package of each binary. */
const PACKAGES: Record<string, string> = {
  prometheus: 'prometheus',
  promtool: 'prometheus',
  'prometheus-alertmanager': 'prometheus-alertmanager',
  jsonnet: 'jsonnet',
  tinyproxy: 'tinyproxy',
  openssl: 'openssl',
};

function installHint(binaries: readonly string[]): string {
  return `apt-get install ${[...new Set(binaries.map((binary) => PACKAGES[binary] ?? binary))].join(' ')}`;
}

/** Absolute path of an executable on PATH, or undefined. */
export function findOnPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export interface RequiredBinaries {
  /** Absolute path of each binary found. */
  paths: Partial<Record<string, string>>;
  missing: string[];
  /** Skip the suite: something is missing and CI is not set. */
  skip: boolean;
  /** Suffix for the suite's name: which binaries it needs, when some are missing. */
  needs: string;
  /** Throws when something is missing (only reached under CI=true, where skip is false): call in beforeAll. */
  ensure(): void;
}

/**
 * Looks the binaries up once, at import time of the test file. `suite` names the file in the
 * skip message printed when something is missing outside CI.
 */
export function requireBinaries(suite: string, binaries: readonly string[]): RequiredBinaries {
  const paths: Partial<Record<string, string>> = {};
  for (const binary of binaries) {
    const path = findOnPath(binary);
    if (path !== undefined) paths[binary] = path;
  }
  const missing = binaries.filter((binary) => paths[binary] === undefined);
  const inCi = process.env.CI === 'true';
  const list = missing.join(' and ');
  const hint = installHint(missing);
  if (missing.length > 0 && !inCi) console.warn(`${suite}: skipped, ${list} not installed (${hint})`);
  return {
    paths,
    missing,
    skip: missing.length > 0 && !inCi,
    needs: missing.length > 0 ? ` (needs ${missing.join(', ')})` : '',
    ensure: () => {
      if (missing.length > 0) throw new Error(`CI=true: ${list} must be installed (${hint})`);
    },
  };
}

/** A port that was free a moment ago on 127.0.0.1, for daemons that cannot be given port 0. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Daemon {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
  stop(): Promise<void>;
}

export function startDaemon(command: string, args: string[]): Daemon {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface PrometheusStackOptions {
  /** Prefix of the temporary directory. */
  name: string;
  /** The rules Prometheus evaluates: a file as shipped, or a modified copy written to the temporary directory. */
  rules: { path: string } | { content: string };
  /** Scrape job name and its one target (host:port). */
  job: string;
  target: string;
  /** alertmanager.yml, as an object. */
  alertmanagerConfig: Record<string, unknown>;
  /** Extra settings of the job's scrape config, e.g. label_value_length_limit. */
  scrapeSettings?: Record<string, unknown>;
  /** Further scrape configs, as objects (their own job_name and targets). */
  extraScrapeConfigs?: readonly Record<string, unknown>[];
  /** Extra Prometheus flags, e.g. --log.level=warn. */
  prometheusArgs?: readonly string[];
}

export interface PrometheusStack {
  dir: string;
  prometheusUrl: string;
  alertmanagerUrl: string;
  prometheus: Daemon;
  alertmanager: Daemon;
  /** Date.now() when Prometheus was started. */
  startedAt: number;
  /** The last lines of both daemons' output, for failure messages. */
  output(): string;
  /** Throws with the daemon's output when either daemon has exited. */
  assertRunning(): void;
  /** Waits until Prometheus reports a target up (discovery batches its first update: ~5 s). */
  waitForTargetUp(timeoutMs?: number): Promise<void>;
  /** Stops both daemons and removes the temporary directory. */
  close(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Alertmanager and Prometheus on free 127.0.0.1 ports: a 1 s scrape of one target, rules
 * evaluated every second and sent to that Alertmanager. Does not wait for them to be ready.
 */
export async function startPrometheusStack(options: PrometheusStackOptions): Promise<PrometheusStack> {
  const dir = mkdtempSync(join(tmpdir(), `${options.name}-`));
  const [prometheusPort, alertmanagerPort] = [await freePort(), await freePort()];
  let rulesFile: string;
  if ('path' in options.rules) {
    rulesFile = options.rules.path;
  } else {
    rulesFile = join(dir, 'upstash-exporter.rules.yml');
    writeFileSync(rulesFile, options.rules.content);
  }
  writeFileSync(join(dir, 'alertmanager.yml'), YAML.stringify(options.alertmanagerConfig));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    YAML.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [rulesFile],
      alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${alertmanagerPort}`] }] }] },
      scrape_configs: [
        { job_name: options.job, static_configs: [{ targets: [options.target] }], ...options.scrapeSettings },
        ...(options.extraScrapeConfigs ?? []),
      ],
    }),
  );
  const alertmanager = startDaemon('prometheus-alertmanager', [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'alertmanager-data')}`,
    `--web.listen-address=127.0.0.1:${alertmanagerPort}`,
    '--cluster.listen-address=',
  ]);
  const startedAt = Date.now();
  const prometheus = startDaemon('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'prometheus-data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`,
    ...(options.prometheusArgs ?? []),
  ]);
  const prometheusUrl = `http://127.0.0.1:${prometheusPort}`;

  const output = (): string =>
    `--- prometheus ---\n${prometheus.output().slice(-3000)}\n--- alertmanager ---\n${alertmanager.output().slice(-3000)}`;
  const assertRunning = (): void => {
    if (prometheus.child.exitCode !== null) throw new Error(`prometheus exited:\n${prometheus.output()}`);
    if (alertmanager.child.exitCode !== null) throw new Error(`alertmanager exited:\n${alertmanager.output()}`);
  };
  return {
    dir,
    prometheusUrl,
    alertmanagerUrl: `http://127.0.0.1:${alertmanagerPort}`,
    prometheus,
    alertmanager,
    startedAt,
    output,
    assertRunning,
    waitForTargetUp: async (timeoutMs = 20_000) => {
      let seen = 'no answer from /api/v1/targets';
      for (;;) {
        assertRunning();
        try {
          const targets = (await (await fetch(`${prometheusUrl}/api/v1/targets`)).json()) as {
            data: { activeTargets: { health: string; lastError: string; lastScrapeDuration: number }[] };
          };
          if (targets.data.activeTargets.some((target) => target.health === 'up')) return;
          seen = targets.data.activeTargets
            .map((t) => `${t.health} (${t.lastScrapeDuration.toFixed(2)} s) ${t.lastError}`)
            .join('; ');
        } catch {
          // not listening yet
        }
        if (Date.now() - startedAt > timeoutMs)
          throw new Error(
            `no target up ${timeoutMs / 1000} s after Prometheus started; targets: ${seen}\n${prometheus.output()}`,
          );
        await sleep(250);
      }
    },
    close: async () => {
      await Promise.all([prometheus.stop(), alertmanager.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
