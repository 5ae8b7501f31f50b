// Which egress proxy, if any, a request to an upstream origin goes through: the exporter's own
// settings (http.proxy_url / http.no_proxy, named as Prometheus names them) or the environment
// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, either case), with NO_PROXY read as Go's net/http and curl
// read it. Unlike Go, loopback is not exempt: it is proxied unless NO_PROXY names it, as undici's
// EnvHttpProxyAgent does, so that a test on 127.0.0.1 proves the proxy is used. Pure: no
// sockets here (dispatcher.ts builds the connection from the choice).
import { isIP } from 'node:net';

/** One proxy variable as the environment gave it: its name (for messages) and value. */
export interface ProxyVariable {
  name: string;
  value: string;
}

/** The proxy variables of an environment, each the first set (non-empty) of its two spellings. */
export interface ProxyVariables {
  httpsProxy: ProxyVariable | null;
  httpProxy: ProxyVariable | null;
  noProxy: ProxyVariable | null;
}

export interface ProxySettings {
  /** http.proxy_url: one proxy for every upstream, instead of the environment's. */
  url: string | null;
  /** http.no_proxy: hosts reached directly when proxy_url is set (NO_PROXY's syntax). */
  noProxy: readonly string[];
  /** http.proxy_from_environment: follow HTTPS_PROXY / HTTP_PROXY / NO_PROXY. */
  fromEnvironment: boolean;
  /** The environment's proxy variables (read by the configuration; empty when not followed). */
  environment: ProxyVariables;
}

/** How a client reaches its upstream (dispatcher.ts): the proxy settings, and extra CAs to trust. */
export interface UpstreamConnection {
  proxy: ProxySettings;
  /** PEM certificates (http.ca_file) trusted for the upstream besides Node's own. */
  caPem: string | null;
}

export const NO_PROXY_VARIABLES: ProxyVariables = { httpsProxy: null, httpProxy: null, noProxy: null };

/** The route of one origin: through `proxy` (with where that came from), or direct (and why). */
export type ProxyRoute = { proxy: URL; source: string } | { proxy: null; reason: string };

/**
 * Reads the proxy variables the way curl and undici do: the lower-case spelling first, then the
 * upper-case one; an empty value counts as unset.
 */
export function readProxyVariables(env: NodeJS.ProcessEnv): ProxyVariables {
  const first = (lower: string): ProxyVariable | null => {
    for (const name of [lower, lower.toUpperCase()]) {
      const value = env[name]?.trim();
      if (value !== undefined && value !== '') return { name, value };
    }
    return null;
  };
  return { httpsProxy: first('https_proxy'), httpProxy: first('http_proxy'), noProxy: first('no_proxy') };
}

/**
 * A proxy URL as curl and Go accept it: `http://[user:password@]host[:port]`, `https://...`, or
 * a bare `host:port` (taken as http). Throws a TypeError whose message never holds the value
 * (it may carry a password).
 */
export function parseProxyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(withScheme(text));
  } catch {
    throw new TypeError(
      'is not a URL; write it as http://host:port (user:password@ before the host when the proxy asks for it)',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`uses ${url.protocol.slice(0, -1)}; only http:// and https:// proxies are supported`);
  }
  if (url.hostname === '') throw new TypeError('has no host; write it as http://host:port');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new TypeError('has a path, query or fragment; a proxy URL is http://host:port only');
  }
  return url;
}

/** A proxy URL fit for logs and check-config: the password replaced by `***`. */
export function redactProxyUrl(url: URL | string): string {
  const parsed = typeof url === 'string' ? safeUrl(withScheme(url)) : url;
  if (parsed === null) return '***';
  const copy = new URL(parsed.href);
  if (copy.password !== '') copy.password = '***';
  // `http://host:port/` is written without its empty path, as users write it.
  return copy.href.replace(/\/$/, '');
}

/** The password of a proxy URL and the forms it is sent in (the Basic credentials): values to scrub. */
export function proxyUrlSecrets(text: string): string[] {
  const url = safeUrl(withScheme(text));
  if (url === null || url.password === '') return [];
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return [...new Set([password, url.password, Buffer.from(`${user}:${password}`).toString('base64')])];
}

/** A bare `host:port` is an http proxy, as curl and Go take it. */
function withScheme(text: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
}

function safeUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** One NO_PROXY entry, parsed once. */
type NoProxyEntry =
  | { kind: 'all' }
  | { kind: 'ip'; address: string; port: string | null }
  | { kind: 'cidr'; family: 4 | 6; bits: bigint; prefix: number; port: string | null }
  | { kind: 'domain'; name: string; subdomainsOnly: boolean; port: string | null };

/**
 * NO_PROXY as Go's net/http (golang.org/x/net/http/httpproxy) reads it: entries split on commas
 * (and spaces), case-free; `*` alone exempts every host; an IP address or a CIDR prefix
 * (`10.0.0.0/8`) matches addresses; a domain name matches itself and its subdomains, and with a
 * leading `.` (or `*.`) its subdomains only; any entry may end with `:port` to match that port
 * only. Loopback gets no exemption of its own.
 */
export function parseNoProxy(text: string): NoProxyEntry[] {
  const entries: NoProxyEntry[] = [];
  for (const raw of text.split(/[,\s]+/)) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    if (item === '*') {
      entries.push({ kind: 'all' });
      continue;
    }
    const { host, port } = splitPort(item);
    const slash = host.indexOf('/');
    if (slash > 0) {
      const cidr = parseCidr(host.slice(0, slash), host.slice(slash + 1));
      if (cidr !== null) entries.push({ ...cidr, port });
      continue;
    }
    if (isIP(host) !== 0) {
      entries.push({ kind: 'ip', address: canonicalIp(host), port });
      continue;
    }
    const subdomainsOnly = host.startsWith('.') || host.startsWith('*.');
    const name = host.replace(/^\*?\.+/, '').replace(/\.$/, '');
    if (name !== '') entries.push({ kind: 'domain', name, subdomainsOnly, port });
  }
  return entries;
}

/** Whether NO_PROXY `entries` exempt `host` (a hostname or IP address, no brackets) on `port`. */
export function noProxyMatches(entries: readonly NoProxyEntry[], host: string, port: string): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  const family = isIP(name);
  for (const entry of entries) {
    if (entry.kind === 'all') return true;
    if (entry.port !== null && entry.port !== port) continue;
    if (entry.kind === 'ip') {
      if (family !== 0 && canonicalIp(name) === entry.address) return true;
    } else if (entry.kind === 'cidr') {
      if (family === entry.family && inPrefix(ipBits(name, family), entry)) return true;
    } else if (family === 0) {
      if (name.endsWith(`.${entry.name}`)) return true;
      if (!entry.subdomainsOnly && name === entry.name) return true;
    }
  }
  return false;
}

/**
 * The route of requests to `origin` under `settings`: proxy_url when set (no_proxy exempting
 * hosts), else the environment's variable for the origin's scheme (HTTPS_PROXY for https,
 * HTTP_PROXY for http; as in Go and curl, no fallback from one to the other), else direct.
 */
export function routeFor(origin: URL, settings: ProxySettings): ProxyRoute {
  const port = origin.port !== '' ? origin.port : origin.protocol === 'https:' ? '443' : '80';
  if (settings.url !== null) {
    if (noProxyMatches(parseNoProxy(settings.noProxy.join(',')), origin.hostname, port)) {
      return { proxy: null, reason: 'http.no_proxy names the host' };
    }
    return { proxy: parseProxyUrl(settings.url), source: 'http.proxy_url' };
  }
  if (!settings.fromEnvironment) return { proxy: null, reason: 'http.proxy_from_environment is off' };
  const { environment } = settings;
  const variable = origin.protocol === 'https:' ? environment.httpsProxy : environment.httpProxy;
  if (variable === null) return { proxy: null, reason: 'no proxy variable for the scheme' };
  if (environment.noProxy !== null && noProxyMatches(parseNoProxy(environment.noProxy.value), origin.hostname, port)) {
    return { proxy: null, reason: `${environment.noProxy.name} names the host` };
  }
  return { proxy: parseProxyUrl(variable.value), source: variable.name };
}

function splitPort(item: string): { host: string; port: string | null } {
  // [v6]:port, [v6], v6 (no port possible), host:port, host
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ?? null };
  if (isIP(item) === 6 || (item.includes('/') && item.split(':').length > 2)) return { host: item, port: null };
  const colon = /^(.*):(\d+)$/.exec(item);
  return colon ? { host: colon[1]!, port: colon[2]! } : { host: item, port: null };
}

function canonicalIp(address: string): string {
  return isIP(address) === 6 ? ipBits(address, 6).toString(16) : address;
}

function parseCidr(
  address: string,
  prefixText: string,
): { kind: 'cidr'; family: 4 | 6; bits: bigint; prefix: number } | null {
  const family = isIP(address);
  const prefix = Number(prefixText);
  if ((family !== 4 && family !== 6) || !/^\d+$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) return null;
  return { kind: 'cidr', family, bits: ipBits(address, family), prefix };
}

function inPrefix(bits: bigint, entry: { family: 4 | 6; bits: bigint; prefix: number }): boolean {
  const width = BigInt(entry.family === 4 ? 32 : 128);
  const shift = width - BigInt(entry.prefix);
  return bits >> shift === entry.bits >> shift;
}

/** An IPv4 or IPv6 address (already checked by isIP) as one number. */
function ipBits(address: string, family: number): bigint {
  if (family === 4) return address.split('.').reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n);
  let text = address;
  // An IPv4 tail (::ffff:1.2.3.4) as two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipBits(v4[1]!, 4);
    text = `${text.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}
