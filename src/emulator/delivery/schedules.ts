// Schedules: a message (to a URL or a URL Group) sent on a cron. Each schedule keeps one timer
// on the shared timer queue at its next occurrence on the virtual clock, so the time scale makes
// crons run faster; `nextScheduleTime` and `lastScheduleTime` are the real instants it fires at
// and fired at. Pausing keeps the next time; an occurrence that comes while paused is skipped.
import type { ScaledClock, TimerHandle, TimerQueue } from '../clock.js';
import type { CronSchedule } from './cron.js';
import type { Destination } from './destination.js';
import { EmulatorNotFoundError } from '../errors.js';
import type { MessageSpec } from './message-options.js';
import { recordedHeaders, redactedValue } from './redaction.js';
import { errorMessage } from '../../common/errors.js';

export type ScheduleMessageState = 'IN_PROGRESS' | 'SUCCESS' | 'FAIL';

export interface Schedule {
  scheduleId: string;
  cron: CronSchedule;
  destination: Destination;
  /** The destination as the client wrote it. */
  destinationText: string;
  spec: MessageSpec;
  body: Buffer;
  queueName?: string;
  callerIP: string;
  createdAt: number;
  isPaused: boolean;
  lastScheduleTime?: number;
  lastScheduleStates: Record<string, ScheduleMessageState>;
  /** Error of the last trigger, when it could not publish (e.g. its URL Group was deleted). */
  lastError?: string;
  /** Virtual time of the next occurrence; undefined when the cron never fires again. */
  nextVirtual?: number;
  timer?: TimerHandle;
}

export type ScheduleFire = (schedule: Schedule) => string[];

export class ScheduleStore {
  private readonly schedules = new Map<string, Schedule>();

  constructor(
    private readonly clock: ScaledClock,
    private readonly timers: TimerQueue,
    private readonly fire: ScheduleFire,
  ) {}

  /** Creates or replaces a schedule; a replaced one keeps its creation time and pause state. */
  upsert(schedule: Schedule): Schedule {
    const existing = this.schedules.get(schedule.scheduleId);
    if (existing) {
      schedule.createdAt = existing.createdAt;
      schedule.isPaused = existing.isPaused;
      schedule.lastScheduleTime = existing.lastScheduleTime;
      schedule.lastScheduleStates = existing.lastScheduleStates;
      this.stop(existing);
    }
    this.schedules.set(schedule.scheduleId, schedule);
    this.arm(schedule, this.clock.virtualNow());
    return schedule;
  }

  get(id: string): Schedule | undefined {
    return this.schedules.get(id);
  }

  require(id: string): Schedule {
    const schedule = this.schedules.get(id);
    if (!schedule) throw new EmulatorNotFoundError(`schedule ${id} not found`);
    return schedule;
  }

  list(): Schedule[] {
    return [...this.schedules.values()];
  }

  /** Pausing or resuming twice is a no-op that still succeeds. */
  setPaused(id: string, paused: boolean): void {
    this.require(id).isPaused = paused;
  }

  delete(id: string): void {
    const schedule = this.require(id);
    this.stop(schedule);
    this.schedules.delete(id);
  }

  /** Records the final state of a message a schedule sent (for lastScheduleStates). */
  settle(scheduleId: string, messageId: string, state: ScheduleMessageState): void {
    const schedule = this.schedules.get(scheduleId);
    if (schedule && messageId in schedule.lastScheduleStates) schedule.lastScheduleStates[messageId] = state;
  }

  /** Timers are on the shared queue, which re-arms itself on a time-scale change. */
  clear(): void {
    for (const schedule of this.schedules.values()) this.stop(schedule);
    this.schedules.clear();
  }

  private stop(schedule: Schedule): void {
    schedule.timer?.cancel();
    schedule.timer = undefined;
    schedule.cron.destroy();
  }

  private arm(schedule: Schedule, afterVirtual: number): void {
    const next = schedule.cron.nextAfter(afterVirtual);
    schedule.nextVirtual = next;
    if (next === undefined) return;
    schedule.timer = this.timers.at(next, () => this.occur(schedule, next));
  }

  private occur(schedule: Schedule, at: number): void {
    if (this.schedules.get(schedule.scheduleId) !== schedule) return;
    if (!schedule.isPaused) {
      schedule.lastScheduleTime = this.clock.now();
      try {
        const ids = this.fire(schedule);
        schedule.lastScheduleStates = Object.fromEntries(ids.map((id) => [id, 'IN_PROGRESS' as const]));
        schedule.lastError = undefined;
      } catch (error) {
        schedule.lastScheduleStates = {};
        schedule.lastError = errorMessage(error);
      }
    }
    this.arm(schedule, at);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A schedule as GET /v2/schedules serves it. */
export function scheduleJson(schedule: Schedule, clock: ScaledClock): Record<string, unknown> {
  const spec = schedule.spec;
  const json: Record<string, unknown> = {
    scheduleId: schedule.scheduleId,
    cron: schedule.cron.expression,
    destination: schedule.destinationText,
    createdAt: schedule.createdAt,
    method: spec.method,
    isPaused: schedule.isPaused,
    header: recordedHeaders(spec.headers, spec.redact),
    retries: spec.retries,
  };
  if (spec.redact.body) {
    json.body = redactedValue(schedule.body);
  } else if (schedule.body.length > 0) {
    try {
      json.body = utf8.decode(schedule.body);
    } catch {
      json.bodyBase64 = schedule.body.toString('base64');
    }
  }
  if (spec.delayMs > 0) json.delay = Math.round(spec.delayMs / 1000);
  if (spec.timeoutMs !== undefined) json.timeout = Math.round(spec.timeoutMs / 1000);
  if (spec.callback) json.callback = spec.callback.url;
  if (spec.failureCallback) json.failureCallback = spec.failureCallback.url;
  json.callerIP = schedule.callerIP;
  json.callerIp = schedule.callerIP;
  if (schedule.queueName !== undefined) json.queueName = schedule.queueName;
  if (spec.flowControl) {
    json.flowControlKey = spec.flowControl.key;
    if (spec.flowControl.parallelism !== undefined) json.parallelism = spec.flowControl.parallelism;
    if (spec.flowControl.rate !== undefined) json.rate = spec.flowControl.rate;
    if (spec.flowControl.period !== undefined) json.period = spec.flowControl.period;
  }
  if (spec.retryDelay) json.retryDelayExpression = spec.retryDelay.source;
  if (spec.labels.length > 0) {
    json.label = spec.labels[0];
    json.labels = spec.labels;
  }
  if (schedule.lastScheduleTime !== undefined) json.lastScheduleTime = schedule.lastScheduleTime;
  if (schedule.nextVirtual !== undefined) json.nextScheduleTime = Math.round(clock.realAt(schedule.nextVirtual));
  json.lastScheduleStates = { ...schedule.lastScheduleStates };
  if (schedule.lastError !== undefined) json.error = schedule.lastError;
  return json;
}
