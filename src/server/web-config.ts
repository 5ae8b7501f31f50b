// The web configuration file in the Prometheus exporter-toolkit format (--web-config-file):
// TLS, optional client certificates, basic auth users with bcrypt hashes, and a few security
// headers. It is user input, so it is validated strictly: an unknown key is an error, not a
// silently ignored setting. Relative paths resolve against the file's own folder, as in the
// toolkit.

import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type TlsOptions } from 'node:tls';
import type { Logger } from '../logging/index.js';
import YAML from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../config/errors.js';
import { BcryptWorker } from './bcrypt-worker.js';

const CONFIG_KEY = 'web_config_file';

export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;
type TlsVersionName = keyof typeof TLS_VERSIONS;

/** The security headers the toolkit allows in http_server_config.headers. */
const ALLOWED_HEADERS = [
  'Content-Security-Policy',
  'X-Frame-Options',
  'X-Content-Type-Options',
  'X-XSS-Protection',
  'Strict-Transport-Security',
] as const;

// $2a$/$2b$/$2y$, two-digit cost, 53 characters of salt and hash in bcrypt's base64 alphabet.
const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

const TlsSchema = z
  .strictObject({
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    client_auth_type: z.enum(CLIENT_AUTH_TYPES).optional(),
    client_ca_file: z.string().min(1).optional(),
    min_version: z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]).optional(),
    max_version: z.enum(Object.keys(TLS_VERSIONS) as [TlsVersionName, ...TlsVersionName[]]).optional(),
  })
  .superRefine((tls, ctx) => {
    if ((tls.cert_file === undefined) === (tls.cert === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of cert_file or cert' });
    }
    if ((tls.key_file === undefined) === (tls.key === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of key_file or key' });
    }
    const verifies = tls.client_auth_type === 'VerifyClientCertIfGiven' || tls.client_auth_type === 'RequireAndVerifyClientCert';
    if (verifies && tls.client_ca_file === undefined) {
      ctx.addIssue({ code: 'custom', path: ['client_ca_file'], message: `is required with client_auth_type ${tls.client_auth_type}` });
    }
  });

const WebConfigSchema = z.strictObject({
  tls_server_config: TlsSchema.nullish(),
  http_server_config: z
    .strictObject({
      headers: z.partialRecord(z.enum(ALLOWED_HEADERS), z.string()).nullish(),
    })
    .nullish(),
  basic_auth_users: z
    .record(z.string().min(1).regex(/^[^:]+$/, 'a user name cannot contain ":"'), z.string().regex(BCRYPT_HASH, 'must be a bcrypt hash ($2a$, $2b$ or $2y$)'))
    .nullish(),
});

export interface TlsSettings {
  clientAuthType: ClientAuthType;
  /** Options for https.createServer / server.setSecureContext (PEM contents, not paths). */
  options: TlsOptions;
}

export interface WebConfig {
  /** Absolute path of the file. */
  path: string;
  tls: TlsSettings | null;
  /** User name -> bcrypt hash; empty when basic auth is off. */
  users: ReadonlyMap<string, string>;
  headers: Readonly<Record<string, string>>;
}

/** Reads and validates the web config file. Throws ConfigError (one line, exit 2 at start). */
export function loadWebConfig(path: string): WebConfig {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(CONFIG_KEY, `web config file ${path} cannot be read (${ioReason(error)})`);
  }
  let document: unknown;
  try {
    document = YAML.parse(text) ?? {};
  } catch (error) {
    // First line only: the rest is a source excerpt, which could show an inline private key.
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    throw new ConfigError(CONFIG_KEY, `web config file ${path} is not valid YAML: ${reason}`);
  }
  const parsed = WebConfigSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
    throw new ConfigError(CONFIG_KEY, `web config file ${path}: ${where}${issue === undefined ? 'invalid' : issueMessage(issue)}`);
  }
  const config = parsed.data;
  const baseDir = dirname(absolute);
  return {
    path: absolute,
    tls: config.tls_server_config == null ? null : buildTls(config.tls_server_config, baseDir, path),
    users: new Map(Object.entries(config.basic_auth_users ?? {})),
    headers: Object.fromEntries(
      Object.entries(config.http_server_config?.headers ?? {}).filter((e): e is [string, string] => e[1] !== undefined),
    ),
  };
}

/** A record key's own problem is nested inside zod's generic "Invalid key in record". */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0];
    if (inner !== undefined) return `invalid user name: ${inner.message}`;
  }
  return issue.message;
}

function buildTls(tls: z.infer<typeof TlsSchema>, baseDir: string, path: string): TlsSettings {
  const read = (file: string, what: string): string => {
    const full = resolve(baseDir, file);
    try {
      return readFileSync(full, 'utf8');
    } catch (error) {
      throw new ConfigError(CONFIG_KEY, `web config file ${path}: ${what} ${file} cannot be read (${ioReason(error)})`);
    }
  };
  const cert = tls.cert ?? read(tls.cert_file ?? '', 'cert_file');
  const key = tls.key ?? read(tls.key_file ?? '', 'key_file');
  const clientAuthType = tls.client_auth_type ?? 'NoClientCert';
  const options: TlsOptions = { cert, key };
  if (tls.client_ca_file !== undefined) options.ca = read(tls.client_ca_file, 'client_ca_file');
  if (clientAuthType !== 'NoClientCert') options.requestCert = true;
  // Only RequireAndVerify lets the handshake itself reject; the other modes are checked per
  // request (clientCertificateProblem) so the client gets an HTTP answer.
  options.rejectUnauthorized = clientAuthType === 'RequireAndVerifyClientCert';
  if (tls.min_version !== undefined) options.minVersion = TLS_VERSIONS[tls.min_version];
  if (tls.max_version !== undefined) options.maxVersion = TLS_VERSIONS[tls.max_version];
  try {
    // Fails now on an unreadable PEM or a key that does not match the certificate.
    createSecureContext(options);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(CONFIG_KEY, `web config file ${path}: the TLS certificate or key is not usable (${reason})`);
  }
  return { clientAuthType, options };
}

function ioReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

/**
 * Why a request's client certificate is not acceptable under the configured client_auth_type,
 * or null when it is. `authorized` and `hasCertificate` come from the TLS socket.
 */
export function clientCertificateProblem(
  type: ClientAuthType,
  peer: { authorized: boolean; hasCertificate: boolean },
): string | null {
  switch (type) {
    case 'NoClientCert':
    case 'RequestClientCert':
      return null;
    case 'RequireAnyClientCert':
      return peer.hasCertificate ? null : 'a client certificate is required';
    case 'VerifyClientCertIfGiven':
      return !peer.hasCertificate || peer.authorized ? null : 'the client certificate is not trusted';
    case 'RequireAndVerifyClientCert':
      return peer.hasCertificate && peer.authorized ? null : 'a trusted client certificate is required';
  }
}

// ---- live file --------------------------------------------------------------------------------

export interface WebConfigWatcherOptions {
  logger: Logger;
  /** Least time between two stat() calls of the file, ms (the file is checked on requests). */
  checkIntervalMs?: number;
  /** Called with new TLS options when the certificate files changed (server.setSecureContext). */
  onTlsChange?: (tls: TlsSettings) => void;
}

/**
 * Keeps the web config current: on requests, at most once per check interval, stats the file
 * and re-reads it when it changed, so new users, passwords and certificates apply without a
 * restart. A file that became invalid is reported in the log and the previous config is kept.
 */
export class WebConfigWatcher {
  #config: WebConfig;
  #signature: string | null = null;
  #lastCheck = 0;
  #checking: Promise<void> | undefined;
  readonly #options: WebConfigWatcherOptions;
  readonly #checkIntervalMs: number;

  private constructor(config: WebConfig, options: WebConfigWatcherOptions) {
    this.#config = config;
    this.#options = options;
    this.#checkIntervalMs = options.checkIntervalMs ?? 1_000;
  }

  /** Loads the file (strictly; throws ConfigError) and remembers its signature. */
  static async open(path: string, options: WebConfigWatcherOptions): Promise<WebConfigWatcher> {
    const config = loadWebConfig(path);
    const watcher = new WebConfigWatcher(config, options);
    watcher.#signature = await fileSignature(config.path);
    watcher.#lastCheck = Date.now();
    return watcher;
  }

  get current(): WebConfig {
    return this.#config;
  }

  /** Re-reads the file when its mtime/size changed; cheap when called on every request. */
  refresh(): Promise<void> {
    if (Date.now() - this.#lastCheck < this.#checkIntervalMs) return Promise.resolve();
    this.#checking ??= this.#check().finally(() => {
      this.#checking = undefined;
      this.#lastCheck = Date.now();
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    const signature = await fileSignature(this.#config.path);
    if (signature === this.#signature) return;
    const logger = this.#options.logger;
    if (signature === null) {
      if (this.#signature !== null) logger.error({ file: this.#config.path }, 'web config file is gone; keeping the previous settings');
      this.#signature = null;
      return;
    }
    this.#signature = signature;
    let next: WebConfig;
    try {
      next = loadWebConfig(this.#config.path);
    } catch (error) {
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'web config file changed but is invalid; keeping the previous settings');
      return;
    }
    const previous = this.#config;
    this.#config = next;
    if ((previous.tls === null) !== (next.tls === null)) {
      logger.warn('web config: turning TLS on or off needs a restart; only users, headers and certificates reload');
    } else if (next.tls !== null) {
      this.#options.onTlsChange?.(next.tls);
    }
    logger.info({ users: next.users.size, tls: next.tls !== null }, 'web config file reloaded');
  }
}

async function fileSignature(path: string): Promise<string | null> {
  try {
    const info = await stat(path);
    return `${info.ino}:${info.size}:${info.mtimeMs}`;
  } catch {
    return null;
  }
}

// ---- basic auth -------------------------------------------------------------------------------

/** Compared against when the user is unknown, so unknown users cost the same time as known ones. */
const DUMMY_HASH = '$2b$10$bjmv1HmORSFpnSpmDMqtquH24u6D.bfh7LZSmF9.AIYJ.YOGTCz.W';

export type BasicAuthVerdict = 'ok' | 'refused' | 'busy';

export interface BasicAuthCheckerOptions {
  /** How long a successful check is remembered, ms. */
  successTtlMs?: number;
  /** How long a failed check is remembered, ms. */
  failureTtlMs?: number;
  /** Results remembered at most (the oldest go first). */
  maxEntries?: number;
  /** bcrypt checks allowed to wait; beyond, the request is answered 503 at once. */
  maxPending?: number;
  now?: () => number;
}

interface Remembered {
  ok: boolean;
  expiresAt: number;
}

/**
 * Checks `user:password` against bcrypt hashes. bcrypt is slow on purpose (tens of ms) and runs
 * in a worker thread, one check at a time, with a bounded queue (bcrypt-worker.ts). Results are
 * remembered, keyed by an HMAC-SHA256 of (user, password, hash) under a key drawn at start, never
 * the password itself: successes for minutes, as a scraper sends the same credentials every few
 * seconds; failures briefly, so a client repeating a wrong password costs one bcrypt check, not
 * one per request. A changed hash in the file gives another key. Identical checks in progress
 * share one bcrypt run.
 */
export class BasicAuthChecker {
  readonly #key = randomBytes(32);
  readonly #results = new Map<string, Remembered>();
  readonly #inProgress = new Map<string, Promise<boolean>>();
  readonly #bcrypt: BcryptWorker;
  readonly #successTtlMs: number;
  readonly #failureTtlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: BasicAuthCheckerOptions = {}) {
    this.#successTtlMs = options.successTtlMs ?? 10 * 60_000;
    this.#failureTtlMs = options.failureTtlMs ?? 60_000;
    this.#maxEntries = options.maxEntries ?? 1_024;
    this.#now = options.now ?? Date.now;
    this.#bcrypt = new BcryptWorker({ maxPending: options.maxPending ?? 32 });
  }

  async check(users: ReadonlyMap<string, string>, user: string, password: string): Promise<BasicAuthVerdict> {
    const hash = users.get(user);
    const key = createHmac('sha256', this.#key).update(user).update('\0').update(password).update('\0').update(hash ?? '').digest('base64');
    const remembered = this.#results.get(key);
    if (remembered !== undefined) {
      if (remembered.expiresAt > this.#now()) return remembered.ok ? 'ok' : 'refused';
      this.#results.delete(key);
    }
    let checking = this.#inProgress.get(key);
    if (checking === undefined) {
      const compared = this.#bcrypt.compare(password, hash ?? DUMMY_HASH);
      if (compared === null) return 'busy';
      checking = compared.then((matches) => {
        const ok = matches && hash !== undefined;
        this.#remember(key, ok);
        return ok;
      });
      checking.then(
        () => this.#inProgress.delete(key),
        () => this.#inProgress.delete(key),
      );
      this.#inProgress.set(key, checking);
    }
    return (await checking) ? 'ok' : 'refused';
  }

  /** Results remembered now, successes and failures (for tests and the curious). */
  get cached(): number {
    return this.#results.size;
  }

  /** Ends the bcrypt worker thread. */
  close(): Promise<void> {
    return this.#bcrypt.close();
  }

  #remember(key: string, ok: boolean): void {
    if (this.#results.size >= this.#maxEntries) {
      const oldest = this.#results.keys().next();
      if (oldest.done !== true) this.#results.delete(oldest.value);
    }
    this.#results.set(key, { ok, expiresAt: this.#now() + (ok ? this.#successTtlMs : this.#failureTtlMs) });
  }
}

/** user and password of an `Authorization: Basic ...` header, or null. */
export function parseBasicAuthorization(header: string | undefined): { user: string; password: string } | null {
  if (header === undefined) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (match === null) return null;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
