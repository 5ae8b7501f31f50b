// `upstash-exporter slo --spec FILE [--out FILE] [--period 30d]`: the Prometheus rules of an SLO
// spec, on stdout or written to --out. Invalid usage or spec: ConfigError (one line, exit 2).
import { writeFileSync } from 'node:fs';
import { ConfigError } from '../config/errors.js';
import { DurationError, parseDuration } from '../common/duration.js';
import { DEFAULT_PERIOD, renderRulesFile } from './rules.js';
import { loadSloSpec } from './spec.js';

const USAGE = 'usage: upstash-exporter slo --spec FILE [--out FILE] [--period 30d]';
const FLAGS = ['spec', 'out', 'period'] as const;
type Flag = (typeof FLAGS)[number];

function parseFlags(argv: readonly string[]): Partial<Record<Flag, string>> {
  const flags: Partial<Record<Flag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    const name = match?.[1] as Flag | undefined;
    if (name === undefined || !FLAGS.includes(name))
      throw new ConfigError('argv', `slo: unknown argument ${JSON.stringify(arg)}; ${USAGE}`);
    const value = match?.[2] ?? argv[++i];
    if (value === undefined || value === '') throw new ConfigError(name, `slo: --${name} needs a value; ${USAGE}`);
    flags[name] = value;
  }
  return flags;
}

/** Runs the command; returns the exit status. */
export function sloCommand(argv: readonly string[], stdout: NodeJS.WritableStream): number {
  const flags = parseFlags(argv);
  if (flags.spec === undefined) throw new ConfigError('spec', `slo: --spec is required; ${USAGE}`);
  const period = flags.period ?? DEFAULT_PERIOD;
  try {
    if (parseDuration(period) < 86_400_000)
      throw new ConfigError(
        'period',
        `slo: --period ${JSON.stringify(period)}: at least 1d (the alerts read windows up to 3d)`,
      );
  } catch (error) {
    if (error instanceof DurationError) throw new ConfigError('period', `slo: --period: ${error.message}`);
    throw error;
  }
  const text = renderRulesFile(loadSloSpec(flags.spec), { period, source: flags.spec });
  if (flags.out === undefined) stdout.write(text);
  else writeFileSync(flags.out, text);
  return 0;
}
