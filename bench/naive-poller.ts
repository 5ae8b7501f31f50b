// The poller a user would script (for the bench's comparison, run as a child process): every
// interval, walk the whole log from the newest entry with the cursor until the service says
// there is no more, and count the entries per state. No watermark, no de-duplication: each
// cycle re-reads everything retained. Prints one JSON line per cycle.
//
//   node naive-poller.js <base url> <token> <interval ms>
import { setTimeout as sleep } from 'node:timers/promises';

interface Page {
  cursor?: string;
  logs?: Array<{ state?: string }>;
}

async function cycle(
  baseUrl: string,
  token: string,
): Promise<{ pages: number; entries: number; byState: Record<string, number> }> {
  const byState: Record<string, number> = {};
  let pages = 0;
  let entries = 0;
  let cursor: string | undefined;
  do {
    const url = `${baseUrl}/v2/logs?count=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (response.status === 429) {
      // What a careful script does: wait a second and ask again.
      await response.arrayBuffer();
      await sleep(1000);
      continue;
    }
    if (!response.ok) throw new Error(`GET /v2/logs answered ${response.status}`);
    const page = (await response.json()) as Page;
    pages += 1;
    for (const entry of page.logs ?? []) {
      entries += 1;
      const state = entry.state ?? 'UNKNOWN';
      byState[state] = (byState[state] ?? 0) + 1;
    }
    cursor = page.cursor;
  } while (cursor);
  return { pages, entries, byState };
}

async function main(): Promise<void> {
  const [baseUrl, token, interval] = process.argv.slice(2);
  if (!baseUrl || !token || !interval) throw new Error('usage: naive-poller <base url> <token> <interval ms>');
  const intervalMs = Number(interval);
  for (let n = 1; ; n++) {
    const started = Date.now();
    try {
      const result = await cycle(baseUrl, token);
      console.log(JSON.stringify({ cycle: n, ms: Date.now() - started, ...result }));
    } catch (error) {
      console.log(JSON.stringify({ cycle: n, ms: Date.now() - started, error: String(error) }));
    }
    await sleep(Math.max(0, intervalMs - (Date.now() - started)));
  }
}

await main();
