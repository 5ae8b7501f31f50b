// The newest point of a management time series (`[{x: "<timestamp text>", y: number}]`).
// The service does not promise an order, so "newest" is decided by the parsed time, never by
// the position in the array; timestamps are read with the tolerant parser of the API layer.

import { parseSeriesTimestamp } from '../../api/timestamps.js';
import type { SeriesPoint } from '../../api/schemas/common.js';
import type { Logger } from '../../logging/index.js';

export interface NewestPoint {
  /** Epoch milliseconds of the point. */
  timeMs: number;
  value: number;
}

export interface NewestPointResult {
  /** Undefined when the series is absent, empty, or has no point with a readable timestamp. */
  newest: NewestPoint | undefined;
  /** Points skipped because their timestamp text could not be parsed. */
  unreadable: number;
}

/** The point with the latest timestamp; on equal times the later one in the array wins. */
export function newestPoint(points: readonly SeriesPoint[] | undefined): NewestPointResult {
  let newest: NewestPoint | undefined;
  let unreadable = 0;
  for (const point of points ?? []) {
    const timeMs = parseSeriesTimestamp(point.x);
    if (timeMs === undefined || !Number.isFinite(point.y)) {
      unreadable += 1;
      continue;
    }
    if (newest === undefined || timeMs >= newest.timeMs) newest = { timeMs, value: point.y };
  }
  return { newest, unreadable };
}

/**
 * newestPoint() for a collector: unreadable timestamps are logged once per series name for the
 * collector's lifetime (a format change upstream would otherwise log on every poll).
 */
export class NewestPointReader {
  readonly #warned = new Set<string>();

  newest(points: readonly SeriesPoint[] | undefined, seriesName: string, logger: Logger): number | undefined {
    const { newest, unreadable } = newestPoint(points);
    if (unreadable > 0 && !this.#warned.has(seriesName)) {
      this.#warned.add(seriesName);
      const sample = points?.find((p) => parseSeriesTimestamp(p.x) === undefined)?.x.slice(0, 64);
      logger.warn(
        { series: seriesName, unreadable, points: points?.length ?? 0, sample },
        'time series points with unreadable timestamps were skipped (reported once per series)',
      );
    }
    return newest?.value;
  }
}
