import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { ConfigError, ConflictError, RefusedError } from "../lib/errors.ts";
import {
  listCoverageProfiles,
  registerCoverageProfile,
} from "../lib/obs/coverage.ts";
import { queryTraceEvents } from "../lib/obs/query.ts";
import { createRecorder, recorderForWorker } from "../lib/obs/recorder.ts";
import { initializeObs } from "../lib/obs/schema.ts";
import { summarizeTraceEvents } from "../lib/obs/summaries.ts";

const SCOPE = {
  application_id: "app-1",
  user_id: "user-1",
  agent_id: "agent-1",
  thread_id: "t1",
};

async function ready(fn: (db: TraceDb) => Promise<void>): Promise<void> {
  await withDb(async (db) => {
    await initializeObs(db);
    await fn(db);
  });
}

Deno.test("createRecorder() records events in its scope", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, { ...SCOPE, root_trace_id: "root-1" });
    const recorded = await recorder.record({
      kind: "retrieval",
      preview: "hello",
    });
    assert.equal(recorded.duplicate, false);
    const [event] = (await queryTraceEvents(db, {})).events;
    assert.equal(event!.event_id, recorded.event_id);
    assert.equal(event!.thread_id, "t1");
    assert.equal(event!.root_trace_id, "root-1");
    assert.deepEqual(event!.preview, { chars: 5, truncated: false });
  });
});

Deno.test("Recorder.recordSelection() keeps at most 64 candidates and counts the rest", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, SCOPE);
    await recorder.recordSelection({
      strategy: "mmr",
      candidates: Array.from({ length: 70 }, (_, i) => ({
        ref: { type: "doc", id: `d${i}` },
        rank: 69 - i,
        score: i / 100,
        selected: i >= 66,
        reason: i >= 66 ? "mmr_rank" as const : "budget_exhausted" as const,
      })),
    });
    const [event] = (await queryTraceEvents(db, {})).events;
    assert.equal(event!.kind, "selection");
    assert.equal(event!.selection!.candidates.length, 64);
    assert.equal(event!.selection!.omitted_candidates, 6);
    assert.equal(
      event!.selection!.candidates[0]!.rank,
      0,
      "lowest ranks are kept",
    );
    const summary = await summarizeTraceEvents(db, {});
    assert.deepEqual(summary.selections, {
      events: 1,
      candidates: 64,
      selected: 4,
    });
  });
});

Deno.test("registerCoverageProfile() validates stages and requires replace to change", async () => {
  await ready(async (db) => {
    const spec = {
      required: ["intent", "artifact_persisted"],
      optional: ["delivery"],
    };
    assert.equal(
      await registerCoverageProfile(db, "doc_flow", spec),
      "registered",
    );
    assert.equal(
      await registerCoverageProfile(db, "doc_flow", spec),
      "unchanged",
    );
    await assert.rejects(
      registerCoverageProfile(db, "doc_flow", { required: ["intent"] }),
      ConflictError,
    );
    assert.equal(
      await registerCoverageProfile(db, "doc_flow", {
        required: ["intent"],
        replace: true,
      }),
      "replaced",
    );
    await assert.rejects(
      registerCoverageProfile(db, "bad", { required: ["a"], optional: ["a"] }),
      /disjoint/,
    );
    await assert.rejects(
      registerCoverageProfile(db, "bad", { required: [] }),
      ConfigError,
    );
    await assert.rejects(
      registerCoverageProfile(db, "bad", {
        required: Array.from({ length: 33 }, (_, i) => `s${i}`),
      }),
      /at most 32/,
    );
    assert.deepEqual((await listCoverageProfiles(db)).map((p) => p.required), [[
      "intent",
    ]]);
  });
});

Deno.test("instrumentation coverage is unknown, partial, then complete", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, { ...SCOPE, root_trace_id: "task-1" });
    await recorder.record({ kind: "retrieval" });
    const coverage = async () =>
      (await queryTraceEvents(db, {})).instrumentation_coverage;
    assert.equal(await coverage(), "unknown", "no profile declared");

    await recorder.registerCoverageProfile("doc_flow", {
      required: ["intent", "artifact_persisted"],
      optional: ["delivery"],
    });
    await recorder.recordIntent("document", {
      expected_artifact_types: ["doc"],
      coverage_profile: "doc_flow",
    });
    const partial = await queryTraceEvents(db, {});
    assert.equal(partial.instrumentation_coverage, "partial");
    assert.deepEqual(partial.coverage.gaps[0]!.missing_stages, [
      "artifact_persisted",
    ]);

    await recorder.record({ kind: "artifact_persisted" });
    assert.equal(await coverage(), "complete");
    assert.equal(
      (await summarizeTraceEvents(db, {})).instrumentation_coverage,
      "complete",
    );

    // A second task without a profile keeps the selection from being complete.
    await createRecorder(db, { ...SCOPE, root_trace_id: "task-2" }).record({
      kind: "retrieval",
    });
    assert.equal(await coverage(), "partial");
  });
});

Deno.test("instrumentation coverage is partial when a declared profile is unregistered", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, { ...SCOPE, root_trace_id: "task-1" });
    await recorder.recordIntent("document", {
      coverage_profile: "never_registered",
    });
    const page = await queryTraceEvents(db, {});
    assert.equal(page.instrumentation_coverage, "partial");
    assert.equal(page.coverage.gaps[0]!.problem, "unregistered_profile");
  });
});

Deno.test("recorderForWorker() continues in the carrier scope", async () => {
  await ready(async (db) => {
    const parent = createRecorder(db, { ...SCOPE, root_trace_id: "root-9" });
    const worker = await recorderForWorker(db, parent.carrier());
    await worker.record({ kind: "tool_call" });
    const events = (await queryTraceEvents(db, {})).events;
    assert.deepEqual(events.map((e) => [e.kind, e.root_trace_id]), [[
      "tool_call",
      "root-9",
    ]]);
  });
});

Deno.test("recorderForWorker() records trace_context_missing in the fallback scope", async () => {
  await ready(async (db) => {
    const fallback = { ...SCOPE, root_trace_id: "fallback-root" };
    const worker = await recorderForWorker(
      db,
      { application_id: 42 },
      fallback,
    );
    await worker.record({ kind: "tool_call" });
    const [work, missing] = (await queryTraceEvents(db, {})).events;
    assert.equal(missing!.kind, "trace_context_missing");
    assert.equal(missing!.status, "error");
    assert.equal(missing!.attributes["carrier.problem"], "invalid");
    assert.equal(missing!.root_trace_id, "fallback-root");
    assert.equal(work!.root_trace_id, "fallback-root");

    const parent = createRecorder(db, SCOPE);
    await parent.forWorker(undefined, fallback);
    const page = await queryTraceEvents(db, {
      kinds: ["trace_context_missing"],
    });
    assert.equal(page.events[0]!.attributes["carrier.problem"], "missing");
  });
});

Deno.test("recorderForWorker() throws without a carrier or a fallback", async () => {
  await ready(async (db) => {
    await assert.rejects(recorderForWorker(db, undefined), RefusedError);
    await assert.rejects(
      recorderForWorker(db, "garbage"),
      /carrier is invalid/,
    );
    assert.equal((await queryTraceEvents(db, {})).events.length, 0);
  });
});
