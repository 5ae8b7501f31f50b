// The web configuration file in the Prometheus exporter-toolkit format (--web-config-file):
// TLS, optional client certificates, basic auth users with bcrypt hashes, and a few security
// headers. It is user input, so it is validated strictly: an unknown key is an error, not a
// silently ignored setting. Relative paths resolve against the file's own folder, as in the
// toolkit.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type TlsOptions } from 'node:tls';
import YAML from 'yaml';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { errorMessage } from '../common/errors.js';

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

/**
 * The paths `basic_auth_excluded_paths` may leave open: liveness and readiness, which say
 * nothing about the service, for probes that cannot send credentials (Docker's HEALTHCHECK,
 * a kubelet). The key is the name proposed for the exporter-toolkit (its pull requests 70 and
 * 106); /metrics and the landing page always stay behind basic auth.
 */
export const AUTH_EXCLUDABLE_PATHS = ['/-/healthy', '/healthz', '/-/ready', '/readyz'] as const;

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
    const verifies =
      tls.client_auth_type === 'VerifyClientCertIfGiven' || tls.client_auth_type === 'RequireAndVerifyClientCert';
    if (verifies && tls.client_ca_file === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['client_ca_file'],
        message: `is required with client_auth_type ${tls.client_auth_type}`,
      });
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
    .record(
      z
        .string()
        .min(1)
        .regex(/^[^:]+$/, 'a user name cannot contain ":"'),
      z.string().regex(BCRYPT_HASH, 'must be a bcrypt hash ($2a$, $2b$ or $2y$)'),
    )
    .nullish(),
  basic_auth_excluded_paths: z
    .array(
      z.string().refine((path) => (AUTH_EXCLUDABLE_PATHS as readonly string[]).includes(path), {
        message: `only the health endpoints can be left open: ${AUTH_EXCLUDABLE_PATHS.join(', ')}`,
      }),
    )
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
  /** Paths answered without basic auth (some of AUTH_EXCLUDABLE_PATHS). */
  authExcludedPaths: ReadonlySet<string>;
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
    const reason = errorMessage(error).split('\n')[0] ?? '';
    throw new ConfigError(CONFIG_KEY, `web config file ${path} is not valid YAML: ${reason}`);
  }
  const parsed = WebConfigSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
    throw new ConfigError(
      CONFIG_KEY,
      `web config file ${path}: ${where}${issue === undefined ? 'invalid' : issueMessage(issue)}`,
    );
  }
  const config = parsed.data;
  const baseDir = dirname(absolute);
  return {
    path: absolute,
    tls: config.tls_server_config == null ? null : buildTls(config.tls_server_config, baseDir, path),
    users: new Map(Object.entries(config.basic_auth_users ?? {})),
    authExcludedPaths: new Set(config.basic_auth_excluded_paths ?? []),
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
    const reason = errorMessage(error);
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
