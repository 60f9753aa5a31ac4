/**
 * A second connection to a local database file through `libsql`, the
 * engine binding `@libsql/client` itself runs local files on, for ingest's
 * bulk inserts. The client prepares every statement it runs and frees it
 * only when the garbage collector gets to it; this connection prepares each
 * statement once and runs it again, as SQLite is meant to be driven for
 * bulk writes (about a third of ingest's time at 10,000 events went to
 * building and parsing SQL text). `@libsql/client` stays the database
 * layer: everything else, and every remote or in-memory database, goes
 * through it. Private to `lib/`.
 *
 * Both connections must run on the same copy of SQLite: POSIX file locks
 * belong to the process, and two copies of SQLite in one process release
 * each other's locks when either closes the file. The import below is the
 * package the client loads (one pinned version in `deno.lock`), so the
 * native library is loaded once; and a connection is used only once it
 * names the same file as the client's (`PRAGMA database_list`).
 *
 * @module
 */

import Database from "libsql";
import type { Client } from "@libsql/client";
import { SECURE_DELETE_ON } from "./_db_secure_delete.ts";
import { BUSY_TIMEOUT_MS, WRITER_PRAGMAS } from "./_db_file.ts";

/** Rows per prepared multi-row INSERT, largest first: a row count is run as a sum of these. */
const INSERT_SHAPES = [100, 10, 1] as const;

/** One value a statement binds. */
export type EngineValue = string | number | null;

type Connection = Database.Database;
type Statement = Database.Statement;

/** A connection with its statements prepared once, by SQL text. */
export class EngineConnection {
  readonly #db: Connection;
  readonly #statements = new Map<string, Statement>();
  /** The file this connection's main database lives in; `null` when it has none. */
  readonly file: string | null;

  private constructor(db: Connection) {
    this.#db = db;
    this.file = this.#mainFile();
  }

  /**
   * Opens `path` with the client's settings; `null` when the connection
   * would not reach the file `client` has open, or cannot be opened.
   */
  static async open(
    path: string,
    client: Client,
  ): Promise<EngineConnection | null> {
    const connection = EngineConnection.openFile(path);
    if (!connection) return null;
    try {
      const theirs = (await client.execute("PRAGMA database_list")).rows
        .find((row) => row.name === "main")?.file;
      const ours = connection.file;
      if (ours !== null && ours === theirs) return connection;
    } catch {
      // Any surprise: ingest keeps writing through the client.
    }
    connection.close();
    return null;
  }

  /**
   * Opens `path` with the client's settings, whichever file it reaches
   * (compare its {@link file} with the client's); `null` when it cannot.
   */
  static openFile(path: string): EngineConnection | null {
    let db: Connection;
    try {
      db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    } catch {
      return null;
    }
    try {
      db.exec([...WRITER_PRAGMAS, SECURE_DELETE_ON].join("; "));
      return new EngineConnection(db);
    } catch {
      db.close();
      return null;
    }
  }

  #mainFile(): string | null {
    try {
      const file = this.all("PRAGMA database_list")
        .find((row) => row.name === "main")?.file;
      return typeof file === "string" && file !== "" ? file : null;
    } catch {
      return null;
    }
  }

  /** True while a transaction of this connection is open. */
  get inTransaction(): boolean {
    return this.#db.inTransaction;
  }

  /** Runs `sql`, which may hold several statements and binds nothing. */
  exec(sql: string): void {
    this.#db.exec(sql);
  }

  /** Runs one statement with `args`. */
  run(sql: string, args: readonly EngineValue[] = []): void {
    this.#statement(sql).run([...args]);
  }

  /** The rows one statement returns, as objects keyed by column name. */
  all(
    sql: string,
    args: readonly EngineValue[] = [],
  ): Record<string, unknown>[] {
    return this.#statement(sql).all([...args]) as Record<string, unknown>[];
  }

  /** Inserts `rows` into `table`'s `columns` with multi-row statements of a few fixed shapes. */
  insert(
    table: string,
    columns: readonly string[],
    rows: readonly (readonly EngineValue[])[],
  ): void {
    let start = 0;
    for (const shape of INSERT_SHAPES) {
      if (rows.length - start < shape) continue;
      const statement = this.#statement(insertSql(table, columns, shape));
      for (; rows.length - start >= shape; start += shape) {
        const args: EngineValue[] = [];
        for (let i = start; i < start + shape; i++) args.push(...rows[i]!);
        statement.run(args);
      }
    }
  }

  /** Closes the connection; its statements go with it. */
  close(): void {
    this.#statements.clear();
    if (this.#db.open) this.#db.close();
  }

  #statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

function insertSql(
  table: string,
  columns: readonly string[],
  rows: number,
): string {
  const tuple = `(${columns.map(() => "?").join(",")})`;
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${
    Array(rows).fill(tuple).join(",")
  }`;
}
