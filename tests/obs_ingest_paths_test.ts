/**
 * Ingest writes a local file through its engine connection (statements
 * prepared once) and every other database through the libSQL client (SQL
 * scripts of literals): both paths store the same rows, value for value and
 * type for type, and the engine connection only ever reaches the client's
 * own file.
 */

import assert from "node:assert/strict";
import { withDb, withTempDir } from "./_helpers.ts";
import {
  engineConnection,
  openDb,
  openMemoryDb,
  type TraceDb,
} from "../lib/db.ts";
import { EngineConnection } from "../lib/_db_engine.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";

const TABLES = ["obs_envelopes", "obs_events", "obs_resources", "obs_previews"];

/** Events touching every column kind: NUL, quotes, emoji, booleans, counts, previews, candidates. */
function events(): Record<string, unknown>[] {
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
async function dump(db: TraceDb): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
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

async function ingestAll(db: TraceDb): Promise<void> {
  await initializeObs(db);
  const batch = events();
  const now = () => Date.UTC(2026, 8, 2);
  await ingestEvents(db, batch.slice(0, 60), { now });
  await ingestEvents(db, batch, { now }); // repeats, then new ids
}

Deno.test("the engine connection and the client store the same rows with the same types", async () => {
  const memory = openMemoryDb();
  try {
    assert.equal(await engineConnection(memory), null);
    await ingestAll(memory);
    await withDb(async (db) => {
      assert.ok(await engineConnection(db), "a local file gets one");
      await ingestAll(db);
      const file = await dump(db);
      const client = await dump(memory);
      for (const table of TABLES) {
        assert.ok(file[table]!.length > 0 || table === "obs_previews", table);
        assert.deepEqual(file[table], client[table], table);
      }
      assert.ok(file.obs_previews!.length > 0, "previews were written");
    });
  } finally {
    memory.close();
  }
});

Deno.test("an engine connection is refused for a file other than the client's", async () => {
  await withTempDir(async (dir) => {
    const one = await openDb({ dataDir: `${dir}/one` });
    const two = await openDb({ dataDir: `${dir}/two` });
    try {
      assert.equal(await EngineConnection.open(two.path!, one.client), null);
      const same = await EngineConnection.open(one.path!, one.client);
      assert.ok(same);
      same.close();
    } finally {
      one.close();
      two.close();
    }
  });
});

Deno.test("a read-only or closed handle has no engine connection", async () => {
  await withTempDir(async (dir) => {
    const writer = await openDb({ dataDir: dir });
    await initializeObs(writer);
    assert.ok(await engineConnection(writer));
    writer.close();
    assert.equal(await engineConnection(writer), null);
    const reader = await openDb({ dataDir: dir, readOnly: true });
    try {
      assert.equal(await engineConnection(reader), null);
    } finally {
      reader.close();
    }
  });
});
