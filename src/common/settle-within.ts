// Waits for promises to settle, up to a deadline: whether they all did in time (a stop that
// lets work in flight finish, then gives up on it).

/** True when every promise settled within `ms`; false at the deadline (nothing is cancelled). */
export async function settleWithin(promises: readonly Promise<unknown>[], ms: number): Promise<boolean> {
  if (promises.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
