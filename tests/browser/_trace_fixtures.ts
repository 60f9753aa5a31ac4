/**
 * Trace data for the finder and inspection tests: a busy index of 40
 * threads, an instrumented support task with full lineage and a 64-candidate
 * selection, a legacy task without any instrumentation, and a real deletion
 * run against the demo app with its stale answer cache, traced from both
 * sides.
 */

import type { TraceDb } from "../../lib/db.ts";
import { parseStagingConfig } from "../../lib/contract/config.ts";
import {
  createDemoTraceSink,
  httpEventWriter,
} from "../../lib/demo/demo_tracing.ts";
import { ingestEvents } from "../../lib/obs/ingest/mod.ts";
import { type EventInput, registerCoverageProfile } from "../../lib/obs/mod.ts";
import { runExternal, RunLock } from "../../lib/runs/mod.ts";
import type { RunReport } from "../../lib/runner/report.ts";
import { startDemoServer } from "../../cli/demo.ts";

/** Where the synthetic events start. */
export const T0 = Date.parse("2026-11-29T10:00:00Z");

function at(ms: number): string {
  return new Date(T0 + ms).toISOString();
}

/** 40 threads of 4 agents, 12 events each, in 3 roots per thread. */
export async function seedBusyThreads(db: TraceDb): Promise<void> {
  const events: EventInput[] = [];
  for (let t = 0; t < 40; t++) {
    for (let i = 0; i < 12; i++) {
      const root = `busy-${t}-r${Math.floor(i / 4)}`;
      events.push({
        application_id: "support-app",
        user_id: `user-${t % 7}`,
        agent_id: `agent-${t % 4}`,
        thread_id: `thread-${String(t).padStart(2, "0")}`,
        root_trace_id: root,
        event_id: `busy-${t}-e${i}`,
        parent_event_id: i % 4 === 0 ? null : `busy-${t}-e${i - (i % 4)}`,
        kind: ["retrieval", "selection", "llm_call", "delivery"][i % 4]!,
        status: (t + i) % 23 === 0 ? "error" : "ok",
        started_at: at(t * 1000 + i * 50),
        ended_at: at(t * 1000 + i * 50 + 30),
      });
    }
  }
  await ingestEvents(db, events);
}

/** The instrumented task: root `task-42`, agent `support-bot`, thread `thread-incident`. */
export const INCIDENT = {
  application_id: "support-app",
  agent_id: "support-bot",
  thread_id: "thread-incident",
  root_trace_id: "task-42",
  selection_event: "task-42-select",
  stale_doc: "doc-deleted-7",
} as const;

/** A task with every lineage lane, a 64-candidate selection, an artifact and a verified outcome. */
export async function seedIncident(db: TraceDb): Promise<void> {
  await registerCoverageProfile(db, "support_answer", {
    application_id: INCIDENT.application_id,
    required: ["intent", "retrieval", "selection", "llm_call", "delivery"],
    optional: ["artifact_persisted"],
  });
  const base = {
    application_id: INCIDENT.application_id,
    user_id: "user-1",
    agent_id: INCIDENT.agent_id,
    thread_id: INCIDENT.thread_id,
    root_trace_id: INCIDENT.root_trace_id,
  };
  const candidates = Array.from({ length: 64 }, (_, i) => ({
    ref: { type: "document", id: `doc-${i}`, version: "v1" },
    rank: i,
    score: Number((0.99 - i * 0.01).toFixed(2)),
    selected: i < 3,
    reason: i < 3
      ? "mmr_rank" as const
      : i === 3
      ? "stale_version" as const
      : i < 10
      ? "near_duplicate" as const
      : "budget_exhausted" as const,
  }));
  const events: EventInput[] = [
    {
      ...base,
      event_id: "task-42",
      kind: "intent",
      coverage_profile: "support_answer",
      started_at: at(100_000),
      ended_at: at(100_900),
      resources: [{ type: "document", id: "doc-0", role: "expected" }, {
        type: "document",
        id: "doc-policy",
        role: "expected",
      }],
      attributes: {
        "intent.name": "answer_refund_question",
        "intent.expected_artifact_types": "reply",
      },
    },
    {
      ...base,
      event_id: "task-42-delete",
      parent_event_id: "task-42",
      kind: "memory_delete",
      started_at: at(100_010),
      resources: [{
        type: "document",
        id: INCIDENT.stale_doc,
        role: "deleted",
      }],
    },
    {
      ...base,
      event_id: "task-42-retrieve",
      parent_event_id: "task-42",
      kind: "retrieval",
      started_at: at(100_050),
      ended_at: at(100_250),
      resources: [{ type: "document", id: "doc-0", role: "retrieved" }, {
        type: "document",
        id: INCIDENT.stale_doc,
        role: "retrieved",
      }],
    },
    {
      ...base,
      event_id: INCIDENT.selection_event,
      parent_event_id: "task-42-retrieve",
      kind: "selection",
      started_at: at(100_260),
      ended_at: at(100_300),
      selection: { strategy: "mmr", candidates, omitted_candidates: 12 },
    },
    {
      ...base,
      event_id: "task-42-llm",
      parent_event_id: "task-42",
      kind: "llm_call",
      started_at: at(100_310),
      ended_at: at(100_800),
      resources: [{ type: "document", id: "doc-0", role: "supplied" }, {
        type: "document",
        id: INCIDENT.stale_doc,
        role: "supplied",
      }],
      attributes: { "gen_ai.request.model": "model-small" },
    },
    {
      ...base,
      event_id: "task-42-deliver",
      parent_event_id: "task-42",
      kind: "delivery",
      started_at: at(100_810),
      ended_at: at(100_890),
      resources: [{ type: "document", id: "doc-0", role: "output_bound" }, {
        type: "document",
        id: INCIDENT.stale_doc,
        role: "output_bound",
      }],
      outcome: {
        verified: true,
        status: "success",
        artifact: { type: "reply", id: "reply-42", version: "1" },
      },
    },
  ];
  await ingestEvents(db, events);
}

/** The legacy task: root `legacy-7`, agent `old-bot`: events without refs, profile or outcome. */
export const LEGACY = {
  application_id: "legacy-app",
  agent_id: "old-bot",
  root_trace_id: "legacy-7",
} as const;

/** A task recorded before instrumentation: kinds and times only. */
export async function seedLegacy(db: TraceDb): Promise<void> {
  const events: EventInput[] = ["retrieval", "llm_call", "tool_call"].map((
    kind,
    i,
  ) => ({
    application_id: LEGACY.application_id,
    agent_id: LEGACY.agent_id,
    root_trace_id: LEGACY.root_trace_id,
    event_id: i === 0 ? LEGACY.root_trace_id : `legacy-7-${i}`,
    parent_event_id: i === 0 ? null : LEGACY.root_trace_id,
    kind,
    started_at: at(200_000 + i * 100),
  }));
  await ingestEvents(db, events);
}

/** A finished deletion run against the traced demo app. */
export interface StaleCacheRun {
  report: RunReport;
}

/**
 * Starts the demo app with the stale-cache defect, its trace events posted
 * to `traceOrigin` (a Trace server), and runs the deletion contract against
 * it over HTTP, recording into `db`.
 */
export async function runStaleCache(
  db: TraceDb,
  dataDir: string,
  traceOrigin: string,
): Promise<StaleCacheRun> {
  const sink = createDemoTraceSink(httpEventWriter(traceOrigin));
  const demo = await startDemoServer({
    defect: "stale-cache",
    traceSink: sink,
  });
  try {
    const config = parseStagingConfig({
      base_url: demo.url,
      environment: "staging",
      allow_synthetic_writes: true,
      document_count: 2,
      deletion_window_seconds: 1,
      sample_interval_seconds: 0.5,
    });
    const { report } = await runExternal(config, {
      db,
      dataDir,
      target: { id: "demo-stale", base_url: demo.url, source: "config" },
      lock: new RunLock(),
    });
    await demo.shutdown();
    if (sink.failures > 0) {
      throw new Error(`${sink.failures} demo trace batch(es) failed`);
    }
    return { report };
  } finally {
    // A second shutdown is a no-op; this one covers a failed run.
    await demo.shutdown();
  }
}
