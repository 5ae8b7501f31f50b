// upstash_qstash_daily_messages: CREATED entries whose event time falls on the current UTC day,
// to set against the plan's daily request limit. A CREATED entry of an earlier day (walks go
// newest first, so yesterday's entries may follow today's) does not touch today's count; the
// value reads 0 once the wall clock passes midnight, before any entry of the new day arrives.

const DAY_MS = 86_400_000;

export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export class DailyMessages {
  day = 0;
  count = 0;

  observeCreated(time: number): void {
    const day = utcDay(time);
    if (day === this.day) {
      this.count += 1;
    } else if (day > this.day) {
      this.day = day;
      this.count = 1;
    }
  }

  /** The gauge value at wall time `now`. */
  valueAt(now: number): number {
    return utcDay(now) === this.day ? this.count : 0;
  }

  restore(state: { day: number; count: number }): void {
    this.day = state.day;
    this.count = state.count;
  }
}
