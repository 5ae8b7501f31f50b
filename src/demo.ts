// `upstash-exporter demo`: the emulator with two QStash regions (EU and US, each its own address,
// token and signing keys), four destinations, generated traffic in both regions and the exporter
// in one process, talking real HTTP to each other; the exporter watches both regions, configured
// by the SDKs' migration-mode environment the banner prints. The only module that joins emulator
// and exporter.
// Prints the URLs, runs until SIGINT/SIGTERM, then stops traffic, exporter, emulator and
// destinations in that order and exits 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configSecrets, loadConfig } from './config/index.js';
import { demoHelpText, parseDemoArgs, type DemoSettings } from './demo/flags.js';
import { startDestinations, SLOW_TIMEOUT_MS, type Destinations } from './demo/destinations.js';
import { DEMO_FLOW_CONTROL_KEY, DEMO_QUEUES, DEMO_URL_GROUP, DemoTraffic } from './demo/traffic.js';
import { exporterEnvironment } from './demo/exporter-environment.js';
import { demoPollIntervalFlag } from './demo/poll-intervals.js';
import { createEmulator, type EmulatorHandle } from './emulator/index.js';
import { emulatorAccessLines, regionEnvironmentLines } from './emulator/usage-text.js';
import { hostForUrl } from './common/url.js';
import { cannotListenText, isListenError } from './common/listen.js';
import { pasteListenAddress } from './common/invocation.js';
import { parseListenAddress } from './emulator/listen-address.js';
import { startExporter, type ExporterHandle } from './exporter.js';
import { createLogger, type Logger } from './logging/index.js';
import { errorMessage } from './common/errors.js';

export { DEMO_DEFAULTS, demoHelpText, parseDemoArgs } from './demo/flags.js';
export type { DemoSettings } from './demo/flags.js';

/** Poll intervals of the demo's exporter (--poll-interval): from the collector catalogue's defaults. */
export const DEMO_POLL_INTERVALS = demoPollIntervalFlag();
/** How often the demo's canary probe runs (message and workflow). */
const DEMO_PROBE_INTERVAL = '5s';
/** Bearer token of the demo's remediation webhook: public, like the emulator's development credentials. */
export const DEMO_REMEDIATION_TOKEN = 'upstash-exporter-demo-remediation-token';
/** The emulator sends Burst-RateLimit-* headers only under a limit; this one is never reached. */
const DEMO_RATE_LIMIT_PER_SECOND = 1_000;
/**
 * A few messages carry 1 MiB bodies in their log entries, untrimmed, as on the real service
 * (message sizes up to 1, 10 or 50 MB by plan): the exporter drops them while pages stream in.
 */
const DEMO_LARGE_BODIES = { largeBodyRatio: 0.03, largeBodyBytes: 1_048_576 } as const;
/** Same bound as `run`: a demo that does not close in time exits 1. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

/** The regions the demo's emulator serves, the first on --emulator-address. */
export const DEMO_REGIONS = ['eu-central-1', 'us-east-1'] as const;
/**
 * Rounds of traffic per region: the US region publishes half as often, like a team moving its
 * traffic there (docs/emulator.md), so the two regions' series differ on the dashboards.
 */
const REGION_TICK_MS: Record<(typeof DEMO_REGIONS)[number], number> = { 'eu-central-1': 1_000, 'us-east-1': 2_000 };

/** One region of the demo's emulator, as an app of that region is configured. */
export interface DemoRegion {
  name: string;
  url: string;
  token: string;
  signingKeys: { current: string; next: string };
  traffic: DemoTraffic;
}

export interface DemoHandle {
  /** Base URL of the exporter, with a trailing slash. */
  exporterUrl: string;
  /** The first region's address (eu-central-1); the management API is served there too. */
  emulatorUrl: string;
  /** Every region, the first one first. */
  regions: DemoRegion[];
  /** The emulator's credentials: the public development ones. */
  emulatorCredentials: EmulatorHandle['credentials'];
  destinations: Destinations['urls'];
  /** Effective state file, or null. */
  stateFile: string | null;
  /** True when the state file is temporary and removed on close. */
  temporaryState: boolean;
  /** Where the emulator delivers the canary probe (the exporter's own receiver). */
  probeReceiverUrl: string;
  /** The exporter's Alertmanager webhook (remediation), with DEMO_REMEDIATION_TOKEN as bearer. */
  remediationUrl: string;
  /** The first region's traffic. */
  traffic: DemoTraffic;
  close(): Promise<void>;
}

/**
 * The exporter's flags in the demo: every collector and both active checks on, the management
 * API at the emulator; the regions come from exporterEnvironment().
 */
function exporterArgs(
  listen: Listen,
  emulator: EmulatorHandle,
  stateFile: string | null,
  settings: DemoSettings,
): string[] {
  const receiverUrl = probeReceiverUrl(listen);
  return [
    '--listen-address',
    listenText(listen),
    '--management-url',
    emulator.url,
    // Short, so every family has data within seconds.
    '--poll-interval',
    DEMO_POLL_INTERVALS,
    '--flow-control-key',
    DEMO_FLOW_CONTROL_KEY,
    // The emulator writes its log synchronously: a short ingestion delay is enough.
    '--logs-ingestion-delay',
    '1s',
    // The emulator is local: straight to it, even from a shell whose HTTPS_PROXY names a proxy.
    '--no-http-proxy-from-environment',
    // Show the messages' labels on the log-event metrics (an opt-in that raises cardinality).
    '--logs-label',
    'label',
    '--state-file',
    stateFile ?? 'none',
    // The canary probe: each region delivers it, signed with its own keys, back to this exporter's receiver.
    '--probe-enabled',
    '--probe-interval',
    DEMO_PROBE_INTERVAL,
    '--probe-receiver-url',
    receiverUrl,
    '--probe-workflow-url',
    receiverUrl,
    // Remediation: the Alertmanager webhook that pauses failing schedules.
    '--remediation-enabled',
    '--remediation-bearer-token',
    DEMO_REMEDIATION_TOKEN,
    '--log-level',
    settings.logLevel,
    '--log-format',
    settings.logFormat,
  ];
}

interface Listen {
  host: string;
  port: number;
}

function listenText({ host, port }: Listen): string {
  return `${hostForUrl(host)}:${port}`;
}

/** The exporter as the in-process emulator reaches it: loopback when it listens on every interface. */
function localBase({ host, port }: Listen): string {
  const local = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${hostForUrl(local)}:${port}`;
}

function probeReceiverUrl(listen: Listen): string {
  return `${localBase(listen)}/probe/receive`;
}

/**
 * The exporter's address with a concrete port: the probe receiver URL must name it before the
 * exporter starts, so port 0 is resolved here (a free port, bound and released).
 */
async function resolveListen(text: string): Promise<Listen> {
  let listen: Listen;
  try {
    listen = parseListenAddress(text);
  } catch {
    throw new ConfigError('listen_address', `--listen-address: expected host:port, got ${JSON.stringify(text)}`);
  }
  if (listen.port !== 0) return listen;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, listen.host, resolve);
    });
  } catch (error) {
    throw new ConfigError('listen_address', cannotListenText('--listen-address', text, error));
  }
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return { host: listen.host, port };
}

/**
 * Starts destinations, emulator, traffic and exporter. Rejects with ConfigError when an address
 * cannot be used; whatever had started is closed again before it rejects.
 */
export async function startDemo(settings: DemoSettings): Promise<DemoHandle> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const step of cleanups.reverse()) await step();
  };
  try {
    const listen = await resolveListen(settings.listenAddress);
    const destinations = await startDestinations(settings.seed);
    cleanups.push(() => destinations.close());

    let emulator: EmulatorHandle;
    try {
      emulator = await createEmulator(
        {
          host: settings.emulator.host,
          port: settings.emulator.port,
          // The second region on the next port (a free one when the first is free).
          regions: DEMO_REGIONS.map((name, index) => ({
            name,
            host: settings.emulator.host,
            port: settings.emulator.port === 0 ? 0 : settings.emulator.port + index,
          })),
          seed: settings.seed,
          knobs: {
            timeScale: settings.timeScale,
            rateLimitPerSecond: DEMO_RATE_LIMIT_PER_SECOND,
            // The flow-control list the exporter reads first (the docs' API reference lists it; the
            // emulator's default follows the SDK, which has none): without it every demo start
            // warned that the endpoint is missing.
            flowControlList: true,
            ...DEMO_LARGE_BODIES,
          },
        },
        { report: (line) => process.stderr.write(`${line}\n`) },
      );
    } catch (error) {
      if (!isListenError(error)) throw error;
      // The port that failed: the first region's, or the second one's next to it.
      const { host } = settings.emulator;
      const failed = (error as { port?: unknown }).port;
      const port = typeof failed === 'number' ? failed : settings.emulator.port;
      throw new ConfigError(
        'emulator_address',
        cannotListenText('--emulator-address', `${hostForUrl(host)}:${port}`, error),
      );
    }
    cleanups.push(() => emulator.close());

    let stateFile: string | null;
    let temporaryState = false;
    if (settings.stateFile === undefined) {
      const directory = mkdtempSync(join(tmpdir(), 'upstash-exporter-demo-'));
      cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
      stateFile = join(directory, 'state.json');
      temporaryState = true;
    } else {
      stateFile = settings.stateFile.toLowerCase() === 'none' ? null : settings.stateFile;
    }

    // Only the demo's own environment: the user's QSTASH_TOKEN or CONFIG_FILE must not reach it.
    const config = loadConfig(exporterArgs(listen, emulator, stateFile, settings), exporterEnvironment(emulator));
    const logger: Logger = createLogger({
      level: config.log.level,
      format: config.log.format,
      secrets: configSecrets(config),
    });

    const regions: DemoRegion[] = emulator.regions.map((region) => ({
      name: region.name,
      url: region.url,
      token: region.credentials.token,
      signingKeys: region.signingKeys(),
      traffic: new DemoTraffic({
        scenario: settings.scenario,
        emulatorUrl: region.url,
        token: region.credentials.token,
        destinations: destinations.urls,
        logger: logger.child({ component: 'demo-traffic', qstash_region: region.name }),
        tickMs: REGION_TICK_MS[region.name as (typeof DEMO_REGIONS)[number]],
      }),
    }));
    cleanups.push(() => Promise.all(regions.map((region) => region.traffic.stop())).then(() => undefined));
    for (const region of regions) await region.traffic.setUp();

    // An address in use is refused by startExporter as for `run` (ConfigError, one line).
    const exporter: ExporterHandle = await startExporter(config, logger);
    // Traffic stops before the exporter closes, so its last poll and checkpoint see a quiet log.
    cleanups.splice(cleanups.length - 1, 0, () => exporter.close());
    for (const region of regions) region.traffic.start();

    let closing: Promise<void> | undefined;
    return {
      exporterUrl: exporter.url,
      emulatorUrl: emulator.url,
      regions,
      emulatorCredentials: emulator.credentials,
      destinations: destinations.urls,
      stateFile,
      temporaryState,
      probeReceiverUrl: probeReceiverUrl(listen),
      remediationUrl: `${localBase(listen)}/-/remediation/alertmanager`,
      traffic: regions[0]!.traffic,
      close: () => (closing ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Where the paste line's second exporter listens, unless the demo itself listens there. */
const SECOND_EXPORTER_PORT = 9825;

function portOf(url: string): number {
  return Number(new URL(url).port);
}

export function demoBanner(demo: DemoHandle, settings: DemoSettings): string {
  const base = demo.exporterUrl.replace(/\/$/, '');
  const { healthy, flaky, slow, failing } = demo.destinations;
  const state =
    demo.stateFile === null ? 'none' : `${demo.stateFile}${demo.temporaryState ? ' (temporary, removed at exit)' : ''}`;
  const lines = [
    'upstash-exporter demo: emulator, generated traffic and exporter in one process (Ctrl-C to stop)',
    `  exporter metrics:  ${base}/metrics`,
    `  exporter landing:  ${base}/`,
    `  emulator:          ${demo.emulatorUrl} (QStash ${demo.regions[0]?.name ?? ''} and the management API; regions below)`,
    ...emulatorAccessLines(
      {
        url: demo.emulatorUrl,
        credentials: demo.emulatorCredentials,
        public: { token: true, email: true, apiKey: true },
      },
      pasteListenAddress(SECOND_EXPORTER_PORT, [portOf(demo.exporterUrl), portOf(demo.emulatorUrl)]),
    ).map((line) => `  ${line}`),
    `  ground truth:      ${demo.emulatorUrl}/__emulator/ground-truth`,
    `  emulator knobs:    ${demo.emulatorUrl}/__emulator/knobs`,
    // Every region's address and the app's migration-mode .env (all public development values).
    ...regionEnvironmentLines(
      demo.regions.map((region) => ({ ...region, public: { token: true, signingKeys: true } })),
      { ...demo.emulatorCredentials, public: { email: true, apiKey: true } },
    ),
    `  destinations:      healthy ${healthy}, flaky ${flaky} (~10% 500), slow ${slow} (near its ${SLOW_TIMEOUT_MS / 1000}s timeout), failing ${failing} (always 500)`,
    settings.scenario === 'healthy'
      ? `  traffic:           healthy scenario, in each region: only messages, schedules and workflows that succeed at once (no alert fires); --scenario mixed shows failures`
      : `  traffic:           in each region: about 9 messages a second (half that in ${demo.regions[1]?.name ?? 'the second region'}) plus the schedules; queues ${DEMO_QUEUES.map((queue) => queue.queueName).join(', ')} (invoices paused); flow-control key ${DEMO_FLOW_CONTROL_KEY}; URL group ${DEMO_URL_GROUP} (3 endpoints); schedules demo-heartbeat, demo-digest, demo-partner-sync (always fails); labels`,
    `  canary probe:      every ${DEMO_PROBE_INTERVAL}, message and workflow, delivered signed to ${demo.probeReceiverUrl}`,
    `  remediation:       POST ${demo.remediationUrl} with "Authorization: Bearer ${DEMO_REMEDIATION_TOKEN}" (Alertmanager webhook; pauses failing schedules)`,
    `  time scale:        ${settings.timeScale} (emulator retries, delays and crons)`,
    `  state file:        ${state}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Runs the demo until SIGINT or SIGTERM, then exits 0 (1 when closing fails or takes over 10 s). */
export async function runDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const settings = parseDemoArgs(argv, env);
  if (settings.help) {
    process.stdout.write(demoHelpText());
    return;
  }
  // Handlers go in before anything starts, like `run`: a signal without a listener kills the
  // process on the spot and leaves the temporary state file behind.
  let closing = false;
  let started: Promise<DemoHandle | undefined> = Promise.resolve(undefined);
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      process.stderr.write(`upstash-exporter demo: second ${signal} while closing: exiting now\n`);
      process.exit(1);
    }
    closing = true;
    process.stdout.write(
      `upstash-exporter demo: ${signal} received, stopping traffic, exporter, emulator and destinations\n`,
    );
    setTimeout(() => {
      process.stderr.write('upstash-exporter demo: did not stop in time: exiting\n');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    started
      .then((demo) => demo?.close())
      .then(
        () => {
          process.stdout.write('upstash-exporter demo: stopped\n');
          process.exit(0);
        },
        (error: unknown) => {
          process.stderr.write(`upstash-exporter demo: error while stopping: ${errorMessage(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  const starting = startDemo(settings);
  started = starting.catch(() => undefined);
  try {
    const demo = await starting;
    if (!closing) process.stdout.write(demoBanner(demo, settings));
  } catch (error) {
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
    throw error;
  }
}
