/**
 * `secure_delete` on every connection of a writable local database. Private
 * to `lib/db.ts`.
 *
 * SQLite keeps the bytes of a deleted row in its page (free space, freed
 * pages, old index cells) until something overwrites them; with
 * `secure_delete` it zeroes them as it deletes, so an erased preview cannot
 * be read back from `trace.db`. The pragma is per connection, and libSQL's
 * client keeps a pool: a pragma run once through `client.execute` reaches
 * one pooled connection and none opened later. So every operation that may
 * write sets it on the very connection it borrows: first statement of a
 * transaction or batch, first line of `executeMultiple`, and a lone writing
 * statement runs as a batch of the pragma and itself (SQLite still applies
 * it as one statement). Plain reads (`SELECT`, `PRAGMA`, `EXPLAIN`, a
 * `WITH` that names no change) and
 * `VACUUM` (which cannot run inside a transaction and rewrites every page
 * anyway) go straight through.
 *
 * @module
 */

import type {
  Client,
  InArgs,
  InStatement,
  ResultSet,
  Transaction,
  TransactionMode,
} from "@libsql/client";
import { acquireWrites, holdWrites, writesAllowed } from "./_db_write_gate.ts";
import { DelegatingClient } from "./_db_delegating_client.ts";
import { ReleasingTransaction } from "./_db_transaction_slots.ts";

/** The statement every writing connection runs first. */
export const SECURE_DELETE_ON = "PRAGMA secure_delete = ON";

const PASS_THROUGH = /^\s*(SELECT|PRAGMA|EXPLAIN|VACUUM)\b/i;
/** A common table expression is a read unless it names a change (a string that does only makes it wait). */
const READING_WITH = /^\s*WITH\b/i;
const CHANGES = /\b(INSERT|UPDATE|DELETE|REPLACE)\b/i;
/** Pass-through statements that wait for the writer (or are one), so they wait for an ingest hold too. */
const WAITS_FOR_WRITER = /^\s*(VACUUM\b|PRAGMA\s+wal_checkpoint\b)/i;

/** A client whose every writing operation runs with `secure_delete` on its own connection. */
export class SecureDeleteClient extends DelegatingClient {
  /** The file's path: writes wait while ingest holds it (`_db_write_gate.ts`). */
  #path: string;

  constructor(inner: Client, path: string) {
    super(inner);
    this.#path = path;
  }

  override execute(stmt: InStatement): Promise<ResultSet>;
  override execute(sql: string, args?: InArgs): Promise<ResultSet>;
  override async execute(
    stmtOrSql: InStatement | string,
    args?: InArgs,
  ): Promise<ResultSet> {
    const stmt: InStatement = typeof stmtOrSql === "string"
      ? { sql: stmtOrSql, args: args ?? [] }
      : stmtOrSql;
    const sql = typeof stmt === "string" ? stmt : stmt.sql;
    const passThrough = PASS_THROUGH.test(sql) ||
      (READING_WITH.test(sql) && !CHANGES.test(sql));
    if (passThrough && !WAITS_FOR_WRITER.test(sql)) {
      return await this.inner.execute(stmt);
    }
    return await this.#holding(async () => {
      if (passThrough) return await this.inner.execute(stmt);
      const [, result] = await this.inner.batch(
        [SECURE_DELETE_ON, stmt],
        "deferred",
      );
      return result!;
    });
  }

  override async batch(
    stmts: Array<InStatement | [string, InArgs?]>,
    mode?: TransactionMode,
  ): Promise<ResultSet[]> {
    if (mode === "read") return await this.inner.batch(stmts, mode);
    const results = await this.#holding(() =>
      this.inner.batch([SECURE_DELETE_ON, ...stmts], mode)
    );
    return results.slice(1);
  }

  override async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    const results = await this.#holding(() =>
      this.inner.migrate([SECURE_DELETE_ON, ...stmts])
    );
    return results.slice(1);
  }

  override async transaction(mode?: TransactionMode): Promise<Transaction> {
    if (mode === "read") return await this.inner.transaction(mode);
    // A write transaction (the client's default) holds the lock from its
    // first statement: the file's writes are held until it ends. A deferred
    // one only waits for them to be free: it may never write.
    let release = () => {};
    if (mode === "deferred") await writesAllowed(this.#path);
    else release = await acquireWrites(this.#path);
    let tx: Transaction | undefined;
    try {
      tx = await this.inner.transaction(mode);
      await tx.execute(SECURE_DELETE_ON);
    } catch (error) {
      tx?.close();
      release();
      throw error;
    }
    // The file's writes are released once the transaction has ended.
    return new ReleasingTransaction(tx, release);
  }

  override async executeMultiple(sql: string): Promise<void> {
    await this.#holding(() =>
      this.inner.executeMultiple(`${SECURE_DELETE_ON};\n${sql}`)
    );
  }

  /**
   * Runs one writing call with the file's writes held: a write that only
   * waited for the gate could find it claimed again, by an ingest whose
   * transaction then holds SQLite's lock, before its own statement runs.
   */
  #holding<T>(write: () => Promise<T>): Promise<T> {
    return holdWrites(this.#path, write);
  }
}
