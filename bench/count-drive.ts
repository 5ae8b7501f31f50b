// The counting path alone, in process, as the live walk drives it (docs/performance.md, "Cost
// per event"): pages of entries newest first, slice by slice, each page counted by LogCounter
// (the de-duplication window, the event series, the tracker), and at each slice's end the
// tracker's slice completion and the window's prune into the cold store. No HTTP, no reader:
// the entries are built as the reader builds them (fresh strings each). Prints the CPU per 1000
// entries; run it with the exporter's V8 flags and --trace-gc to see its garbage collections.
//
//   npx tsc -p bench/tsconfig.json && cp package.json tmp/bench/ &&
//   node --max-semi-space-size=2 --expose-gc [--trace-gc] tmp/bench/bench/count-drive.js [pageSize] [events/s] [seconds of log]
import { Registry } from 'prom-client';
import type { LogEntry } from '../src/api/delivery.js';
import { LogCounter } from '../src/collectors/logs/counter.js';
import { PageTally } from '../src/collectors/walk/page-tally.js';

const STATES = ['CREATED', 'ACTIVE', 'DELIVERED'] as const;
/** A slice of a 15 s cycle walked by four chains, and the re-read below each slice's start. */
const SLICE_MS = 15_000 / 4;
const OVERLAP_MS = 1_000;
const START = 1_760_000_000_000;

export function driveCounting(pageSize: number, eventsPerSecond: number, seconds: number) {
  const counter = new LogCounter({
    registry: new Registry(),
    seriesLimit: 2000,
    optIn: [],
    trackerCapacity: 100_000,
    latenessHorizonMs: 300_000,
  });
  const timeOf = (k: number): number => START + Math.floor((k * 1000) / eventsPerSecond);
  // Strings made anew per entry, as the reader makes them from a page's bytes.
  const fresh = (text: string): string => JSON.parse(`"${text}"`) as string;
  const entryOf = (k: number): LogEntry => {
    const message = Math.floor(k / 3);
    const state = STATES[k % 3]!;
    return {
      time: timeOf(k),
      messageId: fresh(`msg_${message.toString(36)}`),
      state,
      url: fresh(`https://app${message % 7}.example.com/hook`),
      ...(state === 'DELIVERED' ? { responseStatus: 200 } : {}),
    };
  };
  const tally = new PageTally();
  let entries = 0;
  (globalThis as { gc?: () => void }).gc?.();
  const started = process.cpuUsage();
  for (let from = START; from < START + seconds * 1000; from += SLICE_MS) {
    const top = from + SLICE_MS - 1;
    const high = Math.floor(((top - START + 1) * eventsPerSecond) / 1000);
    const low = Math.max(0, Math.ceil(((from - OVERLAP_MS - START) * eventsPerSecond) / 1000));
    counter.dedup.beginWalk();
    for (let k = high; k >= low; k -= pageSize) {
      const page: LogEntry[] = [];
      for (let j = k; j > k - pageSize && j >= low; j--) page.push(entryOf(j));
      tally.reset(Number.POSITIVE_INFINITY);
      counter.countPage(page, -1, from - 1, tally);
      entries += page.length;
    }
    counter.tracker.finishSlice(top);
    counter.dedup.prune(top - 15_000 - OVERLAP_MS);
    counter.publish();
  }
  const cpu = process.cpuUsage(started);
  return {
    entries,
    cpuMsPerThousandEntries: Number((((cpu.user + cpu.system) / 1000) * 1000) / entries).toFixed(3),
    trackerHeld: counter.tracker.size,
    windowIdentities: counter.dedup.size,
  };
}

const [pageSize = '1000', rate = '1000', seconds = '1200'] = process.argv.slice(2);
console.log(JSON.stringify(driveCounting(Number(pageSize), Number(rate), Number(seconds))));
