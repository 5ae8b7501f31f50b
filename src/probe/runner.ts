// The canary probe: on an interval, enqueue a small labelled message (with a de-duplication id)
// into a dedicated queue, addressed to the receiver URL, and optionally trigger a workflow run the
// same way; then wait for the receiver to see it arrive, signature verified. Measures how long
// the service took to accept it and how long until it arrived. Runs never overlap: a probe still
// waiting delays the next one.
import { performance } from 'node:perf_hooks';
import type { DeliveryClient } from '../api/delivery.js';
import type { Logger } from '../logging/index.js';
import { encodeProbeBody, newProbeId, PROBE_MARK, type ProbeKind } from './body.js';
import type { ProbeMetrics, ProbeRunResult } from './metrics.js';
import type { PendingProbes } from './pending.js';
import { errorCode, errorMessage } from '../common/errors.js';

export interface ProbeTarget {
  kind: ProbeKind;
  /** The URL the service is asked to call (the signature's subject). */
  url: string;
}

export interface CanaryProbeOptions {
  delivery: Pick<DeliveryClient, 'enqueue' | 'triggerWorkflow'>;
  queue: string;
  targets: readonly ProbeTarget[];
  intervalMs: number;
  timeoutMs: number;
  metrics: ProbeMetrics;
  pending: PendingProbes;
  logger: Logger;
  /** Wall clock, unix ms (tests inject one). */
  now?: () => number;
}

/** Result per kind; absent for a probe cut short by stop(). */
export type ProbeRunOutcome = Partial<Record<ProbeKind, ProbeRunResult>>;

export class CanaryProbe {
  readonly #options: CanaryProbeOptions;
  readonly #now: () => number;
  readonly #stopping = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<unknown> | undefined;
  /** After the daily request limit: no probe before this time, unix ms (0: none). */
  #pausedUntil = 0;

  constructor(options: CanaryProbeOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** First probe at once, then one every interval (counted from the start of the previous). */
  start(): void {
    if (this.#timer !== undefined || this.#stopping.signal.aborted) return;
    this.#schedule(0);
  }

  /** Stops the schedule and cuts the probe in flight short (it records nothing). */
  async stop(): Promise<void> {
    this.#stopping.abort();
    clearTimeout(this.#timer);
    await this.#inFlight;
  }

  /** One probe of every target, concurrently. Never rejects. */
  async runOnce(signal: AbortSignal = this.#stopping.signal): Promise<ProbeRunOutcome> {
    const results = await Promise.all(
      this.#options.targets.map(async (target) => [target.kind, await this.#probe(target, signal)] as const),
    );
    const outcome: ProbeRunOutcome = {};
    for (const [kind, result] of results) if (result !== undefined) outcome[kind] = result;
    return outcome;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      const startedAt = this.#now();
      const run = this.runOnce();
      this.#inFlight = run;
      void run.then(() => {
        if (this.#stopping.signal.aborted) return;
        const next = Math.max(startedAt + this.#options.intervalMs, this.#pausedUntil);
        this.#schedule(Math.max(0, next - this.#now()));
      });
    }, delayMs);
    // The HTTP server keeps the process alive; the probe schedule alone should not.
    this.#timer.unref();
  }

  async #probe(target: ProbeTarget, signal: AbortSignal): Promise<ProbeRunResult | undefined> {
    const { delivery, metrics, pending, logger, timeoutMs } = this.#options;
    const { kind, url } = target;
    const sentAt = this.#now();
    const id = newProbeId(kind, sentAt);
    const body = encodeProbeBody({ probe: PROBE_MARK, id, kind, sentAt });
    pending.register(id, kind, url);
    const started = performance.now();
    try {
      if (kind === 'message') {
        await delivery.enqueue(
          {
            queueName: this.#options.queue,
            destination: url,
            body,
            contentType: 'application/json',
            labels: [PROBE_MARK],
            deduplicationId: id,
            // One attempt: a probe measures whether delivery works now, and a retried probe
            // would arrive after its timeout anyway.
            retries: 0,
            timeout: `${Math.max(1, Math.ceil(timeoutMs / 1000))}s`,
          },
          { signal },
        );
      } else {
        await delivery.triggerWorkflow(
          { workflowUrl: url, body, runId: id, labels: [PROBE_MARK], retries: 0 },
          { signal },
        );
      }
    } catch (error) {
      pending.abandon(id);
      if (signal.aborted) return undefined;
      metrics.success.set({ kind }, 0);
      metrics.runs.inc({ kind, result: 'enqueue_error' });
      const { code, message } = describe(error);
      if (code === 'ERR_API_DAILY_LIMIT') this.#pauseForDailyLimit(error);
      logger.warn({ kind, probeId: id, code, err: message }, `probe: the service did not accept the ${kind} probe`);
      return 'enqueue_error';
    }
    metrics.acceptDuration.set({ kind }, (performance.now() - started) / 1000);

    const arrival = await pending.waitFor(id, sentAt + timeoutMs, this.#now, signal);
    if (arrival === undefined && signal.aborted) return undefined;
    const deliverySeconds = arrival === undefined ? undefined : (arrival.receivedAtMs - arrival.sentAtMs) / 1000;
    if (deliverySeconds !== undefined && deliverySeconds * 1000 <= timeoutMs) {
      metrics.deliveryDuration.set({ kind }, deliverySeconds);
      metrics.success.set({ kind }, 1);
      metrics.lastSuccess.set({ kind }, arrival!.receivedAtMs / 1000);
      metrics.runs.inc({ kind, result: 'success' });
      logger.debug({ kind, probeId: id, deliverySeconds }, 'probe delivered');
      return 'success';
    }
    metrics.success.set({ kind }, 0);
    metrics.runs.inc({ kind, result: 'timeout' });
    logger.warn(
      { kind, probeId: id, timeoutMs },
      `probe: the ${kind} probe did not arrive (signature verified) within the timeout`,
    );
    return 'timeout';
  }

  /**
   * The daily request limit is reached: every probe would be refused (and spend nothing), so
   * the probe stops until the limit resets (RateLimit-Reset; without it, one interval).
   */
  #pauseForDailyLimit(error: unknown): void {
    const waitMs = (error as { retryAfterMs?: number }).retryAfterMs ?? this.#options.intervalMs;
    const until = this.#now() + waitMs;
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#options.logger.warn(
      { until: new Date(until).toISOString() },
      'probe: the daily request limit is reached; no probe until it resets',
    );
  }
}

function describe(error: unknown): { code: string; message: string } {
  const code = errorCode(error);
  return { code, message: errorMessage(error) };
}
