// The probe's metric families: one long-lived registry (a probe result stays until the next
// one replaces it). Latencies are gauges of the last probe, not histograms: a probe runs about
// once a minute, so a scrape sees each value, and `*_over_time` functions give percentiles.
import { Counter, Gauge, type Registry } from 'prom-client';
import { createRegistry } from '../metrics/snapshot.js';
import type { ProbeKind } from './body.js';

/** Outcome of one probe run. */
export const PROBE_RUN_RESULTS = ['success', 'enqueue_error', 'timeout'] as const;
export type ProbeRunResult = (typeof PROBE_RUN_RESULTS)[number];

/** What the receiver did with one delivery. */
export const RECEIPT_RESULTS = [
  'accepted',
  'late',
  'duplicate',
  'unknown',
  'invalid_signature',
  'invalid_body',
] as const;
export type ReceiptResult = (typeof RECEIPT_RESULTS)[number];

export class ProbeMetrics {
  readonly registry: Registry = createRegistry();
  readonly acceptDuration: Gauge<'kind'>;
  readonly deliveryDuration: Gauge<'kind'>;
  readonly success: Gauge<'kind'>;
  readonly lastSuccess: Gauge<'kind'>;
  readonly runs: Counter<'kind' | 'result'>;
  readonly receipts: Counter<'result'>;

  constructor(kinds: readonly ProbeKind[]) {
    const registers = [this.registry];
    this.acceptDuration = new Gauge({
      name: 'upstash_probe_accept_duration_seconds',
      help: 'Time the service took to accept the last probe (enqueue or workflow trigger answered), retries included',
      labelNames: ['kind'] as const,
      registers,
    });
    this.deliveryDuration = new Gauge({
      name: 'upstash_probe_delivery_duration_seconds',
      help: 'End-to-end time of the last delivered probe: from the start of the enqueue to the verified arrival at the receiver',
      labelNames: ['kind'] as const,
      registers,
    });
    this.success = new Gauge({
      name: 'upstash_probe_success',
      help: 'Whether the last probe arrived, signature verified, within the probe timeout (1) or not (0)',
      labelNames: ['kind'] as const,
      registers,
    });
    this.lastSuccess = new Gauge({
      name: 'upstash_probe_last_success_timestamp_seconds',
      help: 'When the last successful probe arrived (0: never)',
      labelNames: ['kind'] as const,
      registers,
    });
    this.runs = new Counter({
      name: 'upstash_probe_runs_total',
      help: 'Probes run, by result: success, enqueue_error (the service refused or did not answer), timeout (no verified arrival in time)',
      labelNames: ['kind', 'result'] as const,
      registers,
    });
    this.receipts = new Counter({
      name: 'upstash_probe_receipts_total',
      help: 'Requests to the probe receiver by result: accepted, late, duplicate, unknown (not sent by this process), invalid_signature, invalid_body',
      labelNames: ['result'] as const,
      registers,
    });
    // Zeros rather than nothing, so alerts and rate() see every series from the start.
    for (const kind of kinds) {
      this.success.set({ kind }, 0);
      this.lastSuccess.set({ kind }, 0);
      for (const result of PROBE_RUN_RESULTS) this.runs.inc({ kind, result }, 0);
    }
    for (const result of RECEIPT_RESULTS) this.receipts.inc({ result }, 0);
  }
}
