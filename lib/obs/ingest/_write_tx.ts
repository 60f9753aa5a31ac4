/**
 * The write transaction ingest runs its group in on the thread that serves
 * requests, on one of two paths. A local file is written through the
 * engine connection (`_engine_write.ts`). A remote or in-memory database
 * (and a local file whose engine connection cannot be opened) is written through the libSQL client, its rows sent as SQL
 * scripts of literals (`_sql_literal.ts`), which SQLite prepares, runs and
 * finalizes within the call. Both write the same rows with the same
 * values in one `BEGIN IMMEDIATE` transaction. Private to `ingest/`.
 *
 * @module
 */

import type { InValue, Transaction } from "@libsql/client";
import { engineConnection, type TraceDb } from "../../db.ts";
import { beginEngineWrite } from "./_engine_write.ts";
import type { WriteTx } from "./_write_group.ts";
import type { InsertedRows } from "./row_counts.ts";
import { literalInserts } from "./_sql_literal.ts";
import { writerCheckpointPages } from "./checkpoints.ts";

/** Begins the write transaction of a group on `db`'s fastest path. */
export async function beginWrite(db: TraceDb): Promise<WriteTx> {
  const engine = await engineConnection(db);
  if (engine) return beginEngineWrite(engine, writerCheckpointPages(db));
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

  async insert(tables: readonly InsertedRows[]): Promise<void> {
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
