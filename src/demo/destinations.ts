// The demo's destinations: one node:http server per behaviour, each on its own loopback port so
// every behaviour is its own `destination` label (host:port) in the exporter's metrics.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SeededRandom } from '../emulator/random.js';

export const DESTINATION_KINDS = ['healthy', 'flaky', 'slow', 'failing'] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Share of requests the flaky destination answers with a 500. */
export const FLAKY_ERROR_RATIO = 0.1;
/** Delivery timeout the traffic gives messages to the slow destination (Upstash-Timeout). */
export const SLOW_TIMEOUT_MS = 2_000;
/** The slow destination answers after a uniform wait in this range: mostly just inside the timeout. */
export const SLOW_RESPONSE_MS = { min: 1_200, max: 2_400 } as const;

export interface Destinations {
  /** Base URL per behaviour, e.g. http://127.0.0.1:41234 (no trailing slash). */
  urls: Record<DestinationKind, string>;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function reply(res: ServerResponse, status: number, body: object): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Steps of the demo's workflows: /workflow/<name>/steps-<n> runs n steps (3 by default). */
const WORKFLOW_STEP_TYPES = ['Run', 'Call', 'SleepFor'] as const;

/**
 * The healthy destination also serves workflows (/workflow/...), answering each step delivery as
 * the emulator's workflow protocol asks: a step while steps remain, then a plain result.
 */
function workflowStep(req: IncomingMessage, res: ServerResponse): void {
  const step = Number(req.headers['upstash-workflow-step'] ?? '1');
  const steps = Number(/steps-(\d+)/.exec(req.url ?? '')?.[1] ?? '3');
  if (step > steps) {
    reply(res, 200, { result: 'done' });
    return;
  }
  reply(res, 200, {
    step: { name: `step-${step}`, type: WORKFLOW_STEP_TYPES[(step - 1) % WORKFLOW_STEP_TYPES.length] },
  });
}

function handlers(seed: number): Record<DestinationKind, Handler> {
  const random = new SeededRandom(seed);
  return {
    healthy: (req, res) =>
      (req.url ?? '').startsWith('/workflow/') ? workflowStep(req, res) : reply(res, 200, { ok: true }),
    flaky: (_req, res) => {
      if (random.chance(FLAKY_ERROR_RATIO)) reply(res, 500, { error: 'demo: flaky destination failed this time' });
      else reply(res, 200, { ok: true });
    },
    slow: (_req, res) => {
      const waitMs = SLOW_RESPONSE_MS.min + random.next() * (SLOW_RESPONSE_MS.max - SLOW_RESPONSE_MS.min);
      const timer = setTimeout(() => reply(res, 200, { ok: true, waitedMs: Math.round(waitMs) }), waitMs);
      // The emulator gives up at the message's timeout and closes the connection.
      res.once('close', () => clearTimeout(timer));
    },
    failing: (_req, res) => reply(res, 500, { error: 'demo: this destination always fails' }),
  };
}

async function listen(handler: Handler): Promise<Server> {
  const server = createServer((req, res) => {
    // Drain the body first: the answer does not depend on it.
    req.resume();
    req.once('end', () => handler(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** Starts the four destinations on free loopback ports. `seed` makes the flaky and slow draws repeat. */
export async function startDestinations(seed: number): Promise<Destinations> {
  const byKind = handlers(seed);
  const servers: Server[] = [];
  try {
    const urls = {} as Record<DestinationKind, string>;
    for (const kind of DESTINATION_KINDS) {
      const server = await listen(byKind[kind]);
      servers.push(server);
      urls[kind] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
    return { urls, close: async () => void (await Promise.all(servers.map(closeServer))) };
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    throw error;
  }
}
