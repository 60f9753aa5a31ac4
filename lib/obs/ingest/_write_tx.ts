/**
 * The write transaction ingest runs its group in, on one of two paths.
 * A local file is written through the engine connection (`_db_engine.ts`):
 * multi-row INSERTs prepared once and run again for every slice. A remote
 * or in-memory database (and a local file whose engine connection cannot
 * be opened) is written through the libSQL client, its rows sent as SQL
 * scripts of literals (`_sql_literal.ts`), which SQLite prepares, runs and
 * finalizes within the call. Both write the same rows with the same
 * values in one `BEGIN IMMEDIATE` transaction. Private to `ingest/`.
 *
 * @module
 */

import type { InValue, Transaction } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import {
  type EngineConnection,
  engineConnection,
  type EngineValue,
} from "../../db.ts";
import { literalInserts } from "./_sql_literal.ts";
import { writerCheckpointPages } from "./checkpoints.ts";

/** Rows for one table, in column order. */
export interface TableRows {
  table: string;
  columns: readonly string[];
  rows: InValue[][];
}

/** An open write transaction of a group. */
export interface WriteTx {
  /** Rows of one read statement, keyed by column name. */
  rows(sql: string, args: InValue[]): Promise<Record<string, unknown>[]>;
  /** Runs one statement that returns nothing. */
  run(sql: string, args: InValue[]): Promise<void>;
  /** Inserts every table's rows, in order. */
  insert(tables: readonly TableRows[]): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Ends the transaction: rolls back whatever was not committed. */
  close(): void;
}

/** Begins the write transaction of a group on `db`'s fastest path. */
export async function beginWrite(db: TraceDb): Promise<WriteTx> {
  const engine = await engineConnection(db);
  if (engine) return beginEngineWrite(engine, db);
  const tx = await db.client.transaction("write");
  try {
    if (db.path !== null) {
      // The WAL bound is per connection, and a pooled client may hand out any: set on each write.
      await tx.execute(
        `PRAGMA wal_autocheckpoint = ${writerCheckpointPages(db)}`,
      );
    }
  } catch (error) {
    tx.close();
    throw error;
  }
  return new ClientWrite(tx);
}

function beginEngineWrite(engine: EngineConnection, db: TraceDb): WriteTx {
  engine.exec(
    `PRAGMA wal_autocheckpoint = ${writerCheckpointPages(db)}; BEGIN IMMEDIATE`,
  );
  return new EngineWrite(engine);
}

/** Ingest binds only null, safe integers and strings, as `_sql_literal.ts` checks for scripts. */
class EngineWrite implements WriteTx {
  readonly #engine: EngineConnection;

  constructor(engine: EngineConnection) {
    this.#engine = engine;
  }

  rows(sql: string, args: InValue[]): Promise<Record<string, unknown>[]> {
    return Promise.resolve(this.#engine.all(sql, args as EngineValue[]));
  }

  run(sql: string, args: InValue[]): Promise<void> {
    this.#engine.run(sql, args as EngineValue[]);
    return Promise.resolve();
  }

  insert(tables: readonly TableRows[]): Promise<void> {
    for (const { table, columns, rows } of tables) {
      this.#engine.insert(table, columns, rows as EngineValue[][]);
    }
    return Promise.resolve();
  }

  commit(): Promise<void> {
    this.#engine.exec("COMMIT");
    return Promise.resolve();
  }

  rollback(): Promise<void> {
    this.close();
    return Promise.resolve();
  }

  close(): void {
    if (this.#engine.inTransaction) this.#engine.exec("ROLLBACK");
  }
}

class ClientWrite implements WriteTx {
  readonly #tx: Transaction;

  constructor(tx: Transaction) {
    this.#tx = tx;
  }

  async rows(sql: string, args: InValue[]): Promise<Record<string, unknown>[]> {
    return (await this.#tx.execute({ sql, args })).rows;
  }

  async run(sql: string, args: InValue[]): Promise<void> {
    await this.#tx.execute({ sql, args });
  }

  async insert(tables: readonly TableRows[]): Promise<void> {
    const script = tables.map(({ table, columns, rows }) =>
      literalInserts(table, columns, rows)
    ).join("");
    if (script !== "") await this.#tx.executeMultiple(script);
  }

  commit(): Promise<void> {
    return this.#tx.commit();
  }

  rollback(): Promise<void> {
    return this.#tx.rollback();
  }

  close(): void {
    this.#tx.close();
  }
}
