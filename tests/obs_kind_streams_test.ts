/**
 * A filter whose only scope is its kinds is read as one stream of the kind
 * index per kind and status, merged in time order: pages must come out
 * exactly as a sort of every matching event would give them, ties of time
 * included, and a cursor must continue where the page stopped.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import {
  queryTraceEvents,
  traceOverview,
  type TraceQuery,
} from "../lib/obs/query/mod.ts";
import { kindStreams, MAX_KIND_STREAMS } from "../lib/obs/query/_scan.ts";
import { withDb } from "./_helpers.ts";

const KINDS = ["retrieval", "llm_call", "tool_call", "intent"];
const STATUSES = ["ok", "error", "unset"];
const BASE = Date.parse("2026-09-01T00:00:00Z");

async function seed(db: TraceDb): Promise<void> {
  await initializeObs(db);
  const events = Array.from({ length: 120 }, (_, i) => ({
    event_id: `e-${i}`,
    application_id: i % 2 ? "app-a" : "app-b",
    agent_id: `agent-${i % 3}`,
    root_trace_id: `root-${i % 7}`,
    kind: KINDS[i % 4],
    status: STATUSES[i % 3],
    // Several events share each time; ingest order decides between them.
    started_at: new Date(BASE + Math.floor(i / 4) * 1000).toISOString(),
  }));
  // Two batches, the later one holding older events, so seq and time disagree.
  await ingestEvents(db, events.slice(60));
  await ingestEvents(db, events.slice(0, 60));
}

/** Every matching event id, newest first, by a plain sort of the whole table. */
async function expected(db: TraceDb, kinds: string[], statuses?: string[]) {
  const result = await db.client.execute({
    sql: `SELECT event_id FROM obs_events
          WHERE kind IN (SELECT value FROM json_each(?))
            AND (? IS NULL OR status IN (SELECT value FROM json_each(?)))
          ORDER BY ts DESC, seq DESC`,
    args: [
      JSON.stringify(kinds),
      statuses ? 1 : null,
      JSON.stringify(statuses ?? []),
    ],
  });
  return result.rows.map((row) => String(row.event_id));
}

async function paged(db: TraceDb, query: TraceQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryTraceEvents(db, {
      ...query,
      limit: 7,
      ...(cursor ? { cursor } : {}),
    });
    ids.push(...page.events.map((e) => e.event_id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

Deno.test("pages of merged kind streams equal a sort of every matching event", async () => {
  await withDb(async (db) => {
    await seed(db);
    for (
      const [kinds, statuses] of [
        [["llm_call"], undefined],
        [["llm_call", "retrieval"], undefined],
        [["tool_call", "intent", "llm_call"], ["error", "unset"]],
        [["retrieval"], ["ok"]],
      ] as [string[], string[] | undefined][]
    ) {
      const query = {
        kinds,
        ...(statuses ? { statuses: statuses as TraceQuery["statuses"] } : {}),
      };
      assert.ok(kindStreams(query), `streams for ${JSON.stringify(query)}`);
      const want = await expected(db, kinds, statuses);
      assert.ok(want.length > 7, "more than one page");
      assert.deepEqual(await paged(db, query), want, JSON.stringify(query));
    }
  });
});

Deno.test("the overview of a kind counts the newest events of the merged streams", async () => {
  await withDb(async (db) => {
    await seed(db);
    const overview = await traceOverview(db, { kinds: ["llm_call"] });
    assert.equal(overview.events_counted, 30);
    assert.equal(
      overview.groups.reduce((n, g) => n + g.events, 0),
      30,
    );
  });
});

Deno.test("kind streams are used only where no other index scopes the read", () => {
  assert.equal(kindStreams({ kinds: ["a"] })?.length, 3);
  assert.equal(
    kindStreams({ kinds: ["a", "b"], statuses: ["error"] })?.length,
    2,
  );
  assert.equal(kindStreams({ kinds: ["a"], application_id: "app" }), null);
  assert.equal(kindStreams({ kinds: ["a"] }, "some-id"), null);
  assert.equal(kindStreams({}), null);
  const many = Array.from(
    { length: MAX_KIND_STREAMS / 3 + 1 },
    (_, i) => `k${i}`,
  );
  assert.equal(kindStreams({ kinds: many }), null);
});
