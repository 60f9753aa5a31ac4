/**
 * Open transactions of one local database client, queued rather than
 * refused. Private to `lib/db.ts` and its clients.
 *
 * libSQL's local client keeps a pool of connections (`POOL_CONNECTIONS`):
 * a statement borrows one for the instant it runs, a transaction holds one
 * until it ends. When open transactions hold every connection the pool
 * refuses the next borrow at once (`TRANSACTION_ACTIVE`) instead of waiting,
 * since a transaction whose own flow needs a second connection would wait
 * forever. A server answers many requests at once, and every ledger read
 * opens a short snapshot transaction, so 20 parallel reads were enough to
 * fail the 21st. {@link SlottedClient} lets fewer transactions be open than
 * there are connections, keeping a few free for single statements; the
 * others wait their turn in arrival order, and a wait that lasts past
 * {@link TRANSACTION_WAIT_MS} fails with {@link DatabaseBusyError}, which
 * says to retry.
 *
 * @module
 */

import type {
  Client,
  InStatement,
  ResultSet,
  Transaction,
  TransactionMode,
} from "@libsql/client";
import { StorageError } from "./errors.ts";
import { DelegatingClient } from "./_db_delegating_client.ts";

/** Longest a transaction waits for a slot before the caller is told to retry. */
export const TRANSACTION_WAIT_MS = 30_000;

/** Connections kept out of transactions' reach, for single statements. */
export const RESERVED_CONNECTIONS = 4;

/** Every transaction slot stayed taken for the whole wait: the caller may retry (code `storage`). */
export class DatabaseBusyError extends StorageError {
  /** `slots`: how many transactions may be open at once; `waitMs`: how long the caller waited for one. */
  constructor(slots: number, waitMs: number) {
    super(
      `Cannot open a database transaction: all ${slots} this process may hold at once stayed busy for ${
        waitMs / 1000
      } s; retry in a moment`,
    );
    this.name = "DatabaseBusyError";
  }
}

/** Options for {@link TransactionSlots}. */
export interface TransactionSlotsOptions {
  /** How many transactions may be open at once. */
  slots: number;
  /** Longest one caller waits for a slot (default {@link TRANSACTION_WAIT_MS}). */
  waitMs?: number;
}

interface Waiter {
  grant: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/** A first-come, first-served count of open transactions with a bounded wait. */
export class TransactionSlots {
  readonly #slots: number;
  readonly #waitMs: number;
  #taken = 0;
  readonly #queue: Waiter[] = [];

  constructor(options: TransactionSlotsOptions) {
    if (!Number.isInteger(options.slots) || options.slots < 1) {
      throw new RangeError("TransactionSlots needs at least one slot");
    }
    this.#slots = options.slots;
    this.#waitMs = options.waitMs ?? TRANSACTION_WAIT_MS;
  }

  /** Slots taken now. */
  get taken(): number {
    return this.#taken;
  }

  /** Callers waiting for a slot now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Takes a slot, waiting behind earlier callers; resolves to its release (safe to call twice). */
  async take(): Promise<() => void> {
    // A free slot goes to the first in the queue, never to a newcomer.
    if (this.#taken < this.#slots && this.#queue.length === 0) {
      this.#taken++;
    } else await this.#wait();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  /** Lets every waiter through (the client is closing: its own refusal answers them). */
  close(): void {
    for (const waiter of this.#queue.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.grant();
    }
  }

  #wait(): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          this.#queue.splice(this.#queue.indexOf(waiter), 1);
          reject(new DatabaseBusyError(this.#slots, this.#waitMs));
        }, this.#waitMs),
      };
      this.#queue.push(waiter);
    });
  }

  #release(): void {
    const next = this.#queue.shift();
    if (next === undefined) {
      this.#taken--;
      return;
    }
    // Handed straight on: the slot stays taken, by the next in line.
    clearTimeout(next.timer);
    next.grant();
  }
}

/** A client whose transactions wait for one of `slots` before taking a pooled connection. */
export class SlottedClient extends DelegatingClient {
  readonly #slots: TransactionSlots;

  constructor(inner: Client, slots: TransactionSlots) {
    super(inner);
    this.#slots = slots;
  }

  override async transaction(mode?: TransactionMode): Promise<Transaction> {
    const release = await this.#slots.take();
    try {
      return new ReleasingTransaction(
        await this.inner.transaction(mode),
        release,
      );
    } catch (error) {
      release();
      throw error;
    }
  }

  override close(): void {
    this.inner.close();
    this.#slots.close();
  }
}

/** A transaction that calls `release` (which must be safe to call twice) once it has ended. */
export class ReleasingTransaction implements Transaction {
  readonly #tx: Transaction;
  readonly #release: () => void;

  constructor(tx: Transaction, release: () => void) {
    this.#tx = tx;
    this.#release = release;
  }

  get closed(): boolean {
    return this.#tx.closed;
  }

  execute(stmt: InStatement): Promise<ResultSet> {
    return this.#tx.execute(stmt);
  }

  batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#tx.batch(stmts);
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#tx.executeMultiple(sql);
  }

  async commit(): Promise<void> {
    // A failed commit leaves the transaction open until it is closed.
    await this.#tx.commit();
    this.#release();
  }

  async rollback(): Promise<void> {
    try {
      await this.#tx.rollback();
    } finally {
      if (this.#tx.closed) this.#release();
    }
  }

  close(): void {
    this.#tx.close();
    this.#release();
  }
}
