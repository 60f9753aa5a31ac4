/**
 * A page of a filter no index narrows (a tool, a status, success, store or
 * anonymous alone) examines at most the newest SCAN_LIMIT events: past them
 * it answers what it found, says so, and continues below them.
 */

import assert from "node:assert/strict";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { queryTraceEvents } from "../lib/obs/query/mod.ts";
import { SCAN_LIMIT } from "../lib/obs/query/_scan.ts";
import { withDb } from "./_helpers.ts";

const BASE = Date.parse("2026-09-01T00:00:00Z");
const RARE = 3;

Deno.test("a tool that only old events name is found on a later page, past the scanned stretch", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const total = SCAN_LIMIT + 500;
    for (let from = 0; from < total; from += 5_000) {
      const batch = [];
      for (let i = from; i < Math.min(total, from + 5_000); i++) {
        batch.push({
          event_id: `e-${i}`,
          application_id: "app",
          agent_id: "agent",
          root_trace_id: `root-${Math.floor(i / 100)}`,
          kind: "tool_call",
          // The oldest few name the rare tool.
          ...(i < RARE ? { tool: "rare" } : {}),
          started_at: new Date(BASE + i * 10).toISOString(),
        });
      }
      await ingestEvents(db, batch);
    }
    const first = await queryTraceEvents(db, { tool: "rare", limit: 10 });
    assert.deepEqual(first.events, []);
    assert.equal(first.scan_limit, SCAN_LIMIT);
    assert.equal(first.has_more, true);
    assert.equal(first.read_completeness, "partial");
    assert.ok(first.next_cursor);
    const second = await queryTraceEvents(db, {
      tool: "rare",
      limit: 10,
      cursor: first.next_cursor,
    });
    assert.deepEqual(
      second.events.map((e) => e.event_id),
      ["e-2", "e-1", "e-0"],
    );
    assert.equal(second.has_more, false);
    assert.equal(second.scan_limit, null);

    // A filter an index narrows is not bounded.
    const scoped = await queryTraceEvents(db, {
      application_id: "app",
      limit: 1,
    });
    assert.equal(scoped.scan_limit, null);
  });
});
