/**
 * Time as a dependency. The memory pipeline and its parts read the clock and
 * set timers only through {@link Scheduler}: the demo runs on real timers, and
 * a test or a reference run swaps in {@link ManualScheduler} to decide exactly
 * when delayed work runs.
 *
 * @module
 */

/** Reads the current time in epoch milliseconds. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** Opaque handle of a scheduled callback (a number, or the runtime's timer object). */
export type TimerId = number | ReturnType<typeof setTimeout>;

/** A clock that can also run callbacks later. */
export interface Scheduler extends Clock {
  /** Runs `callback` once, `delayMs` from now. */
  setTimeout(callback: () => void, delayMs: number): TimerId;
  /** Cancels a callback that has not run yet. */
  clearTimeout(id: TimerId): void;
}

/** The process's real clock and timers. */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (id) => clearTimeout(id),
};

interface ManualTimer {
  at: number;
  seq: number;
  callback: () => void;
}

/** A scheduler whose time moves only when {@link ManualScheduler.advance} is called. */
export class ManualScheduler implements Scheduler {
  #now: number;
  #seq = 0;
  #timers = new Map<number, ManualTimer>();

  /** Starts at `start` epoch milliseconds. */
  constructor(start = 0) {
    this.#now = start;
  }

  /** The current manual time. */
  now(): number {
    return this.#now;
  }

  /** Runs `callback` once time has been advanced by `delayMs`. */
  setTimeout(callback: () => void, delayMs: number): number {
    const id = ++this.#seq;
    this.#timers.set(id, {
      at: this.#now + Math.max(0, delayMs),
      seq: id,
      callback,
    });
    return id;
  }

  /** Cancels a callback that has not run yet. */
  clearTimeout(id: TimerId): void {
    if (typeof id === "number") this.#timers.delete(id);
  }

  /** Number of callbacks still waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, running due callbacks in time order (also ones they schedule). */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let next = this.#nextDue(target); next; next = this.#nextDue(target)) {
      const [id, timer] = next;
      this.#timers.delete(id);
      this.#now = timer.at;
      timer.callback();
    }
    this.#now = target;
  }

  #nextDue(limit: number): [number, ManualTimer] | undefined {
    let best: [number, ManualTimer] | undefined;
    for (const entry of this.#timers) {
      const timer = entry[1];
      if (timer.at > limit) continue;
      if (
        !best || timer.at < best[1].at ||
        (timer.at === best[1].at && timer.seq < best[1].seq)
      ) {
        best = entry;
      }
    }
    return best;
  }
}
