// Small measuring helpers shared by the benches and the soak: medians, wall and CPU time,
// resident memory of this process or of a child (from /proc), event-loop delay, and a seeded
// PRNG so a chaos schedule or a fuzz run can be replayed from its seed.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { SeededRandom } from '../src/emulator/random.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs `gc()` when node was started with --expose-gc (the benches are); a no-op otherwise. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

/** Milliseconds taken by `action`. */
export async function timeMs(action: () => unknown): Promise<number> {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

export interface ProcessSample {
  /** Resident set size, bytes. */
  rss: number;
  /** User + system CPU time since the process started, milliseconds. */
  cpuMs: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * RSS and CPU time of a process by pid, from /proc (Linux); undefined when the process is gone.
 * CPU comes from /proc/<pid>/stat (utime + stime, in clock ticks of 1/100 s on Linux).
 */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return {
      rss: rssKb ? Number(rssKb[1]) * 1024 : Number.NaN,
      cpuMs: ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
}

/**
 * Event-loop delay while `action` runs: the longest and the 99th percentile, in milliseconds
 * (the histogram samples every `resolutionMs`).
 */
export async function eventLoopDelayDuring<T>(
  action: () => Promise<T>,
  resolutionMs = 1,
): Promise<{ result: T; maxMs: number; p99Ms: number }> {
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  try {
    // The histogram only measures from its first tick on: let it start before the action.
    await sleep(resolutionMs * 3);
    const result = await action();
    // One more turn so a block at the very end is recorded.
    await sleep(resolutionMs * 2);
    return { result, maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6 };
  } finally {
    histogram.disable();
  }
}

/** A seeded PRNG in [0, 1) as a function: the emulator's mulberry32, so a seed replays the same run. */
export function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

export function mb(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
