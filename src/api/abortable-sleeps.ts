// Waits that an AbortSignal ends at once, with one abort listener per signal rather than one per
// wait: the log walk paces every page with a wait on its poll's signal, and a listener added and
// removed each time (timers/promises' setTimeout with a signal) cost more than the wait itself.
// Many waits on one signal also stay one listener, below EventTarget's leak warning.

type Wake = (slept: boolean) => void;

export class AbortableSleeps {
  /** Per signal, the waits its abort ends. */
  readonly #waiting = new WeakMap<AbortSignal, Set<Wake>>();

  /** Resolves true after `ms`, or false as soon as `signal` aborts (at once when it already has). */
  sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      if (signal === undefined) {
        setTimeout(resolve, ms, true);
        return;
      }
      const waiting = this.#waitingOn(signal);
      const wake: Wake = (slept) => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve(slept);
      };
      const timer = setTimeout(wake, ms, true);
      waiting.add(wake);
    });
  }

  #waitingOn(signal: AbortSignal): Set<Wake> {
    let waiting = this.#waiting.get(signal);
    if (waiting === undefined) {
      const wakes = new Set<Wake>();
      signal.addEventListener(
        'abort',
        () => {
          for (const wake of wakes) wake(false);
        },
        { once: true },
      );
      this.#waiting.set(signal, wakes);
      waiting = wakes;
    }
    return waiting;
  }
}
