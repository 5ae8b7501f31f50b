// What node-cron logs through, for the runner's tasks: its own warnings (overlap, missed) are
// counted and logged by the runner already, so they go to debug; its errors are sanitized.
import type { Logger as CronLogger } from 'node-cron';
import type { Logger } from '../logging/index.js';
import { describeError } from './collector-status.js';

/** node-cron's own warnings (overlap, missed) are counted and logged by the runner already. */
export function cronLogger(logger: Logger, secrets: readonly string[]): CronLogger {
  return {
    info: (message) => logger.debug({ source: 'node-cron' }, message),
    warn: (message) => logger.debug({ source: 'node-cron' }, message),
    debug: (message) => logger.debug({ source: 'node-cron' }, describeError(message, secrets)),
    error: (message, error) => logger.error({ source: 'node-cron' }, describeError(error ?? message, secrets)),
  };
}
