// The canary probe as the exporter runs it: metrics, the pending probes, the schedule and the
// receiver route, built from the configuration. See docs/active-checks.md.
import type { Router } from 'express';
import type { Registry } from 'prom-client';
import type { DeliveryClient } from '../api/delivery.js';
import { probeRegionUrl, type ExporterConfig, type QStashRegionConfig } from '../config/index.js';

import { setRegistryLabels } from '../metrics/default-labels.js';
import type { Logger } from '../logging/index.js';
import type { ProbeKind } from './body.js';
import { ProbeMetrics } from './metrics.js';
import { PendingProbes } from './pending.js';
import { probeReceiverRouter } from './receiver.js';
import { CanaryProbe, type ProbeTarget } from './runner.js';

export { PROBE_KINDS, PROBE_MARK, type ProbeKind } from './body.js';
export { PROBE_RUN_RESULTS, RECEIPT_RESULTS, type ProbeRunResult, type ReceiptResult } from './metrics.js';
export { CanaryProbe, type ProbeRunOutcome, type ProbeTarget } from './runner.js';
export { SignatureError, verifySignature, type SignatureProblem, type SigningKeys } from './signature.js';

export interface ProbeHandle {
  readonly name: 'probe';
  readonly registry: Registry;
  /** The receiver route, mounted ahead of the server's basic auth. */
  readonly router: Router;
  readonly probe: CanaryProbe;
  start(): void;
  close(): Promise<void>;
}

export interface ProbeDeps {
  delivery: Pick<DeliveryClient, 'enqueue' | 'triggerWorkflow'>;
  /** The region probed, with its signing keys (its series carry `qstash_region`). */
  region: Pick<QStashRegionConfig, 'name' | 'currentSigningKey' | 'nextSigningKey'>;
  /**
   * Several regions are probed: each gets its own receiver, `<receiver path>/<region>`, and the
   * service delivers to `<receiver URL>/<region>` (one URL for all would not say whose keys to check).
   */
  routePerRegion?: boolean;
  logger: Logger;
  now?: () => number;
}

/** The probe of an enabled configuration (config checks guarantee the receiver URL and keys). */
export function createProbe(config: ExporterConfig, deps: ProbeDeps): ProbeHandle {
  const { probe: settings, qstash } = config;
  const { region } = deps;
  if (settings.receiverUrl === null) throw new Error('createProbe needs probe.receiverUrl');
  const own = (url: string): string => probeRegionUrl(url, region.name, deps.routePerRegion === true);
  const receiverPath = own(settings.receiverPath);
  const targets: ProbeTarget[] = [{ kind: 'message', url: own(settings.receiverUrl) }];
  if (settings.workflowUrl !== null) targets.push({ kind: 'workflow', url: own(settings.workflowUrl) });
  const kinds: ProbeKind[] = targets.map((target) => target.kind);
  const metrics = new ProbeMetrics(kinds);
  setRegistryLabels(metrics.registry, { qstash_region: region.name });
  const pending = new PendingProbes();
  const logger = deps.logger.child({ component: 'probe', qstash_region: region.name });
  const keys =
    region.currentSigningKey !== null && region.nextSigningKey !== null
      ? { current: region.currentSigningKey, next: region.nextSigningKey }
      : null;
  if (keys === null)
    logger.warn(
      'probe receiver runs WITHOUT signature verification (--probe-insecure-receiver): anyone reaching it can post probe results',
    );

  const probe = new CanaryProbe({
    delivery: deps.delivery,
    queue: settings.queue,
    targets,
    intervalMs: settings.intervalMs,
    timeoutMs: settings.timeoutMs,
    metrics,
    pending,
    logger,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const router = probeReceiverRouter({
    path: receiverPath,
    headerPrefix: qstash.headerPrefix,
    keys,
    allowedSubjects: targets.map((target) => target.url),
    pending,
    metrics,
    logger,
    ...(deps.now ? { now: deps.now } : {}),
  });
  return {
    name: 'probe',
    registry: metrics.registry,
    router,
    probe,
    start: () => {
      probe.start();
      logger.info(
        {
          queue: settings.queue,
          kinds,
          intervalMs: settings.intervalMs,
          timeoutMs: settings.timeoutMs,
          receiverPath,
        },
        'canary probe started',
      );
    },
    close: () => probe.stop(),
  };
}
