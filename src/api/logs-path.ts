// Which path serves the delivery logs. Every official SDK calls `GET /v2/events`; the OpenAPI
// documents `GET /v2/logs`. The configured one is used; when it answers 404 before it ever
// answered, the other is tried once, the one that answers is logged and kept until restart.
// Once a path has answered, its 404s are passed on (a refused cursor says 404 too).
import { ApiNotFoundError } from './errors.js';
import type { ApiLogger } from './http-types.js';

const EVENTS = '/v2/events';
const LOGS = '/v2/logs';

/** The other logs path for a configured one, or null for a path that is neither. */
export function otherLogsPath(path: string): string | null {
  if (path.endsWith(EVENTS)) return path.slice(0, -EVENTS.length) + LOGS;
  if (path.endsWith(LOGS)) return path.slice(0, -LOGS.length) + EVENTS;
  return null;
}

export class LogsPathChoice {
  #current: string;
  /** A path answered (2xx or any error but 404): no more switching. */
  #settled = false;
  readonly #logger: ApiLogger | undefined;

  constructor(configured: string, logger?: ApiLogger) {
    this.#current = configured;
    this.#logger = logger;
  }

  get current(): string {
    return this.#current;
  }

  /** Run `send` on the current path, and on the other one after a first 404. */
  async request<T>(send: (path: string) => Promise<T>): Promise<T> {
    try {
      const value = await send(this.#current);
      this.#settled = true;
      return value;
    } catch (error) {
      const other = this.#settled ? null : otherLogsPath(this.#current);
      if (!(error instanceof ApiNotFoundError) || other === null) {
        // Any other answer of the service shows the path is routed; a network error does not.
        if (!(error instanceof ApiNotFoundError) && (error as { status?: number }).status !== undefined) this.#settled = true;
        throw error;
      }
      let value: T;
      try {
        value = await send(other);
      } catch (second) {
        if (second instanceof ApiNotFoundError) {
          throw new ApiNotFoundError(`neither ${this.#current} nor ${other} serves the logs (404 on both); set logs.path to the logs endpoint`, {
            api: error.api,
            endpoint: this.#current,
            method: error.method,
            status: 404,
          });
        }
        throw second;
      }
      this.#logger?.warn({ configured: this.#current, using: other }, `the logs path ${this.#current} answered 404; ${other} answers and is used until restart`);
      this.#current = other;
      this.#settled = true;
      return value;
    }
  }
}
