/** The index reads behind the trace pages: finder groups and paging, id matching, root reads, overview, deletion evidence, comparison, snapshot, record panels. */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { ConflictError, RefusedError } from "../lib/errors.ts";
import * as mcp from "../lib/mcp/mod.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  type EventInput,
  initializeObs,
  type TraceEvent,
} from "../lib/obs/mod.ts";
import {
  artifactEvidence,
  compareRoots,
  contractEvidence,
  FIND_WINDOW,
  findTraceRoots,
  lookupEvent,
  matchOpaqueId,
  queryTraceEvents,
  readRootEvents,
  readThreadEvidence,
  servedAfterDeletion,
  snapshotEvents,
  traceLineage,
  traceOverview,
} from "../lib/obs/query/mod.ts";
import { withDb } from "./_helpers.ts";

const BASE = Date.parse("2026-09-01T00:00:00Z");

function ev(
  id: string,
  seconds: number,
  extra: Partial<EventInput> = {},
): EventInput {
  return {
    event_id: id,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: new Date(BASE + seconds * 1000).toISOString(),
    ...extra,
  };
}

async function seeded(
  events: EventInput[],
  fn: (db: TraceDb) => Promise<void>,
): Promise<void> {
  await withDb(async (db) => {
    await initializeObs(db);
    await ingestEvents(db, events);
    await fn(db);
  });
}

/** A TraceEvent for the pure functions. */
function stored(
  id: string,
  seq: number,
  extra: Partial<TraceEvent> = {},
): TraceEvent {
  const ts = new Date(BASE + seq * 1000).toISOString();
  return {
    seq,
    event_id: id,
    application_id: "app-1",
    user_id: null,
    agent_id: "agent-1",
    memory_id: null,
    thread_id: "t-1",
    root_trace_id: id,
    turn_id: null,
    run_id: null,
    parent_event_id: null,
    kind: "retrieval",
    stage: "retrieval",
    coverage_profile: null,
    status: "ok",
    tool: null,
    success: null,
    store: "trace",
    ts,
    started_at: ts,
    ended_at: null,
    received_at: ts,
    resources: [],
    attributes: {},
    selection: null,
    outcome: null,
    preview: null,
    ...extra,
  };
}

Deno.test("findTraceRoots() groups events by root, newest group first, with counts and status", async () => {
  await seeded([
    ev("a1", 1, { root_trace_id: "root-a", thread_id: "t-1" }),
    ev("a2", 5, { root_trace_id: "root-a", status: "error", kind: "llm_call" }),
    ev("b1", 3, { root_trace_id: "root-b", thread_id: "t-2" }),
    ev("root-c", 4, { kind: "intent" }),
  ], async (db) => {
    const page = await findTraceRoots(db, {});
    assert.deepEqual(page.groups.map((g) => g.root_trace_id), [
      "root-a",
      "root-c",
      "root-b",
    ]);
    const a = page.groups[0]!;
    assert.equal(a.events, 2);
    assert.equal(a.errors, 1);
    assert.equal(a.status, "error");
    assert.deepEqual(a.latest.map((e) => e.event_id), ["a2", "a1"]);
    assert.deepEqual(a.threads, ["t-1"]);
    // No event has the root's id: its first event without a parent stands in.
    assert.deepEqual(a.root_event, {
      event_id: "a1",
      kind: "retrieval",
      status: "unset",
    });
    const c = page.groups[1]!;
    assert.deepEqual(c.root_event, {
      event_id: "root-c",
      kind: "intent",
      status: "unset",
    });
    assert.equal(page.has_more, false);
    assert.equal(page.read_completeness, "complete");
    assert.equal(page.instrumentation_coverage, "unknown");
  });
});

Deno.test("findTraceRoots() pages through interleaved roots listing each group once", async () => {
  // 30 roots whose events interleave in time: every root has events on several pages.
  const events: EventInput[] = [];
  for (let i = 0; i < 240; i++) {
    events.push(ev(`e${i}`, i, { root_trace_id: `r${(i * 7) % 30}` }));
  }
  await seeded(events, async (db) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await findTraceRoots(db, {
        limit: 7,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.groups.map((g) => g.root_trace_id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    assert.equal(new Set(seen).size, seen.length, "a group was listed twice");
    assert.equal(seen.length, 30, "a group was never listed");
    // Newest group first: each group's newest event is older than the previous one's.
    const newest = new Map<string, number>();
    for (const e of events) {
      newest.set(
        e.root_trace_id!,
        Math.max(newest.get(e.root_trace_id!) ?? 0, Date.parse(e.started_at!)),
      );
    }
    const times = seen.map((root) => newest.get(root)!);
    assert.deepEqual(times, [...times].sort((a, b) => b - a));
  });
});

Deno.test("findTraceRoots() reads a bounded window and continues past a root that fills it", async () => {
  const events = Array.from(
    { length: FIND_WINDOW + 10 },
    (_, i) => ev(`big-${i}`, 100 + i, { root_trace_id: "big" }),
  );
  events.push(ev("small-1", 1, { root_trace_id: "small" }));
  await seeded(events, async (db) => {
    const first = await findTraceRoots(db, {});
    assert.deepEqual(first.groups.map((g) => g.root_trace_id), ["big"]);
    assert.equal(first.window.events_read, FIND_WINDOW);
    assert.equal(first.groups[0]!.events, FIND_WINDOW + 10);
    assert.ok(first.next_cursor);
    assert.equal(first.read_completeness, "partial", "the window cut it");
    const second = await findTraceRoots(db, { cursor: first.next_cursor });
    assert.deepEqual(second.groups.map((g) => g.root_trace_id), ["small"]);
    assert.equal(second.next_cursor, null);
  });
});

Deno.test("findTraceRoots() cursors are bound to their filters and q, and are not query cursors", async () => {
  const events = Array.from(
    { length: 6 },
    (_, i) => ev(`e${i}`, i, { root_trace_id: `r${i}`, thread_id: "t-1" }),
  );
  await seeded(events, async (db) => {
    const page = await findTraceRoots(db, { limit: 2 });
    await assert.rejects(
      findTraceRoots(db, { limit: 2, q: "t-1", cursor: page.next_cursor! }),
      RefusedError,
    );
    await assert.rejects(
      queryTraceEvents(db, { cursor: page.next_cursor! }),
      RefusedError,
    );
    const query = await queryTraceEvents(db, { limit: 2 });
    await assert.rejects(
      findTraceRoots(db, { cursor: query.next_cursor! }),
      RefusedError,
    );
  });
});

Deno.test("matchOpaqueId() says which kinds of id an opaque id is, within the filter", async () => {
  await seeded([
    ev("shared-id", 1, { root_trace_id: "root-1" }),
    ev("e2", 2, { root_trace_id: "root-1", thread_id: "shared-id" }),
    ev("e3", 3, { turn_id: "turn-9", run_id: "run-9", memory_id: "mem-9" }),
    ev("e4", 4, {
      resources: [{ type: "cache_entry", id: "answer-1", role: "supplied" }],
    }),
    ev("e5", 5, {
      kind: "selection",
      selection: {
        candidates: [{
          ref: { type: "vector", id: "vec-7" },
          selected: false,
          reason: "stale_version",
        }],
      },
    }),
    ev("other-app", 6, {
      application_id: "app-2",
      thread_id: "shared-id",
    }),
  ], async (db) => {
    const fields = async (q: string, filter = {}) =>
      (await matchOpaqueId(db, q, filter)).map((m) => [m.field, m.events]);
    assert.deepEqual(await fields("shared-id"), [["event_id", 1], [
      "thread_id",
      2,
    ]]);
    assert.deepEqual(await fields("shared-id", { application_id: "app-1" }), [
      ["event_id", 1],
      ["thread_id", 1],
    ]);
    assert.deepEqual(await fields("root-1"), [["root_trace_id", 2]]);
    assert.deepEqual(await fields("turn-9"), [["turn_id", 1]]);
    assert.deepEqual(await fields("run-9"), [["run_id", 1]]);
    assert.deepEqual(await fields("mem-9"), [["memory_id", 1]]);
    assert.deepEqual(await fields("answer-1"), [["resource_id", 1]]);
    assert.deepEqual(await fields("vec-7"), [["resource_id", 1]]);
    assert.deepEqual(await fields("nothing"), []);
    const page = await findTraceRoots(db, { q: "answer-1" });
    assert.deepEqual(page.groups.map((g) => g.root_trace_id), ["e4"]);
    const none = await findTraceRoots(db, { q: "nothing" });
    assert.deepEqual(none.q_matches, []);
    assert.equal(none.groups.length, 0);
  });
});

Deno.test("traceOverview() counts agent/thread groups in SQL and says what it counted", async () => {
  const events: EventInput[] = [];
  for (let t = 0; t < 40; t++) {
    for (let i = 0; i < 3; i++) {
      events.push(ev(`t${t}-${i}`, t * 10 + i, {
        thread_id: `thread-${t}`,
        agent_id: `agent-${t % 4}`,
        status: i === 0 && t % 10 === 0 ? "error" : "ok",
      }));
    }
  }
  await seeded(events, async (db) => {
    const overview = await traceOverview(db, {});
    assert.equal(overview.groups.length, 40);
    assert.equal(overview.groups[0]!.thread_id, "thread-39");
    assert.ok(overview.groups.every((g) => g.events === 3));
    assert.equal(overview.groups.filter((g) => g.errors === 1).length, 4);
    assert.equal(overview.events_counted, 120);
    assert.equal(overview.events_truncated, false);
    assert.equal(overview.groups_truncated, false);
    assert.equal(overview.scan_limit, null);
    const narrow = await traceOverview(db, { agent_ids: ["agent-1"] });
    assert.equal(narrow.groups.length, 10);
  });
});

Deno.test("readRootEvents() reads one root oldest first, refuses an ambiguous root and states a partial read", async () => {
  await seeded([
    ev("x2", 2, { root_trace_id: "root-x" }),
    ev("x1", 1, { root_trace_id: "root-x", thread_id: "t-1" }),
    ev("y1", 1, { root_trace_id: "root-x", application_id: "app-2" }),
  ], async (db) => {
    await assert.rejects(
      readRootEvents(db, { root_trace_id: "root-x" }),
      ConflictError,
    );
    const read = await readRootEvents(db, {
      root_trace_id: "root-x",
      application_id: "app-1",
    });
    assert.deepEqual(read.events.map((e) => e.event_id), ["x1", "x2"]);
    assert.equal(read.read_completeness, "complete");
    assert.equal(read.instrumentation_coverage, "unknown");
    const capped = await readRootEvents(db, {
      root_trace_id: "root-x",
      application_id: "app-1",
    }, { limit: 1 });
    assert.equal(capped.read_completeness, "partial");
    assert.equal(capped.truncated, true);
    const thread = await readRootEvents(db, {
      root_trace_id: "root-x",
      application_id: "app-1",
      thread_id: "t-1",
    });
    assert.deepEqual(thread.events.map((e) => e.event_id), ["x1"]);
    const missing = await readRootEvents(db, { root_trace_id: "nope" });
    assert.equal(missing.application_id, null);
    assert.equal(missing.events.length, 0);
  });
});

Deno.test("lookupEvent() finds an event id in each application that uses it, within the tenant scope", async () => {
  await seeded([
    ev("same", 1),
    ev("same", 2, { application_id: "app-2" }),
  ], async (db) => {
    assert.equal((await lookupEvent(db, "same")).length, 2);
    const scoped = await lookupEvent(db, "same", { application_id: "app-2" });
    assert.deepEqual(scoped.map((e) => e.application_id), ["app-2"]);
  });
});

Deno.test("servedAfterDeletion() names the cache entry behind a deleted document bound to a later answer", () => {
  const events = [
    stored("q0", 1, {
      resources: [
        { type: "cache_entry", id: "answer-1", role: "written" },
        { type: "document", id: "doc-1", role: "output_bound" },
      ],
    }),
    stored("del", 2, {
      kind: "memory_delete",
      resources: [{ type: "document", id: "doc-1", role: "deleted" }],
    }),
    stored("q1", 3, {
      kind: "selection",
      selection: {
        strategy: "answer_cache",
        candidates: [{
          ref: { type: "cache_entry", id: "answer-1" },
          selected: true,
          reason: "application_policy",
        }],
      },
      resources: [
        { type: "cache_entry", id: "answer-1", role: "supplied" },
        { type: "document", id: "doc-1", role: "output_bound" },
      ],
    }),
    stored("q2", 4, {
      resources: [{ type: "document", id: "doc-1", role: "output_bound" }],
    }),
    stored("r1", 5, {
      // Retrieved and dropped after its deletion: not a use.
      selection: {
        candidates: [{
          ref: { type: "document", id: "doc-1" },
          selected: false,
          reason: "stale_version",
        }],
      },
    }),
  ];
  const uses = servedAfterDeletion([...events].reverse());
  assert.equal(uses.length, 1);
  const use = uses[0]!;
  assert.deepEqual(use.ref, { type: "document", id: "doc-1" });
  assert.equal(use.deleted_by.event_id, "del");
  assert.equal(use.uses, 2);
  assert.equal(use.first_use.event_id, "q1");
  assert.deepEqual(use.first_use.lanes, ["output_bound"]);
  assert.deepEqual(use.first_use.served_by, [{
    type: "cache_entry",
    id: "answer-1",
    version: null,
  }]);
  assert.equal(use.last_use.event_id, "q2");
  const inQ2 = servedAfterDeletion(events, {
    usesIn: (e) => e.event_id === "q2",
  });
  assert.equal(inQ2[0]!.uses, 1);
  assert.equal(inQ2[0]!.first_use.event_id, "q2");
  // A memory_delete ref without a role deletes too; nothing before a deletion counts.
  assert.deepEqual(
    servedAfterDeletion([
      stored("u", 1, {
        resources: [{ type: "document", id: "d", role: "supplied" }],
      }),
      stored("d", 2, {
        kind: "memory_delete",
        resources: [{ type: "document", id: "d" }],
      }),
    ]),
    [],
  );
});

Deno.test("readThreadEvidence() reads a thread across roots and counts only a root's uses when asked", async () => {
  await seeded([
    ev("w", 1, {
      thread_id: "ns",
      resources: [{ type: "document", id: "doc-1", role: "written" }],
    }),
    ev("del", 2, {
      thread_id: "ns",
      kind: "memory_delete",
      resources: [{ type: "document", id: "doc-1", role: "deleted" }],
    }),
    ev("q", 3, {
      thread_id: "ns",
      resources: [
        { type: "cache_entry", id: "c-1", role: "supplied" },
        { type: "document", id: "doc-1", role: "output_bound" },
      ],
    }),
    ev("runner", 4, { thread_id: "ns", application_id: "trace" }),
  ], async (db) => {
    const evidence = await readThreadEvidence(db, "ns");
    assert.equal(evidence.events_read, 3, "events without refs are not read");
    assert.equal(evidence.read_completeness, "complete");
    assert.equal(evidence.uses_counted_in, null);
    assert.equal(evidence.served_after_deletion.length, 1);
    assert.equal(evidence.served_after_deletion[0]!.thread_uses, 1);
    assert.equal(
      evidence.served_after_deletion[0]!.first_use.served_by[0]!.id,
      "c-1",
    );
    const elsewhere = await readThreadEvidence(db, "ns", {}, {
      root: { application_id: "app-1", root_trace_id: "w" },
    });
    assert.deepEqual(elsewhere.served_after_deletion, []);
    const scoped = await readThreadEvidence(db, "ns", {
      application_id: "app-2",
    });
    assert.equal(scoped.events_read, 0);
  });
});

Deno.test("compareRoots() finds kinds, order, lanes, selections and findings that differ", () => {
  const base = [
    stored("b1", 1, {
      resources: [{ type: "doc", id: "d1", role: "retrieved" }],
    }),
    stored("b2", 2, {
      kind: "selection",
      selection: {
        candidates: [
          {
            ref: { type: "doc", id: "d1" },
            selected: true,
            reason: "mmr_rank",
          },
          {
            ref: { type: "doc", id: "d2" },
            selected: false,
            reason: "budget_exhausted",
          },
        ],
      },
    }),
  ];
  assert.equal(compareRoots(base, base).identical, true);
  const candidate = [
    stored("c1", 1, {
      resources: [{ type: "doc", id: "d3", role: "retrieved" }],
    }),
    stored("c2", 2, { kind: "llm_call", status: "error" }),
  ];
  const c = compareRoots(base, candidate);
  assert.equal(c.identical, false);
  assert.deepEqual(c.first_divergence, {
    index: 1,
    baseline: "selection",
    candidate: "llm_call",
  });
  assert.deepEqual(c.kinds.filter((k) => k.changed).map((k) => k.kind), [
    "llm_call",
    "selection",
  ]);
  assert.deepEqual(c.lanes.retrieved.only_baseline, ["doc:d1", "doc:d2"]);
  assert.deepEqual(c.lanes.retrieved.only_candidate, ["doc:d3"]);
  assert.deepEqual(c.selections.selected.only_baseline, ["doc:d1"]);
  assert.deepEqual(c.errors, { baseline: 0, candidate: 1 });
  assert.ok(c.findings.only_candidate.includes("error_events"));
});

Deno.test("snapshotEvents() combines stores under a per-store bound, newest first", async () => {
  const events: EventInput[] = [];
  for (let i = 0; i < 510; i++) events.push(ev(`t${i}`, i, { store: "trace" }));
  for (let i = 0; i < 3; i++) {
    events.push(ev(`c${i}`, 1000 + i, { store: "conversation" }));
  }
  await seeded(events, async (db) => {
    const snapshot = await snapshotEvents(db, { agent_ids: ["agent-1"] });
    assert.equal(snapshot.stores.trace.rows, 500);
    assert.equal(snapshot.stores.trace.truncated, true);
    assert.equal(snapshot.stores.conversation.rows, 3);
    assert.equal(snapshot.stores.tool_log.rows, 0);
    assert.equal(snapshot.events.length, 503);
    assert.equal(snapshot.events[0]!.event_id, "c2");
    assert.equal(snapshot.read_completeness, "partial");
    assert.equal(snapshot.scan_limit, null);
  });
});

Deno.test("artifactEvidence() and contractEvidence() name missing fields and never infer bindings", () => {
  const legacy = [stored("l1", 1), stored("l2", 2, { kind: "llm_call" })];
  const artifact = artifactEvidence(legacy, "complete");
  assert.equal(artifact.state, "no_recorded_evidence");
  assert.deepEqual(artifact.artifacts, []);
  assert.ok(artifact.missing.includes("outcome.artifact"));
  assert.ok(artifact.missing.includes("intent.expected_artifact_types"));
  assert.equal(artifactEvidence(legacy, "partial").state, "unknown");
  const contract = contractEvidence(legacy, [], "complete");
  assert.equal(contract.state, "no_recorded_evidence");
  assert.equal(contract.missing.length, 3);
  const recorded = [
    stored("i", 1, {
      kind: "intent",
      stage: "intent",
      coverage_profile: "answer",
      attributes: {
        "intent.name": "refund",
        "intent.expected_artifact_types": "reply",
      },
    }),
    stored("o", 2, {
      kind: "delivery",
      stage: "delivery",
      outcome: {
        verified: true,
        status: "success",
        artifact: { type: "reply", id: "r-1" },
      },
    }),
  ];
  const a = artifactEvidence(recorded, "complete");
  assert.equal(a.state, "recorded");
  assert.deepEqual(a.artifacts.map((x) => [x.id, x.via]), [["r-1", "outcome"]]);
  const c = contractEvidence(recorded, [{
    application_id: null,
    name: "answer",
    required: ["intent", "delivery", "retrieval"],
    optional: [],
    registered_at: new Date(BASE).toISOString(),
  }], "complete");
  assert.equal(c.state, "recorded");
  assert.deepEqual(c.profiles[0]!.required, [
    { stage: "intent", observed: true },
    { stage: "delivery", observed: true },
    { stage: "retrieval", observed: false },
  ]);
  assert.equal(c.intent?.name, "refund");
  assert.equal(c.outcome?.event_id, "o");
});

Deno.test("the MCP tools use the lineage of the observability read path", () => {
  assert.equal(mcp.traceLineage, traceLineage);
});

Deno.test("findTraceRoots() calls a read complete when it read every matching event, even with more tasks on the next page", async () => {
  const events: EventInput[] = [];
  for (let i = 0; i < 60; i++) {
    events.push(ev(`e${i}`, i, { root_trace_id: `r${i % 30}` }));
  }
  await seeded(events, async (db) => {
    const first = await findTraceRoots(db, { limit: 7 });
    assert.equal(first.groups.length, 7);
    assert.equal(first.has_more, true, "more tasks on the next page");
    assert.equal(first.window.events_read, 60, "every matching event read");
    assert.equal(first.read_completeness, "complete");
    const next = await findTraceRoots(db, {
      limit: 7,
      cursor: first.next_cursor!,
    });
    assert.equal(next.read_completeness, "complete");
  });
});
