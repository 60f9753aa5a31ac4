/** Time as the runner sees it: monotonic milliseconds and an abortable sleep. */

/** Injectable time source; the reference suite and tests substitute their own. */
export interface Clock {
  /** Monotonic milliseconds (never goes backwards). */
  now(): number;
  /** Wall-clock time for timestamps in reports. */
  wallNow(): Date;
  /** Sleeps `ms`, resolving early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `performance.now()` and timers. */
export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => new Date(),
  sleep: (ms, signal) => sleepFor(ms, signal),
};

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Sleeps until the clock reads at least `target`. Timers may wake a fraction
 * of a millisecond before the monotonic clock agrees; a sample that is due at
 * the window's end must not start just before it.
 */
export async function sleepUntil(
  clock: Clock,
  target: number,
  signal?: AbortSignal,
): Promise<void> {
  while (clock.now() < target && !signal?.aborted) {
    await clock.sleep(Math.max(target - clock.now(), 0.05), signal);
  }
}
