/**
 * Streams the events a filter selects as metadata-only NDJSON, oldest first,
 * in bounded keyset pages. Preview content is never selected, so it cannot
 * leak into an export.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { filterWhere } from "./_filter_sql.ts";
import {
  parseTraceFilter,
  type StoreSelection,
  type TraceFilter,
} from "./filters.ts";
import { readEventPage } from "./_read_rows.ts";
import { requireObs } from "../schema.ts";

const EXPORT_PAGE = 1_000;

/** Options for {@link exportEvents}. */
export interface ExportOptions {
  /** Which store to export (`all` for every store). */
  store: StoreSelection;
  /** Further selection; its own `store` is overridden by `store`. */
  scope?: TraceFilter;
}

/** What an export wrote. */
export interface ExportResult {
  /** The store exported. */
  store: StoreSelection;
  /** Lines written. */
  rows: number;
  /** Rows whose stored metadata could not be decoded (exported with empty metadata). */
  untrusted_rows: number;
}

/** Writes one NDJSON line (with trailing newline) per selected event. */
export async function exportEvents(
  db: TraceDb,
  options: ExportOptions,
  write: (line: string) => void | Promise<void>,
): Promise<ExportResult> {
  const filter = parseTraceFilter({ ...options.scope, store: options.store });
  await requireObs(db);
  const where = filterWhere(filter);
  let after: { ts: number; seq: number } | null = null;
  let rows = 0;
  let untrusted = 0;
  while (true) {
    const page = await readEventPage(db, {
      where: where.sql,
      args: where.args,
      order: "asc",
      after,
      limit: EXPORT_PAGE,
    });
    for (const { event, untrusted: damaged } of page) {
      if (damaged) untrusted += 1;
      await write(JSON.stringify(event) + "\n");
    }
    rows += page.length;
    const last = page.at(-1)?.event;
    if (!last || page.length < EXPORT_PAGE) break;
    after = { ts: Date.parse(last.ts), seq: last.seq };
  }
  return { store: options.store, rows, untrusted_rows: untrusted };
}
