/**
 * One monotonic budget per request. Every awaited step (connect, handshake,
 * write, each read) races what is left of it, so a peer that answers one byte
 * at a time cannot stretch the request past its budget.
 *
 * @module
 */

import { ProtocolError } from "../contract/protocol.ts";
import { settleWithin } from "../settle_within.ts";

/** A fixed point in `performance.now()` time after which a request has failed. */
export class Deadline {
  readonly #end: number;
  readonly #budgetMs: number;

  constructor(budgetMs: number) {
    if (!Number.isFinite(budgetMs) || budgetMs <= 0) {
      throw new RangeError(
        `Request budget must be a positive number of milliseconds, got ${budgetMs}`,
      );
    }
    this.#budgetMs = budgetMs;
    this.#end = performance.now() + budgetMs;
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

  /**
   * Settles like `step`, unless the budget runs out first: then `onExpire`
   * runs (it closes the connection, which also ends the pending step) and the
   * timeout error is thrown.
   */
  async race<T>(step: Promise<T>, onExpire: () => void): Promise<T> {
    // The losing side of the race must not surface as an unhandled rejection.
    step.catch(() => {});
    if (this.remaining() === 0) {
      onExpire();
      throw this.expired();
    }
    return await settleWithin(step, this.remaining(), () => {
      onExpire();
      throw this.expired();
    });
  }
}
