/**
 * Reads pages of index rows back as {@link TraceEvent}s. A page comes back as
 * one JSON array built by SQLite (`json_group_array`): handing hundreds of
 * rows to JavaScript one value at a time costs several times the query itself.
 * Only metadata columns and the preview's size are selected; preview content
 * is never read here.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import type { EventStatus, StoreName, TraceEvent } from "../model.ts";
import { orderedRows } from "./_ordered.ts";
import type { KindStream } from "./_scan.ts";
import { readStatement } from "./_turns.ts";

/** Columns of a page tuple, in order (preview content is deliberately absent). */
const TUPLE = `e.seq, e.application_id, e.user_id, e.agent_id, e.memory_id,
  e.thread_id, e.root_trace_id, e.turn_id, e.run_id, e.event_id, e.parent_event_id, e.kind,
  e.stage, e.coverage_profile, e.status, e.tool, e.success, e.store, e.ts, e.started_at,
  e.ended_at, e.received_at, e.meta, p.chars, p.truncated`;

/** A page read in keyset order. */
export interface PageRead {
  /** WHERE predicate over `obs_events e`. */
  where: string;
  args: InValue[];
  /** `desc`: newest first (queries); `asc`: oldest first (exports). */
  order: "asc" | "desc";
  /** Continue strictly after this key in `order`. */
  after: { ts: number; seq: number } | null;
  limit: number;
  /** Kind and status streams to merge in time order (see `kindStreams`). */
  streams?: readonly KindStream[] | null;
}

/** A decoded row, and whether its stored metadata failed to decode. */
export interface DecodedRow {
  event: TraceEvent;
  untrusted: boolean;
}

/** Reads one page of decoded events. */
export async function readEventPage(
  db: TraceDb,
  read: PageRead,
): Promise<DecodedRow[]> {
  const dir = read.order === "desc" ? "DESC" : "ASC";
  const rows = orderedRows({
    columns: "*",
    where: { sql: read.where, args: read.args },
    order: read.order,
    after: read.after,
    limit: read.limit,
    streams: read.streams ?? null,
  });
  const result = await readStatement(db, {
    sql:
      `SELECT json_group_array(json_array(${TUPLE}) ORDER BY e.ts ${dir}, e.seq ${dir}) AS page
          FROM (${rows.sql}) e
          LEFT JOIN obs_previews p ON p.seq = e.seq`,
    args: rows.args,
  });
  const tuples = JSON.parse(
    String(result.rows[0]?.page ?? "[]"),
  ) as unknown[][];
  return tuples.map(decodeTuple);
}

const text = (value: unknown): string | null =>
  value === null ? null : String(value);
const iso = (value: unknown): string | null =>
  value === null ? null : new Date(Number(value)).toISOString();

type Meta = Pick<
  TraceEvent,
  "resources" | "attributes" | "selection" | "outcome"
>;

function decodeMeta(value: unknown): Meta | null {
  try {
    const meta = JSON.parse(String(value));
    return meta !== null && typeof meta === "object" ? meta : null;
  } catch {
    return null;
  }
}

function decodeTuple(t: unknown[]): DecodedRow {
  const meta = decodeMeta(t[22]);
  const event: TraceEvent = {
    seq: Number(t[0]),
    event_id: String(t[9]),
    application_id: String(t[1]),
    user_id: text(t[2]),
    agent_id: text(t[3]),
    memory_id: text(t[4]),
    thread_id: text(t[5]),
    root_trace_id: String(t[6]),
    turn_id: text(t[7]),
    run_id: text(t[8]),
    parent_event_id: text(t[10]),
    kind: String(t[11]),
    stage: String(t[12]),
    coverage_profile: text(t[13]),
    status: String(t[14]) as EventStatus,
    tool: text(t[15]),
    success: t[16] === null ? null : Number(t[16]) === 1,
    store: String(t[17]) as StoreName,
    ts: iso(t[18])!,
    started_at: iso(t[19]),
    ended_at: iso(t[20]),
    received_at: iso(t[21])!,
    // A damaged row is still listed, but the read no longer claims to be complete.
    resources: meta?.resources ?? [],
    attributes: meta?.attributes ?? {},
    selection: meta?.selection ?? null,
    outcome: meta?.outcome ?? null,
    preview: t[23] === null
      ? null
      : { chars: Number(t[23]), truncated: Number(t[24]) === 1 },
  };
  return { event, untrusted: meta === null };
}
