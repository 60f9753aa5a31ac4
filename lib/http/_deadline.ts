/**
 * One monotonic budget per request. Every awaited step (connect, handshake,
 * write, each read) races what is left of it, so a peer that answers one byte
 * at a time cannot stretch the request past its budget; and races the
 * caller's signal, so a request called off ends at once.
 *
 * @module
 */

import { ProtocolError } from "../contract/protocol.ts";
import { settleWithin } from "../settle_within.ts";

/**
 * A fixed point in `performance.now()` time after which a request has
 * failed, or the moment `signal` calls it off, whichever comes first.
 */
export class Deadline {
  readonly #end: number;
  readonly #budgetMs: number;
  readonly #signal: AbortSignal | undefined;

  constructor(budgetMs: number, signal?: AbortSignal) {
    if (!Number.isFinite(budgetMs) || budgetMs <= 0) {
      throw new RangeError(
        `Request budget must be a positive number of milliseconds, got ${budgetMs}`,
      );
    }
    this.#budgetMs = budgetMs;
    this.#end = performance.now() + budgetMs;
    this.#signal = signal;
  }

  /** Milliseconds left, never negative. */
  remaining(): number {
    return Math.max(0, this.#end - performance.now());
  }

  /** The error every expired step throws. */
  expired(): ProtocolError {
    return new ProtocolError(
      "timeout",
      `no complete response within ${Math.round(this.#budgetMs)} ms`,
    );
  }

  /** The error every step throws once the request was called off. */
  calledOff(): ProtocolError {
    return new ProtocolError(
      "timeout",
      "the request was called off before a complete response",
    );
  }

  /**
   * Settles like `step`, unless the budget runs out or the signal aborts
   * first: then `onExpire` runs (it closes the connection, which also ends
   * the pending step) and the timeout error is thrown.
   */
  async race<T>(step: Promise<T>, onExpire: () => void): Promise<T> {
    // The losing side of the race must not surface as an unhandled rejection.
    step.catch(() => {});
    const signal = this.#signal;
    if (this.remaining() === 0 || signal?.aborted) {
      onExpire();
      throw signal?.aborted ? this.calledOff() : this.expired();
    }
    let onAbort = () => {};
    const calledOff = new Promise<never>((_, reject) => {
      onAbort = () => {
        onExpire();
        reject(this.calledOff());
      };
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await settleWithin(
        signal ? Promise.race([step, calledOff]) : step,
        this.remaining(),
        () => {
          onExpire();
          throw this.expired();
        },
      );
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
