// The upstream's clock read from the `Date` header of its answers (src/api/upstream-clock.ts),
// both ways the real service may answer: with a Date header (every HTTP/1.1 origin server must
// send one), and without one (a proxy that strips it), where the exporter keeps its own clock.
// The clocks are passed in so that a machine 10 minutes ahead can be stated exactly; the
// exporter-level cases under libfaketime are in test/system/clock-jumps.test.ts.
import { describe, expect, it } from 'vitest';
import { UpstreamClock } from '../../src/api/upstream-clock.js';

const UPSTREAM = Date.UTC(2026, 10, 26, 12, 0, 0, 250);

function clockAhead(aheadMs: number): { clock: UpstreamClock; advance: (ms: number) => void } {
  let monotonic = 1_000;
  const clock = new UpstreamClock({
    wallNow: () => UPSTREAM + aheadMs + (monotonic - 1_000),
    monotonicNow: () => monotonic,
  });
  return { clock, advance: (ms) => (monotonic += ms) };
}

describe('the upstream clock', () => {
  it('without a Date header the exporter keeps its own clock and knows no offset', () => {
    const { clock } = clockAhead(600_000);
    clock.observe(undefined, 1_000, 1_020);
    clock.observe('not a date', 1_000, 1_020);
    expect(clock.known).toBe(false);
    expect(clock.offsetMs()).toBeNull();
    expect(clock.now()).toBe(UPSTREAM + 600_000);
  });

  it("with a Date header, a machine 10 minutes ahead reads the upstream's now within the header's second, carried on by the monotonic clock", () => {
    const { clock, advance } = clockAhead(600_000);
    clock.observe(new Date(UPSTREAM).toUTCString(), 1_000, 1_020);
    expect(clock.known).toBe(true);
    expect(Math.abs(clock.offsetMs()! - 600_000)).toBeLessThanOrEqual(1_000);
    advance(5_000);
    const now = clock.now();
    expect(now).toBeGreaterThanOrEqual(UPSTREAM - 1_000 + 5_000);
    expect(now).toBeLessThanOrEqual(UPSTREAM + 1_000 + 5_000);
  });

  it("with a Date header that agrees with this machine, the machine's clock is used as it is", () => {
    const { clock } = clockAhead(0);
    clock.observe(new Date(UPSTREAM).toUTCString(), 1_000, 1_020);
    expect(clock.now()).toBe(UPSTREAM);
  });
});
