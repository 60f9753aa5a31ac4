/**
 * The client floor of `bench:obs`: every row ingest wrote, read back outside
 * the timing and inserted again through the same libSQL client the product
 * uses, into copies of the tables in the same database: single-row and
 * multi-row prepared INSERTs, and one SQL script of literal INSERTs as
 * ingest sends them; one transaction or one per bundle; the best counts.
 * It shows what the client costs over the engine (`_obs_engine_floor.ts`)
 * and what ingest adds over the client.
 *
 * The local client never frees a prepared statement (about 6 KB per event
 * of these rows), so from {@link SINGLE_TRANSACTION_LIMIT} events only the
 * script runs, committed per bundle.
 *
 * @module
 */

import type { Client, InStatement, InValue, Transaction } from "@libsql/client";
import { chunkedInsert, literalInserts } from "../lib/obs/ingest/mod.ts";
import {
  FLOOR_COMMITS,
  type FloorCommit,
  type FloorTables,
  WRITTEN_TABLES,
} from "./_obs_engine_floor.ts";
import { BUNDLE } from "./_obs_workload.ts";
import { best, type Seconds, Stopwatch } from "./_stopwatch.ts";

/** Statement shapes for the client floor inserts; the fastest counts. */
const FLOOR_SHAPES = [
  "prepared_rows",
  "multi_row_values",
  "literal_script",
] as const;
type FloorShape = typeof FLOOR_SHAPES[number];

/**
 * Creates floor copies of the written tables; returns their names by source
 * table. Names of tables, indexes and triggers get a prefix, so the copies
 * reference each other (the resource -> event foreign key stays a real one).
 */
async function cloneWrittenTables(
  client: Client,
  prefix: string,
  tables: FloorTables,
): Promise<Map<string, string>> {
  const names = new Map<string, string>(
    WRITTEN_TABLES.map((t) => [t, `${prefix}_${t}`]),
  );
  const rename = (sql: string) =>
    sql
      .replace(/\b(INDEX|TRIGGER) (\w+)/, `$1 ${prefix}_$2`)
      .replace(
        /\bobs_(envelopes|events|resources|previews)\b/g,
        (table) => names.get(table)!,
      );
  const schema = await client.execute({
    sql: `SELECT type, sql FROM sqlite_master
          WHERE tbl_name IN (SELECT value FROM json_each(?)) AND sql IS NOT NULL
          ORDER BY type = 'table' DESC, rowid`,
    args: [JSON.stringify(WRITTEN_TABLES)],
  });
  for (const row of schema.rows) {
    let sql = rename(String(row.sql));
    if (tables === "plain") {
      if (row.type !== "table") continue;
      sql = sql
        .replace(/,\s*UNIQUE\s*\([^)]*\)/gi, "")
        .replace(
          /\s+REFERENCES\s+\w+\s*\([^)]*\)(\s+ON DELETE CASCADE)?/gi,
          "",
        );
    }
    await client.execute(sql);
  }
  return names;
}

/** Columns of each written table, in table order. */
async function columnsOf(client: Client, table: string): Promise<string[]> {
  const result = await client.execute(
    `SELECT name FROM pragma_table_info('${table}') ORDER BY cid`,
  );
  return result.rows.map((row) => String(row.name));
}

/** Sizes from which the client floor runs only its script, per bundle. */
const SINGLE_TRANSACTION_LIMIT = 1_000_000;

/** Reads back the rows ingest wrote for events `after < seq <= hi`, as inserts: statements or one script. */
async function floorStatements(
  reader: Client | Transaction,
  names: Map<string, string>,
  columns: Map<string, string[]>,
  shape: FloorShape,
  range: [number, number],
): Promise<InStatement[] | string> {
  const statements: InStatement[] = [];
  let script = "";
  for (const table of WRITTEN_TABLES) {
    const cols = columns.get(table)!;
    const chunk = await reader.execute({
      sql: `SELECT ${cols.join(", ")} FROM ${table}
            WHERE seq > ? AND seq <= ? ORDER BY seq`,
      args: range,
    });
    const rows = chunk.rows.map((row) => cols.map((c) => row[c] as InValue));
    const target = names.get(table)!;
    const single = `INSERT INTO ${target} (${cols.join(", ")}) VALUES (${
      cols.map(() => "?").join(", ")
    })`;
    if (shape === "literal_script") {
      script += literalInserts(target, cols, rows);
      continue;
    }
    statements.push(
      ...(shape === "prepared_rows"
        ? rows.map((args) => ({ sql: single, args }))
        : chunkedInsert(target, cols, rows)),
    );
  }
  return shape === "literal_script" ? script : statements;
}

/** Runs the inserts of one range: a batch of statements, or a script. */
async function write(
  target: Client | Transaction,
  inserts: InStatement[] | string,
): Promise<void> {
  if (typeof inserts === "string") await target.executeMultiple(inserts);
  else if ("transaction" in target) await target.batch(inserts, "write");
  else await target.batch(inserts);
}

/**
 * The floor: every row ingest wrote (envelopes, events, resources, previews)
 * inserted again by plain SQL into fresh copies of the tables with prepared
 * statements. Rows are read back before each timed write (in chunks of
 * 20,000 events, or one bundle), so only inserting and committing count.
 */
async function floorInsert(
  client: Client,
  variant: { shape: FloorShape; tables: FloorTables; commit: FloorCommit },
): Promise<Seconds> {
  const { shape, tables, commit } = variant;
  const names = await cloneWrittenTables(
    client,
    `floor_${shape}_${tables}`,
    tables,
  );
  const columns = new Map<string, string[]>();
  for (const table of WRITTEN_TABLES) {
    columns.set(table, await columnsOf(client, table));
  }
  const step = commit === "per_bundle" ? BUNDLE : 20_000;
  const seqs = await client.execute(
    "SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM obs_events",
  );
  const first = Number(seqs.rows[0]!.lo) - 1;
  const last = Number(seqs.rows[0]!.hi);
  const watch = new Stopwatch();
  if (commit === "per_bundle") {
    for (let after = first; after < last; after += step) {
      const range: [number, number] = [after, Math.min(last, after + step)];
      const statements = await floorStatements(
        client,
        names,
        columns,
        shape,
        range,
      );
      watch.start();
      if (typeof statements === "string") {
        await client.executeMultiple(
          `BEGIN IMMEDIATE;\n${statements}COMMIT;\n`,
        );
      } else await write(client, statements);
      watch.stop();
    }
  } else {
    const tx = await client.transaction("write");
    try {
      for (let after = first; after < last; after += step) {
        const range: [number, number] = [after, Math.min(last, after + step)];
        const statements = await floorStatements(
          tx,
          names,
          columns,
          shape,
          range,
        );
        watch.start();
        await write(tx, statements);
        watch.stop();
      }
      watch.start();
      await tx.commit();
      watch.stop();
    } finally {
      tx.close();
    }
  }
  for (const table of [...names.values()].reverse()) {
    await client.execute(`DROP TABLE ${table}`);
  }
  return watch.seconds;
}

/** Best (fastest) client floor for one table shape; each variant's seconds go into `floors`. */
export async function bestClientFloor(
  client: Client,
  tables: FloorTables,
  floors: Record<string, Seconds>,
  events: number,
): Promise<Seconds> {
  const times: Seconds[] = [];
  // Prepared statements are never freed: at a million events they would
  // hold gigabytes, so at that size only the script runs, per bundle.
  const large = events >= SINGLE_TRANSACTION_LIMIT;
  const commits = large ? ["per_bundle"] as const : FLOOR_COMMITS;
  const shapes = large ? ["literal_script"] as const : FLOOR_SHAPES;
  for (const shape of shapes) {
    for (const commit of commits) {
      const seconds = await floorInsert(client, { shape, tables, commit });
      floors[`${tables}/${shape}/${commit}`] = seconds;
      times.push(seconds);
    }
  }
  return best(times);
}
