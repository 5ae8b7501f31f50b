// `upstash-exporter pause-schedule <id> [flags]`: pause one schedule with the exporter's own
// configuration (flags, environment, --config). One line out; exit 0 when the schedule is
// paused (also when it already was), 1 when it does not exist or the call fails, 2 (ConfigError)
// on invalid configuration or usage.
import { createDeliveryClient } from '../api/index.js';
import { configSecrets, ConfigError, loadConfig } from '../config/index.js';
import { createScrubber } from '../logging/index.js';
import { pauseSchedules } from './pauser.js';

export interface CommandResult {
  status: number;
  /** The one line to print (without newline). */
  line: string;
  stream: 'stdout' | 'stderr';
}

const USAGE = 'usage: upstash-exporter pause-schedule <schedule-id> [--region <region>] [flags]';

/** `--region <name>` (the command's own flag, needed when several regions are watched) and the rest. */
function takeRegionFlag(argv: readonly string[]): { region: string | null; rest: string[] } {
  const rest: string[] = [];
  let region: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--region' || arg.startsWith('--region=')) {
      const value = arg === '--region' ? argv[++i] : arg.slice('--region='.length);
      if (value === undefined || value === '') throw new ConfigError('argv', `--region needs a region name; ${USAGE}`);
      region = value;
    } else rest.push(arg);
  }
  return { region, rest };
}

export async function pauseScheduleCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  const [scheduleId, ...flags] = argv;
  if (scheduleId === undefined || scheduleId.startsWith('-') || scheduleId.trim() === '') {
    throw new ConfigError('argv', `pause-schedule needs the id of the schedule to pause; ${USAGE}`);
  }
  const { region: asked, rest } = takeRegionFlag(flags);
  const config = loadConfig(rest, env);
  const { regions } = config.qstash;
  if (regions.length === 0) {
    throw new ConfigError(
      'qstash_token',
      'pause-schedule needs the QStash token: set QSTASH_TOKEN (or QSTASH_TOKEN_FILE, --qstash-token)',
    );
  }
  const names = regions.map((region) => region.name).join(', ');
  const region =
    asked === null ? (regions.length === 1 ? regions[0] : undefined) : regions.find((r) => r.name === asked);
  if (region === undefined) {
    throw new ConfigError(
      'argv',
      asked === null
        ? `pause-schedule: several regions are watched (${names}); name the schedule's with --region`
        : `pause-schedule: --region ${asked} is not a watched region (${names})`,
    );
  }
  const delivery = createDeliveryClient(config, region);
  try {
    const [outcome] = await pauseSchedules(delivery, [scheduleId]);
    switch (outcome?.result) {
      case 'paused':
        return { status: 0, stream: 'stdout', line: `paused schedule ${scheduleId}` };
      case 'already_paused':
        return { status: 0, stream: 'stdout', line: `schedule ${scheduleId} was already paused` };
      case 'not_found':
        return { status: 1, stream: 'stderr', line: `schedule ${scheduleId} not found` };
      default:
        // API errors carry no secrets; the scrub is the same second line of defence the logs have.
        return {
          status: 1,
          stream: 'stderr',
          line: createScrubber(configSecrets(config))(
            `cannot pause schedule ${scheduleId}: ${outcome?.error ?? 'unknown error'}`,
          ),
        };
    }
  } finally {
    await delivery.close();
  }
}
