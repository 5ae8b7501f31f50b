// The logger factory: pino, JSON lines by default, pretty for people; secrets redacted twice,
// once by key (redact paths) and once by value (a scrub of every serialized line).

import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { createScrubber, REDACTED } from './scrub.js';

export type { Logger } from 'pino';
export type LogLevelName = Level | 'silent';
export type LogFormatName = 'json' | 'pretty';

export interface LoggerOptions {
  level: LogLevelName;
  format: LogFormatName;
  /** Values cut out of every line (tokens, API keys, Basic credentials). */
  secrets?: readonly string[];
  /** Where lines go; standard error when omitted. Tests pass a stream to capture output. */
  destination?: DestinationStream;
}

/** Keys whose values are secrets wherever they appear (headers, upstream records, options). */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'Proxy-Authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'token',
  'Token',
  'qstashToken',
  'qstash_token',
  'read_only_token',
  'readOnlyToken',
  'accessToken',
  'access_token',
  'apiKey',
  'api_key',
  'apikey',
  'upstash_api_key',
  'password',
  'Password',
  'secret',
  'clientSecret',
  'currentSigningKey',
  'nextSigningKey',
];

/** How deep redaction by key reaches: `key`, `*.key`, `*.*.key`, ... (values deeper are still scrubbed). */
const REDACT_DEPTH = 4;

/**
 * Key names that hold a secret whatever record they are in: a new product's records
 * (`rest_token`, `read_only_rest_token`, `db_password`, ...) are redacted without an edit here.
 */
const SECRET_KEY_NAME = /token|password|secret|api_?key|signing_?key/i;

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);

/** `value` with every key named like a secret redacted, to REDACT_DEPTH; copied only where it changes. */
function redactSecretNames(value: unknown, depth: number): unknown {
  if (depth > REDACT_DEPTH) return value;
  if (Array.isArray(value)) {
    const list: readonly unknown[] = value;
    let copy: unknown[] | null = null;
    list.forEach((item, i) => {
      const redacted = redactSecretNames(item, depth + 1);
      if (redacted !== item) (copy ??= [...list])[i] = redacted;
    });
    return copy ?? value;
  }
  if (!isPlain(value)) return value;
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const redacted =
      SECRET_KEY_NAME.test(key) && item !== undefined && item !== null ? REDACTED : redactSecretNames(item, depth + 1);
    if (redacted !== item) (copy ??= { ...value })[key] = redacted;
  }
  return copy ?? value;
}

function redactPaths(): string[] {
  return SECRET_KEYS.flatMap((key) => {
    // fast-redact syntax: `a.b` for identifiers, `a["b-c"]` for other keys.
    const leaf = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `["${key}"]`;
    return Array.from({ length: REDACT_DEPTH + 1 }, (_, depth) =>
      depth === 0 ? leaf.replace(/^\./, '') : `${Array(depth).fill('*').join('.')}${leaf}`,
    );
  });
}

export function createLogger(options: LoggerOptions): Logger {
  const scrub = createScrubber(options.secrets ?? []);
  const destination =
    options.format === 'pretty'
      ? pinoPretty({
          destination: options.destination ?? 2,
          sync: true,
          colorize: options.destination === undefined && process.stderr.isTTY,
          translateTime: 'SYS:standard',
          ignore: 'pid,hostname',
        })
      : (options.destination ?? pino.destination({ dest: 2, sync: true }));

  return pino(
    {
      level: options.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redactSecretNames(object, 0) as Record<string, unknown>,
      },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      redact: { paths: redactPaths(), censor: REDACTED },
      hooks: { streamWrite: scrub },
    },
    destination,
  );
}
