// A purpose-built HTTP server on 127.0.0.1 for the delivery-client tests of behaviours the
// project's emulator (on main) cannot produce yet: log pages with huge bodies, the grouped
// shape, one logs path only, PATCH-only or POST-only schedule verbs, the daily-limit 429,
// numeric cursors beyond 2^53. Each test says which case it needs.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface ServiceDouble {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startServiceDouble(
  handler: (req: SeenRequest, res: ServerResponse) => void,
): Promise<ServiceDouble> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
      requests.push(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** `?name=` of a request URL. */
export function queryOf(req: SeenRequest): URLSearchParams {
  return new URL(req.url, 'http://x').searchParams;
}

/** Path of a request URL without its query. */
export function pathOf(req: SeenRequest): string {
  return new URL(req.url, 'http://x').pathname;
}

/**
 * Writes a log page whose entries carry a base64 `body` of `bodyBytes` each (and ERROR entries a
 * `responseBody` too), streamed in 64 KiB writes so the whole page is never in the server's
 * memory either.
 */
export async function streamPage(
  res: ServerResponse,
  entries: ReadonlyArray<Record<string, unknown>>,
  bodyBytes: number | ((index: number) => number),
  cursor: string | undefined,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const piece = 'QUJD'.repeat(16 * 1024); // 64 KiB of base64
  const write = (text: string): Promise<void> =>
    new Promise((resolve) => {
      if (res.write(text)) resolve();
      else res.once('drain', resolve);
    });
  const writeBody = async (size: number): Promise<void> => {
    await write('"');
    for (let sent = 0; sent < size; sent += piece.length)
      await write(piece.slice(0, Math.min(piece.length, size - sent)));
    await write('"');
  };
  await write(`{${cursor === undefined ? '' : `"cursor":${JSON.stringify(cursor)},`}"events":[`);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const size = typeof bodyBytes === 'number' ? bodyBytes : bodyBytes(i);
    await write(`${i === 0 ? '' : ','}${JSON.stringify(entry).slice(0, -1)},"body":`);
    await writeBody(size);
    if (entry.state === 'ERROR') {
      await write(',"responseBody":');
      await writeBody(size);
    }
    await write('}');
  }
  res.end(']}');
}
