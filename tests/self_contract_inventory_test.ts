/**
 * The self staging adapter's inventory reads a bounded number of the
 * application's envelopes, in slices, and says `complete: false` past the
 * bound instead of reading on; within it, an envelope whose index row is
 * gone still counts as a source record.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import {
  createSelfStagingAdapter,
  type InventoryScan,
  type SelfStagingAdapter,
  selfStagingEventId,
} from "../lib/obs/self_contract/mod.ts";
import { TEST_KEY, withErasureDb } from "./erasure_support.ts";
import { recordingDb } from "./_obs_recording.ts";

async function withAdapter(
  inventoryScan: InventoryScan,
  fn: (adapter: SelfStagingAdapter, db: TraceDb) => Promise<void>,
): Promise<void> {
  await withErasureDb(async (db) => {
    const adapter = createSelfStagingAdapter(db, {
      key: TEST_KEY,
      inventoryScan,
    });
    await fn(adapter, db);
  });
}

async function ingest(
  adapter: SelfStagingAdapter,
  namespace: string,
  ids: string[],
): Promise<void> {
  for (const id of ids) {
    await adapter.handle("ingest", { namespace, id, text: `text of ${id}` });
  }
}

Deno.test("an inventory within the scan bound counts envelopes whose index row is gone", async () => {
  await withAdapter({ bound: 100, slice: 2 }, async (adapter, db) => {
    await ingest(adapter, "ns-a", ["a1", "a2", "a3"]);
    await ingest(adapter, "ns-b", ["b1", "b2", "b3", "b4"]);
    // The index row of a3 goes, its envelope and preview stay.
    const a3 = selfStagingEventId("ns-a", "a3");
    await db.client.execute({
      sql:
        "DELETE FROM obs_previews WHERE seq = (SELECT seq FROM obs_events WHERE event_id = ?)",
      args: [a3],
    });
    await db.client.execute({
      sql: "DELETE FROM obs_events WHERE event_id = ?",
      args: [a3],
    });
    const { response } = await adapter.handle("inventory", {
      namespace: "ns-a",
    });
    assert.deepEqual(response, {
      complete: true,
      source_records: 3,
      vector_records: 2,
      cache_records: 2,
    });
  });
});

Deno.test("an inventory past the scan bound says it is incomplete", async () => {
  await withAdapter({ bound: 4, slice: 2 }, async (adapter) => {
    await ingest(adapter, "ns-a", ["a1", "a2"]);
    await ingest(adapter, "ns-b", ["b1", "b2", "b3", "b4"]);
    const { response } = await adapter.handle("inventory", {
      namespace: "ns-a",
    });
    assert.equal(response.complete, false);
  });
});

Deno.test("an inventory reads the application's envelopes a slice per statement", async () => {
  await withErasureDb(async (base) => {
    const { db, client } = recordingDb(base);
    const adapter = createSelfStagingAdapter(db, {
      key: TEST_KEY,
      inventoryScan: { bound: 100, slice: 2 },
    });
    await ingest(adapter, "ns-a", ["a1", "a2", "a3", "a4", "a5"]);
    client.statements.length = 0;
    const { response } = await adapter.handle("inventory", {
      namespace: "ns-a",
    });
    assert.equal(response.complete, true);
    assert.equal(response.source_records, 5);
    const slices = client.statements.filter((s) =>
      /FROM obs_envelopes/.test(s.sql) && /LIMIT \?4/.test(s.sql)
    );
    // Five envelopes, two per statement: three statements.
    assert.equal(slices.length, 3);
  });
});
