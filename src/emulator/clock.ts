// Time of the emulator. Records carry real epoch milliseconds; waits the emulator imposes run
// on a virtual clock that advances `timeScale` times faster than the real one. Both clocks are
// equal at the anchor; changing the scale re-anchors, so virtual time never jumps.

export class ScaledClock {
  private anchorReal: number;
  private anchorVirtual: number;
  private scale: number;

  constructor(
    scale = 1,
    private readonly realNow: () => number = Date.now,
  ) {
    this.anchorReal = realNow();
    this.anchorVirtual = this.anchorReal;
    this.scale = scale;
  }

  /** Real epoch milliseconds: what records carry. */
  now(): number {
    return this.realNow();
  }

  get timeScale(): number {
    return this.scale;
  }

  virtualNow(): number {
    return this.anchorVirtual + (this.realNow() - this.anchorReal) * this.scale;
  }

  /** The real epoch time at which the virtual clock reads `virtualMs`. */
  realAt(virtualMs: number): number {
    return this.anchorReal + (virtualMs - this.anchorVirtual) / this.scale;
  }

  setScale(scale: number): void {
    const real = this.realNow();
    this.anchorVirtual = this.anchorVirtual + (real - this.anchorReal) * this.scale;
    this.anchorReal = real;
    this.scale = scale;
  }
}

export interface TimerHandle {
  cancel(): void;
}

interface TimerItem {
  due: number; // virtual ms
  seq: number;
  run: () => void;
  cancelled: boolean;
}

// Node's setTimeout holds at most 2^31-1 ms; longer waits re-arm on expiry.
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Many timers on one setTimeout: a binary min-heap ordered by virtual due time (then insertion
 * order), so thousands of delayed messages and retries cost one timer.
 */
export class TimerQueue {
  private heap: TimerItem[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(private readonly clock: ScaledClock) {}

  get size(): number {
    return this.heap.length;
  }

  /** Runs `run` once the virtual clock reaches `dueVirtual`. */
  at(dueVirtual: number, run: () => void): TimerHandle {
    const item: TimerItem = { due: dueVirtual, seq: this.seq++, run, cancelled: false };
    this.push(item);
    if (this.heap[0] === item) this.arm();
    return {
      cancel: () => {
        item.cancelled = true;
      },
    };
  }

  /** Runs `run` after `delayMs` of virtual time. */
  after(delayMs: number, run: () => void): TimerHandle {
    return this.at(this.clock.virtualNow() + delayMs, run);
  }

  /** Re-computes the real wait of the earliest timer (after a time-scale change). */
  rearm(): void {
    this.armedFor = Number.POSITIVE_INFINITY;
    this.arm();
  }

  clear(): void {
    this.heap = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  close(): void {
    this.closed = true;
    this.clear();
  }

  private arm(): void {
    if (this.closed) return;
    const top = this.heap[0];
    if (!top) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.timer && top.due >= this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    const waitMs = Math.min(MAX_TIMEOUT_MS, Math.max(0, Math.ceil(this.clock.realAt(top.due) - this.clock.now())));
    this.armedFor = top.due;
    this.timer = setTimeout(() => this.fire(), waitMs);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.clock.virtualNow();
    // Run everything due; callbacks may add timers, which land in the heap and are handled here
    // too if already due.
    for (let top = this.heap[0]; top && top.due <= now; top = this.heap[0]) {
      this.pop();
      if (!top.cancelled) {
        try {
          top.run();
        } catch {
          // A failing callback must not stop the other timers; callers handle their own errors.
        }
      }
    }
    this.arm();
  }

  private push(item: TimerItem): void {
    const heap = this.heap;
    heap.push(item);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(item, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = item;
  }

  private pop(): TimerItem | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
        if (!before(heap[child]!, last)) break;
        heap[index] = heap[child]!;
        index = child;
      }
      heap[index] = last;
    }
    return top;
  }
}

function before(a: TimerItem, b: TimerItem): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}
