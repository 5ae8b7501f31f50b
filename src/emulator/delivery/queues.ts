// Named queues: created on first use (enqueue) or by upsert, with a parallelism (attempts of the
// queue's messages in flight at once) and a paused flag (a paused queue holds its messages).
import { EmulatorNotFoundError } from '../errors.js';

export interface QueueState {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  paused: boolean;
  /** Attempts of this queue's messages now in flight. */
  inFlight: number;
  /** Messages not yet in a final state (the queue's lag). */
  pending: number;
}

export interface QueueJson {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  lag: number;
  paused: boolean;
}

/** Parallelism of a queue created implicitly by an enqueue (the SDK's upsert default is 1 too). */
export const DEFAULT_QUEUE_PARALLELISM = 1;

export class QueueStore {
  private readonly queues = new Map<string, QueueState>();

  constructor(private readonly now: () => number) {}

  get(name: string): QueueState | undefined {
    return this.queues.get(name);
  }

  require(name: string): QueueState {
    const queue = this.queues.get(name);
    if (!queue) throw new EmulatorNotFoundError(`queue ${name} not found`);
    return queue;
  }

  /** The queue, created with default settings when it does not exist. */
  ensure(name: string): QueueState {
    let queue = this.queues.get(name);
    if (!queue) {
      const now = this.now();
      queue = {
        name,
        createdAt: now,
        updatedAt: now,
        parallelism: DEFAULT_QUEUE_PARALLELISM,
        paused: false,
        inFlight: 0,
        pending: 0,
      };
      this.queues.set(name, queue);
    }
    return queue;
  }

  upsert(name: string, settings: { parallelism?: number; paused?: boolean }): QueueState {
    const queue = this.ensure(name);
    if (settings.parallelism !== undefined) queue.parallelism = settings.parallelism;
    if (settings.paused !== undefined) queue.paused = settings.paused;
    queue.updatedAt = this.now();
    return queue;
  }

  delete(name: string): void {
    if (!this.queues.delete(name)) throw new EmulatorNotFoundError(`queue ${name} not found`);
  }

  list(): QueueState[] {
    return [...this.queues.values()];
  }

  clear(): void {
    this.queues.clear();
  }
}

export function queueJson(queue: QueueState): QueueJson {
  return {
    name: queue.name,
    createdAt: queue.createdAt,
    updatedAt: queue.updatedAt,
    parallelism: queue.parallelism,
    lag: queue.pending,
    paused: queue.paused,
  };
}
