// What the healthy scenario changes in the emulator's data, so that no shipped alert fires.
import type { EmulatorHandle } from '../emulator/index.js';

/** The share of a limit the shipped rules warn at (UpstashQuotaUsageHigh). */
const QUOTA_WARNING_RATIO = 0.8;

/**
 * The healthy scenario leaves out the emulator's vector indexes whose monthly reranks are past
 * the share of their limit the rules warn at (by the end of a month the free index's traffic
 * is): a quiet demo has no quota alert either.
 */
export function leaveOutIndexesNearTheirLimits(emulator: EmulatorHandle): void {
  const vector = emulator.managementResources.vector;
  const { vectorIndexes, vectorStats } = vector.snapshot();
  for (const index of vectorIndexes) {
    const used = vectorStats[index.id]?.monthly_rerank_count ?? 0;
    if (index.max_monthly_reranks > 0 && used > QUOTA_WARNING_RATIO * index.max_monthly_reranks)
      vector.delete(index.id);
  }
}
