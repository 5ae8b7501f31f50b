// Which of two paths serves an endpoint the service exposes under two names: the delivery logs
// (`GET /v2/events`, what every official SDK calls; `GET /v2/logs`, what the OpenAPI documents)
// and the workflow runs (`GET /v2/workflows/events?groupBy=workflowRunId`, what the official
// workflow SDK and Upstash's MCP server call; `GET /v2/workflows/logs`, the OpenAPI's). The
// configured (or default) one is used; when it answers 404 before it ever answered, the other is
// tried once, and the one that answers is logged and kept until restart. Once a path has
// answered, its 404s are passed on (a refused cursor says 404 too). A 404 on both before either
// answered is ApiEndpointAbsentError: the service has neither, and the next request tries both.
import { ApiEndpointAbsentError, ApiNotFoundError } from './errors.js';
import type { ApiLogger } from './http-types.js';

const EVENTS = '/v2/events';
const LOGS = '/v2/logs';
const WORKFLOW_EVENTS = '/v2/workflows/events';
const WORKFLOW_LOGS = '/v2/workflows/logs';

/** The other logs path for a configured one, or null for a path that is neither. */
export function otherLogsPath(path: string): string | null {
  return otherOf(path, EVENTS, LOGS);
}

/** The other workflow runs path, or null for a path that is neither. */
export function otherWorkflowRunsPath(path: string): string | null {
  return otherOf(path, WORKFLOW_EVENTS, WORKFLOW_LOGS);
}

/** Whether a workflow runs path is the SDK's, which is asked with `groupBy=workflowRunId`. */
export function isWorkflowEventsPath(path: string): boolean {
  return path.endsWith(WORKFLOW_EVENTS);
}

function otherOf(path: string, first: string, second: string): string | null {
  if (path.endsWith(first)) return path.slice(0, -first.length) + second;
  if (path.endsWith(second)) return path.slice(0, -second.length) + first;
  return null;
}

export interface PathChoiceOptions {
  /** The path tried first. */
  configured: string;
  /** The path tried after a first 404 (null: none). */
  other: string | null;
  /** What the endpoint serves, for messages: `the logs`, `the workflow runs`. */
  serves: string;
  /** What to do when neither answers, for the error: `set logs.path to the logs endpoint`. */
  remedy: string;
  logger?: ApiLogger | undefined;
}

export class PathChoice {
  #current: string;
  /** A path answered (2xx or any error but 404): no more switching. */
  #settled = false;
  readonly #other: string | null;
  readonly #options: PathChoiceOptions;

  constructor(options: PathChoiceOptions) {
    this.#current = options.configured;
    this.#other = options.other;
    this.#options = options;
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
      const other = this.#settled ? null : this.#otherOf(this.#current);
      if (!(error instanceof ApiNotFoundError) || other === null) {
        // Any other answer of the service shows the path is routed; a network error does not.
        if (!(error instanceof ApiNotFoundError) && (error as { status?: number }).status !== undefined)
          this.#settled = true;
        throw error;
      }
      let value: T;
      try {
        value = await send(other);
      } catch (second) {
        if (second instanceof ApiNotFoundError) {
          throw new ApiEndpointAbsentError(
            `neither ${this.#current} nor ${other} serves ${this.#options.serves} (404 on both); ${this.#options.remedy}`,
            {
              api: error.api,
              endpoint: this.#current,
              method: error.method,
              status: 404,
            },
          );
        }
        throw second;
      }
      this.#options.logger?.warn(
        { configured: this.#current, using: other },
        `the path ${this.#current} answered 404; ${other} answers and is used until restart`,
      );
      this.#current = other;
      this.#settled = true;
      return value;
    }
  }

  #otherOf(path: string): string | null {
    if (path === this.#options.configured) return this.#other;
    return path === this.#other ? this.#options.configured : null;
  }
}
