// One delivery attempt over HTTP, with undici: the request with its headers and body, a hard
// timeout over the whole exchange, and the response captured for the log (status, headers,
// body up to a cap). Never throws: every outcome becomes an AttemptResult.
import { Agent, request } from 'undici';
import { canonicalHeaderName, type HeaderMap, type HttpMethod } from './message-options.js';
import { errorMessage } from '../../common/errors.js';

/** Response bodies kept for the log and callbacks are cut at this size. */
export const RESPONSE_BODY_CAP_BYTES = 64 * 1024;

export interface AttemptRequest {
  url: string;
  method: HttpMethod;
  headers: Record<string, string | string[]>;
  body: Buffer;
  timeoutMs: number;
}

export interface AttemptResult {
  /** True for a 2xx answer. */
  ok: boolean;
  /** HTTP status, absent when no answer came. */
  status?: number;
  /** Response headers by canonical name (`Retry-After`), as the service records them. */
  headers: HeaderMap;
  body: Buffer;
  /** What went wrong, for ERROR entries. */
  error?: string;
  /** The destination asked not to be retried (489 + NonRetryable-Error: true). */
  nonRetryable: boolean;
}

/**
 * Request signing (`Upstash-Signature`): returns extra headers for an attempt, computed per
 * attempt so each carries a fresh token. The implementation is in signing.ts.
 */
export type RequestSigner = (attempt: { url: string; body: Buffer }) => Record<string, string>;

export class HttpDelivery {
  private readonly agent = new Agent({ keepAliveTimeout: 4_000, connections: 256 });

  constructor(private readonly headerPrefix: string) {}

  async send(attempt: AttemptRequest): Promise<AttemptResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), attempt.timeoutMs);
    try {
      const response = await request(attempt.url, {
        dispatcher: this.agent,
        method: attempt.method,
        headers: attempt.headers,
        // GET requests carry no body toward the destination.
        body: attempt.method === 'GET' ? undefined : attempt.body,
        signal: controller.signal,
      });
      const chunks: Buffer[] = [];
      let kept = 0;
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        if (kept < RESPONSE_BODY_CAP_BYTES) {
          const slice = buffer.subarray(0, RESPONSE_BODY_CAP_BYTES - kept);
          chunks.push(slice);
          kept += slice.length;
        }
      }
      const headers = toHeaderMap(response.headers);
      const status = response.statusCode;
      const ok = status >= 200 && status < 300;
      const nonRetryable =
        status === 489 &&
        (headers[canonicalHeaderName(`${this.headerPrefix}NonRetryable-Error`)]?.[0] ?? '').toLowerCase() === 'true';
      return {
        ok,
        status,
        headers,
        body: Buffer.concat(chunks),
        error: ok ? undefined : `destination answered HTTP ${status}`,
        nonRetryable,
      };
    } catch (error) {
      return {
        ok: false,
        headers: {},
        body: Buffer.alloc(0),
        error: describeFailure(error, controller.signal.aborted, attempt.timeoutMs),
        nonRetryable: false,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

function toHeaderMap(headers: Record<string, string | string[] | undefined>): HeaderMap {
  const out: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[canonicalHeaderName(name)] = Array.isArray(value) ? value : [value];
  }
  return out;
}

/** Error text of an attempt with no usable answer: `timeout: ...`, `connection failed: ...` or `request failed: ...`. */
function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no response within ${timeoutMs}ms`;
  const code = findCode(error);
  if (
    code &&
    /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED|ETIMEDOUT)$/.test(
      code,
    )
  ) {
    return `connection failed: ${code}`;
  }
  const message = errorMessage(error);
  return `request failed: ${code ? `${code} ` : ''}${message}`.slice(0, 500);
}

function findCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current === 'object' && 'code' in current && typeof current.code === 'string') return current.code;
    current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}
