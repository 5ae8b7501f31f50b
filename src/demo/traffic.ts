// The demo's traffic: sets up three queues (one paused), a URL group of three endpoints and three
// schedules on the emulator, then publishes a steady mix of messages and triggers workflows (one of
// which always fails), all through the emulator's real HTTP API (what a QStash client sends:
// /v2/publish, /v2/enqueue, /v2/trigger, /v2/topics, /v2/queues, /v2/schedules). Plain undici
// requests, so the demo runs from a production install.
import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import type { Logger } from '../logging/index.js';
import { SLOW_TIMEOUT_MS, type DestinationKind } from './destinations.js';

export interface TrafficOptions {
  /** Base URL of the emulator. */
  emulatorUrl: string;
  /** Delivery token (Bearer). */
  token: string;
  /** Base URL of each destination. */
  destinations: Record<DestinationKind, string>;
  logger: Logger;
  /** Time between two rounds of publishing; one round is the mix below. */
  tickMs?: number;
  /** `mixed` (default): failures, a paused queue, a slow destination; `healthy`: none of them. */
  scenario?: DemoScenario;
}

/**
 * What the demo's traffic shows: `mixed` sets off alerts on purpose (a failing destination and
 * schedule, a flaky one, a slow one, a paused queue); `healthy` sends only what succeeds at once,
 * so the shipped alert rules stay quiet: what a quiet exporter looks like.
 */
export const DEMO_SCENARIOS = ['mixed', 'healthy'] as const;
export type DemoScenario = (typeof DEMO_SCENARIOS)[number];

const PREFIX = 'Upstash-';
const DEFAULT_TICK_MS = 1_000;
/** Retry waits on the emulator's virtual clock (5 s, 10 s, 20 s...): fractions of a second at time scale 60. */
const RETRY_DELAY = 'pow(2, retried) * 5000';

export const DEMO_QUEUES = [
  { queueName: 'orders', parallelism: 2 },
  { queueName: 'emails', parallelism: 1 },
  // Paused: its backlog (lag) grows by one every 5 rounds while the demo runs.
  { queueName: 'invoices', parallelism: 1, paused: true },
] as const;

/** The queues of a scenario: in the healthy one none paused, and wide enough that nothing waits long. */
function queuesOf(scenario: DemoScenario): { queueName: string; parallelism: number; paused?: boolean }[] {
  return DEMO_QUEUES.map((queue) => (scenario === 'healthy' ? { ...queue, parallelism: 10, paused: false } : queue));
}

/** Flow-control key of two messages a round: at most one in flight, so one often waits. */
export const DEMO_FLOW_CONTROL_KEY = 'demo-tenant';

export const DEMO_URL_GROUP = 'fanout';

/** Endpoints of the URL group: two on the healthy destination, one on the flaky one (healthy too in that scenario). */
function urlGroupEndpoints(
  urls: Record<DestinationKind, string>,
  scenario: DemoScenario,
): { name: string; url: string }[] {
  return [
    { name: 'primary', url: `${urls.healthy}/fanout/primary` },
    { name: 'secondary', url: `${urls.healthy}/fanout/secondary` },
    { name: 'audit', url: `${scenario === 'healthy' ? urls.healthy : urls.flaky}/fanout/audit` },
  ];
}

/** Whether a destination (a URL, or the URL group) belongs to the scenario. */
function inScenario(destination: string, urls: Record<DestinationKind, string>, scenario: DemoScenario): boolean {
  if (scenario === 'mixed') return true;
  return destination === DEMO_URL_GROUP || destination.startsWith(urls.healthy);
}

interface ScheduleSpec {
  scheduleId: string;
  cron: string;
  /** A URL or the URL group name. */
  destination: string;
  headers: Record<string, string>;
}

/** Crons run on the emulator's virtual clock: `* * * * *` fires every second at time scale 60. */
function schedules(urls: Record<DestinationKind, string>): ScheduleSpec[] {
  return [
    {
      scheduleId: 'demo-heartbeat',
      cron: '* * * * *',
      destination: `${urls.healthy}/heartbeat`,
      headers: { Label: 'heartbeat' },
    },
    {
      scheduleId: 'demo-digest',
      cron: '*/2 * * * *',
      destination: DEMO_URL_GROUP,
      headers: { Label: 'digest', 'Retry-Delay': RETRY_DELAY },
    },
    // The failing one: its destination always answers 500 and it has no retries, so every run FAILs.
    {
      scheduleId: 'demo-partner-sync',
      cron: '*/3 * * * *',
      destination: `${urls.failing}/sync`,
      headers: { Label: 'partner-sync', Retries: '0' },
    },
  ];
}

interface Publication {
  /** Path below the emulator URL, the destination raw in it as the SDKs send it. */
  path: string;
  /** Service headers without the prefix. */
  headers: Record<string, string>;
  /** Published on every n-th round. */
  everyRounds: number;
}

/** One round of messages: healthy, flaky (via a queue), slow near its timeout, failing, the URL group. */
function publications(urls: Record<DestinationKind, string>): Publication[] {
  return [
    { path: `/v2/publish/${urls.healthy}/signup`, headers: { Label: 'signup' }, everyRounds: 1 },
    { path: `/v2/enqueue/emails/${urls.healthy}/welcome-email`, headers: { Label: 'email' }, everyRounds: 1 },
    {
      path: `/v2/enqueue/orders/${urls.flaky}/orders`,
      headers: { Label: 'checkout', Retries: '3', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 1,
    },
    {
      path: `/v2/enqueue/orders/${urls.flaky}/refunds`,
      headers: { Label: 'checkout', Retries: '3', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 1,
    },
    {
      path: `/v2/publish/${urls.slow}/report`,
      headers: { Label: 'reports', Timeout: `${SLOW_TIMEOUT_MS / 1000}s`, Retries: '2', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 1,
    },
    {
      path: `/v2/publish/${urls.failing}/webhook`,
      headers: { Label: 'partner-webhook', Retries: '1', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 1,
    },
    {
      path: `/v2/publish/${DEMO_URL_GROUP}`,
      headers: { Label: 'broadcast', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 2,
    },
    { path: `/v2/enqueue/invoices/${urls.healthy}/invoice`, headers: { Label: 'invoice' }, everyRounds: 5 },
    ...[1, 2].map(() => ({
      path: `/v2/publish/${urls.healthy}/tenant-sync`,
      headers: {
        Label: 'tenant-sync',
        'Flow-Control-Key': DEMO_FLOW_CONTROL_KEY,
        'Flow-Control-Value': 'parallelism=1, rate=20, period=1s',
      },
      everyRounds: 1,
    })),
    // Workflows (Upstash Workflow): the healthy destination runs their steps; the one on the
    // failing destination fails its first step after a retry, so its runs end RUN_FAILED.
    {
      path: `/v2/trigger/${urls.healthy}/workflow/onboarding/steps-3`,
      headers: { Label: 'onboarding' },
      everyRounds: 2,
    },
    { path: `/v2/trigger/${urls.healthy}/workflow/report/steps-5`, headers: { Label: 'report' }, everyRounds: 3 },
    {
      path: `/v2/trigger/${urls.failing}/workflow/sync`,
      headers: { Label: 'partner-sync-workflow', Retries: '1', 'Retry-Delay': RETRY_DELAY },
      everyRounds: 4,
    },
  ];
}

function prefixed(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [`${PREFIX}${name}`, value]));
}

export class TrafficError extends Error {
  readonly code = 'ERR_DEMO_TRAFFIC';
}

export class DemoTraffic {
  private readonly agent = new Agent({ keepAliveTimeout: 4_000, connections: 32 });
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private round = 0;
  private sequence = 0;
  private published = 0;
  private failures = 0;
  private readonly publications: readonly Publication[];
  private readonly scenario: DemoScenario;

  constructor(private readonly options: TrafficOptions) {
    const urls = options.destinations;
    const scenario = options.scenario ?? 'mixed';
    // A publication's destination is what follows its verb (`/v2/publish/<destination>`).
    this.publications = publications(urls)
      .filter((p) => inScenario(p.path.split('/').slice(3).join('/'), urls, scenario))
      .map((p) =>
        // Flow control loose enough that nothing waits long: no waitlist growing, no saturation.
        scenario === 'healthy' && p.headers['Flow-Control-Key'] !== undefined
          ? { ...p, headers: { ...p.headers, 'Flow-Control-Value': 'parallelism=10, rate=100, period=1s' } }
          : p,
      );
    this.scenario = scenario;
    // Every publish in flight listens for the stop: a round sends one per publication and may
    // overlap the next few while the emulator is busy. Node warns of a leak past 10 listeners.
    setMaxListeners(4 * this.publications.length, this.stopping.signal);
  }

  /** Messages accepted by the emulator so far, and publish requests that failed. */
  stats(): { published: number; failures: number } {
    return { published: this.published, failures: this.failures };
  }

  /** Creates the queues, the URL group and the schedules; rejects with TrafficError if the emulator refuses. */
  async setUp(): Promise<void> {
    const urls = this.options.destinations;
    for (const queue of queuesOf(this.scenario)) {
      await this.send('POST', '/v2/queues', { 'content-type': 'application/json' }, JSON.stringify(queue));
    }
    await this.send(
      'POST',
      `/v2/topics/${DEMO_URL_GROUP}/endpoints`,
      { 'content-type': 'application/json' },
      JSON.stringify({ endpoints: urlGroupEndpoints(urls, this.scenario) }),
    );
    for (const schedule of schedules(urls).filter((spec) => inScenario(spec.destination, urls, this.scenario))) {
      const headers = prefixed({ ...schedule.headers, Cron: schedule.cron, 'Schedule-Id': schedule.scheduleId });
      await this.send(
        'POST',
        `/v2/schedules/${schedule.destination}`,
        { ...headers, 'content-type': 'application/json' },
        JSON.stringify({ schedule: schedule.scheduleId }),
      );
    }
  }

  /** Publishes one round now, then one every tick. */
  start(): void {
    if (this.timer !== undefined) return;
    this.publishRound();
    this.timer = setInterval(() => this.publishRound(), this.options.tickMs ?? DEFAULT_TICK_MS);
  }

  /** Stops publishing and waits for the requests in flight (aborted). */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await Promise.allSettled([...this.inFlight]);
    await this.agent.close();
  }

  private publishRound(): void {
    if (this.stopping.signal.aborted) return;
    this.round += 1;
    for (const publication of this.publications) {
      if (this.round % publication.everyRounds !== 0) continue;
      this.sequence += 1;
      const body = JSON.stringify({ demo: true, sequence: this.sequence, sentAt: new Date().toISOString() });
      const headers = { ...prefixed(publication.headers), 'content-type': 'application/json' };
      const pending = this.send('POST', publication.path, headers, body).then(
        () => {
          this.published += 1;
        },
        (error: unknown) => {
          if (this.stopping.signal.aborted) return;
          this.failures += 1;
          this.options.logger.warn(
            { err: error, path: publication.path.split('/').slice(0, 3).join('/') },
            'demo traffic: publishing failed',
          );
        },
      );
      this.inFlight.add(pending);
      void pending.finally(() => this.inFlight.delete(pending));
    }
  }

  private async send(method: 'POST', path: string, headers: Record<string, string>, body: string): Promise<void> {
    const response = await request(`${this.options.emulatorUrl}${path}`, {
      dispatcher: this.agent,
      method,
      headers: { ...headers, authorization: `Bearer ${this.options.token}` },
      body,
      signal: this.stopping.signal,
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) {
      throw new TrafficError(
        `${method} ${path.split('/').slice(0, 3).join('/')} answered ${response.statusCode}: ${text.slice(0, 200)}`,
      );
    }
  }
}
