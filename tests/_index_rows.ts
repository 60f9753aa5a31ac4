/**
 * Events that touch every column kind ingest writes, and every stored row
 * of the index with its SQLite type: for tests that compare two write paths.
 */

import type { TraceDb } from "../lib/db.ts";

/** The tables ingest writes. */
export const INDEX_TABLES = [
  "obs_envelopes",
  "obs_events",
  "obs_resources",
  "obs_previews",
];

/** Events touching every column kind: NUL, quotes, emoji, booleans, counts, previews, candidates. */
export function varietyEvents(): Record<string, unknown>[] {
  return Array.from({ length: 137 }, (_, i) => ({
    event_id: `e-${i}`,
    application_id: "app-1",
    user_id: i % 3 === 0 ? null : `u-${i % 5}`,
    agent_id: "agent-1",
    thread_id: `t-${i % 7}`,
    root_trace_id: "root-1",
    kind: ["retrieval", "selection", "tool_call", "llm_call"][i % 4],
    status: i % 11 === 0 ? "error" : "ok",
    started_at: new Date(Date.UTC(2026, 8, 1) + i * 1000).toISOString(),
    ...(i % 4 === 2 ? { tool: "search", success: i % 8 === 2 } : {}),
    ...(i % 4 === 1
      ? {
        selection: {
          candidates: [
            {
              ref: { type: "doc", id: `d-${i}` },
              selected: true,
              reason: "mmr_rank",
            },
            {
              ref: { type: "doc", id: `d-${i + 1}` },
              selected: false,
              reason: "below_threshold",
            },
          ],
        },
      }
      : {}),
    resources: [{ type: "doc", id: `doc-'${i}'🚀`, role: "retrieved" }],
    attributes: {
      "gen_ai.operation.name": "search_memory",
      "app.note": `it's ${i}`,
    },
    ...(i % 5 === 0 ? { preview: `preview ${i} o'brien \u0000 ü` } : {}),
  }));
}

/** Every stored row with each value's SQLite type, table by table. */
export async function dumpIndex(
  db: TraceDb,
): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of INDEX_TABLES) {
    const columns = (await db.client.execute(`PRAGMA table_info(${table})`))
      .rows.map((row) => String(row.name));
    const select = columns.map((c) => `${c}, typeof(${c}) AS "${c}:type"`)
      .join(", ");
    const rows = await db.client.execute(
      `SELECT ${select} FROM ${table} ORDER BY 1, 2`,
    );
    out[table] = rows.rows.map((row) => ({ ...row }));
  }
  return out;
}
