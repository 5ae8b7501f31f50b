// The proxy choice (src/api/proxy-choice.ts): NO_PROXY read as Go's net/http and curl read it
// (host, domain suffix, `*`, ports, IP addresses and prefixes), loopback proxied unless named,
// the environment's variables in either case, proxy_url over the environment, and the proxy URL
// redacted. Pure functions: no peer needed.
import { describe, expect, it } from 'vitest';
import {
  NO_PROXY_VARIABLES,
  noProxyMatches,
  parseNoProxy,
  parseProxyUrl,
  proxyUrlSecrets,
  readProxyVariables,
  redactProxyUrl,
  routeFor,
  type ProxySettings,
} from '../../src/api/proxy-choice.js';

function exempt(noProxy: string, host: string, port = '443'): boolean {
  return noProxyMatches(parseNoProxy(noProxy), host, port);
}

describe('NO_PROXY', () => {
  it('a domain matches itself and its subdomains, not a name that merely ends alike', () => {
    expect(exempt('upstash.io', 'upstash.io')).toBe(true);
    expect(exempt('upstash.io', 'qstash.upstash.io')).toBe(true);
    expect(exempt('upstash.io', 'notupstash.io')).toBe(false);
    expect(exempt('UPSTASH.IO', 'QStash.Upstash.io.')).toBe(true);
  });

  it('a leading dot or *. matches subdomains only (Go)', () => {
    expect(exempt('.upstash.io', 'qstash.upstash.io')).toBe(true);
    expect(exempt('.upstash.io', 'upstash.io')).toBe(false);
    expect(exempt('*.upstash.io', 'a.b.upstash.io')).toBe(true);
    expect(exempt('*.upstash.io', 'upstash.io')).toBe(false);
  });

  it('* alone exempts every host; as part of a name it is no wildcard', () => {
    expect(exempt('*', 'anything.example')).toBe(true);
    expect(exempt('example.com, *', '10.1.2.3')).toBe(true);
    expect(exempt('foo*', 'foobar')).toBe(false);
  });

  it('a port restricts an entry to that port', () => {
    expect(exempt('upstash.io:443', 'qstash.upstash.io', '443')).toBe(true);
    expect(exempt('upstash.io:443', 'qstash.upstash.io', '8443')).toBe(false);
    expect(exempt('127.0.0.1:9000', '127.0.0.1', '9000')).toBe(true);
    expect(exempt('127.0.0.1:9000', '127.0.0.1', '9001')).toBe(false);
    expect(exempt('[::1]:9000', '::1', '9000')).toBe(true);
    expect(exempt('[::1]:9000', '[::1]', '9001')).toBe(false);
  });

  it('IP addresses match exactly, IPv6 in any spelling; CIDR prefixes match ranges', () => {
    expect(exempt('10.0.0.1', '10.0.0.1')).toBe(true);
    expect(exempt('10.0.0.1', '10.0.0.2')).toBe(false);
    expect(exempt('::1', '[0:0:0:0:0:0:0:1]')).toBe(true);
    expect(exempt('10.0.0.0/8', '10.200.3.4')).toBe(true);
    expect(exempt('10.0.0.0/8', '11.0.0.1')).toBe(false);
    expect(exempt('192.168.1.0/24', '192.168.1.77')).toBe(true);
    expect(exempt('fd00::/8', 'fd12::5')).toBe(true);
    expect(exempt('fd00::/8', 'fe80::1')).toBe(false);
    // A prefix does not match host names (no resolution, as Go).
    expect(exempt('127.0.0.0/8', 'localhost')).toBe(false);
  });

  it('entries split on commas and spaces; empty entries are ignored', () => {
    expect(parseNoProxy(' a.example , ,b.example  c.example,')).toHaveLength(3);
    expect(exempt('a.example, b.example', 'x.b.example')).toBe(true);
    expect(exempt('', 'a.example')).toBe(false);
  });

  it('loopback has no exemption of its own (as undici, unlike Go)', () => {
    expect(exempt('example.com', '127.0.0.1')).toBe(false);
    expect(exempt('example.com', 'localhost')).toBe(false);
    expect(exempt('localhost', 'localhost')).toBe(true);
  });
});

describe('the environment and the route', () => {
  it('reads the lower-case spelling first, then the upper-case one; empty is unset', () => {
    expect(readProxyVariables({ https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:1' }).httpsProxy).toEqual({
      name: 'https_proxy',
      value: 'http://low:1',
    });
    expect(readProxyVariables({ https_proxy: '', HTTPS_PROXY: 'http://up:1' }).httpsProxy?.name).toBe('HTTPS_PROXY');
    expect(readProxyVariables({ NO_PROXY: 'a', http_proxy: 'p:3128' })).toEqual({
      httpsProxy: null,
      httpProxy: { name: 'http_proxy', value: 'p:3128' },
      noProxy: { name: 'NO_PROXY', value: 'a' },
    });
  });

  const fromEnv = (env: NodeJS.ProcessEnv): ProxySettings => ({
    url: null,
    noProxy: [],
    fromEnvironment: true,
    environment: readProxyVariables(env),
  });

  it('HTTPS_PROXY for https upstreams, HTTP_PROXY for http ones, no fallback from one to the other', () => {
    const env = fromEnv({ HTTPS_PROXY: 'http://secure:3128', HTTP_PROXY: 'http://plain:3128' });
    expect(routeFor(new URL('https://qstash.upstash.io'), env)).toMatchObject({ source: 'HTTPS_PROXY' });
    expect(String(routeFor(new URL('http://127.0.0.1:8080'), env).proxy)).toBe('http://plain:3128/');
    expect(routeFor(new URL('https://qstash.upstash.io'), fromEnv({ HTTP_PROXY: 'http://plain:3128' })).proxy).toBe(
      null,
    );
  });

  it('a loopback upstream is proxied unless NO_PROXY names it', () => {
    expect(routeFor(new URL('https://127.0.0.1:9443'), fromEnv({ HTTPS_PROXY: 'p:1' })).proxy).not.toBe(null);
    expect(routeFor(new URL('https://127.0.0.1:9443'), fromEnv({ HTTPS_PROXY: 'p:1', no_proxy: '127.0.0.1' }))).toEqual(
      {
        proxy: null,
        reason: 'no_proxy names the host',
      },
    );
  });

  it('proxy_url wins over the environment, with its own no_proxy; off means direct', () => {
    const settings: ProxySettings = {
      url: 'http://corp:8080',
      noProxy: ['internal.example'],
      fromEnvironment: true,
      environment: readProxyVariables({ HTTPS_PROXY: 'http://other:1' }),
    };
    expect(routeFor(new URL('https://qstash.upstash.io'), settings)).toMatchObject({ source: 'http.proxy_url' });
    expect(routeFor(new URL('https://api.internal.example'), settings).proxy).toBe(null);
    const off = { url: null, noProxy: [], fromEnvironment: false, environment: NO_PROXY_VARIABLES };
    expect(routeFor(new URL('https://qstash.upstash.io'), off).proxy).toBe(null);
  });
});

describe('proxy URLs', () => {
  it('accept http(s) with credentials and a bare host:port; refuse other schemes and paths without echoing the value', () => {
    expect(parseProxyUrl('proxy.corp:3128').href).toBe('http://proxy.corp:3128/');
    expect(parseProxyUrl('https://u:p@proxy.corp').username).toBe('u');
    for (const bad of [
      'socks5://u:CANARYpw@h:1',
      'http://u:CANARYpw@h:1/path',
      'http://',
      'http://u:CANARYpw@h:1?x=1',
    ]) {
      expect(() => parseProxyUrl(bad)).toThrow(TypeError);
      try {
        parseProxyUrl(bad);
      } catch (error) {
        expect((error as Error).message).not.toContain('CANARY');
      }
    }
  });

  it('print with the password as *** and give the password and its Basic credentials to scrub', () => {
    expect(redactProxyUrl('http://user:s3cr%40t@proxy:3128')).toBe('http://user:***@proxy:3128');
    expect(redactProxyUrl('proxy:3128')).toBe('http://proxy:3128');
    expect(proxyUrlSecrets('http://user:s3cr%40t@proxy:3128')).toEqual([
      's3cr@t',
      's3cr%40t',
      Buffer.from('user:s3cr@t').toString('base64'),
    ]);
    expect(proxyUrlSecrets('http://user@proxy:3128')).toEqual([]);
  });
});
