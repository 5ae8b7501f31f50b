// A watermark ahead of the upstream's now: a state file written by an exporter whose clock ran
// ahead (or restored onto a machine whose clock is behind the one that wrote it), or the
// upstream's own clock stepped back. Every entry written from then on has a time at or before
// the watermark, so the walk would never read it: counting would stop, silently. Checked at the
// start of every cycle, with the upstream's now (src/api/upstream-clock.ts).
//
// The walk goes back to where the de-duplication window is complete (`dedupFrom`): every entry
// counted from there on is in the window, so reading that range again counts exactly the
// entries the walk passed without reading. When the window starts beyond the upstream's now
// (it holds nothing the upstream has written), counting restarts at the frontier, as without
// state: entries written between the last one counted and the frontier may be missed, and the
// warning says so.
import type { Logger } from '../../logging/index.js';
import { timeText } from '../../common/time-text.js';
import type { WalkPosition, WatermarkReset } from './walk-types.js';

/** A watermark at most this far ahead is left alone: the upstream's now is known to about a second. */
export const WATERMARK_AHEAD_TOLERANCE_MS = 2_000;

/**
 * Moves `position` back when its watermark, or a slice in progress, lies more than
 * WATERMARK_AHEAD_TOLERANCE_MS ahead of `upstreamNow`; null when it does not.
 */
export function guardWatermark(
  position: WalkPosition,
  upstreamNow: number,
  ingestionDelayMs: number,
): WatermarkReset | null {
  const found = Math.max(position.watermark, position.slices.at(-1)?.top ?? Number.NEGATIVE_INFINITY);
  if (found - upstreamNow <= WATERMARK_AHEAD_TOLERANCE_MS) return null;
  const exact = position.dedupFrom <= upstreamNow;
  const resumeFrom = exact ? position.dedupFrom : upstreamNow - ingestionDelayMs + 1;
  position.watermark = resumeFrom - 1;
  position.watermarkReadAt = upstreamNow;
  position.dedupFrom = resumeFrom;
  // The anchor (the newest entry counted at or before the watermark) is after the new watermark:
  // its absence from the next slice would read as a retention overrun.
  position.anchorTime = 0;
  position.gapSince = null;
  // Slices in progress counted into the window: re-read, they are recognised.
  position.slices.length = 0;
  return { found, upstreamNow, resumeFrom, exact };
}

/**
 * Says that the watermark moved back: news (info) while the position is still the walk's fresh
 * one, taken on this machine's clock (`positionKnown` false: moving it is no reset), a warning
 * otherwise, with what the move costs.
 */
export function reportWatermarkReset(logger: Logger, reset: WatermarkReset, positionKnown: boolean): void {
  const details = {
    watermark: timeText(reset.found),
    upstreamNow: timeText(reset.upstreamNow),
    resumeFrom: timeText(reset.resumeFrom),
  };
  if (!positionKnown) {
    logger.info(details, "this machine's clock is ahead of the upstream's: counting starts at the upstream's now");
    return;
  }
  logger.warn(
    details,
    reset.exact
      ? "log watermark ahead of the upstream's now (a clock set back, or a state file from a machine whose clock ran ahead): walking again from where the de-duplication window starts, nothing is counted twice"
      : "log watermark ahead of the upstream's now, and the de-duplication window holds nothing the upstream has written: counting restarts at the frontier; entries written before it and not counted yet are missed",
  );
}
