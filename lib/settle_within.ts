/**
 * A promise raced against a timer that is cleared whichever settles first:
 * what `@std/async`'s `deadline` would give, out of reach here (JSR). Hooks,
 * request bodies, connections and waits for the database each bound how
 * long they wait, and a timer left running would keep the process (and a
 * test's sanitizer) waiting for it.
 *
 * @module
 */

/**
 * Settles like `promise`, unless `ms` pass first: then settles with what
 * `onTimeout` returns, or rejects with what it throws. The losing side of
 * the race never surfaces as an unhandled rejection.
 */
export async function settleWithin<T, U>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => U,
): Promise<T | U> {
  promise.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
