// Entries that become visible later than ingestion delay + overlap (or while the rate limit
// bounds the walk and the overlap is not re-read) are behind the walk: no later slice reads
// their time again, and when they are older than the newest visible entry the anchor cannot
// betray them either. The audit finds them and counts them. A ledger keeps, for every second
// from the lateness horizon behind the watermark on, a 32-bit fingerprint of each entry counted
// with a time in it (dedup.ts, fingerprint). While the service shows late entries (the overlap
// had to grow, or was not re-read lately), the audit reads again what lies behind the
// de-duplication window, newest first, one page budget at a time (a sweep that goes on where the
// last audit stopped), and counts each entry whose fingerprint the ledger does not hold: the n-th
// occurrence of a fingerprint in one read is new when the ledger holds it fewer than n times,
// as in the window. Counted entries are late entries (upstash_exporter_log_late_events_total).
// For BEYOND_HORIZON_MS behind the horizon only per-second counts are kept: more entries on the
// service than counted there are reported, exactly, not counted:
// upstash_exporter_log_missed_late_events_total and a warning. The ledger is in the checkpoint.
import type { LogEntry } from '../../api/delivery.js';
import type { Logger } from '../../logging/index.js';
import type { LogsSource } from './walk-types.js';

/** Default lateness horizon (logs.lateness_horizon): entries up to this late are counted. */
export const DEFAULT_LATENESS_HORIZON_MS = 5 * 60_000;
/** Behind the horizon, per-second counts are kept this much longer, so misses there are reported. */
export const BEYOND_HORIZON_MS = 60_000;
/** Audits run at most this often, and only while the service shows late entries. */
export const AUDIT_INTERVAL_MS = 5_000;
/** Pages one audit may read; the next audit goes on below the last page read. */
const AUDIT_PAGE_BUDGET = 20;
/** Fingerprints a second's array starts with (it doubles as needed). */
const INITIAL_PRINTS = 8;

export interface AuditRange {
  /** Inclusive unix ms. */
  from: number;
  /** Inclusive unix ms. */
  to: number;
}

/** What the audit needs of the counter. */
export interface AuditCounter {
  /** The entry's fingerprint, as countPage records it; null when the entry is not counted (no state). */
  fingerprintOf(entry: LogEntry): number | null;
  /** Counts entries the ledger does not hold (they are recorded in it as they are counted). */
  countUnseen(entries: readonly LogEntry[]): void;
}

/** The ledger in the checkpoint: [second, entries counted, fingerprints (base64 of little-endian int32) or null beyond the horizon]. */
export interface LedgerState {
  validFrom: number;
  seconds: Array<[number, number, string | null]>;
}

interface Second {
  /** Entries counted with a time in this second. */
  counted: number;
  /** Their fingerprints, `size` of them used; null once the second is behind the horizon. */
  prints: Int32Array | null;
  size: number;
}

export class LateAudit {
  /** Unix second -> what was counted in it. */
  readonly #seconds = new Map<number, Second>();
  /** The second of the last record() and its entry (entries come second by second). */
  #lastSecond = Number.NaN;
  #last: Second | undefined;
  /** Seconds from this one on keep fingerprints (the horizon behind the watermark). */
  #printsFrom = Number.NEGATIVE_INFINITY;
  /** The ledger knows every counted entry after this time (entries before it were counted by an earlier process, or are history). */
  #validFrom: number;
  #lastAuditAt = 0;
  /** toDate of the next audit: the sweep goes on below the last page read (null: from the top). */
  #sweepTo: number | null = null;
  /** Entries found on the service beyond the horizon and never counted, all time. */
  missed = 0;

  readonly #horizonMs: number;
  readonly #intervalMs: number;

  constructor(validFrom: number, options: { horizonMs?: number; intervalMs?: number } = {}) {
    this.#validFrom = validFrom;
    this.#horizonMs = options.horizonMs ?? DEFAULT_LATENESS_HORIZON_MS;
    this.#intervalMs = options.intervalMs ?? AUDIT_INTERVAL_MS;
  }

  get horizonMs(): number {
    return this.#horizonMs;
  }

  /** Fingerprints held (for the memory figures in docs/performance.md). */
  get fingerprints(): number {
    let held = 0;
    for (const second of this.#seconds.values()) held += second.size;
    return held;
  }

  /** One counted entry (hot path). */
  record(time: number, print: number): void {
    const key = Math.floor(time / 1000);
    let second = key === this.#lastSecond ? this.#last : this.#seconds.get(key);
    if (second === undefined) {
      second = { counted: 0, prints: key >= this.#printsFrom ? new Int32Array(INITIAL_PRINTS) : null, size: 0 };
      this.#seconds.set(key, second);
    }
    this.#lastSecond = key;
    this.#last = second;
    second.counted += 1;
    let prints = second.prints;
    if (prints === null) return;
    if (second.size === prints.length) {
      const grown = new Int32Array(prints.length * 2);
      grown.set(prints);
      second.prints = prints = grown;
    }
    prints[second.size++] = print;
  }

  /** Whether an audit is due: the service shows late entries (`lateShowing`) and the last audit is old enough. */
  due(now: number, lateShowing: boolean): boolean {
    return lateShowing && now - this.#lastAuditAt >= this.#intervalMs;
  }

  /**
   * From where the ledger is valid (within the horizon and the counts behind it) up to the
   * millisecond before the part the walk re-reads (`rereadFrom`, the de-duplication window's
   * start), or below where the last audit stopped; null when that is empty.
   */
  range(watermark: number, rereadFrom: number): AuditRange | null {
    const from = Math.max(this.#validFrom + 1, watermark - this.#horizonMs - BEYOND_HORIZON_MS);
    let to = rereadFrom - 1;
    if (this.#sweepTo !== null && this.#sweepTo >= from) to = Math.min(to, this.#sweepTo);
    else this.#sweepTo = null;
    return to < from ? null : { from, to };
  }

  /**
   * Reads the range newest first: counts the entries the ledger does not hold (within the
   * horizon) through `counter`, and reports those beyond it. Returns what it counted and found missed.
   */
  async run(source: LogsSource, range: AuditRange, pageSize: number, now: number, logger: Logger, counter: AuditCounter, signal?: AbortSignal): Promise<{ counted: number; missed: number }> {
    this.#lastAuditAt = now;
    /** Per second within the horizon: the fingerprints held when the read reached it, and each one's occurrences in this read. */
    const held = new Map<number, Map<number, number>>();
    const seen = new Map<number, Map<number, number>>();
    /** Per second behind the horizon: entries on the service. */
    const onService = new Map<number, number>();
    const unseen: LogEntry[] = [];
    let counted = 0;
    let cursor: string | undefined;
    let lowest = Number.POSITIVE_INFINITY;
    let complete = false;
    for (let pages = 0; pages < AUDIT_PAGE_BUDGET; pages++) {
      const page = await source.logsPage({ fromDate: range.from, toDate: range.to, count: pageSize, ...(cursor === undefined ? {} : { cursor }) }, signal ? { signal } : {});
      for (const entry of page.logs) {
        const key = Math.floor(entry.time / 1000);
        lowest = Math.min(lowest, entry.time);
        if (key < this.#printsFrom) {
          onService.set(key, (onService.get(key) ?? 0) + 1);
          continue;
        }
        const print = counter.fingerprintOf(entry);
        if (print === null) continue;
        let occurrences = seen.get(key);
        let known = held.get(key);
        if (occurrences === undefined || known === undefined) {
          occurrences = new Map();
          known = this.#heldIn(key);
          seen.set(key, occurrences);
          held.set(key, known);
        }
        const occurrence = (occurrences.get(print) ?? 0) + 1;
        occurrences.set(print, occurrence);
        if (occurrence > (known.get(print) ?? 0)) unseen.push(entry);
      }
      if (unseen.length > 0) {
        counter.countUnseen(unseen);
        counted += unseen.length;
        unseen.length = 0;
      }
      if (page.cursor === undefined) {
        complete = true;
        break;
      }
      cursor = page.cursor;
    }
    // The next audit goes on from the top of the lowest second reached (read whole again), or
    // from the lowest millisecond when the whole budget went to one second.
    const lowestSecond = Math.floor(lowest / 1000);
    if (complete || lowest === Number.POSITIVE_INFINITY) this.#sweepTo = null;
    else this.#sweepTo = (lowestSecond + 1) * 1000 - 1 < range.to ? (lowestSecond + 1) * 1000 - 1 : lowest < range.to ? lowest : lowest - 1;

    // Behind the horizon: only seconds the audit read whole (all of them, or those above the lowest second reached).
    let missed = 0;
    for (const [key, count] of onService) {
      if (!complete && key <= lowestSecond) continue;
      const second = this.#seconds.get(key);
      const known = second?.counted ?? 0;
      if (count <= known) continue;
      missed += count - known;
      // Reported once: the next audit compares against what the service has now.
      if (second === undefined) this.#seconds.set(key, { counted: count, prints: null, size: 0 });
      else second.counted = count;
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
        { missedEntries: missed, latenessHorizonSeconds: this.#horizonMs / 1000, from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
        'log entries became visible later than the lateness horizon, after the walk had passed them, and were not counted; raise logs.lateness_horizon (or logs.ingestion_delay)',
      );
    }
    return { counted, missed };
  }

  /** Occurrences of each fingerprint held for a second. */
  #heldIn(key: number): Map<number, number> {
    const known = new Map<number, number>();
    const second = this.#seconds.get(key);
    if (second?.prints) for (let i = 0; i < second.size; i++) known.set(second.prints[i]!, (known.get(second.prints[i]!) ?? 0) + 1);
    return known;
  }

  /** Drops the fingerprints of seconds behind the horizon, and the counts of seconds behind that. */
  prune(watermark: number): void {
    const printsFrom = Math.floor((watermark - this.#horizonMs) / 1000);
    const keepFrom = Math.floor((watermark - this.#horizonMs - BEYOND_HORIZON_MS) / 1000);
    const settled = Math.floor(watermark / 1000);
    this.#printsFrom = Math.max(this.#printsFrom, printsFrom);
    for (const [key, second] of this.#seconds) {
      if (key < keepFrom) this.#seconds.delete(key);
      else if (key < this.#printsFrom) {
        second.prints = null;
        second.size = 0;
      } else if (key < settled && second.prints !== null && second.prints.length >= 2 * second.size + INITIAL_PRINTS) {
        // A second the walk has passed keeps only the room its fingerprints take.
        second.prints = second.prints.slice(0, second.size);
      }
    }
    this.#lastSecond = Number.NaN;
    this.#last = undefined;
  }

  export(): LedgerState {
    const seconds: LedgerState['seconds'] = [];
    for (const [key, second] of this.#seconds) {
      const prints = second.prints === null ? null : Buffer.from(littleEndian(second.prints, second.size)).toString('base64');
      seconds.push([key, second.counted, prints]);
    }
    return { validFrom: this.#validFrom, seconds };
  }

  /** Takes the ledger of a checkpoint (the constructor's `validFrom` is replaced by its own). */
  restore(state: LedgerState, watermark: number): void {
    this.#seconds.clear();
    this.#validFrom = state.validFrom;
    for (const [key, counted, text] of state.seconds) {
      if (text === null) {
        this.#seconds.set(key, { counted, prints: null, size: 0 });
        continue;
      }
      const bytes = Buffer.from(text, 'base64');
      const size = Math.floor(bytes.length / 4);
      const prints = new Int32Array(Math.max(INITIAL_PRINTS, size));
      for (let i = 0; i < size; i++) prints[i] = bytes.readInt32LE(i * 4);
      this.#seconds.set(key, { counted, prints, size });
    }
    this.prune(watermark);
  }
}

function littleEndian(prints: Int32Array, size: number): Buffer {
  const bytes = Buffer.alloc(size * 4);
  for (let i = 0; i < size; i++) bytes.writeInt32LE(prints[i]!, i * 4);
  return bytes;
}
