// An egress proxy for the tests: Debian's tinyproxy (package tinyproxy) run in the foreground
// on a free 127.0.0.1 port with a config of its own (its service does not start on these
// machines), its access log read back to count the CONNECTs; and a private CA made with openssl,
// with a server certificate for 127.0.0.1 (the TLS upstream; untrusted where the CA is not
// given). Skipped with a message when a binary is missing; a failure under CI=true
// (requireBinaries, prometheus.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startDaemon, type Daemon } from './prometheus.js';

export interface TinyproxyOptions {
  /** Ports CONNECT may reach (tinyproxy's ConnectPort); others answer 403. */
  connectPorts: readonly number[];
  /** Answer 407 unless Proxy-Authorization carries these credentials. */
  basicAuth?: { user: string; password: string };
  /** The port to listen on (a restart on the same port); a free one by default. */
  port?: number;
}

export interface Tinyproxy {
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  /** The access log so far. */
  log(): string;
  /** The targets of the CONNECTs in the log so far (`127.0.0.1:PORT`), one per tunnel. */
  connects(): string[];
  stop(): Promise<void>;
}

/** Starts tinyproxy and resolves once it accepts connections. */
export async function startTinyproxy(binary: string, options: TinyproxyOptions): Promise<Tinyproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'tinyproxy-'));
  const port = options.port ?? (await freePort());
  const logFile = join(dir, 'access.log');
  const config = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    `LogFile "${logFile}"`,
    'LogLevel Connect',
    'MaxClients 100',
    'Allow 127.0.0.1',
    ...options.connectPorts.map((allowed) => `ConnectPort ${allowed}`),
    ...(options.basicAuth ? [`BasicAuth ${options.basicAuth.user} ${options.basicAuth.password}`] : []),
  ].join('\n');
  writeFileSync(join(dir, 'tinyproxy.conf'), `${config}\n`);
  const daemon: Daemon = startDaemon(binary, ['-d', '-c', join(dir, 'tinyproxy.conf')]);
  const log = (): string => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (daemon.child.exitCode !== null || Date.now() > deadline) {
      await daemon.stop();
      throw new Error(`tinyproxy did not start: ${daemon.output()} ${log()}`);
    }
    await sleep(20);
  }
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log,
    connects: () => [...log().matchAll(/Request \(file descriptor \d+\): CONNECT (\S+) HTTP/g)].map((m) => m[1]!),
    stop: async () => {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface TestCa {
  dir: string;
  /** The CA's certificate file (PEM): what http.ca_file or NODE_EXTRA_CA_CERTS names. */
  caFile: string;
  /** A certificate for 127.0.0.1 and localhost signed by this CA. */
  server: { key: string; cert: string };
  remove(): void;
}

/** A private CA and server certificates, made with openssl in a temporary folder. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'test-ca-'));
  const openssl = (args: string[]): void => {
    const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`);
  };
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout ca.key -out ca.pem'.split(' '));
  openssl('req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr'.split(' '));
  openssl(
    'x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem'.split(
      ' ',
    ),
  );
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    server: { key: read('server.key'), cert: read('server.pem') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
