// Memory while a log page with huge bodies is read: a server on 127.0.0.1 streams one
// page of ENTRIES entries, each with a base64 `body` of BODY_MIB MiB (ERROR entries with a
// `responseBody` as large), and the delivery client reads it; process RSS and heap are sampled
// every 5 ms. For contrast, the same page read whole and parsed with JSON.parse (what the client
// did before, with the 32 MiB cap lifted). Run:
//   npx tsc -p bench/tsconfig.json && cp package.json tmp/bench/ && node --expose-gc tmp/bench/bench/large-bodies.js
import { request } from 'undici';
import { DeliveryClient } from '../src/api/delivery.js';
import { JsonSkimmer } from '../src/api/json-skim.js';
import { startServiceDouble, streamPage } from '../test/support/service-double.js';

const ENTRIES = Number(process.env.ENTRIES ?? 100);
const BODY_MIB = Number(process.env.BODY_MIB ?? 1);

const mib = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function sampled<T>(label: string, action: () => Promise<T>): Promise<T> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 5);
  const started = performance.now();
  const value = await action();
  clearInterval(timer);
  const after = process.memoryUsage();
  peakRss = Math.max(peakRss, after.rss);
  peakHeap = Math.max(peakHeap, after.heapUsed);
  console.log(
    `${label}: rss ${mib(before.rss)} -> peak ${mib(peakRss)} MiB (+${mib(peakRss - before.rss)}), heap ${mib(before.heapUsed)} -> peak ${mib(peakHeap)} MiB (+${mib(peakHeap - before.heapUsed)}), ${Math.round(performance.now() - started)} ms`,
  );
  return value;
}

async function main(): Promise<void> {
  const entries = Array.from({ length: ENTRIES }, (_, i) => ({
    time: 1_761_200_000_000 - i,
    messageId: `msg_${i}`,
    state: i % 10 === 0 ? 'ERROR' : 'DELIVERED',
  }));
  const server = await startServiceDouble((_req, res) => void streamPage(res, entries, BODY_MIB * 1024 * 1024, 'next'));
  const pageBytes = ENTRIES * BODY_MIB * 1024 * 1024 * 1.1;
  console.log(
    `page: ${ENTRIES} entries x ${BODY_MIB} MiB body (every 10th an ERROR with a responseBody too): about ${mib(pageBytes)} MiB`,
  );
  const client = new DeliveryClient({ baseUrl: server.url, token: 'bench', retry: { maxRetries: 0 } });
  const page = await sampled('streamed, bodies dropped (client)', () => client.logsPage({ count: ENTRIES }));
  console.log(`  read ${page.logs.length} entries, cursor ${page.cursor}`);
  if (process.env.SKIP_CONTRAST !== '1')
    await sampled('whole body + JSON.parse (before)', async () => {
      const answer = await request(`${server.url}/v2/events?count=${ENTRIES}`);
      const text = await answer.body.text();
      return (JSON.parse(text) as { events: unknown[] }).events.length;
    });
  await client.close();
  await server.close();
}

/** The skimmer's cost on ordinary pages: 200 pages of 100 small entries, skim + parse vs parse alone. */
function skimSpeed(): void {
  const pages = Array.from({ length: 200 }, (_, p) =>
    Buffer.from(
      JSON.stringify({
        cursor: `${p}-1`,
        events: Array.from({ length: 100 }, (_, i) => ({
          time: 1_761_200_000_000 - p * 100 - i,
          messageId: `msg_${p}_${i}`,
          state: 'DELIVERED',
          url: 'https://example.com/hook',
          queueName: 'orders',
          header: { 'Content-Type': ['application/json'] },
          body: Buffer.from(`{"order":${i},"items":[1,2,3]}`).toString('base64'),
          responseStatus: 200,
          labels: ['blue'],
        })),
      }),
    ),
  );
  const run = (label: string, read: (page: Buffer) => unknown): number => {
    let best = Number.POSITIVE_INFINITY;
    for (let pass = 0; pass < 6; pass++) {
      const started = performance.now();
      for (const page of pages) read(page);
      if (pass > 0) best = Math.min(best, performance.now() - started);
    }
    console.log(`${label}: ${Math.round(20_000 / (best / 1000)).toLocaleString('en')} entries/s`);
    return best;
  };
  const parse = run('JSON.parse alone', (page) => JSON.parse(page.toString('utf8')));
  const skim = run('skim + JSON.parse', (page) => {
    const skimmer = new JsonSkimmer({
      skipKeys: ['body', 'responseBody'],
      maxKeptBytes: 1 << 30,
      maxTotalBytes: 1 << 30,
    });
    skimmer.write(page);
    return JSON.parse(skimmer.end());
  });
  console.log(`ratio (parse alone / skim + parse): ${Math.round((parse / skim) * 100) / 100}`);
}

skimSpeed();
void main();
