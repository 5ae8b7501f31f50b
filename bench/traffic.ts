// Steady message traffic into the emulator for the benches and the soak: loopback destinations
// that answer 200, fail a message's first attempt, or always fail; and a publisher that keeps a
// given rate of messages per second (paced every 20 ms, bounded in flight) until stopped.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { sleep } from './measure.js';

export interface Destinations {
  /** Answers 200: a message makes CREATED, ACTIVE, DELIVERED (3 log entries). */
  ok: string;
  /** Answers 500 to a first attempt and 200 to a retry. */
  flaky: string;
  /** Always 500: every attempt fails until the retries are spent. */
  broken: string;
  close(): Promise<void>;
}

async function startServer(answer: (retried: string | undefined) => number): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const retried = req.headers['upstash-retried'];
      res.writeHead(answer(Array.isArray(retried) ? retried[0] : retried));
      res.end('bench');
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

export async function startDestinations(): Promise<Destinations> {
  const ok = await startServer(() => 200);
  const flaky = await startServer((retried) => (retried === undefined || retried === '0' ? 500 : 200));
  const broken = await startServer(() => 500);
  return {
    ok: ok.url,
    flaky: flaky.url,
    broken: broken.url,
    close: async () => {
      await Promise.all(
        [ok, flaky, broken].map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}

/** One kind of message the publisher sends; picked by weight. */
export interface MessageKind {
  /** Path below the emulator URL, e.g. `/v2/publish/http://127.0.0.1:4000/a`. */
  path: string;
  headers?: Record<string, string>;
  weight: number;
}

export interface PublisherOptions {
  emulatorUrl: string;
  token: string;
  kinds: readonly MessageKind[];
  random: () => number;
  /** Publishes in flight at once; beyond it the publisher falls behind (counted as `late`). */
  maxInFlight?: number;
}

export class Publisher {
  sent = 0;
  failed = 0;
  /** Messages the pacing wanted but could not send (too many in flight). */
  late = 0;
  #rate = 0;
  #inFlight = 0;
  #running: Promise<void> | null = null;
  #stop = false;
  readonly #agent: Agent;
  readonly #options: PublisherOptions;
  readonly #totalWeight: number;

  constructor(options: PublisherOptions) {
    this.#options = options;
    this.#agent = new Agent({ connections: options.maxInFlight ?? 64 });
    this.#totalWeight = options.kinds.reduce((sum, kind) => sum + kind.weight, 0);
  }

  start(messagesPerSecond: number): void {
    this.#rate = messagesPerSecond;
    this.#stop = false;
    this.#running ??= this.#loop();
  }

  /** Stops pacing and waits for the publishes in flight. */
  async stop(): Promise<void> {
    this.#stop = true;
    await this.#running;
    this.#running = null;
    while (this.#inFlight > 0) await sleep(5);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.#agent.close();
  }

  async #loop(): Promise<void> {
    const limit = this.#options.maxInFlight ?? 64;
    let last = performance.now();
    let owed = 0;
    while (!this.#stop) {
      await sleep(20);
      const now = performance.now();
      owed += ((now - last) / 1000) * this.#rate;
      last = now;
      while (owed >= 1) {
        owed -= 1;
        if (this.#inFlight >= limit) {
          this.late += 1;
          continue;
        }
        void this.#publishOne();
      }
    }
  }

  #pick(): MessageKind {
    let point = this.#options.random() * this.#totalWeight;
    for (const kind of this.#options.kinds) {
      point -= kind.weight;
      if (point < 0) return kind;
    }
    return this.#options.kinds[this.#options.kinds.length - 1]!;
  }

  async #publishOne(): Promise<void> {
    const kind = this.#pick();
    this.#inFlight += 1;
    try {
      const response = await request(`${this.#options.emulatorUrl}${kind.path}`, {
        dispatcher: this.#agent,
        method: 'POST',
        headers: { authorization: `Bearer ${this.#options.token}`, 'content-type': 'text/plain', ...kind.headers },
        body: 'bench',
      });
      await response.body.dump();
      if (response.statusCode === 200 || response.statusCode === 201 || response.statusCode === 202) this.sent += 1;
      else this.failed += 1;
    } catch {
      this.failed += 1;
    } finally {
      this.#inFlight -= 1;
    }
  }
}
