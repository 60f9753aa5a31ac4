/**
 * What the rows a writer inserts add to `obs_counts`. Deletes and store
 * changes are counted by triggers (`schema.ts`); inserts are counted by the
 * code that writes them, with one upsert per transaction: a trigger fired
 * for every inserted row (four to five per event) took about a tenth of
 * ingest's time. Every insert into a counted table goes through ingest's
 * write (`_write.ts`) or a rebuild from envelopes (`maint/backfill.ts`),
 * and both add the statement of {@link RowCounts} to the transaction that
 * inserts, so a rolled-back insert counts nothing. (Tombstones, which only
 * an erasure writes, are counted by a trigger from schema version 7.)
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { SqlStatement } from "./index_rows.ts";

/** Rows inserted into one table, in column order. */
export interface InsertedRows {
  table: string;
  columns: readonly string[];
  rows: readonly (readonly InValue[])[];
}

/** Counts of inserted rows by `obs_counts` key, as the triggers of schema version 3 kept them. */
export class RowCounts {
  readonly #counts = new Map<string, number>();

  /** Adds the rows of each table. */
  add(inserted: readonly InsertedRows[]): void {
    for (const { table, columns, rows } of inserted) {
      if (rows.length > 0) this.#addTable(table, columns, rows);
    }
  }

  /** The upsert adding every count to `obs_counts`; `null` when nothing was counted. */
  statement(): SqlStatement | null {
    const entries = [...this.#counts].filter(([, n]) => n !== 0);
    if (entries.length === 0) return null;
    return {
      sql: `INSERT INTO obs_counts (key, n) VALUES ${
        entries.map(() => "(?, ?)").join(", ")
      } ON CONFLICT (key) DO UPDATE SET n = n + excluded.n`,
      args: entries.flat(),
    };
  }

  #bump(key: string, n: number): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + n);
  }

  #addTable(
    table: string,
    columns: readonly string[],
    rows: readonly (readonly InValue[])[],
  ): void {
    switch (table) {
      case "obs_envelopes":
        return this.#bump("envelopes", rows.length);
      case "obs_resources":
        return this.#bump("resources", rows.length);
      case "obs_events": {
        const store = columnIndex(columns, "store");
        for (const row of rows) this.#bump(`events.${row[store]}`, 1);
        return;
      }
      case "obs_previews": {
        const truncated = columnIndex(columns, "truncated");
        this.#bump("previews", rows.length);
        this.#bump(
          "previews.truncated",
          rows.filter((row) => row[truncated] === 1).length,
        );
        return;
      }
      default:
        throw new Error(`obs_counts does not count rows of ${table}`);
    }
  }
}

function columnIndex(columns: readonly string[], name: string): number {
  const index = columns.indexOf(name);
  if (index < 0) throw new Error(`the inserted rows lack column ${name}`);
  return index;
}
