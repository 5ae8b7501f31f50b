// Which point of a Redis stats series is exported: the newest COMPLETE one. The OpenAPI does not
// say whether a series ends with the minute still filling or with the last finished one, nor
// whether `x` is the start or the end of a point's interval. The step is read from the series
// (the median gap between its points, 60 s when it has fewer than two), and a point counts as
// complete once `x + step` has passed: with `x` the start of the interval that is exactly "its
// interval is over"; with `x` the end it costs at most one step of freshness, and a partial
// point is never taken either way. Order in the array is not trusted; times are parsed.
import { parseSeriesTimestamp } from '../../api/timestamps.js';
import type { SeriesPoint } from '../../api/schemas/common.js';

export const DEFAULT_STEP_MS = 60_000;

export interface TakenPoint {
  /** Epoch ms of the point (its `x`). */
  timeMs: number;
  value: number;
}

export interface CompletePointResult {
  point: TakenPoint | undefined;
  /** Points skipped because `x` could not be read or `y` was not a finite number. */
  unreadable: number;
}

/** The newest point whose interval has ended by `nowMs` (see the file comment). */
export function latestCompletePoint(points: readonly SeriesPoint[] | undefined, nowMs: number): CompletePointResult {
  const readable: TakenPoint[] = [];
  let unreadable = 0;
  for (const point of points ?? []) {
    const timeMs = parseSeriesTimestamp(point.x);
    if (timeMs === undefined || !Number.isFinite(point.y)) unreadable += 1;
    else readable.push({ timeMs, value: point.y });
  }
  readable.sort((a, b) => a.timeMs - b.timeMs);
  const step = medianStep(readable);
  let taken: TakenPoint | undefined;
  for (const point of readable) if (point.timeMs + step <= nowMs) taken = point;
  return { point: taken, unreadable };
}

function medianStep(sorted: readonly TakenPoint[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const gap = sorted[i]!.timeMs - sorted[i - 1]!.timeMs;
    if (gap > 0) gaps.push(gap);
  }
  if (gaps.length === 0) return DEFAULT_STEP_MS;
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)]!;
}
