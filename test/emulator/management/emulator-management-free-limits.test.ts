// The emulator's free search and vector indexes are healthy all month: at the end of every day
// from the start to the end of the month (daily counts at their highest, monthly counts growing
// to the month's last minute), each figure the quota rules set against a limit
// (deploy/rules: upstash:quota_usage:ratio) stays under the 80% where UpstashQuotaUsageHigh
// warns, so the demo's quota alerts stay quiet on them. The free vector index still reranks.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServedSearchIndex, ServedVectorIndex, VectorStats } from '../../../src/emulator/management/index.js';
import { DAY, START, startManagement, stopManagementServers } from '../../support/emulator-management.js';

afterEach(stopManagementServers);

/** The share of a limit the quota warning fires above. */
const QUOTA_WARNING_RATIO = 0.8;

/** Usage against limit as the quota rules pair them (a limit of -1 or 0 is left out, as there). */
const QUOTAS: {
  used: keyof VectorStats;
  limit:
    'max_vector_count' | 'max_daily_queries' | 'max_daily_updates' | 'max_monthly_bandwidth' | 'max_monthly_reranks';
}[] = [
  { used: 'current_vector_count', limit: 'max_vector_count' },
  { used: 'daily_query_count', limit: 'max_daily_queries' },
  { used: 'daily_update_count', limit: 'max_daily_updates' },
  { used: 'monthly_bandwidth_usage', limit: 'max_monthly_bandwidth' },
  { used: 'monthly_rerank_count', limit: 'max_monthly_reranks' },
];

/** 23:59 UTC of every day from the start's day to the last day of its month. */
function dayEndsToMonthEnd(): number[] {
  const start = new Date(START);
  const lastDay = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0)).getUTCDate();
  const times: number[] = [];
  for (let day = start.getUTCDate(); day <= lastDay; day++)
    times.push(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), day, 23, 59));
  return times;
}

describe('free indexes all month', () => {
  it('stay under 80% of every limit at the end of each day, up to the last minute of the month', async () => {
    const h = await startManagement();
    const indexes = [
      ...(await h.get<ServedSearchIndex[]>('/v2/search')).body.map((index) => ({ index, path: '/v2/search' })),
      ...(await h.get<ServedVectorIndex[]>('/v2/vector/index')).body.map((index) => ({
        index,
        path: '/v2/vector/index',
      })),
    ].filter(({ index }) => index.type === 'free');
    expect(indexes.map(({ index }) => index.name).sort()).toEqual(['kb-hybrid', 'support-faq']);

    const times = dayEndsToMonthEnd();
    // 18 March 2026: the 31st is 13 days on, the month's last full day.
    expect(times.at(-1)! - START).toBeGreaterThan(13 * DAY);
    const overs: string[] = [];
    for (const now of times) {
      h.clock.now = now;
      for (const { index, path } of indexes) {
        const stats = (await h.get<VectorStats>(`${path}/${index.id}/stats`)).body;
        for (const { used, limit } of QUOTAS) {
          const max = index[limit];
          if (max <= 0) continue;
          const ratio = (stats[used] as number) / max;
          if (ratio >= QUOTA_WARNING_RATIO)
            overs.push(`${index.name} ${String(used)} at ${new Date(now).toISOString()}: ${ratio.toFixed(3)}`);
        }
      }
    }
    expect(overs).toEqual([]);

    // The free vector index reranks: the quota is exercised, not idle.
    const kb = indexes.find(({ index }) => index.name === 'kb-hybrid')!;
    const monthEnd = (await h.get<VectorStats>(`/v2/vector/index/${kb.index.id}/stats`)).body;
    expect(monthEnd.monthly_rerank_count).toBeGreaterThan(0.5 * kb.index.max_monthly_reranks);
  });
});
