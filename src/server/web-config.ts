// The web configuration file at run time: kept current while the exporter runs (new users,
// passwords and certificates apply without a restart), and the basic auth it asks for. Its
// format and validation are configuration (src/config/web-config-file.ts).

import { createHmac, randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Logger } from '../logging/index.js';
import { loadWebConfig, type TlsSettings, type WebConfig } from '../config/web-config-file.js';
import { BcryptWorker } from './bcrypt-worker.js';
import { errorMessage } from '../common/errors.js';

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
      if (this.#signature !== null)
        logger.error({ file: this.#config.path }, 'web config file is gone; keeping the previous settings');
      this.#signature = null;
      return;
    }
    this.#signature = signature;
    let next: WebConfig;
    try {
      next = loadWebConfig(this.#config.path);
    } catch (error) {
      logger.error(
        { err: errorMessage(error) },
        'web config file changed but is invalid; keeping the previous settings',
      );
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
    const key = createHmac('sha256', this.#key)
      .update(user)
      .update('\0')
      .update(password)
      .update('\0')
      .update(hash ?? '')
      .digest('base64');
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
