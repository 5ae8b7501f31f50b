// Entries that become visible later than ingestion delay + overlap (or while the rate limit
// bounds the walk and the overlap is not re-read) are behind the walk: no later slice reads their
// time again, and when they are older than the newest visible entry the anchor cannot betray them
// either. The audit finds them. While the service shows late entries (the overlap had to grow, or
// was not re-read lately), it reads again what lies behind the de-duplication window, newest
// first, one page budget at a time (a sweep that goes on where the last audit stopped), and hands
// every entry within the lateness horizon to the counter: the window's cold store
// (cold-identities.ts) tells a counted entry from a new one, so what the walk missed is counted
// now, exactly once, as a late entry. Behind the horizon only per-second counts are known: more
// entries on the service than counted there are reported, exactly, not counted
// (upstash_exporter_log_missed_late_events_total and a warning).
import type { LogEntry } from '../../api/delivery.js';
import type { Logger } from '../../logging/index.js';
import type { ColdIdentities } from '../walk/cold-identities.js';
import { BEYOND_HORIZON_MS } from '../walk/cold-identities.js';
import { pageSignature } from '../walk/slice.js';
import type { LogsSource } from '../walk/walk-types.js';

/** Audits run at most this often, and only while the service shows late entries. */
export const AUDIT_INTERVAL_MS = 5_000;
/** Pages one audit may read; the next audit goes on below the last page read. */
const AUDIT_PAGE_BUDGET = 20;

export interface AuditRange {
  /** Inclusive unix ms. */
  from: number;
  /** Inclusive unix ms. */
  to: number;
}

/** Counts the entries of one page read by the audit (a walk of its own); returns how many were new. */
export type CountAudited = (entries: readonly LogEntry[]) => number;

export class LateAudit {
  readonly #cold: ColdIdentities;
  readonly #intervalMs: number;
  #lastAuditAt = 0;
  /** toDate of the next audit: the sweep goes on below the last page read (null: from the top). */
  #sweepTo: number | null = null;
  /** Entries found on the service behind the horizon and never counted, all time. */
  missed = 0;

  constructor(cold: ColdIdentities, intervalMs = AUDIT_INTERVAL_MS) {
    this.#cold = cold;
    this.#intervalMs = intervalMs;
  }

  get horizonMs(): number {
    return this.#cold.horizonMs;
  }

  /** Whether an audit is due: the service shows late entries (`lateShowing`) and the last audit is old enough. */
  due(now: number, lateShowing: boolean): boolean {
    return lateShowing && now - this.#lastAuditAt >= this.#intervalMs;
  }

  /**
   * From where the cold store is valid (within the horizon and the counts behind it) up to the
   * millisecond before the window (`windowFrom`, where the walk re-reads), or below where the last
   * audit stopped; null when that is empty.
   */
  range(watermark: number, windowFrom: number): AuditRange | null {
    const from = Math.max(this.#cold.validFrom + 1, watermark - this.#cold.horizonMs - BEYOND_HORIZON_MS);
    let to = windowFrom - 1;
    if (this.#sweepTo !== null && this.#sweepTo >= from) to = Math.min(to, this.#sweepTo);
    else this.#sweepTo = null;
    return to < from ? null : { from, to };
  }

  /** Reads the range newest first; counts through `count` what lies within the horizon, reports what is missing behind it. */
  async run(
    source: LogsSource,
    range: AuditRange,
    pageSize: number,
    now: number,
    logger: Logger,
    count: CountAudited,
    signal?: AbortSignal,
  ): Promise<{ counted: number; missed: number }> {
    this.#lastAuditAt = now;
    const printsFrom = this.#cold.printsFromSecond;
    /** Per second behind the horizon: entries on the service. */
    const onService = new Map<number, number>();
    const within: LogEntry[] = [];
    let counted = 0;
    let cursor: string | undefined;
    let lowest = Number.POSITIVE_INFINITY;
    let complete = false;
    // As in the walk: a page served twice, or a cursor served again, would read as twins.
    const followed = new Set<string>();
    let previousSignature = '';
    for (let pages = 0; pages < AUDIT_PAGE_BUDGET; pages++) {
      const page = await source.logsPage(
        { fromDate: range.from, toDate: range.to, count: pageSize, ...(cursor === undefined ? {} : { cursor }) },
        signal ? { signal } : {},
      );
      const signature = pageSignature(page);
      if (signature !== '' && signature === previousSignature) break;
      previousSignature = signature;
      for (const entry of page.logs) {
        const key = Math.floor(entry.time / 1000);
        if (entry.time < lowest) lowest = entry.time;
        if (key >= printsFrom) within.push(entry);
        else onService.set(key, (onService.get(key) ?? 0) + 1);
      }
      if (within.length > 0) {
        counted += count(within);
        within.length = 0;
      }
      if (page.cursor === undefined) {
        complete = true;
        break;
      }
      if (followed.has(page.cursor) || page.logs.length === 0) break;
      followed.add(page.cursor);
      cursor = page.cursor;
    }
    // The next audit goes on from the top of the lowest second reached (read whole again), or
    // from the lowest millisecond when the whole budget went to one second.
    const lowestSecond = Math.floor(lowest / 1000);
    if (complete || lowest === Number.POSITIVE_INFINITY) this.#sweepTo = null;
    else
      this.#sweepTo =
        (lowestSecond + 1) * 1000 - 1 < range.to
          ? (lowestSecond + 1) * 1000 - 1
          : lowest < range.to
            ? lowest
            : lowest - 1;

    // Behind the horizon: only seconds the audit read whole (all of them, or those above the lowest second reached).
    let missed = 0;
    for (const [key, found] of onService) {
      if (!complete && key <= lowestSecond) continue;
      const known = this.#cold.countedIn(key);
      if (found <= known) continue;
      missed += found - known;
      // Reported once: the next audit compares against what the service has now.
      this.#cold.settle(key, found);
    }
    if (counted > 0) {
      logger.info(
        { countedEntries: counted, from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
        'log entries became visible after the walk had passed them (later than the ingestion delay and the overlap re-read): counted now, as late entries',
      );
    }
    if (missed > 0) {
      this.missed += missed;
      logger.warn(
        {
          missedEntries: missed,
          latenessHorizonSeconds: this.#cold.horizonMs / 1000,
          from: new Date(range.from).toISOString(),
          to: new Date(range.to).toISOString(),
        },
        'log entries became visible later than the lateness horizon, after the walk had passed them, and were not counted; raise logs.lateness_horizon (or logs.ingestion_delay)',
      );
    }
    return { counted, missed };
  }
}
