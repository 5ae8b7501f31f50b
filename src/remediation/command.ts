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

const USAGE = 'usage: upstash-exporter pause-schedule <schedule-id> [flags]';

export async function pauseScheduleCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  const [scheduleId, ...flags] = argv;
  if (scheduleId === undefined || scheduleId.startsWith('-') || scheduleId.trim() === '') {
    throw new ConfigError('argv', `pause-schedule needs the id of the schedule to pause; ${USAGE}`);
  }
  const config = loadConfig(flags, env);
  const delivery = createDeliveryClient(config);
  if (delivery === null) {
    throw new ConfigError(
      'qstash_token',
      'pause-schedule needs the QStash token: set QSTASH_TOKEN (or QSTASH_TOKEN_FILE, --qstash-token)',
    );
  }
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
