/**
 * Which stored events belong to an erasure subject, what each table holds
 * of them, and the statements that remove it. Private to `maint/`.
 *
 * A subject is matched in the index rows and, independently, in the source
 * envelopes (whose body names the same scope): retention may have removed an
 * event's rows while its envelope stays, and source expiry the other way
 * round, so either alone would miss something. The two share `seq`, and
 * previews and resource refs hang off it.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { StoreName } from "../model.ts";
import type {
  ErasedEvent,
  ErasureExecutor,
  ErasureScope,
} from "./erasure_participants.ts";
import type { ErasureSubject } from "./erasure_subject.ts";

/** The index tables an erasure removes rows from, in the order it removes them. */
export const ERASURE_TABLES = [
  "obs_previews",
  "obs_resources",
  "obs_events",
  "obs_envelopes",
] as const;
/** One of {@link ERASURE_TABLES}. */
export type ErasureTable = typeof ERASURE_TABLES[number];

/** The tables each scope reaches. */
export const SCOPE_TABLES: Readonly<
  Record<ErasureScope, readonly ErasureTable[]>
> = {
  all: ERASURE_TABLES,
  content: ["obs_previews"],
};

/**
 * Counts per table: rows of each of {@link ERASURE_TABLES}, and
 * `preview_digests`, the events whose envelope (or, without one, whose
 * fingerprint) holds a digest of a preview the erasure removes while the
 * envelope stays (scope `content`; always 0 for `all`, whose envelopes go).
 */
export type ErasureTableCounts = Record<ErasureTable, number> & {
  preview_digests: number;
};

/** SQL true when an envelope's `body` names a preview digest (never an error on a body that is not JSON). */
export const BODY_HOLDS_DIGEST =
  "(CASE WHEN json_valid(body) THEN json_type(body, '$.event.preview.sha256') END) IS NOT NULL";

/** One matched event: its key and trace, the fingerprint of what is stored, and its store. */
export interface MatchedEvent extends ErasedEvent {
  fingerprint: string;
  store: StoreName;
}

/** How a selection narrows the subject's events. */
export interface MatchOptions {
  scope: ErasureScope;
  /** Only events written up to this `seq` (a propagated deletion erases what came before it; a reviewed one what its dry run saw). */
  upToSeq: number | null;
  /** Only events written after this `seq` (those an erasure bounded by it left in place). */
  afterSeq?: number | null;
}

interface Condition {
  sql: string;
  args: InValue[];
}

/** `body`'s value at `path` as text, or NULL when the body is not JSON (never an error). */
function bodyText(path: string): string {
  return `(CASE WHEN json_valid(body) THEN json_extract(body, '${path}') END)`;
}

function conditions(
  subject: ErasureSubject,
): { rows: Condition; bodies: Condition } {
  const id = subject.ids[0] ?? null;
  switch (subject.kind) {
    case "user":
      return {
        rows: { sql: "user_id = ?", args: [id] },
        bodies: { sql: `${bodyText("$.event.user_id")} = ?`, args: [id] },
      };
    case "anonymous":
      return {
        rows: { sql: "user_id IS NULL", args: [] },
        bodies: {
          sql:
            "(CASE WHEN json_valid(body) THEN json_type(body, '$.event.user_id') END) = 'null'",
          args: [],
        },
      };
    case "thread":
      return {
        rows: { sql: "thread_id = ?", args: [id] },
        bodies: { sql: `${bodyText("$.event.thread_id")} = ?`, args: [id] },
      };
    case "memory":
      return {
        rows: { sql: "memory_id = ?", args: [id] },
        bodies: { sql: `${bodyText("$.event.memory_id")} = ?`, args: [id] },
      };
    case "events": {
      const list = {
        sql: "event_id IN (SELECT value FROM json_each(?))",
        args: [JSON.stringify(subject.ids)],
      };
      return { rows: list, bodies: list };
    }
  }
}

/** Every event of the subject, once each, by `seq`. */
export async function matchSubject(
  executor: ErasureExecutor,
  subject: ErasureSubject,
  options: MatchOptions,
): Promise<MatchedEvent[]> {
  const { rows, bodies } = conditions(subject);
  const bound = seqBound(options);
  const result = await executor.execute({
    sql: `SELECT ${ROW_COLUMNS} FROM obs_events
            WHERE application_id = ? AND ${rows.sql}${bound.sql}
          UNION
          SELECT ${BODY_COLUMNS} FROM obs_envelopes
            WHERE application_id = ? AND ${bodies.sql}${bound.sql}
          ORDER BY seq`,
    args: [
      subject.application_id,
      ...rows.args,
      ...bound.args,
      subject.application_id,
      ...bodies.args,
      ...bound.args,
    ],
  });
  const bySeq = new Map<number, MatchedEvent>();
  for (const row of result.rows) {
    const seq = Number(row.seq);
    if (bySeq.has(seq)) continue;
    bySeq.set(seq, {
      seq,
      application_id: String(row.application_id),
      event_id: String(row.event_id),
      agent_id: textOrNull(row.agent_id),
      root_trace_id: textOrNull(row.root_trace_id),
      turn_id: textOrNull(row.turn_id),
      run_id: textOrNull(row.run_id),
      fingerprint: String(row.fingerprint),
      store: String(row.store) as StoreName,
    });
  }
  const matched = [...bySeq.values()];
  if (options.scope === "all") return matched;
  return await withContent(executor, matched);
}

const KEY_COLUMNS = "seq, application_id, event_id, fingerprint, store";
const ROW_COLUMNS = `${KEY_COLUMNS}, agent_id, root_trace_id, turn_id, run_id`;
// An envelope names the same trace in its body: a participant (replay
// drafts) finds what was drawn from an event whose index row retention removed.
const BODY_COLUMNS = `${KEY_COLUMNS}, ${
  ["agent_id", "root_trace_id", "turn_id", "run_id"]
    .map((field) => `${bodyText(`$.event.${field}`)} AS ${field}`)
    .join(", ")
}`;

function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** The `seq` range of a match, as SQL to append to each branch and its arguments. */
function seqBound(options: MatchOptions): Condition {
  const sql: string[] = [];
  const args: InValue[] = [];
  if (options.upToSeq !== null) {
    sql.push(" AND seq <= ?");
    args.push(options.upToSeq);
  }
  if (options.afterSeq !== undefined && options.afterSeq !== null) {
    sql.push(" AND seq > ?");
    args.push(options.afterSeq);
  }
  return { sql: sql.join(""), args };
}

/**
 * The highest `seq` the index has given out, by ingest's own rule (the
 * larger of its `next_seq` record and the highest stored keys): every event
 * written later gets a larger one, so a dry run that reads it in its
 * snapshot can tell what it saw from what arrived after.
 */
export async function highWaterSeq(executor: ErasureExecutor): Promise<number> {
  const result = await executor.execute(
    `SELECT MAX(
       COALESCE((SELECT CAST(value AS INTEGER) FROM obs_state WHERE key = 'next_seq'), 1) - 1,
       COALESCE((SELECT MAX(seq) FROM obs_envelopes), 0),
       COALESCE((SELECT MAX(seq) FROM obs_events), 0)
     ) AS seq`,
  );
  return Number(result.rows[0]?.seq ?? 0);
}

/**
 * The events among `matched` that still hold a preview, or whose envelope
 * still names a preview digest (a preview retention removed, or one erased
 * before digests were redacted).
 */
async function withContent(
  executor: ErasureExecutor,
  matched: MatchedEvent[],
): Promise<MatchedEvent[]> {
  if (matched.length === 0) return matched;
  const list = seqList(matched);
  const result = await executor.execute({
    sql:
      `SELECT seq FROM obs_previews WHERE seq IN (SELECT value FROM json_each(?))
          UNION SELECT seq FROM obs_envelopes
            WHERE seq IN (SELECT value FROM json_each(?)) AND ${BODY_HOLDS_DIGEST}`,
    args: [list, list],
  });
  const keep = new Set(result.rows.map((row) => Number(row.seq)));
  return matched.filter((event) => keep.has(event.seq));
}

/** The `seq`s of `events` as a JSON array, for `json_each`. */
export function seqList(events: readonly { seq: number }[]): string {
  return JSON.stringify(events.map((event) => event.seq));
}

/** Rows each table holds for `events` (`preview_digests` is counted apart). */
export async function countTables(
  executor: ErasureExecutor,
  events: readonly MatchedEvent[],
  tables: readonly ErasureTable[],
): Promise<ErasureTableCounts> {
  const counts = emptyCounts();
  if (events.length === 0) return counts;
  const list = seqList(events);
  for (const table of tables) {
    const result = await executor.execute({
      sql:
        `SELECT COUNT(*) AS n FROM ${table} WHERE seq IN (SELECT value FROM json_each(?))`,
      args: [list],
    });
    counts[table] = Number(result.rows[0]?.n ?? 0);
  }
  return counts;
}

/** Zero for every table. */
export function emptyCounts(): ErasureTableCounts {
  return {
    obs_previews: 0,
    obs_resources: 0,
    obs_events: 0,
    obs_envelopes: 0,
    preview_digests: 0,
  };
}

/**
 * Removes what `table` holds for `events`; returns the rows removed. An
 * index row goes only once its previews and resource refs are gone, so no
 * step ever leaves content behind without the row that leads to it.
 * Envelopes are deleted through the schema's compare-and-delete guard: a
 * grant per (seq, fingerprint), the delete, then the grants go too.
 */
export async function deleteFrom(
  executor: ErasureExecutor,
  table: ErasureTable,
  events: readonly MatchedEvent[],
  now: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const list = seqList(events);
  const inList = "seq IN (SELECT value FROM json_each(?))";
  switch (table) {
    case "obs_previews":
    case "obs_resources":
      return (await executor.execute({
        sql: `DELETE FROM ${table} WHERE ${inList}`,
        args: [list],
      })).rowsAffected;
    case "obs_events":
      return (await executor.execute({
        sql: `DELETE FROM obs_events WHERE ${inList}
                AND NOT EXISTS (SELECT 1 FROM obs_previews p WHERE p.seq = obs_events.seq)
                AND NOT EXISTS (SELECT 1 FROM obs_resources r WHERE r.seq = obs_events.seq)`,
        args: [list],
      })).rowsAffected;
    case "obs_envelopes":
      return await deleteEnvelopes(executor, list, now);
  }
}

async function deleteEnvelopes(
  executor: ErasureExecutor,
  list: string,
  now: number,
): Promise<number> {
  const inList = "seq IN (SELECT value FROM json_each(?))";
  await executor.execute({
    sql:
      `INSERT OR REPLACE INTO obs_expiry_grants (seq, fingerprint, granted_at)
          SELECT seq, fingerprint, ? FROM obs_envelopes WHERE ${inList}`,
    args: [now, list],
  });
  const deleted = await executor.execute({
    sql: `DELETE FROM obs_envelopes WHERE ${inList}`,
    args: [list],
  });
  // A grant names the envelope's seq and fingerprint: it goes with the envelope.
  await executor.execute({
    sql: `DELETE FROM obs_expiry_grants WHERE ${inList}`,
    args: [list],
  });
  return deleted.rowsAffected;
}

/** Events per store. */
export function countStores(
  events: readonly MatchedEvent[],
): Record<StoreName, number> {
  const stores: Record<StoreName, number> = {
    trace: 0,
    conversation: 0,
    tool_log: 0,
  };
  for (const event of events) {
    if (event.store in stores) stores[event.store]++;
  }
  return stores;
}
