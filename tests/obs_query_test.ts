import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { ConfigError, RefusedError } from "../lib/errors.ts";
import {
  exportEvents,
  queryTraceEvents,
  summarizeTraceEvents,
  traceFilterFromParams,
  traceQueryFromParams,
} from "../lib/obs/query/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";

const BASE = Date.parse("2026-09-01T00:00:00Z");

function event(i: number, extra: Record<string, unknown> = {}) {
  return {
    event_id: `e${i}`,
    application_id: "app-1",
    user_id: "user-1",
    agent_id: "agent-1",
    thread_id: "thread-1",
    root_trace_id: "root-1",
    kind: "retrieval",
    status: "ok",
    started_at: new Date(BASE + i * 1000).toISOString(),
    ...extra,
  };
}

async function seeded(fn: (db: TraceDb) => Promise<void>): Promise<void> {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(db);
  });
}

const ids = (page: { events: { event_id: string }[] }) =>
  page.events.map((e) => e.event_id);

Deno.test("queryTraceEvents() pages newest first with keyset cursors and no duplicates", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, Array.from({ length: 25 }, (_, i) => event(i)));
    const first = await queryTraceEvents(db, {
      agent_ids: ["agent-1"],
      limit: 10,
    });
    assert.deepEqual(ids(first).slice(0, 2), ["e24", "e23"]);
    assert.equal(first.has_more, true);
    assert.equal(first.rows_in_window, 10);
    assert.equal(first.read_completeness, "partial");
    // New events arrive at the head, including one sharing the newest timestamp.
    await ingestEvents(db, [
      event(30),
      event(31, { started_at: first.events[0]!.ts }),
    ]);
    const seen = new Set(ids(first));
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await queryTraceEvents(db, {
        agent_ids: ["agent-1"],
        limit: 10,
        cursor,
      });
      for (const id of ids(page)) {
        assert.ok(!seen.has(id), `duplicate ${id}`);
        seen.add(id);
      }
      cursor = page.next_cursor;
    }
    assert.equal(seen.size, 25);
  });
});

Deno.test("queryTraceEvents() refuses a cursor under other filters", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, Array.from({ length: 5 }, (_, i) => event(i)));
    const page = await queryTraceEvents(db, {
      agent_ids: ["agent-1"],
      limit: 2,
    });
    assert.ok(page.next_cursor);
    await assert.rejects(
      queryTraceEvents(db, {
        agent_ids: ["agent-2"],
        limit: 2,
        cursor: page.next_cursor,
      }),
      RefusedError,
    );
    await assert.rejects(
      queryTraceEvents(db, {
        agent_ids: ["agent-1"],
        kinds: ["llm_call"],
        cursor: page.next_cursor,
      }),
      /different filters/,
    );
    // A different page size is the same filter set.
    const next = await queryTraceEvents(db, {
      agent_ids: ["agent-1"],
      limit: 3,
      cursor: page.next_cursor,
    });
    assert.deepEqual(ids(next), ["e2", "e1", "e0"]);
    await assert.rejects(
      queryTraceEvents(db, { cursor: "not-a-cursor!" }),
      ConfigError,
    );
  });
});

Deno.test("queryTraceEvents() bounds the page size", async () => {
  await seeded(async (db) => {
    assert.equal((await queryTraceEvents(db, {})).limit, 250);
    await assert.rejects(queryTraceEvents(db, { limit: 1001 }), /at most 1000/);
    await assert.rejects(queryTraceEvents(db, { limit: 0 }), ConfigError);
  });
});

Deno.test("queryTraceEvents() distinguishes anonymous from unscoped users", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1, { user_id: "user-1" }),
      event(2, { user_id: null }),
      event(3, { user_id: "user-2" }),
    ]);
    assert.deepEqual(ids(await queryTraceEvents(db, {})), ["e3", "e2", "e1"]);
    assert.deepEqual(ids(await queryTraceEvents(db, { user_id: null })), [
      "e2",
    ]);
    assert.deepEqual(ids(await queryTraceEvents(db, { user_id: "user-1" })), [
      "e1",
    ]);
  });
});

Deno.test("queryTraceEvents() treats agent and memory ids as alternatives", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1, { agent_id: "agent-1" }),
      event(2, { agent_id: null, memory_id: "memory-1" }),
      event(3, { agent_id: "agent-2" }),
    ]);
    const both = await queryTraceEvents(db, {
      agent_ids: ["agent-1"],
      memory_ids: ["memory-1"],
    });
    assert.deepEqual(ids(both), ["e2", "e1"]);
    assert.deepEqual(
      ids(await queryTraceEvents(db, { memory_ids: ["memory-1"] })),
      ["e2"],
    );
  });
});

Deno.test("queryTraceEvents() applies application, user and thread scope conjunctively", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1),
      event(2, { thread_id: "thread-2" }),
      event(3, { application_id: "app-2" }),
    ]);
    const page = await queryTraceEvents(db, {
      agent_ids: ["agent-1"],
      application_id: "app-1",
      user_id: "user-1",
      thread_id: "thread-1",
    });
    assert.deepEqual(ids(page), ["e1"]);
  });
});

Deno.test("queryTraceEvents() filters by ids, kinds, statuses, tool, success, time and resources", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1, {
        run_id: "run-9",
        turn_id: "turn-1",
        tool: "search",
        success: true,
      }),
      event(2, {
        kind: "llm_call",
        status: "error",
        success: false,
        root_trace_id: "root-2",
      }),
      event(3, { resources: [{ type: "doc", id: "doc-7" }] }),
      event(4, {
        selection: {
          candidates: [{
            ref: { type: "doc", id: "doc-8" },
            selected: false,
            reason: "near_duplicate",
          }],
        },
      }),
    ]);
    const q = (query: Record<string, unknown>) =>
      queryTraceEvents(db, query).then(ids);
    assert.deepEqual(await q({ q: "run-9" }), ["e1"]);
    assert.deepEqual(await q({ q: "e2" }), ["e2"]);
    assert.deepEqual(await q({ q: "root-2" }), ["e2"]);
    assert.deepEqual(await q({ q: "turn-1" }), ["e1"]);
    assert.deepEqual(await q({ q: "run" }), [], "exact match only");
    assert.deepEqual(await q({ run_id: "run-9", turn_id: "turn-1" }), ["e1"]);
    assert.deepEqual(await q({ root_trace_id: "root-2" }), ["e2"]);
    assert.deepEqual(await q({ kinds: ["llm_call"] }), ["e2"]);
    assert.deepEqual(await q({ statuses: ["error"] }), ["e2"]);
    assert.deepEqual(await q({ tool: "search" }), ["e1"]);
    assert.deepEqual(await q({ success: false }), ["e2"]);
    assert.deepEqual(
      await q({
        start_time: new Date(BASE + 2000).toISOString(),
        end_time: new Date(BASE + 4000).toISOString(),
      }),
      ["e3", "e2"],
    );
    assert.deepEqual(await q({ resources: [{ id: "doc-7" }] }), ["e3"]);
    assert.deepEqual(await q({ resources: [{ type: "doc", id: "doc-8" }] }), [
      "e4",
    ]);
    assert.deepEqual(
      await q({ resources: [{ type: "image", id: "doc-8" }] }),
      [],
    );
  });
});

Deno.test("queryTraceEvents() reports outcome verification separately", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1),
      event(2, { outcome: { verified: false, status: "success" } }),
    ]);
    assert.equal(
      (await queryTraceEvents(db, {})).outcome_verification,
      "unknown",
    );
    await ingestEvents(db, [
      event(3, { outcome: { verified: true, status: "failure" } }),
    ]);
    const page = await queryTraceEvents(db, {});
    assert.equal(page.outcome_verification, "recorded");
    assert.equal(page.read_completeness, "complete");
    assert.equal(page.instrumentation_coverage, "unknown");
  });
});

Deno.test("queryTraceEvents() marks a page with undecodable metadata untrusted", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [event(1)]);
    await db.client.execute("UPDATE obs_events SET meta = '{broken'");
    const page = await queryTraceEvents(db, {});
    assert.equal(page.events.length, 1);
    assert.equal(page.read_completeness, "untrusted");
  });
});

Deno.test("summarizeTraceEvents() aggregates without reading payload or preview columns", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1, { preview: "content" }),
      event(2, {
        kind: "llm_call",
        status: "error",
        store: "conversation",
        thread_id: "thread-2",
      }),
      event(3, { outcome: { verified: true, status: "success" } }),
    ]);
    // Corrupt every payload: a summary that parsed them would fail or miscount.
    await db.client.execute("UPDATE obs_events SET meta = 'not json'");
    await db.client.execute("UPDATE obs_previews SET content = 'not json'");
    const summary = await summarizeTraceEvents(db, { application_id: "app-1" });
    assert.equal(summary.events, 3);
    assert.equal(summary.errors, 1);
    assert.equal(summary.by_store.conversation, 1);
    assert.equal(summary.by_store.trace, 2);
    assert.deepEqual(summary.by_kind, [{ kind: "retrieval", events: 2 }, {
      kind: "llm_call",
      events: 1,
    }]);
    assert.equal(summary.previews, 1);
    assert.equal(summary.groups.length, 2);
    assert.equal(summary.outcome_verification, "recorded");
    assert.equal(summary.read_completeness, "complete");
    assert.ok(!JSON.stringify(summary).includes("not json"));
  });
});

Deno.test("exportEvents() streams metadata-only NDJSON per store", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, [
      event(1, { preview: "preview-secret" }),
      event(2, { store: "tool_log", tool: "search" }),
      event(3, { store: "conversation" }),
    ]);
    const lines: string[] = [];
    const all = await exportEvents(
      db,
      { store: "all" },
      (line) => void lines.push(line),
    );
    assert.equal(all.rows, 3);
    assert.deepEqual(lines.map((line) => JSON.parse(line).event_id), [
      "e1",
      "e2",
      "e3",
    ]);
    assert.ok(!lines.join("").includes("preview-secret"));
    const toolLines: string[] = [];
    await exportEvents(
      db,
      { store: "tool_log" },
      (line) => void toolLines.push(line),
    );
    assert.deepEqual(toolLines.map((line) => JSON.parse(line).event_id), [
      "e2",
    ]);
  });
});

Deno.test("exportEvents() pages through more than one internal page", async () => {
  await seeded(async (db) => {
    await ingestEvents(db, Array.from({ length: 1_203 }, (_, i) => event(i)));
    const seen = new Set<string>();
    const result = await exportEvents(db, { store: "trace" }, (line) => {
      seen.add(JSON.parse(line).event_id);
    });
    assert.equal(result.rows, 1_203);
    assert.equal(seen.size, 1_203);
  });
});

Deno.test("traceQueryFromParams() maps query strings, anonymous and repeated ids", () => {
  const query = traceQueryFromParams(
    new URLSearchParams(
      "agent_id=a1&agent_id=a2&anonymous=true&kind=llm_call,retrieval&success=false&limit=5&resource=d1",
    ),
  );
  assert.deepEqual(query, {
    agent_ids: ["a1", "a2"],
    kinds: ["llm_call", "retrieval"],
    user_id: null,
    success: false,
    resources: [{ id: "d1" }],
    limit: 5,
  });
  assert.equal(
    "user_id" in traceQueryFromParams(new URLSearchParams("")),
    false,
  );
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("bogus=1")),
    /unknown parameter/,
  );
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("user_id=u&anonymous=true")),
    /either user_id or anonymous/,
  );
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("limit=abc")),
    ConfigError,
  );
});

Deno.test("traceQueryFromParams() refuses parameters that would narrow nothing", () => {
  const params = (text: string) => new URLSearchParams(text);
  assert.throws(
    () => traceQueryFromParams(params("resource_type=doc")),
    /^ConfigError: Invalid trace query: resource_type needs resource$/,
  );
  assert.throws(
    () => traceQueryFromParams(params("anonymous=false")),
    /anonymous only takes true; omit it/,
  );
  assert.throws(
    () => traceQueryFromParams(params("limit=5&limit=6")),
    /limit may be given once/,
  );
  assert.deepEqual(
    traceQueryFromParams(params("resource=d1&resource_type=doc")).resources,
    [{ type: "doc", id: "d1" }],
  );
});

Deno.test("traceQueryFromParams() refuses a zone offset beyond ±14:00 or with minutes past 59, naming it and the range", async (t) => {
  for (const offset of ["+15:00", "-14:30", "+05:60", "+23:59"]) {
    await t.step(offset, () => {
      const query = new URLSearchParams();
      query.set("start_time", `2026-09-01T00:00:00${offset}`);
      assert.throws(
        () => traceQueryFromParams(query),
        new RegExp(
          `Invalid trace query: start_time: has the zone offset \\${offset}, outside -14:00 to \\+14:00 \\(minutes 00 to 59\\); use an offset in that range or Z$`,
        ),
      );
    });
  }
  for (const offset of ["+14:00", "-14:00", "+05:45", "-00:00"]) {
    const query = new URLSearchParams();
    query.set("start_time", `2026-09-01T00:00:00${offset}`);
    assert.equal(
      traceQueryFromParams(query).start_time,
      `2026-09-01T00:00:00${offset}`,
    );
  }
});

Deno.test("traceQueryFromParams() names parameters, or the caller's labels, in messages", () => {
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("start_time=yesterday")),
    /Invalid trace query: start_time: must be an ISO 8601 timestamp/,
  );
  const flags = { label: (param: string) => `--${param.replace("_", "-")}` };
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("kind=A"), flags),
    /Invalid trace query: --kind: must be a lower-case token/,
  );
  assert.throws(
    () =>
      traceQueryFromParams(
        new URLSearchParams("resource=d&resource_type=Doc"),
        flags,
      ),
    /--resource-type: must be a lower-case token/,
  );
  assert.throws(
    () =>
      traceQueryFromParams(
        new URLSearchParams(
          "start_time=2026-09-02T00:00:00Z&end_time=2026-09-01T00:00:00Z",
        ),
        flags,
      ),
    /Invalid trace query: --start-time must be before --end-time$/,
  );
});

Deno.test("traceFilterFromParams() refuses paging parameters", () => {
  assert.throws(
    () => traceFilterFromParams(new URLSearchParams("limit=5")),
    /limit pages a query and does not apply here; remove it/,
  );
  assert.throws(
    () => traceFilterFromParams(new URLSearchParams("cursor=abc")),
    ConfigError,
  );
  assert.deepEqual(
    traceFilterFromParams(new URLSearchParams("application_id=a")),
    { application_id: "a" },
  );
});
