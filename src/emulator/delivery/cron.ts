// Cron expressions of schedules: node-cron validates and matches them; the next occurrence after
// any instant (the emulator's virtual clock, which the time scale speeds up) is found here by
// walking days, then hours, minutes and seconds of the parsed fields. Five fields, evaluated in
// UTC unless prefixed with `CRON_TZ=<Area/City> `, like the service.
import { createTask, parse, validateDetailed, type ScheduledTask } from 'node-cron';

export class CronError extends Error {
  readonly code = 'ERR_EMULATOR_CRON';
}

const MAX_DAYS_AHEAD = 366 * 5;

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export class CronSchedule {
  private readonly formatter: Intl.DateTimeFormat | undefined;

  private constructor(
    readonly expression: string,
    readonly timezone: string,
    private readonly task: ScheduledTask,
    private readonly months: number[],
    private readonly hours: number[],
    private readonly minutes: number[],
    private readonly seconds: number[],
  ) {
    this.formatter =
      timezone === 'UTC'
        ? undefined
        : new Intl.DateTimeFormat('en-US', {
            timeZone: timezone,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric',
            second: 'numeric',
          });
  }

  /** Parses `[CRON_TZ=Zone ]<minute> <hour> <day of month> <month> <day of week>`; throws CronError. */
  static parse(text: string): CronSchedule {
    let rest = text.trim();
    let timezone = 'UTC';
    const tz = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(rest);
    if (tz) {
      timezone = tz[1]!;
      rest = tz[2]!.trim();
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: timezone });
      } catch {
        throw new CronError(`unknown time zone ${timezone}`);
      }
    }
    if (rest === '') throw new CronError('empty expression');
    const fieldCount = rest.split(/\s+/).length;
    if (fieldCount !== 5)
      throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${fieldCount}`);
    let detail: ReturnType<typeof validateDetailed>;
    try {
      detail = validateDetailed(rest);
    } catch (error) {
      throw new CronError(error instanceof Error ? error.message : 'invalid expression');
    }
    if (!detail.valid) {
      const first = detail.errors[0];
      throw new CronError(first ? `${first.field}: ${first.message}` : 'invalid expression');
    }
    const fields = parse(rest);
    const numbers = (values: Array<number | string>): number[] =>
      [...new Set(values.filter((value): value is number => typeof value === 'number'))].sort((a, b) => a - b);
    // A task that is created but never started: only its matcher is used.
    const task = createTask(rest, () => undefined, { timezone });
    return new CronSchedule(
      text.trim(),
      timezone,
      task,
      numbers(fields.month),
      numbers(fields.hour),
      numbers(fields.minute),
      numbers(fields.second),
    );
  }

  /** The first occurrence strictly after `afterMs` (epoch ms on the clock the schedule runs on). */
  nextAfter(afterMs: number): number | undefined {
    const start = Math.floor(afterMs / 1000) * 1000 + 1000;
    const wall = this.wallOf(start);
    const firstHour = this.hours[0];
    const firstMinute = this.minutes[0];
    const firstSecond = this.seconds[0];
    if (firstHour === undefined || firstMinute === undefined || firstSecond === undefined) return undefined;
    for (let offset = 0; offset <= MAX_DAYS_AHEAD; offset++) {
      const date = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + offset));
      const year = date.getUTCFullYear();
      const month = date.getUTCMonth() + 1;
      const day = date.getUTCDate();
      if (!this.months.includes(month)) continue;
      // Day-of-month and day-of-week (with L, W and # forms) are node-cron's to judge.
      if (
        !this.task.match(
          new Date(this.instantOf({ year, month, day, hour: firstHour, minute: firstMinute, second: firstSecond })),
        )
      )
        continue;
      for (const hour of this.hours) {
        if (offset === 0 && hour < wall.hour) continue;
        for (const minute of this.minutes) {
          if (offset === 0 && hour === wall.hour && minute < wall.minute) continue;
          for (const second of this.seconds) {
            const candidate = this.instantOf({ year, month, day, hour, minute, second });
            if (candidate >= start) return candidate;
          }
        }
      }
    }
    return undefined;
  }

  /** Releases node-cron's registration of the matcher task. */
  destroy(): void {
    void this.task.destroy();
  }

  private wallOf(ms: number): Wall {
    if (!this.formatter) {
      const date = new Date(ms);
      return {
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        hour: date.getUTCHours(),
        minute: date.getUTCMinutes(),
        second: date.getUTCSeconds(),
      };
    }
    const parts: Record<string, number> = {};
    for (const part of this.formatter.formatToParts(new Date(ms))) {
      if (part.type !== 'literal') parts[part.type] = Number(part.value);
    }
    return {
      year: parts.year!,
      month: parts.month!,
      day: parts.day!,
      hour: parts.hour! % 24,
      minute: parts.minute!,
      second: parts.second!,
    };
  }

  /** Epoch ms of a wall-clock time in the schedule's zone (DST gaps resolve to the later offset). */
  private instantOf(wall: Wall): number {
    const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
    if (!this.formatter) return asUtc;
    const offsetAt = (instant: number): number => {
      const w = this.wallOf(instant);
      return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - instant;
    };
    const first = asUtc - offsetAt(asUtc);
    const second = asUtc - offsetAt(first);
    return second;
  }
}
