// The deployment files: the Dockerfile meets the image requirements (multi-stage, Node 24,
// non-root, tini, HEALTHCHECK on /-/healthy, CMD node dist/cli.js) and its HEALTHCHECK command
// really tells a live exporter from a dead one; the Kubernetes manifests fit together and the
// committed PrometheusRule is the one generated from the rules file; the compose files reference
// files that exist, and their Prometheus configuration passes promtool.
//
// The image itself is not built here: the base image comes from docker.io, which CI cannot
// reach, and podman is not installed (see docs/deployment.md).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { KNOWN_QSTASH_REGIONS, loadConfig, SETTINGS } from '../../src/config/index.js';
import { parseDemoArgs } from '../../src/demo.js';
import {
  PROMETHEUS_RULE_FILE,
  RULES_FILES,
  renderPrometheusRule,
} from '../../deploy/kubernetes/generator/prometheus-rule.js';
import { CLI, ROOT, sleep } from '../support/demo-helpers.js';
import { freePort } from '../support/prometheus.js';
import { NODE_FLAGS } from '../../src/node-flags.js';

const K8S = join(ROOT, 'deploy', 'kubernetes');
const COMPOSE = join(ROOT, 'deploy', 'compose');

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions of a Dockerfile: comments dropped, continuation lines joined. */
function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.trimEnd().endsWith('\\')) {
      current += `${line.trimEnd().slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  return logical.map((line) => {
    const space = line.search(/\s/);
    return { keyword: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
  });
}

/** Instructions split into stages at each FROM. */
function stagesOf(instructions: Instruction[]): { from: string; name: string; body: Instruction[] }[] {
  const stages: { from: string; name: string; body: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      stages.push({ from: match?.[1] ?? '', name: match?.[2] ?? '', body: [] });
    } else {
      stages.at(-1)?.body.push(instruction);
    }
  }
  return stages;
}

function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string'))
    throw new Error(`not an exec form: ${args}`);
  return parsed;
}

interface RunResult {
  status: number | null;
  output: string;
  /** The command is not installed. */
  missing: boolean;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<RunResult> {
  return new Promise((done) => {
    execFile(command, args, { cwd: ROOT, env, timeout: timeoutMs }, (error, stdout, stderr) => {
      done({
        status: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
        output: `${stdout}${stderr}`,
        missing: error?.code === 'ENOENT',
      });
    });
  });
}

describe('Dockerfile', () => {
  const instructions = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const stages = stagesOf(instructions);
  const runtime = stages.at(-1)!;
  const find = (keyword: string): Instruction[] => runtime.body.filter((i) => i.keyword === keyword);

  it('is multi-stage on Node 24, builds with npm ci and copies the results into the runtime stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    // Every stage on one base: the official image unless the BASE_IMAGE build argument says otherwise.
    expect(instructions.filter((i) => i.keyword === 'ARG').map((i) => i.args)).toContain(
      'BASE_IMAGE=node:24-bookworm-slim',
    );
    for (const stage of stages) expect(stage.from).toBe('${BASE_IMAGE}');
    const build = stages.find((stage) =>
      stage.body.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args)),
    );
    expect(build, 'a stage runs npm run build').toBeDefined();
    expect(build!.body.some((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args))).toBe(true);
    // Production dependencies only in the runtime image.
    expect(
      stages.some((stage) => stage.body.some((i) => i.keyword === 'RUN' && /npm ci --omit=dev/.test(i.args))),
    ).toBe(true);
    const copiedFrom = find('COPY')
      .map((i) => /--from=(\S+)/.exec(i.args)?.[1])
      .filter(Boolean);
    expect(copiedFrom).toEqual(expect.arrayContaining([build!.name]));
    for (const stage of copiedFrom) expect(stages.map((s) => s.name)).toContain(stage);
  });

  it('runs as the non-root node user under tini, exposes 9824, CMD node dist/cli.js', () => {
    const users = find('USER').map((i) => i.args);
    expect(users.at(-1)).toBe('node');
    expect(runtime.body.some((i) => i.keyword === 'RUN' && /apt-get install .*\btini\b/.test(i.args))).toBe(true);
    expect(execForm(find('ENTRYPOINT').at(-1)!.args)).toEqual(['/usr/bin/tini', '--']);
    expect(execForm(find('CMD').at(-1)!.args)).toEqual(['node', ...NODE_FLAGS, 'dist/cli.js']);
    expect(find('EXPOSE').map((i) => i.args)).toEqual(['9824']);
    const env = find('ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/NODE_ENV=production/);
    // The state file sits on a volume the node user owns.
    const stateFile = /STATE_FILE=(\S+)/.exec(env)?.[1];
    expect(stateFile).toBeDefined();
    const stateDir = dirname(stateFile!);
    expect(
      find('VOLUME')
        .map((i) => i.args)
        .join(' '),
    ).toContain(stateDir);
    expect(runtime.body.some((i) => i.keyword === 'RUN' && i.args.includes(`chown node:node ${stateDir}`))).toBe(true);
  });

  it('.dockerignore lets in exactly what the build copies, and those files exist', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignore[0]).toBe('**');
    const sources = stages.flatMap((stage) =>
      stage.body
        .filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='))
        .flatMap((i) => i.args.split(/\s+/).slice(0, -1)),
    );
    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(ignore, `.dockerignore re-includes ${source}`).toContain(`!${source}`);
    }
  });

  describe('HEALTHCHECK, run against a real exporter', () => {
    const healthcheck = find('HEALTHCHECK').at(-1)!;
    const command = execForm(healthcheck.args.slice(healthcheck.args.indexOf('CMD') + 3).trim());
    let port: number;
    let exporter: ReturnType<typeof spawn> | undefined;

    beforeAll(async () => {
      port = await freePort();
      exporter = spawn(
        process.execPath,
        [
          CLI,
          '--qstash-token',
          'token-for-the-healthcheck-test',
          '--qstash-url',
          'http://127.0.0.1:1',
          '--state-file',
          'none',
          '--log-level',
          'silent',
        ],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', LISTEN_ADDRESS: `127.0.0.1:${port}` },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      exporter.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      for (let attempt = 0; ; attempt += 1) {
        if (exporter.exitCode !== null) throw new Error(`the exporter exited with ${exporter.exitCode}: ${stderr}`);
        try {
          if ((await fetch(`http://127.0.0.1:${port}/-/healthy`)).ok) break;
        } catch {
          if (attempt > 100) throw new Error(`the exporter did not start: ${stderr}`);
        }
        await sleep(100);
      }
    });
    afterAll(() => {
      exporter?.kill('SIGKILL');
    });

    it('is node fetching /-/healthy on the port of LISTEN_ADDRESS, with a timeout', () => {
      expect(healthcheck.args).toMatch(/--timeout=\d+s/);
      expect(command[0]).toBe('node');
      expect(command.join(' ')).toContain('/-/healthy');
      expect(command.join(' ')).toContain('LISTEN_ADDRESS');
    });

    it('exits 0 while the exporter runs and 1 once it is gone', async () => {
      const env = { PATH: process.env.PATH ?? '', LISTEN_ADDRESS: `0.0.0.0:${port}` };
      const alive = await run(process.execPath, command.slice(1), env);
      expect(alive.status, alive.output).toBe(0);
      const exited = new Promise((done) => exporter!.once('exit', done));
      exporter!.kill('SIGTERM');
      await exited;
      const dead = await run(process.execPath, command.slice(1), env);
      expect(dead.status).toBe(1);
    });
  });
});

describe('the shipped probes with basic auth on (a web config file leaving the health endpoints open)', () => {
  const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const healthcheck = stagesOf(dockerfile)
    .at(-1)!
    .body.filter((i) => i.keyword === 'HEALTHCHECK')
    .at(-1)!;
  const command = execForm(healthcheck.args.slice(healthcheck.args.indexOf('CMD') + 3).trim());
  const k8sContainer = (
    YAML.parseAllDocuments(readFileSync(join(K8S, 'deployment.yaml'), 'utf8')).map((d) => d.toJS() as unknown) as {
      kind: string;
      spec: { template: { spec: { containers: { livenessProbe: Probe; readinessProbe: Probe }[] } } };
    }[]
  ).find((m) => m.kind === 'Deployment')!.spec.template.spec.containers[0]!;
  let port: number;
  let dir: string;
  let exporter: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'probes-basic-auth-'));
    const { default: bcrypt } = await import('bcryptjs');
    writeFileSync(
      join(dir, 'web.yml'),
      [
        'basic_auth_users:',
        `  prometheus: '${bcrypt.hashSync('scrape-password', 4)}'`,
        `basic_auth_excluded_paths: [${k8sContainer.livenessProbe.httpGet.path}, ${k8sContainer.readinessProbe.httpGet.path}]`,
      ].join('\n'),
    );
    exporter = spawn(
      process.execPath,
      [
        CLI,
        '--qstash-token',
        'token-for-the-probes-test',
        '--qstash-url',
        'http://127.0.0.1:1',
        '--state-file',
        'none',
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          LISTEN_ADDRESS: `127.0.0.1:${port}`,
          WEB_CONFIG_FILE: join(dir, 'web.yml'),
          LOG_LEVEL: 'silent',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    exporter.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    for (let attempt = 0; ; attempt += 1) {
      if (exporter.exitCode !== null) throw new Error(`the exporter exited with ${exporter.exitCode}: ${stderr}`);
      try {
        await fetch(`http://127.0.0.1:${port}/metrics`);
        break;
      } catch {
        if (attempt > 100) throw new Error(`the exporter did not start: ${stderr}`);
      }
      await sleep(100);
    }
  });
  afterAll(() => {
    exporter?.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("the Dockerfile's HEALTHCHECK exits 0, and the Deployment's probes get their answer, not 401", async () => {
    const env = { PATH: process.env.PATH ?? '', LISTEN_ADDRESS: `0.0.0.0:${port}` };
    const alive = await run(process.execPath, command.slice(1), env);
    expect(alive.status, alive.output).toBe(0);
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}${k8sContainer.livenessProbe.httpGet.path}`)).status).toBe(200);
    // Not ready (the upstream is unreachable), and says so: 503, not a refusal.
    expect((await fetch(`${base}${k8sContainer.readinessProbe.httpGet.path}`)).status).toBe(503);
    // The metrics stay behind the password.
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const basic = `Basic ${Buffer.from('prometheus:scrape-password').toString('base64')}`;
    expect((await fetch(`${base}/metrics`, { headers: { Authorization: basic } })).status).toBe(200);
  });
});

interface Probe {
  httpGet: { path: string; port: string };
}

// ---------------------------------------------------------------------------------------------
// Kubernetes
// ---------------------------------------------------------------------------------------------

// Manifests are untyped YAML; the assertions below are the type check.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Manifest = Record<string, any>;

function loadManifests(file: string): Manifest[] {
  const documents = YAML.parseAllDocuments(readFileSync(file, 'utf8'));
  for (const document of documents) expect(document.errors, file).toEqual([]);
  return documents.map((document) => document.toJS() as Manifest);
}

function labelsMatch(selector: unknown, labels: unknown): boolean {
  const wanted = selector as Record<string, string>;
  const present = labels as Record<string, string>;
  return Object.keys(wanted).length > 0 && Object.entries(wanted).every(([key, value]) => present[key] === value);
}

describe('Kubernetes manifests', () => {
  const kustomization = loadManifests(join(K8S, 'kustomization.yaml'))[0]!;
  const resources = kustomization.resources as string[];
  const manifests = resources.flatMap((file) => loadManifests(join(K8S, file)));
  const byKind = (kind: string): Manifest => {
    const found = manifests.filter((m) => m.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0]!;
  };
  const secretExample = loadManifests(join(K8S, 'secret.example.yaml'))[0]!;

  it('kustomization lists every manifest except the Secret example; each has apiVersion, kind, name', () => {
    const yamlFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...resources].sort()).toEqual(yamlFiles.filter((f) => f !== 'secret.example.yaml').sort());
    for (const manifest of [...manifests, secretExample]) {
      expect(manifest.apiVersion).toBeTruthy();
      expect(manifest.kind).toBeTruthy();
      expect(manifest.metadata?.name).toBeTruthy();
    }
    expect(manifests.map((m) => String(m.kind)).sort()).toEqual([
      'Deployment',
      'PersistentVolumeClaim',
      'PrometheusRule',
      'Service',
      'ServiceMonitor',
    ]);
  });

  it('the committed PrometheusRule is the one generated from the rules files, SLO rules included (npm run deploy:generate)', () => {
    const rulesTexts = RULES_FILES.map((file) => readFileSync(file, 'utf8'));
    expect(readFileSync(PROMETHEUS_RULE_FILE, 'utf8')).toBe(renderPrometheusRule(rulesTexts));
    const rule = byKind('PrometheusRule');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.spec.groups).toEqual(rulesTexts.flatMap((text) => (YAML.parse(text) as { groups: unknown[] }).groups));
    expect((rule.spec.groups as { name: string }[]).map((group) => group.name)).toContain(
      'upstash-slos.delivery-success.alerts',
    );
  });

  it('the generator refuses a rules file without groups', () => {
    expect(() => renderPrometheusRule(['rules: []\n'])).toThrow(/no groups/);
  });

  const deployment = byKind('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const env: Record<string, string> = Object.fromEntries(
    (container.env as { name: string; value: string }[]).map((e) => [e.name, e.value]),
  );
  const mountFor = (path: string): { name: string; mountPath: string } | undefined =>
    (container.volumeMounts as { name: string; mountPath: string }[]).find((m) => path.startsWith(`${m.mountPath}/`));
  const volume = (name: string): Manifest => (pod.volumes as Manifest[]).find((v) => v.name === name)!;

  it('Deployment: one replica, Recreate, probes on /-/healthy and /-/ready, non-root, read-only root, limits', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(labelsMatch(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    const port = (container.ports as { name: string; containerPort: number }[]).find((p) => p.name === 'metrics');
    expect(port?.containerPort).toBe(9824);
    expect(env.LISTEN_ADDRESS).toBe('0.0.0.0:9824');
    expect(container.livenessProbe.httpGet).toEqual({ path: '/-/healthy', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/-/ready', port: 'metrics' });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.limits.memory).toBeTruthy();
    expect(container.resources.requests.memory).toBeTruthy();
    // Closing takes up to 10 s (the exporter's own deadline): the grace period must be longer.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(10);
  });

  it('Deployment: the state file is on the PersistentVolumeClaim, credentials are files of the Secret', () => {
    const stateMount = mountFor(env.STATE_FILE!);
    expect(stateMount, 'a volume holds the state file directory').toBeDefined();
    expect(stateMount!.mountPath).toBe(dirname(env.STATE_FILE!));
    expect(volume(stateMount!.name).persistentVolumeClaim?.claimName).toBe(
      byKind('PersistentVolumeClaim').metadata.name,
    );

    const secretKeys = Object.keys(secretExample.stringData as Record<string, string>);
    const secretFileVariables = new Set(
      SETTINGS.filter((spec) => spec.secretFile === true).map((spec) => `${spec.env}_FILE`),
    );
    const fileVariables = Object.keys(env).filter((name) => secretFileVariables.has(name));
    expect(fileVariables.sort()).toEqual(['QSTASH_TOKEN_FILE', 'UPSTASH_API_KEY_FILE', 'UPSTASH_EMAIL_FILE']);
    for (const name of fileVariables) {
      const mount = mountFor(env[name]!);
      expect(mount, name).toBeDefined();
      expect(volume(mount!.name).secret?.secretName).toBe(secretExample.metadata.name);
      expect(secretKeys).toContain(relative(mount!.mountPath, env[name]!));
    }
  });

  it('Deployment: its environment is a valid exporter configuration', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'upstash-exporter-k8s-'));
    try {
      // Each mount path becomes a scratch directory; secret files hold the example's values.
      const local = (path: string): string => {
        const mount = mountFor(path)!;
        return join(scratch, mount.name, relative(mount.mountPath, path));
      };
      for (const mount of container.volumeMounts as { name: string }[])
        mkdirSync(join(scratch, mount.name), { recursive: true });
      for (const [key, value] of Object.entries(secretExample.stringData as Record<string, string>)) {
        writeFileSync(join(scratch, 'credentials', key), `${value}\n`);
      }
      const localEnv = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [name, value.startsWith('/') ? local(value) : value]),
      );
      const config = loadConfig([], localEnv);
      expect(config.qstash.regions[0]?.token).toBe(secretExample.stringData['qstash-token']);
      expect(config.management.apiKey).toBe(secretExample.stringData['upstash-api-key']);
      expect(config.stateFile).toBe(local(env.STATE_FILE!));
      expect(config.listen).toEqual({ host: '0.0.0.0', port: 9824 });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('Service selects the pods and exposes the metrics port; the ServiceMonitor selects the Service', () => {
    const service = byKind('Service');
    expect(labelsMatch(service.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
    const servicePort = (service.spec.ports as { name: string; targetPort: string; port: number }[])[0]!;
    expect(servicePort.targetPort).toBe('metrics');
    const monitor = byKind('ServiceMonitor');
    expect(labelsMatch(monitor.spec.selector.matchLabels, service.metadata.labels)).toBe(true);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: servicePort.name, path: '/metrics' })]);
    // The rules' up-based alerts select job="upstash-exporter" exactly; the operator takes the job
    // from the Service label jobLabel names (so a renamed Service keeps it).
    expect(service.metadata.labels[monitor.spec.jobLabel]).toBe('upstash-exporter');
    expect(readFileSync(join(ROOT, 'deploy', 'rules', 'upstash-exporter.rules.yml'), 'utf8')).toContain(
      'up{job="upstash-exporter"}',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Compose
// ---------------------------------------------------------------------------------------------

interface Mount {
  source: string;
  target: string;
}

/** Bind mounts of a compose service (named volumes left out), sources made absolute. */
function bindMounts(service: Manifest): Mount[] {
  return ((service.volumes ?? []) as string[])
    .map((spec) => spec.split(':'))
    .filter(([source]) => source!.startsWith('.') || isAbsolute(source!))
    .map(([source, target]) => ({ source: resolve(COMPOSE, source!), target: target! }));
}

/** The host path behind a path inside a service's container. */
function hostPath(service: Manifest, containerPath: string): string {
  const mount = bindMounts(service).find((m) => containerPath === m.target || containerPath.startsWith(`${m.target}/`));
  if (mount === undefined) throw new Error(`${containerPath} is not on a bind mount`);
  return join(mount.source, relative(mount.target, containerPath));
}

describe('compose files', () => {
  const compose = loadManifests(join(COMPOSE, 'compose.yaml'))[0]!;
  const services = compose.services as Record<string, Manifest>;

  it('has the exporter (built from the Dockerfile), Prometheus and Grafana; every bind mount exists', () => {
    expect(Object.keys(services).sort()).toEqual(['exporter', 'grafana', 'prometheus']);
    const build = services.exporter!.build as { context: string; dockerfile: string };
    expect(existsSync(join(resolve(COMPOSE, build.context), build.dockerfile))).toBe(true);
    for (const service of Object.values(services)) {
      for (const mount of bindMounts(service)) expect(existsSync(mount.source), mount.source).toBe(true);
    }
  });

  it('the exporter env file example names only known settings', () => {
    const envFile = (services.exporter!.env_file as { path: string }[])[0]!.path;
    const example = readFileSync(resolve(COMPOSE, `${envFile}.example`), 'utf8');
    const known = new Set([
      ...SETTINGS.flatMap((spec) => (spec.secretFile === true ? [spec.env, `${spec.env}_FILE`] : [spec.env])),
      // The SDKs' per-region variables (EU_CENTRAL_1_QSTASH_TOKEN, ...), read for every known region.
      ...KNOWN_QSTASH_REGIONS.flatMap((region) =>
        ['QSTASH_TOKEN', 'QSTASH_URL'].map((variable) => `${region.envPrefix}_${variable}`),
      ),
    ]);
    const names = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(['QSTASH_TOKEN', 'UPSTASH_EMAIL', 'UPSTASH_API_KEY']));
    for (const name of names) expect(known.has(name), name).toBe(true);
    // The real env file stays out of version control.
    expect(readFileSync(join(COMPOSE, '.gitignore'), 'utf8')).toContain(envFile.replace(/^\.\//, ''));
  });

  it('Prometheus scrapes the exporter under an upstash job and loads the shipped rules (promtool check config)', async () => {
    const prometheus = services.prometheus!;
    const configFlag = (prometheus.command as string[]).find((arg) => arg.startsWith('--config.file='))!;
    const configPath = hostPath(prometheus, configFlag.slice('--config.file='.length));
    const config = YAML.parse(readFileSync(configPath, 'utf8')) as Manifest;
    const job = (config.scrape_configs as Manifest[])[0]!;
    expect(job.job_name).toBe('upstash-exporter');
    expect(job.static_configs[0].targets).toEqual(['exporter:9824']);
    // Every shipped rules file by a glob, so a product's rules file needs no line here.
    expect(config.rule_files).toEqual(['/etc/prometheus/rules/*.rules.yml']);
    const ruleFiles = (config.rule_files as string[]).map((file) => hostPath(prometheus, file));

    const scratch = mkdtempSync(join(tmpdir(), 'upstash-exporter-compose-'));
    try {
      writeFileSync(join(scratch, 'prometheus.yml'), YAML.stringify({ ...config, rule_files: ruleFiles }));
      const result = await run('promtool', ['check', 'config', join(scratch, 'prometheus.yml')], process.env);
      // promtool ships with Debian's prometheus package; without it (outside CI) only the parse above ran.
      if (result.missing && process.env.CI !== 'true') return;
      expect(result.status, result.output).toBe(0);
      // The glob reached every rules file the PrometheusRule holds.
      for (const file of RULES_FILES) expect(result.output).toContain(`Checking ${file}`);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('Grafana gets the Prometheus data source and the dashboards of dashboards/', () => {
    const grafana = services.grafana!;
    const provisioning = hostPath(grafana, '/etc/grafana/provisioning');
    const datasources = YAML.parse(
      readFileSync(join(provisioning, 'datasources', 'prometheus.yaml'), 'utf8'),
    ) as Manifest;
    const source = (datasources.datasources as Manifest[])[0]!;
    expect(source.type).toBe('prometheus');
    expect(source.isDefault).toBe(true);
    const url = new URL(source.url as string);
    expect(Object.keys(services)).toContain(url.hostname);
    expect(url.port).toBe('9090');

    const providers = YAML.parse(readFileSync(join(provisioning, 'dashboards', 'upstash.yaml'), 'utf8')) as Manifest;
    const dashboardsDir = hostPath(grafana, (providers.providers as Manifest[])[0]!.options.path as string);
    expect(dashboardsDir).toBe(join(ROOT, 'dashboards'));
    const files = readdirSync(dashboardsDir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect((JSON.parse(readFileSync(join(dashboardsDir, file), 'utf8')) as { uid?: string }).uid).toBeTruthy();
  });

  it('the demo override runs `demo` with flags the demo accepts, listening on all interfaces', () => {
    const override = loadManifests(join(COMPOSE, 'compose.demo.yaml'))[0]!;
    const command = (override.services as Record<string, Manifest>).exporter!.command as string[];
    expect(command.slice(0, 3)).toEqual(['node', 'dist/cli.js', 'demo']);
    const settings = parseDemoArgs(command.slice(3), {});
    expect(settings.listenAddress).toBe('0.0.0.0:9824');
    // The container's root file system is read-only: no temporary state file.
    expect(settings.stateFile).toBe('none');
  });
});
