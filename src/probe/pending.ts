// Probes sent and not yet settled, and the recently settled ones, so the receiver can tell an
// awaited arrival from a late one, a repeat, or a delivery this process never sent.
import type { ProbeBody, ProbeKind } from './body.js';
import type { ReceiptResult } from './metrics.js';

export interface Arrival {
  /** When the receiver got the delivery, unix ms. */
  receivedAtMs: number;
  /** The send time the (signed) body carries, unix ms. */
  sentAtMs: number;
}

interface Pending {
  kind: ProbeKind;
  /** The URL the probe was addressed to: the signature's subject must be this one. */
  url: string;
  arrived: Promise<Arrival>;
  resolve(arrival: Arrival): void;
  /** Set by the first verified arrival; the waiter settles the probe. */
  arrival?: Arrival;
}

type Settled = 'received' | 'missed';

/** Settled ids remembered for late and duplicate deliveries. */
const SETTLED_MEMORY = 256;

export class PendingProbes {
  readonly #pending = new Map<string, Pending>();
  readonly #settled = new Map<string, Settled>();

  /** Call before sending, so an arrival that beats the enqueue answer is not missed. */
  register(id: string, kind: ProbeKind, url: string): void {
    let resolve!: (arrival: Arrival) => void;
    const arrived = new Promise<Arrival>((done) => (resolve = done));
    this.#pending.set(id, { kind, url, arrived, resolve });
  }

  /**
   * Waits for the probe until `deadlineMs` (unix ms) or the signal; resolves undefined when it
   * did not arrive. Settles the probe either way.
   */
  async waitFor(id: string, deadlineMs: number, now: () => number, signal?: AbortSignal): Promise<Arrival | undefined> {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    if (pending.arrival !== undefined) {
      this.settle(id, 'received');
      return pending.arrival;
    }
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const missed = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, deadlineMs - now()));
      onAbort = () => resolve(undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const arrival = await Promise.race([pending.arrived, missed]);
      this.settle(id, arrival === undefined ? 'missed' : 'received');
      return arrival;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Gives up on a probe that was never accepted (its enqueue failed). */
  abandon(id: string): void {
    if (this.#pending.has(id)) this.settle(id, 'missed');
  }

  /** Classifies a verified delivery and wakes its waiter. `subject` is the signed URL, or null unsigned. */
  receive(body: ProbeBody, subject: string | null, receivedAtMs: number): ReceiptResult {
    const pending = this.#pending.get(body.id);
    if (pending !== undefined) {
      // Signed for another of our URLs than the probe was sent to: not the delivery we sent.
      if (pending.kind !== body.kind || (subject !== null && subject !== pending.url)) return 'invalid_body';
      if (pending.arrival !== undefined) return 'duplicate';
      pending.arrival = { receivedAtMs, sentAtMs: body.sentAt };
      pending.resolve(pending.arrival);
      return 'accepted';
    }
    const settled = this.#settled.get(body.id);
    if (settled === 'received') return 'duplicate';
    if (settled === 'missed') return 'late';
    return 'unknown';
  }

  /** Probes sent and not settled (for tests and shutdown). */
  get size(): number {
    return this.#pending.size;
  }

  private settle(id: string, how: Settled): void {
    this.#pending.delete(id);
    // A late arrival must not turn a miss into a success; a first arrival wins over a later miss.
    if (this.#settled.get(id) !== 'received') this.#settled.set(id, how);
    while (this.#settled.size > SETTLED_MEMORY) {
      const oldest = this.#settled.keys().next().value;
      if (oldest === undefined) break;
      this.#settled.delete(oldest);
    }
  }
}
