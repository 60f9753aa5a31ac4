import assert from "node:assert/strict";
import { withDb } from "./_helpers.ts";
import type { TraceDb } from "../lib/db.ts";
import { ConfigError, ConflictError, RefusedError } from "../lib/errors.ts";
import {
  initializeObs,
  listCoverageProfiles,
  registerCoverageProfile,
} from "../lib/obs/mod.ts";
import {
  queryTraceEvents,
  summarizeTraceEvents,
} from "../lib/obs/query/mod.ts";
import { createRecorder, recorderForWorker } from "../lib/obs/ingest/mod.ts";

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

Deno.test("Recorder.record() refuses tenant keys instead of letting them override the scope", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, SCOPE);
    const untyped = recorder.record as (event: unknown) => Promise<unknown>;
    await assert.rejects(
      untyped.call(recorder, { kind: "retrieval", application_id: "app-2" }),
      (error: Error) =>
        error instanceof RefusedError &&
        /application_id come from the recorder's scope/.test(error.message),
    );
    await assert.rejects(
      untyped.call(recorder, { kind: "retrieval", user_id: "someone-else" }),
      RefusedError,
    );
    const selection = recorder.recordSelection as (
      decision: unknown,
      options: unknown,
    ) => Promise<unknown>;
    await assert.rejects(
      selection.call(recorder, {
        candidates: [{
          ref: { type: "doc", id: "d" },
          selected: true,
          reason: "mmr_rank",
        }],
      }, { application_id: "app-2" }),
      RefusedError,
    );
    const child = recorder.child as (overrides: unknown) => unknown;
    assert.throws(
      () => child.call(recorder, { application_id: "app-2" }),
      RefusedError,
    );
    assert.equal((await queryTraceEvents(db, {})).events.length, 0);
  });
});

Deno.test("Recorder.forWorker() does not continue in a carrier of another tenant", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, { ...SCOPE, root_trace_id: "r1" });
    const foreign = { ...SCOPE, application_id: "app-2", root_trace_id: "r2" };
    await assert.rejects(
      recorder.forWorker(foreign),
      /carrier is of another tenant/,
    );
    await assert.rejects(
      recorder.forWorker({ ...SCOPE, user_id: "user-2" }),
      RefusedError,
    );
    await assert.rejects(
      recorder.forWorker(recorder.carrier(), foreign),
      /fallback context belongs to another tenant/,
    );
    const worker = await recorder.forWorker(foreign, recorder.carrier());
    assert.equal(worker.context.application_id, "app-1");
    const [missing] = (await queryTraceEvents(db, {})).events;
    assert.equal(missing!.kind, "trace_context_missing");
    assert.equal(missing!.attributes["carrier.problem"], "foreign_tenant");
    assert.equal(missing!.application_id, "app-1");
    const same = await recorder.forWorker(
      recorder.child({ turn_id: "turn-2" }).carrier(),
    );
    assert.equal(same.context.turn_id, "turn-2");
  });
});

Deno.test("Recorder.recordIntent() refuses a bad intent name with a one-line ConfigError", async () => {
  await ready(async (db) => {
    const recorder = createRecorder(db, SCOPE);
    await assert.rejects(
      recorder.recordIntent("Write A Doc"),
      (error: Error) =>
        error instanceof ConfigError &&
        /^Cannot record the intent: intent: must be a lower-case token/.test(
          error.message,
        ) && !error.message.includes("\n"),
    );
  });
});

Deno.test("registerCoverageProfile() keeps each application's profiles apart", async () => {
  await ready(async (db) => {
    const acme = createRecorder(db, { ...SCOPE, root_trace_id: "task-a" });
    const other = createRecorder(db, {
      ...SCOPE,
      application_id: "app-2",
      root_trace_id: "task-b",
    });
    await acme.registerCoverageProfile("doc_flow", { required: ["intent"] });
    // Another tenant registering the same name neither conflicts nor replaces it.
    assert.equal(
      await other.registerCoverageProfile("doc_flow", {
        required: ["intent", "delivery"],
      }),
      "registered",
    );
    const register = other.registerCoverageProfile as (
      name: string,
      spec: unknown,
    ) => Promise<unknown>;
    await assert.rejects(
      register.call(other, "doc_flow", {
        application_id: "app-1",
        required: ["x"],
      }),
      RefusedError,
    );
    for (const recorder of [acme, other]) {
      await recorder.recordIntent("document", { coverage_profile: "doc_flow" });
    }
    const acmePage = await queryTraceEvents(db, { application_id: "app-1" });
    assert.equal(acmePage.instrumentation_coverage, "complete");
    const otherPage = await queryTraceEvents(db, { application_id: "app-2" });
    assert.equal(otherPage.instrumentation_coverage, "partial");
    assert.deepEqual(otherPage.coverage.gaps[0]!.missing_stages, ["delivery"]);
    const profiles = await listCoverageProfiles(db);
    assert.deepEqual(
      profiles.map((p) => [p.application_id, p.name, p.required]),
      [["app-1", "doc_flow", ["intent"]], ["app-2", "doc_flow", [
        "delivery",
        "intent",
      ]]],
    );
  });
});

Deno.test("registerCoverageProfile() without an application applies where none is registered", async () => {
  await ready(async (db) => {
    await registerCoverageProfile(db, "doc_flow", {
      required: ["intent", "delivery"],
    });
    await registerCoverageProfile(db, "doc_flow", {
      application_id: "app-2",
      required: ["intent"],
    });
    for (const application_id of ["app-1", "app-2"]) {
      const recorder = createRecorder(db, {
        ...SCOPE,
        application_id,
        root_trace_id: `task-${application_id}`,
      });
      await recorder.recordIntent("document", { coverage_profile: "doc_flow" });
    }
    const global = await queryTraceEvents(db, { application_id: "app-1" });
    assert.equal(global.instrumentation_coverage, "partial");
    const own = await queryTraceEvents(db, { application_id: "app-2" });
    assert.equal(own.instrumentation_coverage, "complete");
  });
});
