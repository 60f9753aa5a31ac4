/**
 * A write transaction on an engine connection (`../../_db_engine.ts`):
 * multi-row INSERTs prepared once and run again for every slice. Used on
 * the thread that serves requests (`_write_tx.ts`) and on the write thread
 * (`_write_worker.ts`), which is why it knows nothing of database handles.
 * Private to `ingest/`.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { EngineConnection, EngineValue } from "../../_db_engine.ts";
import type { WriteTx } from "./_write_group.ts";
import type { InsertedRows } from "./row_counts.ts";

/** Begins an immediate transaction on `engine`, its WAL bound set to `checkpointPages`. */
export function beginEngineWrite(
  engine: EngineConnection,
  checkpointPages: number,
): WriteTx {
  engine.exec(
    `PRAGMA wal_autocheckpoint = ${checkpointPages}; BEGIN IMMEDIATE`,
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

  insert(tables: readonly InsertedRows[]): Promise<void> {
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
