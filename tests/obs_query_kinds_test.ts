/**
 * kindsNotInScope() names the kinds no event in a tenant scope carries, and
 * refuses to guess: past KIND_PROBE_LIMIT events of a kind elsewhere it takes
 * the kind as possibly present.
 */

import assert from "node:assert/strict";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { type EventInput, initializeObs } from "../lib/obs/mod.ts";
import {
  KIND_PROBE_LIMIT,
  kindsAbsentFromScope,
  kindsNotInScope,
} from "../lib/obs/query/mod.ts";
import { withDb } from "./_helpers.ts";

const BASE = Date.parse("2026-09-01T00:00:00Z");

function event(
  id: string,
  application_id: string,
  kind: string,
  at: number,
  user_id: string | null = null,
): EventInput {
  return {
    event_id: id,
    application_id,
    user_id,
    agent_id: "agent",
    kind,
    started_at: new Date(BASE + at * 10).toISOString(),
  };
}

Deno.test("kindsNotInScope() names the kinds no event in the scope carries", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      event("a1", "app-a", "rerank_step", 1),
      event("a2", "app-a", "user_step", 2, "u1"),
      event("b1", "app-b", "b_only_step", 3),
    ]);
    const kinds = ["rerank_step", "user_step", "b_only_step", "ghost", "ghost"];
    assert.deepEqual(await kindsNotInScope(db, {}, kinds), ["ghost"]);
    assert.deepEqual(
      await kindsNotInScope(db, { application_id: "app-a" }, kinds),
      ["b_only_step", "ghost"],
    );
    assert.deepEqual(
      await kindsNotInScope(db, { application_id: "app-a", user_id: null }, [
        "rerank_step",
        "user_step",
      ]),
      ["user_step"],
    );
    assert.deepEqual(
      await kindsNotInScope(db, { user_id: "u1" }, ["user_step"]),
      [],
    );
  });
});

Deno.test("kindsNotInScope() takes a kind with more events elsewhere than it examines as possibly present", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const busy = Array.from(
      { length: KIND_PROBE_LIMIT - 1 },
      (_, i) => event(`b-${i}`, "app-b", "busy_step", i),
    );
    await ingestEvents(db, busy);
    // Fewer events elsewhere than the probe examines: proven absent.
    assert.deepEqual(
      await kindsNotInScope(db, { application_id: "app-a" }, ["busy_step"]),
      ["busy_step"],
    );
    await ingestEvents(db, [
      event("b-last", "app-b", "busy_step", KIND_PROBE_LIMIT),
      // Newer than every app-b event, so past the examined stretch of the kind index.
      event("a-late", "app-a", "busy_step", KIND_PROBE_LIMIT + 1),
    ]);
    assert.deepEqual(
      await kindsNotInScope(db, { application_id: "app-a" }, ["busy_step"]),
      [],
    );
    assert.deepEqual(
      await kindsNotInScope(db, { application_id: "app-c" }, ["busy_step"]),
      [],
    );
  });
});

Deno.test("kindsAbsentFromScope() names the absent kinds and the kinds the scope holds, or null when none is absent", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, [
      event("a1", "app-a", "retrieval", 1),
      event("a2", "app-a", "retrieval", 2),
      event("a3", "app-a", "custom_step", 3),
      event("b1", "app-b", "other_step", 4),
    ]);
    const scope = { application_id: "app-a", thread_id: "t-none" };
    assert.equal(
      await kindsAbsentFromScope(db, scope, ["retrieval", "custom_step"]),
      null,
    );
    assert.deepEqual(
      await kindsAbsentFromScope(db, scope, ["other_step", "retrieval"]),
      {
        absent: ["other_step"],
        held: ["retrieval", "custom_step"],
        held_partial: false,
      },
    );
  });
});
