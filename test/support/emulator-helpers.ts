// Shared helpers of the emulator tests: recording destinations (real node:http servers on
// 127.0.0.1), polling, an official SDK client pointed at an emulator (or one of its regions), and
// a multi-region emulator with each region's URL, token and signing keys.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/qstash';
import {
  createEmulator,
  regionEnvPrefix,
  type EmulatorHandle,
  type EmulatorOptions,
  type GroundTruth,
  type RegionHandle,
  type SigningKeyPair,
} from '../../src/emulator/index.js';

// The SDK switches to its own dev server or other regions when these are set.
for (const name of ['QSTASH_DEV', 'QSTASH_URL', 'QSTASH_TOKEN', 'QSTASH_REGION', 'UPSTASH_DISABLE_TELEMETRY'])
  delete process.env[name];

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Responder = (request: RecordedRequest, index: number) => Reply;

export interface Destination {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  requests: RecordedRequest[];
  /** Most requests that were being answered at the same time. */
  maxInFlight(): number;
  /** Resolves once `count` requests arrived (rejects after timeoutMs). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export async function startDestination(
  responder: Responder = () => ({ status: 200, body: 'ok' }),
): Promise<Destination> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = requests.length;
      requests.push(recorded);
      const reply = responder(recorded, index);
      const answer = (): void => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, reply.headers ?? {});
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, reply.delayMs);
        timers.add(timer);
      } else {
        answer();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    maxInFlight: () => maxInFlight,
    waitForRequests: async (count, timeoutMs = 5000) => {
      await waitFor(
        () => requests.length >= count,
        timeoutMs,
        () => `${count} requests (got ${requests.length})`,
      );
      return requests;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what: string | (() => string) = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Where a client reaches one region: the emulator's handle (its first region) or a region's. */
export type RegionEndpoint = Pick<RegionHandle, 'url' | 'credentials'>;

export function sdkClient(emulator: RegionEndpoint): Client {
  return new Client({ baseUrl: emulator.url, token: emulator.credentials.token, retry: false });
}

/** One region of startRegions(): what an app of that region is configured with. */
export interface RegionCredentials extends RegionEndpoint {
  name: string;
  token: string;
  signingKeys: SigningKeyPair;
  handle: RegionHandle;
}

export interface MultiRegionEmulator {
  emulator: EmulatorHandle;
  /** By name, e.g. regions['us-east-1']. */
  regions: Record<string, RegionCredentials>;
  /**
   * The official SDKs' migration-mode environment (QSTASH_REGION=<publishTo>, every region's
   * <REGION>_QSTASH_URL, _TOKEN, _CURRENT_SIGNING_KEY, _NEXT_SIGNING_KEY), as an app's .env has it.
   */
  migrationEnvironment(publishTo: string): Record<string, string>;
}

/** An emulator serving `names` (each region at its own free port); close it with `emulator.close()`. */
export async function startRegions(
  names: readonly string[] = ['eu-central-1', 'us-east-1'],
  options: Partial<EmulatorOptions> = {},
): Promise<MultiRegionEmulator> {
  const emulator = await createEmulator({ ...options, regions: [...names] });
  const regions: Record<string, RegionCredentials> = {};
  for (const handle of emulator.regions) {
    regions[handle.name] = {
      name: handle.name,
      url: handle.url,
      credentials: handle.credentials,
      token: handle.credentials.token,
      signingKeys: handle.signingKeys(),
      handle,
    };
  }
  return {
    emulator,
    regions,
    migrationEnvironment: (publishTo) => {
      const env: Record<string, string> = { QSTASH_REGION: regionEnvPrefix(publishTo) };
      for (const region of Object.values(regions)) {
        const prefix = regionEnvPrefix(region.name);
        env[`${prefix}_QSTASH_URL`] = region.url;
        env[`${prefix}_QSTASH_TOKEN`] = region.token;
        env[`${prefix}_QSTASH_CURRENT_SIGNING_KEY`] = region.signingKeys.current;
        env[`${prefix}_QSTASH_NEXT_SIGNING_KEY`] = region.signingKeys.next;
      }
      return env;
    },
  };
}

/** Raw log entries from /v2/logs (all pages). */
export async function allLogs(
  emulator: RegionEndpoint,
  query: Record<string, string> = {},
): Promise<Array<Record<string, unknown>>> {
  const entries: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const params = new URLSearchParams(query);
    if (cursor) params.set('cursor', cursor);
    const response = await fetch(`${emulator.url}/v2/logs?${params.toString()}`, {
      headers: { authorization: `Bearer ${emulator.credentials.token}` },
    });
    if (!response.ok) throw new Error(`logs answered ${response.status}: ${await response.text()}`);
    const page = (await response.json()) as { cursor?: string; logs: Array<Record<string, unknown>> };
    entries.push(...page.logs);
    cursor = page.cursor;
  } while (cursor);
  return entries;
}

/** States of one message, oldest first. */
export async function statesOf(emulator: RegionEndpoint, messageId: string): Promise<string[]> {
  const entries = await allLogs(emulator, { messageId });
  return entries.map((entry) => String(entry.state)).reverse();
}

/**
 * The region's ground truth once the `created` messages published to it have all ended
 * (delivered, failed or cancelled); throws after `timeoutMs` naming the states reached.
 */
export async function settledRegion(
  region: RegionCredentials,
  created: number,
  timeoutMs = 20_000,
): Promise<GroundTruth> {
  const ended = (b: GroundTruth['byState']): boolean =>
    b.CREATED === created && b.DELIVERED + b.FAILED + b.CANCELLED === created;
  await waitFor(
    () => ended(region.handle.groundTruth().byState),
    timeoutMs,
    () => `${region.name}: ${JSON.stringify(region.handle.groundTruth().byState)} of ${created} created`,
  );
  return region.handle.groundTruth();
}
