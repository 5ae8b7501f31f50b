// Throughput of the emulator, for the README's performance section: how many log entries per
// second it writes (messages published over HTTP and really delivered to a loopback destination,
// three entries each) and how many it pages (a cursor walk over /v2/logs, 100 per page).
// Client, emulator and destination share one process, so the figures are a floor.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { createEmulator } from '../src/emulator/index.js';

export interface ThroughputOptions {
  /** Messages to publish. */
  messages: number;
  /** Publishes in flight at once. */
  clients: number;
  /** Entries per log page (at most 100). */
  pageSize: number;
}

export interface ThroughputResult {
  messages: number;
  entriesWritten: number;
  writeSeconds: number;
  entriesWrittenPerSecond: number;
  entriesPaged: number;
  pages: number;
  pageSeconds: number;
  entriesPagedPerSecond: number;
}

export const DEFAULT_THROUGHPUT_OPTIONS: ThroughputOptions = { messages: 5000, clients: 32, pageSize: 100 };

export async function measureEmulatorThroughput(partial: Partial<ThroughputOptions> = {}): Promise<ThroughputResult> {
  const options = { ...DEFAULT_THROUGHPUT_OPTIONS, ...partial };
  const destination = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  const destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
  const emulator = await createEmulator({ knobs: { logRetention: options.messages * 3 + 1000 } });
  const agent = new Agent({ connections: options.clients });
  const headers = { authorization: `Bearer ${emulator.credentials.token}`, 'content-type': 'application/json' };
  try {
    const expected = options.messages * 3;
    const writeStart = process.hrtime.bigint();
    let next = 0;
    const publisher = async (): Promise<void> => {
      while (next < options.messages) {
        const index = next++;
        const response = await request(`${emulator.url}/v2/publish/${destinationUrl}/bench/${index}`, {
          dispatcher: agent,
          method: 'POST',
          headers,
          body: JSON.stringify({ index }),
        });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`publish answered ${response.statusCode}`);
      }
    };
    await Promise.all(Array.from({ length: options.clients }, publisher));
    while (emulator.groundTruth().total < expected) await new Promise((resolve) => setTimeout(resolve, 2));
    const writeSeconds = Number(process.hrtime.bigint() - writeStart) / 1e9;
    const entriesWritten = emulator.groundTruth().total;

    const pageStart = process.hrtime.bigint();
    let cursor: string | undefined;
    let entriesPaged = 0;
    let pages = 0;
    do {
      const query = `count=${options.pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const response = await request(`${emulator.url}/v2/logs?${query}`, { dispatcher: agent, headers });
      const page = (await response.body.json()) as { cursor?: string; logs: unknown[] };
      entriesPaged += page.logs.length;
      pages++;
      cursor = page.cursor;
    } while (cursor);
    const pageSeconds = Number(process.hrtime.bigint() - pageStart) / 1e9;

    return {
      messages: options.messages,
      entriesWritten,
      writeSeconds,
      entriesWrittenPerSecond: Math.round(entriesWritten / writeSeconds),
      entriesPaged,
      pages,
      pageSeconds,
      entriesPagedPerSecond: Math.round(entriesPaged / pageSeconds),
    };
  } finally {
    await agent.close();
    await emulator.close();
    destination.closeAllConnections();
    await new Promise<void>((resolve) => destination.close(() => resolve()));
  }
}
