#!/usr/bin/env -S node --max-semi-space-size=2
// The upstash-exporter binary: command dispatch. The emulator and the demo are reached only
// through dynamic import(), so the exporter's own commands never load them.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configSecrets, isConfigError, loadConfig, renderConfigYaml, SETTINGS } from './config/index.js';
import type { ExporterHandle } from './exporter.js';
import { createLogger } from './logging/index.js';
import { closestMatch } from './config/suggest.js';
import { VERSION } from './version.js';

const COMMANDS = ['run', 'check-config', 'emulator', 'demo', 'pause-schedule', 'slo'] as const;
type Command = (typeof COMMANDS)[number];

/** Exit status of invalid configuration or usage, the contract of every command. */
export const EXIT_CONFIG = 2;
/** How long `run` waits for the exporter to close after a signal before giving up. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

/** A process exit status, or null when the command keeps running (servers) until a signal. */
type Outcome = number | null;

export function helpText(): string {
  const lines = [
    `upstash-exporter ${VERSION}: Prometheus exporter for Upstash QStash and the Upstash management API`,
    '',
    'Usage:',
    '  upstash-exporter [run] [flags]          run the exporter (default command)',
    '  upstash-exporter check-config [flags]   print the effective configuration (secrets masked); exit 0 valid, 2 invalid',
    '  upstash-exporter emulator [flags]       run the emulator of the service alone',
    '  upstash-exporter demo [--listen-address host:port] [--emulator-address host:port]',
    '                                          emulator + generated traffic + exporter in one process',
    '                                          (the ports to change when taken; demo --help shows their defaults and the rest)',
    '  upstash-exporter pause-schedule <id> [flags]   pause one QStash schedule (needs QSTASH_TOKEN); exit 0 paused, 1 not found or failed',
    '  upstash-exporter slo --spec FILE [--out FILE] [--period 30d]   Prometheus rules of an SLO spec (Sloth prometheus/v1, docs/slos.md)',
    '  upstash-exporter --help | --version',
    '',
    'Flags, with their environment variable and default. Precedence: flags > environment > the YAML',
    'file of --config (keys in snake_case, see docs/configuration.md). Invalid configuration exits 2.',
    '',
  ];
  for (const spec of SETTINGS) {
    const flag = spec.switch === true ? `--[no-]${spec.flag}` : `--${spec.flag} ${spec.valueHint}`;
    lines.push(`  ${flag}`);
    lines.push(`      ${spec.help}`);
    const env = spec.secretFile === true ? `${spec.env}, ${spec.env}_FILE (or --${spec.flag}-file <path>)` : spec.env;
    lines.push(
      `      env ${env}; default ${spec.defaultText}${spec.repeatable === true ? '; repeatable, or a comma list' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Errors that refuse a start for a reason the user can fix, printed as their one-line message
 * with exit status 2: configuration (ERR_CONFIG, also the emulator's, which may not import
 * config) and a state file that cannot be used (ERR_STATE_FILE, found while restoring it).
 */
function isUsageRefusal(error: unknown): error is Error {
  if (isConfigError(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === 'ERR_CONFIG' || code === 'ERR_STATE_FILE');
}

function writeLine(stream: NodeJS.WriteStream, text: string): void {
  stream.write(`${text}\n`);
}

async function runExporter(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const config = loadConfig(argv, env);
  const logger = createLogger({ level: config.log.level, format: config.log.format, secrets: configSecrets(config) });
  // Signal handlers go in before anything starts: a signal that arrives without a listener
  // kills the process on the spot, skipping the exporter's close (and its last checkpoint).
  // They run on a later tick, when `started` below is set.
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn({ signal }, 'second signal while closing: exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'the exporter did not close in time: exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    started
      .then((exporter) => exporter.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'closing the exporter failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  logger.info({ version: VERSION, configFile: config.configFile }, 'starting upstash-exporter');
  // Loaded here so check-config, --help and --version start without the server and clients.
  const started: Promise<ExporterHandle> = import('./exporter.js').then(({ startExporter }) =>
    startExporter(config, logger),
  );
  try {
    await started;
  } catch (error) {
    if (isUsageRefusal(error)) throw error;
    logger.fatal({ err: error }, 'the exporter failed to start');
    return 1;
  }
  return null;
}

function checkConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Outcome {
  process.stdout.write(renderConfigYaml(loadConfig(argv, env)));
  return 0;
}

async function runEmulator(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const emulator = await import('./emulator/main.js');
  await emulator.runEmulatorCli(argv, env);
  return null;
}

async function pauseSchedule(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const { pauseScheduleCommand } = await import('./remediation/command.js');
  const result = await pauseScheduleCommand(argv, env);
  writeLine(result.stream === 'stdout' ? process.stdout : process.stderr, result.line.replace(/[\r\n]+/g, ' '));
  return result.status;
}

async function generateSloRules(argv: readonly string[]): Promise<Outcome> {
  const { sloCommand } = await import('./slo/command.js');
  return sloCommand(argv, process.stdout);
}

async function runDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const m = await import('./demo.js');
  await m.runDemo(argv, env);
  return null;
}

function parseCommand(
  argv: readonly string[],
): { command: Command | 'help' | 'version'; rest: string[] } | { unknown: string } {
  const [first, ...rest] = argv;
  if (
    first === undefined ||
    (first.startsWith('-') && first !== '-h' && first !== '--help' && first !== '--version' && first !== '-v')
  ) {
    return { command: 'run', rest: [...argv] };
  }
  if (first === '--help' || first === '-h' || first === 'help') return { command: 'help', rest };
  if (first === '--version' || first === '-v' || first === 'version') return { command: 'version', rest };
  if ((COMMANDS as readonly string[]).includes(first)) return { command: first as Command, rest };
  return { unknown: first };
}

/** Runs one command line; resolves to the exit status, or null while a server keeps running. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const parsed = parseCommand(argv);
  if ('unknown' in parsed) {
    const guess = closestMatch(parsed.unknown, COMMANDS);
    const hint = guess === undefined ? '' : `did you mean ${guess}? `;
    writeLine(
      process.stderr,
      `unknown command ${JSON.stringify(parsed.unknown)}: ${hint}commands are ${COMMANDS.join(', ')}; see upstash-exporter --help`,
    );
    return EXIT_CONFIG;
  }
  const { command, rest } = parsed;
  // The emulator and the demo have flags of their own and print their own help.
  const hasOwnHelp = command === 'emulator' || command === 'demo';
  const wantsHelp = !hasOwnHelp && rest.some((arg) => arg === '--help' || arg === '-h');
  try {
    if (command === 'help' || wantsHelp) {
      process.stdout.write(helpText());
      return 0;
    }
    switch (command) {
      case 'version':
        writeLine(process.stdout, VERSION);
        return 0;
      case 'run':
        return await runExporter(rest, env);
      case 'check-config':
        return checkConfig(rest, env);
      case 'emulator':
        return await runEmulator(rest, env);
      case 'demo':
        return await runDemo(rest, env);
      case 'pause-schedule':
        return await pauseSchedule(rest, env);
      case 'slo':
        return await generateSloRules(rest);
    }
  } catch (error) {
    // The one-line message, no stack trace, status 2.
    if (isUsageRefusal(error)) {
      writeLine(process.stderr, error.message.replace(/\s*[\r\n]+\s*/g, ' '));
      return EXIT_CONFIG;
    }
    throw error;
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2), process.env).then(
    (status) => {
      if (status !== null) process.exitCode = status;
    },
    (error: unknown) => {
      writeLine(
        process.stderr,
        `upstash-exporter: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      process.exitCode = 1;
    },
  );
}
