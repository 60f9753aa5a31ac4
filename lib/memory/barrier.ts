/**
 * A one-shot barrier: work parked on it runs synchronously at the moment the
 * scenario releases it, never because some time passed. This is what makes
 * "the worker resurrects vectors mid-window" deterministic.
 *
 * @module
 */

/** Parks callbacks until {@link Barrier.release} is called. */
export class Barrier {
  #waiting: (() => void)[] = [];
  #released = false;

  /** Whether the barrier has been released. */
  get released(): boolean {
    return this.#released;
  }

  /** Callbacks parked so far and not yet run. */
  get parked(): number {
    return this.#waiting.length;
  }

  /** Runs `callback` on release (at once if already released). */
  onRelease(callback: () => void): void {
    if (this.#released) callback();
    else this.#waiting.push(callback);
  }

  /** Releases the barrier and runs every parked callback, in order; later calls do nothing. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    for (const callback of this.#waiting.splice(0)) callback();
  }

  /** Drops parked callbacks without running them (the system is shutting down). */
  discard(): void {
    this.#waiting.length = 0;
  }
}
