// The emulator of the delivery service and the management interface, on one address.
// createEmulator() starts it; the handle gives its URL, credentials, knobs and ground truth.
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { createApp } from './app.js';
import type { Knobs } from './knobs.js';
import { hostForUrl } from '../common/url.js';
import type { GroundTruth } from './delivery/log-store.js';
import { createManagement, type ManagementState } from './management/index.js';
import { resolveOptions, type EmulatorOptions } from './options.js';
import { DeliveryService } from './delivery/service.js';
import type { SigningKeyPair } from './delivery/signing.js';
import type { WorkflowGroundTruth } from './delivery/workflows.js';

export type { EmulatorOptions, PlanProfile } from './options.js';
export { DEV_CREDENTIALS, PLAN_DEFAULTS } from './options.js';
export type { FaultScope, Knobs } from './knobs.js';
export type { GroundTruth, GroundTruthSeries, LogState } from './delivery/log-store.js';
export { DEV_SIGNING_KEYS, type SigningKeyPair } from './delivery/signing.js';
export type { WorkflowGroundTruth } from './delivery/workflows.js';

export interface EmulatorHandle {
  /** http://127.0.0.1:PORT (https:// with extras.tls) — both interfaces on one address. */
  url: string;
  credentials: { token: string; email: string; apiKey: string };
  /** Validates and applies knobs; throws EmulatorKnobError (code ERR_EMULATOR_KNOB) naming a bad one. */
  setKnobs(patch: Partial<Knobs>): void;
  /** The knobs in force. */
  knobs(): Knobs;
  groundTruth(): GroundTruth;
  /** Workflow runs and steps as the exporter's workflow counters must count them. */
  workflowGroundTruth(): WorkflowGroundTruth;
  /** Forgets messages, schedules, URL Groups, queues, de-duplication ids and the log; knobs stay. */
  reset(): void;
  /** The management interface's data (account, indexes, statistics), to read and change in process. */
  management: ManagementState;
  /** The signing keys in force: deliveries are signed with `current` (GET /v2/keys answers the same). */
  signingKeys(): SigningKeyPair;
  close(): Promise<void>;
}

export interface CreateEmulatorExtras {
  /** Where unexpected internal errors are reported; silent by default. */
  report?: (line: string) => void;
  /** Serve over TLS with this key and certificate (PEM); the URL is then https://. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Handed the server before it listens (a test counting the connections and requests it gets). */
  onServer?: (server: Server) => void;
}

export async function createEmulator(
  options: Partial<EmulatorOptions> = {},
  extras: CreateEmulatorExtras = {},
): Promise<EmulatorHandle> {
  const resolved = resolveOptions(options);
  const report = extras.report ?? (() => undefined);
  const service = new DeliveryService(resolved, report);
  const management = createManagement({
    email: resolved.email,
    apiKey: resolved.apiKey,
    deliveryToken: resolved.token,
    plan: resolved.plan,
    now: () => service.clock.now(),
    serviceNames: resolved.serviceNames,
    // Billed requests from the log; the DLQ count is the dead-letter queue itself (user messages
    // that failed for good and were not deleted, at most max_dlq_size).
    traffic: {
      between: (fromMs, toMs) => service.log.usage.between(fromMs, toMs),
      day: (ms) => service.log.usage.day(ms),
      dlqMessages: () => service.dlq.size,
    },
    apiVersion: () => service.knobs.managementApi,
  });
  // The delivery side's plan defaults follow the account's plan (it can change at run time).
  service.usePlanSource(() => management.state.currentPlan());
  const app = createApp(service, management, report);
  const server = extras.tls === undefined ? createServer(app) : createTlsServer(extras.tls, app);
  extras.onServer?.(server);
  server.on('clientError', (_error, socket) => {
    if (socket.writable && !socket.destroyed) {
      socket.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 23\r\n\r\n{"error":"bad request"}',
      );
    } else {
      socket.destroy();
    }
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(resolved.port, resolved.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await service.close();
    throw error;
  }

  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `${extras.tls === undefined ? 'http' : 'https'}://${hostForUrl(address.address)}:${address.port}`,
    credentials: { token: resolved.token, email: resolved.email, apiKey: resolved.apiKey },
    setKnobs: (patch) => {
      service.setKnobs(patch);
    },
    knobs: () => service.knobs,
    groundTruth: () => service.groundTruth(),
    workflowGroundTruth: () => service.workflows.groundTruth(),
    reset: () => service.reset(),
    management: management.state,
    signingKeys: () => service.signingKeys.get(),
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await service.close();
      })();
      return closing;
    },
  };
}
