import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import {
  createDemoTraceSink,
  dbEventWriter,
  eventsEndpoint,
  httpEventWriter,
} from "../lib/demo/demo_tracing.ts";
import { demoBehaviour } from "../lib/demo/defects.ts";
import { MemoryPipeline } from "../lib/memory/pipeline.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { runReferenceSystem } from "../lib/reference/suite.ts";
import { findSystem } from "../lib/reference/systems.ts";
import { inProcessTransport } from "../lib/reference/transport.ts";
import { VirtualTime } from "../lib/reference/virtual_time.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import {
  createRunTraceSink,
  runRootEventId,
  runTraceEvents,
  sampleEventId,
  type TimedRunEvent,
} from "../lib/runs/trace_events.ts";
import { startDemoServer } from "../cli/demo.ts";
import { createApp } from "../routes/app.ts";
import { withDb, withServer } from "./_helpers.ts";
import { runFake } from "./_fake_target.ts";
import { tokenRedactor } from "../lib/http/_redact.ts";

const TOKEN = "staging-token-abc123";

async function rows(db: TraceDb, sql: string, args: (string | number)[] = []) {
  return (await db.client.execute({ sql, args })).rows;
}

Deno.test("runTraceEvents() files a run under one root, content-free, with findings linked to samples", async () => {
  const timed: TimedRunEvent[] = [];
  let clock: VirtualTime | undefined;
  const result = await runReferenceSystem(findSystem("stale-cache")!, {
    onStart: (_spec, time) => {
      clock = time;
      return (event) => timed.push({ event, at: time.wallNow().getTime() });
    },
  });
  assert.ok(clock);
  const runId = result.report.run_id;
  const events = runTraceEvents(runId, timed, { runKind: "reference" });
  assert.equal(events[0]!.event_id, runRootEventId(runId));
  assert.equal(events[0]!.kind, "run");
  assert.equal(events[0]!.attributes?.["app.verdict"], "FAIL");
  assert.ok(
    events.every((e) => e.root_trace_id === runId && e.run_id === runId),
  );
  assert.equal(new Set(events.map((e) => e.event_id)).size, events.length);
  const requests = events.filter((e) => e.kind === "request");
  assert.equal(requests.length, result.report.requests.total);
  const samples = events.filter((e) => e.kind === "sample");
  assert.equal(samples.length, result.report.samples.length);
  assert.ok(samples.every((e) => e.attributes?.["app.control"] === "ok"));
  const ids = new Set(events.map((e) => e.event_id));
  const cacheFinding = events.find((e) =>
    e.kind === "finding" && e.attributes?.["app.subject"] === "cache_records"
  )!;
  assert.ok(cacheFinding.resources!.length > 0);
  assert.ok(cacheFinding.resources!.every((r) => ids.has(r.id)));
  assert.equal(cacheFinding.resources![0]!.id, sampleEventId(runId, 0));
  const text = JSON.stringify(events);
  assert.ok(
    !text.includes("Synthetic"),
    "document text leaked into trace events",
  );
  assert.ok(
    !text.includes("trace_canary_"),
    "a marker leaked into trace events",
  );
  assert.ok(!text.includes(result.report.findings[0]!.message));
});

Deno.test("createRunTraceSink() writes a reference run into the index under one root", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    let sink: ReturnType<typeof createRunTraceSink> | undefined;
    const result = await runReferenceSystem(findSystem("worker-resurrect")!, {
      onStart: (_spec, time) => {
        sink = createRunTraceSink(db, { clock: time, runKind: "reference" });
        return (event) => {
          sink!.listener(event);
          // Flushing mid-run writes only what can no longer change.
          if (event.type === "sample" && event.sample.index === 4) {
            void sink!.flush();
          }
        };
      },
    });
    const written = await sink!.flush();
    assert.ok(written && written.inserted > 0);
    assert.equal(await sink!.flush(), null);
    const runId = result.report.run_id;
    assert.equal(sink!.runId, runId);
    const roots = await rows(
      db,
      "SELECT DISTINCT root_trace_id FROM obs_events WHERE run_id = ?",
      [runId],
    );
    assert.deepEqual(roots.map((r) => String(r.root_trace_id)), [runId]);
    const kinds = await rows(
      db,
      "SELECT kind, COUNT(*) AS n FROM obs_events WHERE root_trace_id = ? GROUP BY kind ORDER BY kind",
      [runId],
    );
    const byKind = Object.fromEntries(
      kinds.map((r) => [String(r.kind), Number(r.n)]),
    );
    assert.equal(byKind.run, 1);
    assert.equal(byKind.cleanup, 1);
    assert.equal(byKind.phase, 5);
    assert.equal(byKind.sample, result.report.samples.length);
    assert.equal(byKind.request, result.report.requests.total);
    assert.equal(byKind.finding, result.report.findings.length);
    const linked = await rows(
      db,
      `SELECT s.event_id FROM obs_events f
       JOIN obs_resources r ON r.seq = f.seq AND r.origin = 'resource'
       JOIN obs_events s ON s.event_id = r.id AND s.kind = 'sample'
       WHERE f.root_trace_id = ? AND f.kind = 'finding'`,
      [runId],
    );
    const failing = result.report.findings.find((f) => f.severity === "fail")!;
    assert.equal(linked.length, failing.sample_indexes.length);
    const orphans = await rows(
      db,
      `SELECT COUNT(*) AS n FROM obs_events e WHERE e.root_trace_id = ?1
       AND e.parent_event_id IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM obs_events p WHERE p.event_id = e.parent_event_id)`,
      [runId],
    );
    assert.equal(Number(orphans[0]!.n), 0);
  });
});

Deno.test("MemoryPipeline traces a stale-cache FAIL to the cache entry that served the marker", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const time = new VirtualTime();
    const sink = createDemoTraceSink(dbEventWriter(db), {
      instanceId: "demo-t1",
    });
    const service = new MemoryPipeline(demoBehaviour("stale-cache"), {
      scheduler: time.scheduler,
      onActivity: (record) => sink.record(record),
    });
    try {
      const report = await runDeletionContract(
        parseStagingConfig({
          base_url: "http://127.0.0.1:1",
          environment: "staging",
          allow_synthetic_writes: true,
          sample_interval_seconds: 0.5,
        }),
        {
          transport: inProcessTransport(service, { time }),
          target: {
            id: "demo",
            base_url: "http://127.0.0.1:1",
            source: "config",
          },
          checkpoint: memoryCheckpointSink(),
          clock: time,
        },
      );
      assert.equal(report.verdict, "FAIL");
      await sink.flush();
      assert.equal(sink.failures, 0);
      const ns = report.namespaces.test;
      const served = await rows(
        db,
        `SELECT e.event_id, e.ts, r.id, r.role, e.meta FROM obs_events e
         JOIN obs_resources r ON r.seq = e.seq AND r.origin = 'candidate'
         WHERE e.kind = 'selection' AND e.thread_id = ? AND r.type = 'cache_entry'
         ORDER BY e.seq`,
        [ns],
      );
      const deletion = await rows(
        db,
        "SELECT seq FROM obs_events WHERE kind = 'memory_delete' AND thread_id = ? ORDER BY seq LIMIT 1",
        [ns],
      );
      const deletedAt = Number(deletion[0]!.seq);
      const after = await rows(
        db,
        `SELECT e.seq, r.id FROM obs_events e
         JOIN obs_resources r ON r.seq = e.seq AND r.origin = 'candidate' AND r.type = 'cache_entry'
         WHERE e.kind = 'selection' AND e.thread_id = ? AND e.seq > ?`,
        [ns, deletedAt],
      );
      // One marker query per window sample and one per cleanup poll of the test namespace.
      assert.equal(after.length, report.samples.length + report.cleanup.polls);
      const written = await rows(
        db,
        `SELECT r.id FROM obs_events e JOIN obs_resources r ON r.seq = e.seq
         WHERE e.kind = 'selection' AND e.thread_id = ? AND r.type = 'cache_entry' AND r.role = 'written'`,
        [ns],
      );
      assert.equal(written.length, 1);
      assert.ok(after.every((r) => String(r.id) === String(written[0]!.id)));
      const selection = JSON.parse(String(served.at(-1)!.meta)).selection;
      assert.equal(selection.strategy, "answer_cache");
      assert.equal(selection.candidates[0].selected, true);
      const bodies = await rows(db, "SELECT body FROM obs_envelopes");
      assert.ok(bodies.every((b) => !String(b.body).includes("trace_canary_")));
    } finally {
      service.close();
    }
  });
});

Deno.test("startDemoServer() posts its trace events to a Trace server's /api/events", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    await withServer(createApp({ db }).fetch, async (traceServer) => {
      const sink = createDemoTraceSink(httpEventWriter(traceServer.url));
      const demo = await startDemoServer({ traceSink: sink });
      const call = async (op: string, body: unknown) => {
        const response = await fetch(`${demo.url}/${op}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return await response.json();
      };
      try {
        await call("ingest", {
          namespace: "ns-1",
          id: "doc-1",
          text: "hello trace_canary_ab",
        });
        await call("query", { namespace: "ns-1", query: "trace_canary_ab" });
        await call("query", { namespace: "ns-1", query: "trace_canary_ab" });
      } finally {
        await demo.shutdown();
      }
      assert.equal(sink.failures, 0);
      const events = await rows(
        db,
        "SELECT kind, meta FROM obs_events WHERE thread_id = ? ORDER BY seq",
        ["ns-1"],
      );
      assert.deepEqual(events.map((e) => e.kind), [
        "memory_write",
        "selection",
        "selection",
      ]);
      const bodies = await rows(db, "SELECT body FROM obs_envelopes");
      assert.ok(
        bodies.every((b) => !String(b.body).includes("trace_canary_ab")),
      );
      const second = JSON.parse(String(events[2]!.meta)).selection as {
        strategy: string;
        candidates: { ref: { type: string } }[];
      };
      assert.equal(second.strategy, "answer_cache");
      assert.equal(second.candidates[0]!.ref.type, "cache_entry");
    });
  });
});

Deno.test("eventsEndpoint() accepts a server's base URL or its /api/events endpoint", () => {
  assert.equal(
    eventsEndpoint("http://127.0.0.1:8788").href,
    "http://127.0.0.1:8788/api/events",
  );
  assert.equal(
    eventsEndpoint("http://127.0.0.1:8788/").href,
    "http://127.0.0.1:8788/api/events",
  );
  assert.equal(
    eventsEndpoint("http://127.0.0.1:8788/api/events").href,
    "http://127.0.0.1:8788/api/events",
  );
  assert.equal(
    eventsEndpoint("https://trace.example/prefix").href,
    "https://trace.example/prefix/api/events",
  );
  for (
    const api of ["http://127.0.0.1:8788/api", "http://127.0.0.1:8788/api/"]
  ) {
    assert.equal(
      eventsEndpoint(api).href,
      "http://127.0.0.1:8788/api/events",
      "the API prefix given as the server is not doubled",
    );
  }
});

Deno.test("httpEventWriter() names the endpoint when it cannot be reached or refuses", async () => {
  const write = httpEventWriter("http://127.0.0.1:9");
  await assert.rejects(
    write([]),
    /^Error: POST http:\/\/127\.0\.0\.1:9\/api\/events failed: /,
  );
});

Deno.test("httpEventWriter() authenticates to a token-protected server through its endpoint URL", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const token = "a-long-ingest-token-for-tests";
    await withServer(
      createApp({ db, ingestToken: token }).fetch,
      async (server) => {
        const event = {
          application_id: "demo",
          agent_id: "demo-memory",
          event_id: "e-token",
          kind: "memory_write",
        };
        await assert.rejects(
          () => httpEventWriter(`${server.url}/api/events`)([event]),
          /HTTP 401/,
        );
        await httpEventWriter(`${server.url}/api/events`, {
          headers: { Authorization: `Bearer ${token}` },
        })([event]);
        const stored = await rows(db, "SELECT event_id FROM obs_events");
        assert.deepEqual(stored.map((r) => r.event_id), ["e-token"]);
      },
    );
  });
});

Deno.test("the demo's trace sink says once that writing fails, names a new reason, and says what was dropped when it works again", async () => {
  const answers = ["down", "down", "down", "refused", "ok"];
  const messages: string[] = [];
  const sink = createDemoTraceSink(
    () => {
      const answer = answers.shift()!;
      return answer === "ok"
        ? Promise.resolve()
        : Promise.reject(new Error(answer));
    },
    { instanceId: "demo-t3", onError: (message) => messages.push(message) },
  );
  for (let batch = 0; batch < 5; batch++) {
    sink.record({ type: "ingest", namespace: "ns", id: `d${batch}`, at: 0 });
    await sink.flush();
  }
  assert.equal(sink.failures, 4);
  assert.deepEqual(messages, [
    "Cannot write 1 demo trace event(s): down; later batches failing alike are counted, not printed",
    "Cannot write 1 demo trace event(s): refused; later batches failing alike are counted, not printed",
    "Demo trace events are written again; 4 event(s) in 4 batch(es) were dropped meanwhile",
  ]);
});

Deno.test("runTraceEvents() records a control namespace that grew after the deletion on each sample", async () => {
  const timed: TimedRunEvent[] = [];
  const result = await runReferenceSystem(findSystem("control-move")!, {
    onStart: (_spec, time) => (event) =>
      timed.push({ event, at: time.wallNow().getTime() }),
  });
  const samples = runTraceEvents(result.report.run_id, timed, {
    runKind: "reference",
  }).filter((e) => e.kind === "sample");
  assert.ok(samples.length > 0);
  assert.ok(samples.every((e) => e.attributes?.["app.control"] === "grew"));
});

Deno.test("runTraceEvents() gives a note finding (an incomplete cleanup) an ok status, as the run page words it, and keeps the cleanup event an error", async () => {
  const timed: TimedRunEvent[] = [];
  const result = await runReferenceSystem(findSystem("stale-cache")!, {
    onStart: (_spec, time) => (event) =>
      timed.push({ event, at: time.wallNow().getTime() }),
  });
  const report = result.report;
  const notes = report.findings.filter((f) =>
    f.severity === "note" || f.severity === "transient"
  );
  assert.ok(
    notes.some((f) => f.code === "cleanup_incomplete"),
    JSON.stringify(report.findings.map((f) => [f.code, f.severity])),
  );
  const events = runTraceEvents(report.run_id, timed, {
    runKind: "reference",
  });
  for (const [i, finding] of report.findings.entries()) {
    const event = events.find((e) =>
      e.event_id === `${report.run_id}:finding:${i + 1}`
    );
    assert.ok(event, `finding ${i + 1}`);
    assert.equal(event.attributes?.["app.severity"], finding.severity);
    const failing = finding.severity === "fail" ||
      finding.severity === "inconclusive";
    assert.equal(event.status, failing ? "error" : "ok", finding.code);
    if (!failing) {
      assert.notEqual(event.success, false, `${finding.code} is no failure`);
    }
  }
  // The leftovers stay findable as an error through the cleanup event.
  const cleanup = events.find((e) => e.kind === "cleanup");
  assert.equal(cleanup?.status, "error");
  assert.equal(cleanup?.success, false);
});

Deno.test("a request whose answer was not read after all is an error in the run's trace, as the report counts it", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const sink = createRunTraceSink(db, { runId: "run-unread" });
    const { report } = await runFake({
      onEvent: (event) => sink.listener(event),
      hook: async (request, forward) => {
        const answer = await forward();
        if (
          request.op !== "query" || request.role !== "test" ||
          request.stage !== "window"
        ) return answer;
        // The adapter echoes its token: the answer is changed before the search.
        return tokenRedactor(TOKEN).answer({ ...answer, echo: TOKEN });
      },
    });
    await sink.flush();
    const requests = await rows(
      db,
      `SELECT status, meta FROM obs_events
       WHERE root_trace_id = 'run-unread' AND kind = 'request'`,
    );
    assert.equal(requests.length, report.requests.total);
    const failed = requests.filter((r) => r.status === "error");
    assert.equal(failed.length, report.requests.failed);
    const unread = requests.filter((r) =>
      JSON.parse(String(r.meta)).attributes?.["app.answer_unread"] === true
    );
    assert.equal(
      unread.length,
      report.samples.flatMap((s) => s.errors).length,
    );
    assert.ok(unread.length > 0);
  });
});

Deno.test("createRunTraceSink() keeps a /query request unwritten until the events after its answer's search", async () => {
  await withDb(async (db) => {
    await initializeObs(db);
    const sink = createRunTraceSink(db, { runId: "run-held" });
    const requestsOf = async () =>
      await rows(
        db,
        "SELECT status FROM obs_events WHERE root_trace_id = 'run-held' AND kind = 'request'",
      );
    sink.listener({ type: "phase", phase: "window", at_ms: 0 });
    for (const op of ["query", "inventory"] as const) {
      sink.listener({
        type: "request",
        op,
        namespace: "test",
        started_ms: 0,
        duration_ms: 1,
        outcome: "ok",
      });
    }
    sink.listener({
      type: "request",
      op: "delete",
      namespace: "test",
      started_ms: 1,
      duration_ms: 1,
      outcome: "ok",
    });
    // An interrupt can come while an answer is searched.
    sink.listener({
      type: "interrupted",
      phase: "window",
      at_ms: 2,
      bound_seconds: 5,
    });
    await sink.flush();
    assert.deepEqual((await requestsOf()).map((r) => r.status), ["ok"]);
    sink.listener({
      type: "answer_unread",
      op: "query",
      namespace: "test",
      failure: "timeout",
    });
    sink.listener({ type: "phase", phase: "cleanup", at_ms: 3 });
    await sink.flush();
    assert.deepEqual(
      (await requestsOf()).map((r) => r.status).sort(),
      ["error", "ok", "ok"],
    );
  });
});
