// bcrypt off the event loop. bcryptjs is JavaScript, tens of milliseconds per check on purpose;
// on the main thread a flood of wrong passwords blocked the polls and every other request. The
// checks run one at a time in a worker thread (as exporter-toolkit serialises them behind a
// mutex), and at most `maxPending` wait: beyond that the caller is told to come back later
// instead of queueing without bound.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Runs in the worker: the module path comes in workerData (an eval'd worker resolves from the working directory). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
parentPort.on('message', ({ password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage(ok);
});
`;

interface Job {
  password: string;
  hash: string;
  resolve: (ok: boolean) => void;
  reject: (error: Error) => void;
}

export interface BcryptWorkerOptions {
  /** Checks allowed to wait behind the running one. */
  maxPending: number;
  /** The worker thread ends after this long without work, ms (a new one starts on demand). */
  idleMs?: number;
}

export class BcryptWorker {
  readonly #options: Required<BcryptWorkerOptions>;
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #running: Job | undefined;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(options: BcryptWorkerOptions) {
    this.#options = { idleMs: 10_000, ...options };
  }

  /** Checks waiting, the running one included. */
  get pending(): number {
    return this.#queue.length + (this.#running === undefined ? 0 : 1);
  }

  /** Whether `password` matches the bcrypt `hash`; null when too many checks wait already. */
  compare(password: string, hash: string): Promise<boolean> | null {
    if (this.#queue.length >= this.#options.maxPending) return null;
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ password, hash, resolve, reject });
      this.#next();
    });
  }

  /** Ends the worker thread; waiting checks fail. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    this.#worker = undefined;
    for (const job of this.#queue.splice(0)) job.reject(new Error('bcrypt worker closed'));
    this.#running?.reject(new Error('bcrypt worker closed'));
    this.#running = undefined;
    await worker?.terminate();
  }

  #next(): void {
    if (this.#running !== undefined) return;
    const job = this.#queue.shift();
    if (job === undefined) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = setTimeout(() => void this.close(), this.#options.idleMs).unref();
      return;
    }
    clearTimeout(this.#idleTimer);
    this.#running = job;
    this.#ensureWorker().postMessage({ password: job.password, hash: job.hash });
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const bcryptjs = createRequire(import.meta.url).resolve('bcryptjs');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptjs } });
    // An idle worker never keeps the process alive.
    worker.unref();
    worker.on('message', (ok: unknown) => {
      const job = this.#running;
      this.#running = undefined;
      job?.resolve(ok === true);
      this.#next();
    });
    const fail = (error: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      const job = this.#running;
      this.#running = undefined;
      job?.reject(error);
      this.#next();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.#worker === worker) fail(new Error(`bcrypt worker exited with ${code}`));
    });
    this.#worker = worker;
    return worker;
  }
}
