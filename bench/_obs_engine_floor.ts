/**
 * The engine floor of `bench:obs`: every row ingest wrote (envelopes, index
 * rows, resource refs, previews), read back outside the timing and inserted
 * again through Deno's built-in `node:sqlite` (`DatabaseSync`, statements
 * prepared once) into a fresh database file holding copies of the written
 * tables. No client, validation, normalization or hashing stands between
 * the rows and SQLite: this is what the database engine itself costs.
 *
 * The copy gets the product connection's settings (journal mode,
 * synchronous, foreign keys, auto-vacuum, cache size), read from it, so
 * both pay the same commits and checkpoints. Table shapes:
 *
 * - `plain`: each table's columns and primary key, nothing else;
 * - `same_indexes`: exact copies, with every index, constraint, foreign key
 *   and trigger (the `obs_counts` triggers and their table included; they
 *   fire on deletes and store changes only, and ingest's one count update
 *   per transaction is not copied).
 *
 * Statement shapes: one row per prepared INSERT, or 100 rows per prepared
 * multi-row INSERT; commits: one transaction for everything, or one per
 * 500-event bundle as ingest commits. The floor is the best of these.
 *
 * The rows are read back through `libsql`, the copy of SQLite the product's
 * connections run on, never through `node:sqlite`: POSIX locks belong to
 * the process, so a second copy opening the product's file takes it for
 * unused and resets the WAL index the product's connections have mapped
 * (their next write past its first 32 KiB then dies of SIGBUS).
 *
 * @module
 */

import { DatabaseSync, type StatementSync } from "node:sqlite";
import Database from "libsql";
import type { Client } from "@libsql/client";
import { type Seconds, Stopwatch } from "./_stopwatch.ts";

/** Tables ingest writes, in foreign-key order (an event before its resources). */
export const WRITTEN_TABLES = [
  "obs_envelopes",
  "obs_events",
  "obs_resources",
  "obs_previews",
] as const;

/** Table shapes a floor inserts into. */
export const FLOOR_TABLES = ["plain", "same_indexes"] as const;
/** One of {@link FLOOR_TABLES}. */
export type FloorTables = typeof FLOOR_TABLES[number];

/** How a floor commits: everything at once, or once per bundle. */
export const FLOOR_COMMITS = ["one_transaction", "per_bundle"] as const;
/** One of {@link FLOOR_COMMITS}. */
export type FloorCommit = typeof FLOOR_COMMITS[number];

/** Statement shapes of the engine floor. */
export const ENGINE_SHAPES = ["prepared_row", "prepared_100_rows"] as const;
/** One of {@link ENGINE_SHAPES}. */
export type EngineShape = typeof ENGINE_SHAPES[number];

/** One engine floor run. */
export interface EngineVariant {
  tables: FloorTables;
  shape: EngineShape;
  commit: FloorCommit;
}

/** Connection settings copied from the product's connection to the floor's. */
const COPIED_PRAGMAS = [
  "page_size",
  "auto_vacuum",
  "journal_mode",
  "synchronous",
  "foreign_keys",
  "cache_size",
] as const;

/** The product's database, read through the product's copy of SQLite. */
type Source = Database.Database;

const MULTI_ROWS = 100;
/** Events read back per chunk when everything goes into one transaction. */
const READ_CHUNK = 20_000;

/** The settings of the product's connection, as `PRAGMA name = value` statements. */
export async function productPragmas(client: Client): Promise<string[]> {
  const statements: string[] = [];
  for (const name of COPIED_PRAGMAS) {
    const result = await client.execute(`PRAGMA ${name}`);
    const value = Object.values(result.rows[0] ?? {})[0];
    if (value !== undefined) statements.push(`PRAGMA ${name} = ${value}`);
  }
  return statements;
}

/** Schema statements of the floor copy: tables (and for `same_indexes` their indexes and triggers). */
function floorSchema(source: Source, tables: FloorTables): string[] {
  const names = [...WRITTEN_TABLES, "obs_counts", "obs_expiry_grants"];
  const rows = source.prepare(
    `SELECT type, sql FROM sqlite_master
     WHERE tbl_name IN (SELECT value FROM json_each(?)) AND sql IS NOT NULL
     ORDER BY type = 'table' DESC, rowid`,
  ).all(JSON.stringify(names)) as { type: string; sql: string }[];
  if (tables === "same_indexes") return rows.map((row) => row.sql);
  return rows
    .filter((row) => row.type === "table")
    .map((row) =>
      row.sql
        .replace(/,\s*UNIQUE\s*\([^)]*\)/gi, "")
        .replace(/\s+REFERENCES\s+\w+\s*\([^)]*\)(\s+ON DELETE CASCADE)?/gi, "")
    );
}

function columnsOf(db: Source, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?) ORDER BY cid`)
    .all(table) as { name: string }[]).map((row) => row.name);
}

interface TableWriter {
  columns: string[];
  read: Database.Statement;
  one: StatementSync;
  many: StatementSync;
}

function writers(
  source: Source,
  floor: DatabaseSync,
): Map<string, TableWriter> {
  const map = new Map<string, TableWriter>();
  for (const table of WRITTEN_TABLES) {
    const columns = columnsOf(source, table);
    const tuple = `(${columns.map(() => "?").join(", ")})`;
    const insert = (rows: number) =>
      floor.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${
          Array.from({ length: rows }, () => tuple).join(", ")
        }`,
      );
    const read = source.prepare(
      `SELECT ${columns.join(", ")} FROM ${table}
       WHERE seq > ? AND seq <= ? ORDER BY seq`,
    );
    map.set(table, { columns, read, one: insert(1), many: insert(MULTI_ROWS) });
  }
  return map;
}

type Rows = Map<string, unknown[][]>;

function readRange(
  tables: Map<string, TableWriter>,
  after: number,
  upTo: number,
): Rows {
  const rows: Rows = new Map();
  for (const [table, writer] of tables) {
    const objects = writer.read.all(after, upTo) as Record<string, unknown>[];
    rows.set(table, objects.map((row) => writer.columns.map((c) => row[c])));
  }
  return rows;
}

function insertRows(
  tables: Map<string, TableWriter>,
  rows: Rows,
  shape: EngineShape,
): void {
  for (const [table, writer] of tables) {
    const list = rows.get(table) ?? [];
    let i = 0;
    if (shape === "prepared_100_rows") {
      for (; i + MULTI_ROWS <= list.length; i += MULTI_ROWS) {
        // deno-lint-ignore no-explicit-any
        writer.many.run(...(list.slice(i, i + MULTI_ROWS).flat() as any[]));
      }
    }
    // deno-lint-ignore no-explicit-any
    for (; i < list.length; i++) writer.one.run(...(list[i] as any[]));
  }
}

/** Where the floor reads from and writes to. */
export interface EngineFloorTarget {
  /** The product's database file, holding the rows ingest wrote. */
  sourcePath: string;
  /** A file for the floor's copy (created, then removed). */
  floorPath: string;
  /** Settings of the product's connection ({@link productPragmas}). */
  pragmas: string[];
  /** Events per commit in `per_bundle` runs. */
  bundle: number;
}

/** Seconds one engine floor variant spends inserting and committing. */
export function engineFloor(
  target: EngineFloorTarget,
  variant: EngineVariant,
): Seconds {
  const source = new Database(target.sourcePath, { readonly: true });
  const floor = new DatabaseSync(target.floorPath);
  try {
    for (const pragma of target.pragmas) floor.exec(pragma);
    for (const sql of floorSchema(source, variant.tables)) floor.exec(sql);
    const tables = writers(source, floor);
    const { lo, hi } = source.prepare(
      "SELECT MIN(seq) - 1 AS lo, MAX(seq) AS hi FROM obs_envelopes",
    ).get() as { lo: number; hi: number };
    return variant.commit === "per_bundle"
      ? perBundle(floor, tables, variant.shape, [lo, hi], target.bundle)
      : oneTransaction(floor, tables, variant.shape, [lo, hi]);
  } finally {
    source.close();
    floor.close();
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        Deno.removeSync(target.floorPath + suffix);
      } catch {
        // Already gone.
      }
    }
  }
}

function perBundle(
  floor: DatabaseSync,
  tables: Map<string, TableWriter>,
  shape: EngineShape,
  [first, last]: [number, number],
  bundle: number,
): Seconds {
  const watch = new Stopwatch();
  for (let after = first; after < last; after += bundle) {
    const rows = readRange(tables, after, Math.min(last, after + bundle));
    watch.start();
    floor.exec("BEGIN IMMEDIATE");
    insertRows(tables, rows, shape);
    floor.exec("COMMIT");
    watch.stop();
  }
  return watch.seconds;
}

function oneTransaction(
  floor: DatabaseSync,
  tables: Map<string, TableWriter>,
  shape: EngineShape,
  [first, last]: [number, number],
): Seconds {
  const watch = new Stopwatch();
  watch.start();
  floor.exec("BEGIN IMMEDIATE");
  watch.stop();
  for (let after = first; after < last; after += READ_CHUNK) {
    const rows = readRange(tables, after, Math.min(last, after + READ_CHUNK));
    watch.start();
    insertRows(tables, rows, shape);
    watch.stop();
  }
  watch.start();
  floor.exec("COMMIT");
  watch.stop();
  return watch.seconds;
}
