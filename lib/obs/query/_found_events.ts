/**
 * The light rows the finder groups: identity, kind, status and time of
 * each matching event, newest first, read as one JSON array built by
 * SQLite. Neither the metadata payload nor any preview is read.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { EventStatus } from "../model.ts";
import type { CursorKey } from "./_cursor.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import { orderedRows } from "./_ordered.ts";
import type { KindStream } from "./_scan.ts";
import { readStatement } from "./_turns.ts";

/** An event as a finder result lists it (no payload). */
export interface FoundEvent {
  seq: number;
  event_id: string;
  application_id: string;
  root_trace_id: string;
  parent_event_id: string | null;
  agent_id: string | null;
  memory_id: string | null;
  thread_id: string | null;
  kind: string;
  status: EventStatus;
  tool: string | null;
  ts: string;
}

const COLUMNS = `e.seq, e.event_id, e.application_id, e.root_trace_id,
  e.parent_event_id, e.agent_id, e.memory_id, e.thread_id, e.kind, e.status,
  e.tool, e.ts`;

/** Up to `limit` events `where` selects, newest first, strictly below `after` (merging `streams` when given). */
export async function readFoundEvents(
  db: TraceDb,
  where: SqlWhere,
  after: CursorKey | null,
  limit: number,
  streams: readonly KindStream[] | null = null,
): Promise<FoundEvent[]> {
  const read = orderedRows({
    columns: COLUMNS,
    where,
    order: "desc",
    after,
    limit,
    streams,
  });
  const result = await readStatement(db, {
    sql: `SELECT json_group_array(json_array(${COLUMNS})
            ORDER BY e.ts DESC, e.seq DESC) AS page
          FROM (${read.sql}) e`,
    args: read.args,
  });
  const rows = JSON.parse(String(result.rows[0]?.page ?? "[]")) as unknown[][];
  return rows.map(decode);
}

const text = (value: unknown): string | null =>
  value === null ? null : String(value);

function decode(t: unknown[]): FoundEvent {
  return {
    seq: Number(t[0]),
    event_id: String(t[1]),
    application_id: String(t[2]),
    root_trace_id: String(t[3]),
    parent_event_id: text(t[4]),
    agent_id: text(t[5]),
    memory_id: text(t[6]),
    thread_id: text(t[7]),
    kind: String(t[8]),
    status: String(t[9]) as EventStatus,
    tool: text(t[10]),
    ts: new Date(Number(t[11])).toISOString(),
  };
}
