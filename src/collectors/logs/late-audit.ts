// Entries that become visible later than ingestion delay + overlap are behind the walk: no
// later slice reads their time again, and when they are older than the newest visible entry the
// anchor cannot betray them either. The audit finds them. A ledger keeps how many entries were
// counted per second for a window behind the watermark; once the service has shown late entries
// (the overlap had to grow), the part of that window the overlap no longer re-reads is read
// again and compared second by second. More entries on the service than counted is a loss the
// walk cannot repair (it cannot tell which entries of that second it has), so it is reported,
// not counted: upstash_exporter_log_missed_late_events_total and a warning.
import type { Logger } from '../../logging/index.js';
import type { LogsSource } from './walk-types.js';

/** How far behind the watermark the ledger reaches (and an audit reads at most). */
export const AUDIT_WINDOW_MS = 5 * 60_000;
/** Audits run at most this often, and only while the service shows late entries. */
export const AUDIT_INTERVAL_MS = 5_000;
/** Pages one audit may read; what it does not reach is compared at the next one. */
const AUDIT_PAGE_BUDGET = 20;

export interface AuditRange {
  /** Inclusive unix ms. */
  from: number;
  /** Inclusive unix ms. */
  to: number;
}

export class LateAudit {
  /** Second (unix seconds) -> entries counted with a time in it. */
  readonly #ledger = new Map<number, number>();
  /** The ledger knows every counted entry after this time (entries before it were counted by an earlier process). */
  #validFrom: number;
  #lastAuditAt = 0;
  /** Entries found on the service and never counted, all time. */
  missed = 0;

  readonly #intervalMs: number;

  constructor(validFrom: number, intervalMs = AUDIT_INTERVAL_MS) {
    this.#validFrom = validFrom;
    this.#intervalMs = intervalMs;
  }

  /** One counted entry (hot path). */
  record(time: number): void {
    const second = Math.floor(time / 1000);
    this.#ledger.set(second, (this.#ledger.get(second) ?? 0) + 1);
  }

  /** Whether an audit is due: late entries were seen (`overlapGrown`) and the last audit is old enough. */
  due(now: number, overlapGrown: boolean): boolean {
    return overlapGrown && now - this.#lastAuditAt >= this.#intervalMs;
  }

  /**
   * From where the ledger is valid (within the window) up to the last whole second before the
   * part the next slice re-reads (`rereadFrom`); null when that is empty. The first second may
   * be partial: its ledger count can then only be higher than the service's (late entries at or
   * before the start), which hides a miss there but never invents one.
   */
  range(watermark: number, rereadFrom: number): AuditRange | null {
    const from = Math.max(this.#validFrom + 1, watermark - AUDIT_WINDOW_MS);
    const to = Math.floor(rereadFrom / 1000) * 1000 - 1;
    return to < from ? null : { from, to };
  }

  /** Reads the range newest first and compares it with the ledger; returns the entries found missing. */
  async run(source: LogsSource, range: AuditRange, pageSize: number, now: number, logger: Logger, signal?: AbortSignal): Promise<number> {
    this.#lastAuditAt = now;
    const onService = new Map<number, number>();
    let cursor: string | undefined;
    let lowestSecond = Number.POSITIVE_INFINITY;
    let complete = false;
    for (let pages = 0; pages < AUDIT_PAGE_BUDGET; pages++) {
      const page = await source.logsPage({ fromDate: range.from, toDate: range.to, count: pageSize, ...(cursor === undefined ? {} : { cursor }) }, signal ? { signal } : {});
      for (const entry of page.logs) {
        const second = Math.floor(entry.time / 1000);
        onService.set(second, (onService.get(second) ?? 0) + 1);
        lowestSecond = Math.min(lowestSecond, second);
      }
      if (page.cursor === undefined) {
        complete = true;
        break;
      }
      cursor = page.cursor;
    }
    // Only seconds the audit read whole: all of them, or those above the lowest second reached.
    let missed = 0;
    for (const [second, count] of onService) {
      if (!complete && second <= lowestSecond) continue;
      const known = this.#ledger.get(second) ?? 0;
      if (count > known) {
        missed += count - known;
        // Reported once: the next audit compares against what the service has now.
        this.#ledger.set(second, count);
      }
    }
    if (missed > 0) {
      this.missed += missed;
      logger.warn(
        { missedEntries: missed, from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
        'log entries became visible later than the ingestion delay and the overlap, after the walk had passed them, and were not counted; raise logs.ingestion_delay (or logs.overlap)',
      );
    }
    return missed;
  }

  /** Forgets ledger seconds that left the window. */
  prune(watermark: number): void {
    const oldest = Math.floor((watermark - AUDIT_WINDOW_MS) / 1000);
    for (const second of this.#ledger.keys()) if (second < oldest) this.#ledger.delete(second);
  }
}
