/**
 * SQL literals for the values ingest writes, so its inserts through the
 * libSQL client (remote and in-memory databases, `_write_tx.ts`) run as one
 * SQL script (`executeMultiple`) instead of a prepared statement per call.
 * The client frees a statement it prepared only once the garbage collector
 * and the event loop get to it: every `execute` keeps its compiled program
 * and bound values meanwhile (about 6 KB per event in a bulk load,
 * gigabytes at a million events), while a script is prepared, run and
 * finalized inside SQLite. Private to `ingest/`.
 *
 * Only what ingest writes is accepted, and anything else throws: `null`,
 * safe integers, and well-formed strings. A string becomes `'…'` with each
 * `'` doubled, the one escape SQLite's string literals have; a string
 * holding U+0000 (which ends SQL text) becomes its UTF-8 bytes as a blob
 * cast to text, the same value binding it would store.
 *
 * @module
 */

import type { InValue } from "@libsql/client";

const encoder = new TextEncoder();

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** `value` as an SQL literal; throws a TypeError for anything ingest never writes. */
function sqlLiteral(value: InValue): string {
  if (value === null) return "NULL";
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    return String(value);
  }
  if (typeof value === "string" && value.isWellFormed()) {
    return value.includes("\u0000")
      ? `CAST(X'${hex(encoder.encode(value))}' AS TEXT)`
      : `'${value.replaceAll("'", "''")}'`;
  }
  throw new TypeError(
    `Cannot write ${typeof value} ${
      typeof value === "number" ? value : ""
    } as an SQL literal: only null, safe integers and well-formed strings`,
  );
}

/** Rows per INSERT of a script: keeps each statement a few hundred kilobytes. */
const ROWS_PER_INSERT = 500;

/** `INSERT INTO table (columns) VALUES (…), …;` statements for `rows`, as SQL text. */
export function literalInserts(
  table: string,
  columns: readonly string[],
  rows: readonly (readonly InValue[])[],
): string {
  const statements: string[] = [];
  const head = `INSERT INTO ${table} (${columns.join(", ")}) VALUES\n`;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const tuples = rows.slice(start, start + ROWS_PER_INSERT).map((row) =>
      `(${row.map(sqlLiteral).join(",")})`
    );
    statements.push(`${head}${tuples.join(",\n")};\n`);
  }
  return statements.join("");
}
