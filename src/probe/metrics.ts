// The probe's metric families (declared in families.ts): one long-lived registry (a probe result stays until the next
// one replaces it). Latencies are gauges of the last probe, not histograms: a probe runs about
// once a minute, so a scrape sees each value, and `*_over_time` functions give percentiles.
import { Counter, Gauge, type Registry } from 'prom-client';
import { createRegistry } from '../metrics/snapshot.js';
import type { ProbeKind } from './body.js';
import { metricOptions } from '../metrics/families.js';
import { PROBE_FAMILIES, PROBE_RUN_RESULTS, RECEIPT_RESULTS } from './families.js';

export { PROBE_RUN_RESULTS, RECEIPT_RESULTS, type ProbeRunResult, type ReceiptResult } from './families.js';

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
    this.acceptDuration = new Gauge({ ...metricOptions(PROBE_FAMILIES.acceptDuration), registers });
    this.deliveryDuration = new Gauge({ ...metricOptions(PROBE_FAMILIES.deliveryDuration), registers });
    this.success = new Gauge({ ...metricOptions(PROBE_FAMILIES.success), registers });
    this.lastSuccess = new Gauge({ ...metricOptions(PROBE_FAMILIES.lastSuccess), registers });
    this.runs = new Counter({ ...metricOptions(PROBE_FAMILIES.runs), registers });
    this.receipts = new Counter({ ...metricOptions(PROBE_FAMILIES.receipts), registers });
    // Zeros rather than nothing, so alerts and rate() see every series from the start.
    for (const kind of kinds) {
      this.success.set({ kind }, 0);
      this.lastSuccess.set({ kind }, 0);
      for (const result of PROBE_RUN_RESULTS) this.runs.inc({ kind, result }, 0);
    }
    for (const result of RECEIPT_RESULTS) this.receipts.inc({ result }, 0);
  }
}
