// The canary probe's metric families as data (src/metrics/families.ts): ProbeMetrics creates
// each from its row, docs/metrics.md's "Canary probe" table is written from them.
import type { Family } from '../metrics/families.js';

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

const KINDS = { kind: ['message', 'workflow'] };
const RUNS = 'each probe run (enqueue or workflow trigger, then the receiver)';

export const PROBE_FAMILIES = {
  acceptDuration: {
    name: 'upstash_probe_accept_duration_seconds',
    type: 'gauge',
    labelNames: ['kind'],
    labelValues: KINDS,
    meaning: 'Time the service took to accept the last probe (enqueue or workflow trigger answered), retries included',
    source: RUNS,
  },
  deliveryDuration: {
    name: 'upstash_probe_delivery_duration_seconds',
    type: 'gauge',
    labelNames: ['kind'],
    labelValues: KINDS,
    meaning:
      'End-to-end time of the last delivered probe: from the start of the enqueue to the verified arrival at the receiver',
    source: RUNS,
  },
  success: {
    name: 'upstash_probe_success',
    type: 'gauge',
    labelNames: ['kind'],
    labelValues: KINDS,
    meaning: 'Whether the last probe arrived, signature verified, within the probe timeout (1) or not (0)',
    details: 'The timeout is `--probe-timeout`.',
    source: RUNS,
  },
  lastSuccess: {
    name: 'upstash_probe_last_success_timestamp_seconds',
    type: 'gauge',
    labelNames: ['kind'],
    labelValues: KINDS,
    meaning: 'When the last successful probe arrived (0: never)',
    source: RUNS,
  },
  runs: {
    name: 'upstash_probe_runs_total',
    type: 'counter',
    labelNames: ['kind', 'result'],
    labelValues: { ...KINDS, result: PROBE_RUN_RESULTS },
    meaning:
      'Probes run, by result: success, enqueue_error (the service refused or did not answer), timeout (no verified arrival in time)',
    source: RUNS,
  },
  receipts: {
    name: 'upstash_probe_receipts_total',
    type: 'counter',
    labelNames: ['result'],
    labelValues: { result: RECEIPT_RESULTS },
    meaning:
      'Requests to the probe receiver by result: accepted, late, duplicate, unknown (not sent by this process), invalid_signature, invalid_body',
    source: 'each request to the probe receiver',
  },
} as const satisfies Record<string, Family>;
