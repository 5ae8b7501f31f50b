// Pausing schedules by id, idempotently: one list call tells which schedules exist and which are
// already paused, then only the running ones are paused. Shared by the Alertmanager webhook and
// the `pause-schedule` command; the webhook adds a check of each schedule as it is now (its
// alert's evidence) before pausing.
import type { DeliveryClient, Schedule } from '../api/delivery.js';
import { ApiError, ApiNotFoundError } from '../api/errors.js';
import { errorMessage } from '../common/errors.js';

/** Why a schedule found running is left alone (the webhook's evidence check). */
export const LEFT_ALONE_RESULTS = ['not_failing', 'resumed_by_person'] as const;
export type LeftAloneResult = (typeof LEFT_ALONE_RESULTS)[number];

export const PAUSE_RESULTS = [
  'paused',
  'already_paused',
  'dry_run',
  'not_found',
  'error',
  ...LEFT_ALONE_RESULTS,
] as const;
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
  /** Asked of each running schedule, as the list call returned it, before pausing: a reason to leave it alone, or undefined. */
  leaveAlone?: (schedule: Schedule) => LeftAloneResult | undefined;
}

/**
 * Whether the schedule's last run, as the list call says now, shows it recovered: it has ended
 * and every message of it succeeded. A run still in progress (a frequent schedule has just
 * fired again) or without messages says nothing against the alert's evidence.
 */
export function lastRunSucceeded(schedule: Schedule): boolean {
  const states = Object.values(schedule.lastScheduleStates ?? {});
  return states.length > 0 && states.every((state) => state === 'SUCCESS');
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
  let schedules: Map<string, Schedule>;
  try {
    schedules = new Map((await delivery.listSchedules(call)).map((schedule) => [schedule.scheduleId, schedule]));
  } catch (error) {
    const text = describe(error);
    return ids.map((scheduleId) => ({ scheduleId, result: 'error', error: text }));
  }
  const outcomes: PauseOutcome[] = [];
  for (const scheduleId of ids) {
    const schedule = schedules.get(scheduleId);
    const leftAlone = schedule === undefined || schedule.isPaused ? undefined : options.leaveAlone?.(schedule);
    if (schedule === undefined) outcomes.push({ scheduleId, result: 'not_found' });
    else if (schedule.isPaused) outcomes.push({ scheduleId, result: 'already_paused' });
    else if (leftAlone !== undefined) outcomes.push({ scheduleId, result: leftAlone });
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
