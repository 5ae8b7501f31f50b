// `upstash-exporter emulator`: the emulator alone, configured by flags (and the exporter's own
// credential variables), printing its URL and credentials at start and closing cleanly on
// SIGINT/SIGTERM. Invalid flags throw EmulatorUsageError (code ERR_CONFIG): one line, exit 2.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DurationError, parseDuration } from '../common/duration.js';
import { EmulatorKnobError, EmulatorUsageError } from './errors.js';
import { createEmulator, type EmulatorHandle } from './index.js';
import { DEFAULT_LISTEN_ADDRESS, isListenError, parseListenAddress } from './listen-address.js';
import {
  DEFAULT_FAULT_SCOPES,
  FAULT_SCOPES,
  parseKnobsPatch,
  PLAN_LOG_RETENTION_MS,
  type FaultScope,
  type Knobs,
} from './knobs.js';
import { DEV_CREDENTIALS, type EmulatorOptions, type PlanProfile } from './options.js';
import { DEV_SIGNING_KEYS } from './delivery/signing.js';
import { emulatorAccessLines, regionEnvironmentLines } from './usage-text.js';
import { parseRegionsFlag, type RegionPublicity } from './region-flags.js';
import { errorMessage } from '../common/errors.js';
import { pasteListenAddress } from '../common/invocation.js';

const FLAGS = {
  'listen-address': { type: 'string', help: `host:port to listen on (default ${DEFAULT_LISTEN_ADDRESS})` },
  regions: {
    type: 'string',
    help: 'QStash regions served, each its own delivery API at its own address: eu-central-1,us-east-1 (the first on --listen-address, the others on the next ports) or eu-central-1=HOST:PORT,us-east-1=HOST:PORT; tokens and signing keys from <REGION>_QSTASH_TOKEN, <REGION>_QSTASH_CURRENT_SIGNING_KEY, <REGION>_QSTASH_NEXT_SIGNING_KEY (default: eu-central-1 only)',
  },
  'qstash-token': { type: 'string', help: 'delivery token (env QSTASH_TOKEN, QSTASH_TOKEN_FILE)' },
  'qstash-token-file': { type: 'string', help: 'file holding the delivery token' },
  'upstash-email': { type: 'string', help: 'management user (env UPSTASH_EMAIL)' },
  'upstash-api-key': { type: 'string', help: 'management API key (env UPSTASH_API_KEY, UPSTASH_API_KEY_FILE)' },
  'upstash-api-key-file': { type: 'string', help: 'file holding the management API key' },
  'current-signing-key': {
    type: 'string',
    help: 'key deliveries are signed with (Upstash-Signature; env QSTASH_CURRENT_SIGNING_KEY; default: the public development key)',
  },
  'next-signing-key': {
    type: 'string',
    help: 'key that becomes current on POST /v2/keys/rotate (env QSTASH_NEXT_SIGNING_KEY; default: the public development key)',
  },
  'time-scale': {
    type: 'string',
    help: 'waits (retry delays, Delay/Not-Before, cron, dedup window) run this many times faster (default 1)',
  },
  'log-retention': { type: 'string', help: 'log entries kept, newest first (default 10000)' },
  'log-visibility-delay': { type: 'string', help: 'hide log entries younger than this duration, e.g. 2s (default 0)' },
  'log-retention-age': {
    type: 'string',
    help: 'also drop log entries older than this: a duration or a plan free|payg|fixed (3, 7, 14 days; default off)',
  },
  'log-visibility-lag': {
    type: 'string',
    help: 'each log entry appears after a random extra lag up to this, out of time order (default 0)',
  },
  'max-page-size': {
    type: 'string',
    help: 'most entries a log page holds (default 1000, as the SDK documents; the OpenAPI says 100)',
  },
  'large-body-ratio': {
    type: 'string',
    help: 'share of messages whose log entries carry a large body, 0..1 (default 0)',
  },
  'large-body-bytes': { type: 'string', help: 'size of a large body in bytes (default 1048576)' },
  latency: { type: 'string', help: 'added latency on the faulted read endpoints, e.g. 200ms (default 0)' },
  'rate-limit': {
    type: 'string',
    help: 'requests per second on the faulted read endpoints, 429 above (default 0 = off)',
  },
  'error-ratio': { type: 'string', help: 'share of faulted requests answered 5xx, 0..1 (default 0)' },
  'malformed-ratio': { type: 'string', help: 'share answered with a body that is not JSON, 0..1 (default 0)' },
  'truncated-ratio': { type: 'string', help: 'share answered with a body cut halfway, 0..1 (default 0)' },
  'omit-state': { type: 'boolean', help: 'serve log entries without their state field' },
  'fault-scope': {
    type: 'string',
    help: `endpoint groups the faults apply to, comma list of ${FAULT_SCOPES.join(', ')} (default ${DEFAULT_FAULT_SCOPES.join(',')})`,
  },
  'header-prefix': { type: 'string', help: 'prefix of the service headers (default Upstash-; e.g. Svc-)' },
  plan: {
    type: 'string',
    help: 'plan profile free|payg|fixed: default retries, timeout, account record (default payg)',
  },
  seed: { type: 'string', help: 'seed of the fault PRNG (default 1)' },
  'allow-remote-destinations': { type: 'boolean', help: 'deliver to non-loopback hosts too (off: such messages fail)' },
  'max-body-bytes': { type: 'string', help: 'request body limit in bytes (default 1048576)' },
  concurrency: { type: 'string', help: 'delivery attempts in flight at once (default 64)' },
  help: { type: 'boolean', help: 'show this help' },
} as const;

export function emulatorHelpText(): string {
  const lines = ['Usage: upstash-exporter emulator [flags]', '', 'Flags:'];
  for (const [name, spec] of Object.entries(FLAGS)) {
    lines.push(`  --${name}${spec.type === 'string' ? ' <value>' : ''}`, `      ${spec.help}`);
  }
  lines.push(
    '',
    'Admin API (no auth, loopback use): GET|PATCH /__emulator/knobs, GET /__emulator/ground-truth, POST /__emulator/reset',
  );
  return `${lines.join('\n')}\n`;
}

function readSecretFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    throw new EmulatorUsageError(flag, `cannot read file ${JSON.stringify(path)}`);
  }
}

function numberFlag(flag: string, text: string, integer: boolean): number {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new EmulatorUsageError(flag, `expected ${integer ? 'an integer' : 'a number'}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function durationFlag(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    if (!(error instanceof DurationError)) throw error;
    throw new EmulatorUsageError(flag, `${error.reason} (got ${JSON.stringify(text)}, e.g. 500ms, 2s, 1m)`);
  }
}

const KNOB_FLAGS: Record<string, string> = {
  timeScale: '--time-scale',
  logRetention: '--log-retention',
  logVisibilityDelayMs: '--log-visibility-delay',
  logRetentionAgeMs: '--log-retention-age',
  logVisibilityLagMaxMs: '--log-visibility-lag',
  maxPageSize: '--max-page-size',
  largeBodyRatio: '--large-body-ratio',
  largeBodyBytes: '--large-body-bytes',
  latencyMs: '--latency',
  rateLimitPerSecond: '--rate-limit',
  errorRatio: '--error-ratio',
  malformedRatio: '--malformed-ratio',
  truncatedRatio: '--truncated-ratio',
  omitState: '--omit-state',
  faultScope: '--fault-scope',
};

export interface EmulatorCliSettings {
  options: Partial<EmulatorOptions>;
  /** Which credentials are the public development defaults (printed at start). */
  defaults: { token: boolean; email: boolean; apiKey: boolean };
  /** Per region served with --regions, which of its credentials are public (empty without). */
  regions: RegionPublicity[];
  help: boolean;
}

/** Turns argv and the environment into emulator options; throws EmulatorUsageError naming the flag. */
export function parseEmulatorArgs(argv: readonly string[], env: NodeJS.ProcessEnv): EmulatorCliSettings {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const message = errorMessage(error).split('\n')[0]!;
    const flag = /'(-[^']+)'/.exec(message)?.[1] ?? 'flags';
    throw new EmulatorUsageError(flag, message);
  }
  const text = (name: keyof typeof FLAGS): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const options: Partial<EmulatorOptions> = {};
  const { host, port } = parseListenAddress(text('listen-address') ?? DEFAULT_LISTEN_ADDRESS);
  options.host = host;
  options.port = port;

  const tokenFile = text('qstash-token-file') ?? env.QSTASH_TOKEN_FILE;
  const token =
    text('qstash-token') ?? (tokenFile ? readSecretFile('--qstash-token-file', tokenFile) : env.QSTASH_TOKEN);
  const email = text('upstash-email') ?? env.UPSTASH_EMAIL;
  const keyFile = text('upstash-api-key-file') ?? env.UPSTASH_API_KEY_FILE;
  const apiKey =
    text('upstash-api-key') ?? (keyFile ? readSecretFile('--upstash-api-key-file', keyFile) : env.UPSTASH_API_KEY);
  if (token !== undefined && token.trim() === '') throw new EmulatorUsageError('--qstash-token', 'is empty');
  if (email !== undefined && email.trim() === '') throw new EmulatorUsageError('--upstash-email', 'is empty');
  if (apiKey !== undefined && apiKey.trim() === '') throw new EmulatorUsageError('--upstash-api-key', 'is empty');
  options.token = token?.trim() ?? DEV_CREDENTIALS.token;
  options.email = email?.trim() ?? DEV_CREDENTIALS.email;
  options.apiKey = apiKey?.trim() ?? DEV_CREDENTIALS.apiKey;
  const currentSigningKey = text('current-signing-key') ?? env.QSTASH_CURRENT_SIGNING_KEY;
  const nextSigningKey = text('next-signing-key') ?? env.QSTASH_NEXT_SIGNING_KEY;
  if (currentSigningKey !== undefined && currentSigningKey.trim() === '')
    throw new EmulatorUsageError('--current-signing-key', 'is empty');
  if (nextSigningKey !== undefined && nextSigningKey.trim() === '')
    throw new EmulatorUsageError('--next-signing-key', 'is empty');
  // Both or neither: a receiver verifies with the pair, so half a custom pair is a mistake.
  if ((currentSigningKey === undefined) !== (nextSigningKey === undefined)) {
    throw new EmulatorUsageError(
      currentSigningKey === undefined ? '--current-signing-key' : '--next-signing-key',
      'give both signing keys (--current-signing-key and --next-signing-key) or neither',
    );
  }
  options.currentSigningKey = currentSigningKey?.trim() ?? DEV_SIGNING_KEYS.current;
  options.nextSigningKey = nextSigningKey?.trim() ?? DEV_SIGNING_KEYS.next;
  const regionsText = text('regions');
  let regions: RegionPublicity[] = [];
  if (regionsText !== undefined) {
    const parsed = parseRegionsFlag(regionsText, { host, port }, env, {
      ...(token !== undefined ? { token: token.trim() } : {}),
      ...(currentSigningKey !== undefined && nextSigningKey !== undefined
        ? { currentSigningKey: currentSigningKey.trim(), nextSigningKey: nextSigningKey.trim() }
        : {}),
    });
    options.regions = parsed.regions;
    regions = parsed.publicity;
  }

  const plan = text('plan');
  if (plan !== undefined) {
    if (!['free', 'payg', 'fixed'].includes(plan))
      throw new EmulatorUsageError('--plan', `expected free, payg or fixed, got ${JSON.stringify(plan)}`);
    options.plan = plan as PlanProfile;
  }
  const prefix = text('header-prefix');
  if (prefix !== undefined) {
    const withDash = prefix.endsWith('-') ? prefix : `${prefix}-`;
    if (!/^[A-Za-z][A-Za-z0-9]*-$/.test(withDash))
      throw new EmulatorUsageError(
        '--header-prefix',
        `expected letters and digits such as Upstash- or Svc-, got ${JSON.stringify(prefix)}`,
      );
    options.headerPrefix = withDash;
  }
  const seed = text('seed');
  if (seed !== undefined) options.seed = numberFlag('--seed', seed, true);
  const maxBody = text('max-body-bytes');
  if (maxBody !== undefined) {
    options.maxBodyBytes = numberFlag('--max-body-bytes', maxBody, true);
    if (options.maxBodyBytes < 1) throw new EmulatorUsageError('--max-body-bytes', 'must be at least 1');
  }
  const concurrency = text('concurrency');
  if (concurrency !== undefined) {
    options.concurrency = numberFlag('--concurrency', concurrency, true);
    if (options.concurrency < 1) throw new EmulatorUsageError('--concurrency', 'must be at least 1');
  }
  if (values['allow-remote-destinations'] === true) options.allowRemoteDestinations = true;

  const knobs: Partial<Knobs> = {};
  const timeScale = text('time-scale');
  if (timeScale !== undefined) knobs.timeScale = numberFlag('--time-scale', timeScale, false);
  const retention = text('log-retention');
  if (retention !== undefined) knobs.logRetention = numberFlag('--log-retention', retention, true);
  const visibility = text('log-visibility-delay');
  if (visibility !== undefined) knobs.logVisibilityDelayMs = durationFlag('--log-visibility-delay', visibility);
  const retentionAge = text('log-retention-age');
  if (retentionAge !== undefined) {
    const plan = retentionAge.trim() as keyof typeof PLAN_LOG_RETENTION_MS;
    knobs.logRetentionAgeMs =
      plan in PLAN_LOG_RETENTION_MS ? PLAN_LOG_RETENTION_MS[plan] : durationFlag('--log-retention-age', retentionAge);
  }
  const lag = text('log-visibility-lag');
  if (lag !== undefined) knobs.logVisibilityLagMaxMs = durationFlag('--log-visibility-lag', lag);
  const maxPageSize = text('max-page-size');
  if (maxPageSize !== undefined) knobs.maxPageSize = numberFlag('--max-page-size', maxPageSize, true);
  const largeRatio = text('large-body-ratio');
  if (largeRatio !== undefined) knobs.largeBodyRatio = numberFlag('--large-body-ratio', largeRatio, false);
  const largeBytes = text('large-body-bytes');
  if (largeBytes !== undefined) knobs.largeBodyBytes = numberFlag('--large-body-bytes', largeBytes, true);
  const latency = text('latency');
  if (latency !== undefined) knobs.latencyMs = durationFlag('--latency', latency);
  const rateLimit = text('rate-limit');
  if (rateLimit !== undefined) knobs.rateLimitPerSecond = numberFlag('--rate-limit', rateLimit, true);
  const errorRatio = text('error-ratio');
  if (errorRatio !== undefined) knobs.errorRatio = numberFlag('--error-ratio', errorRatio, false);
  const malformedRatio = text('malformed-ratio');
  if (malformedRatio !== undefined) knobs.malformedRatio = numberFlag('--malformed-ratio', malformedRatio, false);
  const truncatedRatio = text('truncated-ratio');
  if (truncatedRatio !== undefined) knobs.truncatedRatio = numberFlag('--truncated-ratio', truncatedRatio, false);
  if (values['omit-state'] === true) knobs.omitState = true;
  const scope = text('fault-scope');
  if (scope !== undefined)
    knobs.faultScope = scope
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '') as FaultScope[];
  try {
    options.knobs = parseKnobsPatch(knobs);
  } catch (error) {
    if (error instanceof EmulatorKnobError) {
      const knob = error.knob.split('.')[0]!;
      throw new EmulatorUsageError(KNOB_FLAGS[knob] ?? knob, error.message.replace(/^invalid knob [^:]+: /, ''));
    }
    throw error;
  }
  return {
    options,
    defaults: {
      token: (regions[0]?.token ?? true) && token === undefined,
      email: email === undefined,
      apiKey: apiKey === undefined,
    },
    regions,
    help: values.help === true,
  };
}

/** The exporter's default listen port, for the paste line (unless the emulator listens there). */
const EXPORTER_LISTEN_PORT = 9824;

function startBanner(handle: EmulatorHandle, settings: EmulatorCliSettings): string {
  const { defaults } = settings;
  const lines = [
    `upstash-exporter emulator listening on ${handle.url}`,
    `  delivery (QStash) and management interfaces: ${handle.url}`,
    ...emulatorAccessLines(
      { url: handle.url, credentials: handle.credentials, public: defaults },
      pasteListenAddress(EXPORTER_LISTEN_PORT, [Number(new URL(handle.url).port)]),
    ),
  ];
  // The development keys are public, so they are printed whoever chose them; other keys never are.
  const keys = handle.signingKeys();
  const devKeys = keys.current === DEV_SIGNING_KEYS.current && keys.next === DEV_SIGNING_KEYS.next;
  if (devKeys) {
    lines.push(
      '  deliveries are signed (Upstash-Signature) with the public development signing keys (set --current-signing-key/QSTASH_CURRENT_SIGNING_KEY and --next-signing-key/QSTASH_NEXT_SIGNING_KEY to change):',
    );
    lines.push(`    QSTASH_CURRENT_SIGNING_KEY=${keys.current}`, `    QSTASH_NEXT_SIGNING_KEY=${keys.next}`);
  }
  if (!defaults.token || !defaults.email || !defaults.apiKey || !devKeys)
    lines.push('  credentials given by flags or environment are in use (not printed)');
  if (handle.regions.length > 1) {
    lines.push(
      ...regionEnvironmentLines(
        handle.regions.map((region, index) => ({
          name: region.name,
          url: region.url,
          token: region.credentials.token,
          signingKeys: region.signingKeys(),
          public: {
            token: settings.regions[index]?.token ?? false,
            signingKeys: settings.regions[index]?.signingKeys ?? false,
          },
        })),
        { email: handle.credentials.email, apiKey: handle.credentials.apiKey, public: defaults },
      ),
    );
  }
  lines.push(
    `  admin (no auth): ${handle.url}/__emulator/knobs, ${handle.url}/__emulator/ground-truth, POST ${handle.url}/__emulator/reset`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Runs the emulator until SIGINT or SIGTERM. Resolves once it listens (the process then lives
 * on its server); throws EmulatorUsageError (code ERR_CONFIG) for invalid flags.
 */
export async function runEmulatorCli(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const settings = parseEmulatorArgs(argv, env);
  if (settings.help) {
    process.stdout.write(emulatorHelpText());
    return;
  }
  let handle: EmulatorHandle;
  try {
    handle = await createEmulator(settings.options, { report: (line) => process.stderr.write(`${line}\n`) });
  } catch (error) {
    // A region list createEmulator refuses (the same token twice): one line, like a bad flag.
    if (error instanceof TypeError && settings.regions.length > 0)
      throw new EmulatorUsageError('--regions', error.message);
    if (isListenError(error)) {
      const code = String((error as { code: unknown }).code);
      throw new EmulatorUsageError(
        '--listen-address',
        `cannot listen on ${settings.options.host}:${settings.options.port} (${code})`,
      );
    }
    throw error;
  }
  process.stdout.write(startBanner(handle, settings));

  const shutdown = (signal: NodeJS.Signals): void => {
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
    process.stdout.write(`upstash-exporter emulator: ${signal} received, shutting down\n`);
    handle.close().then(
      () => process.stdout.write('upstash-exporter emulator: stopped\n'),
      (error: unknown) => {
        process.stderr.write(`upstash-exporter emulator: error while closing: ${errorMessage(error)}\n`);
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
