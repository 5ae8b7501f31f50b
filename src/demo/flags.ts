// The command line of `upstash-exporter demo`: its flags, their help text, and their parsing
// into DemoSettings (a bad value is a ConfigError naming the flag: exit 2).
import { parseArgs } from 'node:util';
import { ConfigError, LOG_FORMATS, LOG_LEVELS } from '../config/index.js';
import { DEFAULT_LISTEN_ADDRESS as EMULATOR_LISTEN_ADDRESS, parseListenAddress } from '../emulator/listen-address.js';
import type { LogFormatName, LogLevelName } from '../logging/index.js';
import { errorMessage } from '../common/errors.js';
import { DEMO_SCENARIOS, type DemoScenario } from './traffic.js';

export const DEMO_DEFAULTS = Object.freeze({
  listenAddress: '127.0.0.1:9824',
  emulatorAddress: EMULATOR_LISTEN_ADDRESS,
  /** Retries, delays and crons run 60 times faster: a `* * * * *` schedule fires every second. */
  timeScale: 60,
  seed: 1,
  scenario: 'mixed',
});

export interface DemoSettings {
  /** host:port of the exporter's HTTP server; port 0 picks a free one. */
  listenAddress: string;
  /** Where the emulator listens; port 0 picks a free one. */
  emulator: { host: string; port: number };
  timeScale: number;
  /** A path, `none`, or undefined for a temporary file removed when the demo stops. */
  stateFile: string | undefined;
  logLevel: LogLevelName;
  logFormat: LogFormatName;
  /** Seed of the emulator's and the destinations' random draws. */
  seed: number;
  /** What the traffic shows (DEMO_SCENARIOS). */
  scenario: DemoScenario;
}

const FLAGS = {
  'listen-address': { type: 'string', help: `exporter HTTP server host:port (default ${DEMO_DEFAULTS.listenAddress})` },
  'emulator-address': {
    type: 'string',
    help: `emulator host:port of its eu-central-1 region; us-east-1 listens on the next port (default ${DEMO_DEFAULTS.emulatorAddress})`,
  },
  'time-scale': {
    type: 'string',
    help: `emulator waits (retries, delays, crons) run this many times faster (default ${DEMO_DEFAULTS.timeScale})`,
  },
  'state-file': { type: 'string', help: 'exporter state file, or none (default: a temporary file removed at exit)' },
  'log-level': { type: 'string', help: 'fatal, error, warn, info, debug, trace, silent (env LOG_LEVEL; default info)' },
  'log-format': { type: 'string', help: 'pretty or json (env LOG_FORMAT; default pretty)' },
  scenario: {
    type: 'string',
    help: `traffic: mixed (failures, a paused queue, a slow destination: alerts fire) or healthy (only what succeeds: no alert fires) (default ${DEMO_DEFAULTS.scenario})`,
  },
  seed: {
    type: 'string',
    help: `seed of the random draws of emulator and destinations (default ${DEMO_DEFAULTS.seed})`,
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const;

export function demoHelpText(): string {
  const lines = [
    'Usage: upstash-exporter demo [flags]',
    '',
    'Emulator + generated traffic + exporter in one process. Flags:',
  ];
  for (const [name, spec] of Object.entries(FLAGS)) {
    const short = 'short' in spec ? `-${spec.short}, ` : '';
    lines.push(`  ${short}--${name}${spec.type === 'string' ? ' <value>' : ''}`, `      ${spec.help}`);
  }
  return `${lines.join('\n')}\n`;
}

function oneOf<T extends string>(key: string, flag: string, text: string, allowed: readonly T[]): T {
  const lower = text.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(lower)) {
    throw new ConfigError(key, `--${flag}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(text)}`);
  }
  return lower as T;
}

/** Turns the demo's flags into settings; throws ConfigError (exit 2) naming the flag. */
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoSettings & { help: boolean } {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const message = errorMessage(error).split('\n')[0]!;
    throw new ConfigError(
      'demo',
      `demo: ${message}; flags are ${Object.keys(FLAGS)
        .map((name) => `--${name}`)
        .join(', ')}`,
    );
  }
  const text = (name: keyof typeof FLAGS): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };

  const emulatorText = text('emulator-address') ?? DEMO_DEFAULTS.emulatorAddress;
  let emulator: { host: string; port: number };
  try {
    emulator = parseListenAddress(emulatorText);
  } catch {
    throw new ConfigError(
      'emulator_address',
      `--emulator-address: expected host:port, got ${JSON.stringify(emulatorText)}`,
    );
  }

  const scaleText = text('time-scale');
  const timeScale = scaleText === undefined ? DEMO_DEFAULTS.timeScale : Number(scaleText.trim());
  if (!Number.isFinite(timeScale) || timeScale <= 0 || timeScale > 1_000_000 || scaleText?.trim() === '') {
    throw new ConfigError(
      'time_scale',
      `--time-scale: expected a number above 0 and at most 1000000, got ${JSON.stringify(scaleText)}`,
    );
  }
  const seedText = text('seed');
  const seed = seedText === undefined ? DEMO_DEFAULTS.seed : Number(seedText.trim());
  if (!Number.isSafeInteger(seed) || seedText?.trim() === '') {
    throw new ConfigError('seed', `--seed: expected an integer, got ${JSON.stringify(seedText)}`);
  }
  const stateFile = text('state-file')?.trim();
  if (stateFile === '') throw new ConfigError('state_file', '--state-file is empty; give a path, or none');

  return {
    listenAddress: text('listen-address') ?? DEMO_DEFAULTS.listenAddress,
    emulator,
    timeScale,
    stateFile,
    logLevel: oneOf('log_level', 'log-level', text('log-level') ?? env.LOG_LEVEL ?? 'info', LOG_LEVELS),
    logFormat: oneOf('log_format', 'log-format', text('log-format') ?? env.LOG_FORMAT ?? 'pretty', LOG_FORMATS),
    seed,
    scenario: oneOf('scenario', 'scenario', text('scenario') ?? DEMO_DEFAULTS.scenario, DEMO_SCENARIOS),
    help: values.help === true,
  };
}
