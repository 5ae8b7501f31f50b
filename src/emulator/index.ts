// The emulator of the delivery service and the management interface: one or more QStash
// regions, each its own delivery API at its own address, and the account's management API
// served on every one of them. createEmulator() starts it; the handle gives each region's URL,
// credentials, knobs and ground truth.
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { createApp } from './app.js';
import type { Knobs } from './knobs.js';
import { hostForUrl } from '../common/url.js';
import type { GroundTruth } from './delivery/log-store.js';
import {
  createManagement,
  type Management,
  type ManagementResources,
  type ManagementState,
} from './management/index.js';
import { resolveRegionOptions, type EmulatorOptions } from './options.js';
import { DeliveryService } from './delivery/service.js';
import type { SigningKeyPair } from './delivery/signing.js';
import type { WorkflowGroundTruth } from './delivery/workflows.js';

export type { EmulatorOptions, PlanProfile, RegionOptions } from './options.js';
export { DEFAULT_REGION, KNOWN_REGIONS, regionEnvPrefix } from './regions.js';
export { DEV_CREDENTIALS, PLAN_DEFAULTS } from './options.js';
export type { FaultScope, Knobs } from './knobs.js';
export type { GroundTruth, GroundTruthSeries, LogState } from './delivery/log-store.js';
export { DEV_SIGNING_KEYS, type SigningKeyPair } from './delivery/signing.js';
export type { WorkflowGroundTruth } from './delivery/workflows.js';

/** One region's delivery API: its address, token, signing keys, knobs and ground truth. */
export interface RegionHandle {
  /** As the account records spell it: `eu-central-1`, `us-east-1`. */
  name: string;
  /** http://127.0.0.1:PORT — the region's delivery API, and the account's management API too. */
  url: string;
  /** `token` is the region's own; email and API key are the account's (the same in every region). */
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
  /** The signing keys in force: deliveries are signed with `current` (GET /v2/keys answers the same). */
  signingKeys(): SigningKeyPair;
}

/** The emulator: its first region's handle, every region, the account's management data. */
export interface EmulatorHandle extends RegionHandle {
  /** Every region served, the first one first (the handle's own fields are the first region's). */
  regions: RegionHandle[];
  /** A region by name; throws for one not served. */
  region(name: string): RegionHandle;
  /** The management interface's account (regional users, plans, usage), to read and change in process. */
  management: ManagementState;
  /** The management interface's products (search and vector indexes, Redis databases), by name, to read and change in process. */
  managementResources: ManagementResources;
  close(): Promise<void>;
}

export interface CreateEmulatorExtras {
  /** Where unexpected internal errors are reported; silent by default. */
  report?: (line: string) => void;
  /** Serve every region over TLS with this key and certificate (PEM); the URLs are then https://. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Handed each region's server before it listens (a test counting the connections and requests it gets). */
  onServer?: (server: Server) => void;
}

interface RunningRegion {
  handle: RegionHandle;
  close(): Promise<void>;
}

/** Starts one region's server; rejects when it cannot listen (the service is closed again). */
async function startRegion(
  service: DeliveryService,
  management: Management,
  report: (line: string) => void,
  extras: Pick<CreateEmulatorExtras, 'tls' | 'onServer'>,
): Promise<RunningRegion> {
  const { options } = service;
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
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await service.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  return {
    handle: {
      name: options.region,
      url: `${extras.tls === undefined ? 'http' : 'https'}://${hostForUrl(address.address)}:${address.port}`,
      credentials: { token: options.token, email: options.email, apiKey: options.apiKey },
      setKnobs: (patch) => {
        service.setKnobs(patch);
      },
      knobs: () => service.knobs,
      groundTruth: () => service.groundTruth(),
      workflowGroundTruth: () => service.workflows.groundTruth(),
      reset: () => service.reset(),
      signingKeys: () => service.signingKeys.get(),
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await service.close();
    },
  };
}

export async function createEmulator(
  options: Partial<EmulatorOptions> = {},
  extras: CreateEmulatorExtras = {},
): Promise<EmulatorHandle> {
  const resolved = resolveRegionOptions(options);
  const report = extras.report ?? (() => undefined);
  const services = resolved.map((region) => new DeliveryService(region, report));
  const primary = services[0]!;
  const management = createManagement({
    email: primary.options.email,
    apiKey: primary.options.apiKey,
    deliveryToken: primary.options.token,
    plan: primary.options.plan,
    now: () => primary.clock.now(),
    serviceNames: primary.options.serviceNames,
    // Each region's user: its token and plan; its usage is its own delivery API's billed
    // requests from the log, and its DLQ count the dead-letter queue itself (user messages that
    // failed for good and were not deleted, at most max_dlq_size).
    regions: services.map((service) => ({
      region: service.options.region,
      token: service.options.token,
      plan: service.options.plan,
      traffic: {
        between: (fromMs, toMs) => service.log.usage.between(fromMs, toMs),
        day: (ms) => service.log.usage.day(ms),
        dlqMessages: () => service.dlq.size,
      },
    })),
    // The management API is the account's: the first region's knob says which version it serves.
    apiVersion: () => primary.knobs.managementApi,
  });
  // Each delivery side's plan defaults follow its user's plan (it can change at run time).
  for (const service of services) service.usePlanSource(() => management.state.currentPlan(service.options.region));

  const running: RunningRegion[] = [];
  try {
    for (const service of services) running.push(await startRegion(service, management, report, extras));
  } catch (error) {
    await Promise.all(running.map((region) => region.close()));
    // Regions that never started still hold their timers and agents.
    await Promise.all(services.slice(running.length + 1).map((service) => service.close()));
    throw error;
  }

  const regions = running.map((region) => region.handle);
  let closing: Promise<void> | undefined;
  return {
    ...regions[0]!,
    regions,
    region: (name) => {
      const found = regions.find((region) => region.name === name);
      if (!found)
        throw new TypeError(`region ${name} is not served (served: ${regions.map((r) => r.name).join(', ')})`);
      return found;
    },
    management: management.state,
    managementResources: management.resources,
    close: () => {
      closing ??= Promise.all(running.map((region) => region.close())).then(() => undefined);
      return closing;
    },
  };
}
