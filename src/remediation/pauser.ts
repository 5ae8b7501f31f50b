// Pausing schedules by id, idempotently: one list call tells which schedules exist and which are
// already paused, then only the running ones are paused. Shared by the Alertmanager webhook and
// the `pause-schedule` command.
import type { DeliveryClient } from '../api/delivery.js';
import { ApiError, ApiNotFoundError } from '../api/errors.js';
import { errorMessage } from '../common/errors.js';

export const PAUSE_RESULTS = ['paused', 'already_paused', 'dry_run', 'not_found', 'error'] as const;
export type PauseResult = (typeof PAUSE_RESULTS)[number];

export interface PauseOutcome {
  scheduleId: string;
  result: PauseResult;
  /** `CODE: message` of a failed call (no secrets: API errors never carry them). */
  error?: string;
}

export interface PauseOptions {
  /** Decide and report, but do not pause. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

function describe(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return errorMessage(error);
}

/** One outcome per distinct id, in the order given. Never rejects. */
export async function pauseSchedules(
  delivery: Pick<DeliveryClient, 'listSchedules' | 'pauseSchedule'>,
  scheduleIds: readonly string[],
  options: PauseOptions = {},
): Promise<PauseOutcome[]> {
  const ids = [...new Set(scheduleIds)];
  const call = options.signal ? { signal: options.signal } : {};
  let paused: Map<string, boolean>;
  try {
    paused = new Map((await delivery.listSchedules(call)).map((schedule) => [schedule.scheduleId, schedule.isPaused]));
  } catch (error) {
    const text = describe(error);
    return ids.map((scheduleId) => ({ scheduleId, result: 'error', error: text }));
  }
  const outcomes: PauseOutcome[] = [];
  for (const scheduleId of ids) {
    const isPaused = paused.get(scheduleId);
    if (isPaused === undefined) outcomes.push({ scheduleId, result: 'not_found' });
    else if (isPaused) outcomes.push({ scheduleId, result: 'already_paused' });
    else if (options.dryRun === true) outcomes.push({ scheduleId, result: 'dry_run' });
    else {
      try {
        await delivery.pauseSchedule(scheduleId, call);
        outcomes.push({ scheduleId, result: 'paused' });
      } catch (error) {
        // Deleted between the list and the pause.
        if (error instanceof ApiNotFoundError) outcomes.push({ scheduleId, result: 'not_found' });
        else outcomes.push({ scheduleId, result: 'error', error: describe(error) });
      }
    }
  }
  return outcomes;
}
