// Resident memory of the logs collector holding 100,000 messages in flight (seen CREATED, not
// finished: the tracker's default capacity), measured in a process that does nothing else
// (the bench runs it as a child). The entries reach the collector through its real poll(), from
// an in-memory source whose pages are dropped once counted, so what stays is what it keeps.
import type { LogEntry, LogsPage, LogsQuery } from '../src/api/delivery.js';
import { LogsCollector } from '../src/collectors/logs/index.js';
import { createLogger } from '../src/logging/index.js';
import { collectGarbage, mb } from './measure.js';

export interface InFlightMemory {
  messages: number;
  inFlightReported: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  heapUsedBeforeMiB: number;
  heapUsedAfterMiB: number;
  /** Heap growth per message held, bytes. */
  heapBytesPerMessage: number;
}

const silent = createLogger({ level: 'silent', format: 'json' });

export async function measureInFlightMemory(messages = 100_000): Promise<InFlightMemory> {
  const pageSize = 100;
  let clock = Date.now();
  let next = 0;
  let cursor = 0;
  // Newest first with a cursor, like the service; every entry a CREATED of a new message.
  const source = {
    logsPage: (query: LogsQuery): Promise<LogsPage> => {
      const top = typeof query.toDate === 'number' ? query.toDate : clock;
      const logs: LogEntry[] = [];
      for (let i = 0; i < pageSize && next < messages; i++, next++) {
        logs.push({
          time: top,
          messageId: `msg_${(1e12 + next * 7919).toString(36)}_${next}`,
          state: 'CREATED',
          url: `http://127.0.0.1:${4000 + (next % 20)}/hook`,
          queueName: `queue-${next % 10}`,
        });
      }
      cursor += 1;
      return Promise.resolve(next < messages ? { logs, cursor: `c${cursor}` } : { logs });
    },
  };
  const collector = new LogsCollector({
    source,
    settings: {
      ingestionDelayMs: 0,
      overlapMs: 0,
      maxPagesPerCycle: Math.ceil(messages / pageSize) + 10,
      labels: [],
      seriesLimit: 2000,
      messageTrackerSize: messages,
    },
    stateFile: null,
    upstream: 'bench',
    logger: silent,
    now: () => clock,
  });
  collectGarbage();
  const before = process.memoryUsage();
  clock += 5_000;
  await collector.poll({ signal: new AbortController().signal, now: () => clock, logger: silent });
  collectGarbage();
  const after = process.memoryUsage();
  const text = await collector.registry.metrics();
  const inFlight = Number(/^upstash_qstash_messages_in_flight (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  return {
    messages,
    inFlightReported: inFlight,
    rssBeforeMiB: mb(before.rss),
    rssAfterMiB: mb(after.rss),
    heapUsedBeforeMiB: mb(before.heapUsed),
    heapUsedAfterMiB: mb(after.heapUsed),
    heapBytesPerMessage: Math.round((after.heapUsed - before.heapUsed) / messages),
  };
}
