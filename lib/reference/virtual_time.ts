/**
 * One clock for a whole reference run. The runner sleeps on it, the
 * in-process transport charges request latency to it, and the reference
 * system's timers live on its {@link ManualScheduler}: when the runner sleeps
 * through an interval, exactly the background work due in that interval runs,
 * and a five-second window takes milliseconds of real time.
 *
 * @module
 */

import { ManualScheduler } from "../memory/mod.ts";
import type { Clock } from "../runner/clock.ts";

/** A runner clock backed by a manual scheduler; time moves only when someone waits. */
export class VirtualTime implements Clock {
  /** The scheduler reference systems read time from and set timers on. */
  readonly scheduler: ManualScheduler;

  /** Starts at `startMs` epoch milliseconds (default: the real time now). */
  constructor(startMs: number = Date.now()) {
    this.scheduler = new ManualScheduler(startMs);
  }

  now(): number {
    return this.scheduler.now();
  }

  wallNow(): Date {
    return new Date(this.scheduler.now());
  }

  /** Advances time by `ms` at once, running every timer that falls due on the way. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms > 0 && !signal?.aborted) this.scheduler.advance(ms);
    return Promise.resolve();
  }

  /** Moves time forward by `ms` (request latency, test steps). */
  advance(ms: number): void {
    if (ms > 0) this.scheduler.advance(ms);
  }
}
