// What the delivery service has billed, per UTC day and per minute: the source of the management
// API's official usage (GET /v2/qstash/stats). Fed by the log as entries are written, so it
// counts the emulator's real traffic: every accepted message (CREATED, fan-out and schedules
// included) and every retry (the service bills retries as messages) and the bytes of their bodies.
// The DLQ count of the stats is the dead-letter queue's own size (src/emulator/dlq.ts).

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Minute buckets kept: long enough for the stats periods up to 3d (older minutes read 0). */
const MINUTE_BUCKETS_KEPT_MS = 3 * DAY_MS;
/** Day buckets kept: the current and the previous month. */
const DAY_BUCKETS_KEPT_MS = 62 * DAY_MS;

interface Bucket {
  requests: number;
  bytes: number;
}

/** The read side the management interface uses (src/emulator/management/qstash-stats.ts). */
export interface UsageReader {
  /** Requests and body bytes in [fromMs, toMs), by whole minutes (or whole days past the minute window). */
  between(fromMs: number, toMs: number): Bucket;
  /** Requests and body bytes of the UTC day that contains `ms`. */
  day(ms: number): Bucket;
  /** Messages in the dead-letter queue now. */
  dlqMessages(): number;
}

export class UsageLedger implements Omit<UsageReader, 'dlqMessages'> {
  private minutes = new Map<number, Bucket>();
  private days = new Map<number, Bucket>();

  /** One log entry: billed when it is a new message or a retry. */
  record(state: string, timeMs: number, body: string): void {
    if (state !== 'CREATED' && state !== 'RETRY') return;
    const bytes = body.startsWith('REDACTED:') ? 0 : Buffer.byteLength(body, 'base64');
    add(this.minutes, Math.floor(timeMs / MINUTE_MS) * MINUTE_MS, bytes);
    add(this.days, Math.floor(timeMs / DAY_MS) * DAY_MS, bytes);
    this.prune(timeMs);
  }

  between(fromMs: number, toMs: number): Bucket {
    const total: Bucket = { requests: 0, bytes: 0 };
    for (const [start, bucket] of this.minutes) {
      if (start >= fromMs && start < toMs) {
        total.requests += bucket.requests;
        total.bytes += bucket.bytes;
      }
    }
    return total;
  }

  day(ms: number): Bucket {
    const bucket = this.days.get(Math.floor(ms / DAY_MS) * DAY_MS);
    return bucket ? { ...bucket } : { requests: 0, bytes: 0 };
  }

  reset(): void {
    this.minutes.clear();
    this.days.clear();
  }

  private prune(nowMs: number): void {
    // Maps iterate in insertion order, which is time order here: drop from the front.
    for (const start of this.minutes.keys()) {
      if (start >= nowMs - MINUTE_BUCKETS_KEPT_MS) break;
      this.minutes.delete(start);
    }
    for (const start of this.days.keys()) {
      if (start >= nowMs - DAY_BUCKETS_KEPT_MS) break;
      this.days.delete(start);
    }
  }
}

function add(buckets: Map<number, Bucket>, start: number, bytes: number): void {
  const bucket = buckets.get(start);
  if (bucket) {
    bucket.requests++;
    bucket.bytes += bytes;
  } else {
    buckets.set(start, { requests: 1, bytes });
  }
}
