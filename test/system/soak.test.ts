// The CI's short soak (45 s): the real exporter as a child process, killed with SIGKILL and
// restarted at random moments while the emulator goes down, storms 429s, serves malformed,
// truncated and repeated-cursor pages and shows logs late; at the end its counters must equal
// the ground truth per state and label set (nothing doubled, nothing missing beyond the gaps
// it reported) and its memory must stay flat. `npm run soak -- --minutes N` is the long form.
import { describe, expect, it } from 'vitest';
import { printSoak, runSoak } from '../../bench/soak.js';

const SEED = Number(process.env.SOAK_SEED ?? 7);

describe('soak', () => {
  it(`keeps exact counts through SIGKILLs, outages, 429 storms, malformed pages and late logs (45 s, seed ${SEED})`, async () => {
    const lines: string[] = [];
    const result = await runSoak({ minutes: 0.75, seed: SEED, log: (line) => lines.push(line) });
    printSoak(result, (line) => lines.push(line));
    console.log(lines.join('\n'));

    expect(result.problems).toEqual([]);
    expect(result.doubledTotal).toBe(0);
    expect(result.missingTotal).toBeLessThanOrEqual(result.gapsReported);
    expect(result.groundTruthTotal).toBeGreaterThan(500);
    expect(result.restarts).toBeGreaterThanOrEqual(1);
    // Every kind of trouble happened at least once.
    const happened = result.chaos.map((c) => c.what).join('\n');
    for (const trouble of ['SIGKILL', 'outage', '429 storm', 'malformed', 'repeated cursors', 'visible late'])
      expect(happened).toContain(trouble);
    expect(result.rss.flat).toBe(true);
  }, 180_000);
});
