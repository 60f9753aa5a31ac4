/**
 * Runs as traces: the lifecycle events of one run (phases, requests, samples,
 * findings, cleanup, verdict) become observability events under one root
 * trace id, the run id, so a run can be shown as a timeline and a finding can
 * link to the samples that prove it. Content-free by construction: only
 * operations, outcome classes, counts and flags are copied, never answer text
 * or error messages.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { ingestEvents, type IngestResult } from "../obs/ingest/mod.ts";
import {
  type Attributes,
  type EventInput,
  requireObs,
  type ResourceRef,
} from "../obs/mod.ts";
import type { RunEvent, RunEventListener, RunPhase } from "../runner/events.ts";
import type { Cleanup, Finding, Sample, Verdict } from "../runner/report.ts";

/** A run event and the wall-clock time (epoch ms) it was observed at. */
export interface TimedRunEvent {
  event: RunEvent;
  at: number;
}

/** Identity of the trace events of a run. */
export interface RunTraceIdentity {
  /** Default `trace`. */
  applicationId?: string;
  /** Default `trace-runner`. */
  agentId?: string;
  /** `external` or `reference`, recorded on the root event. */
  runKind?: "external" | "reference";
  /** Target id, recorded on the root event. */
  targetId?: string;
  /**
   * The run's namespaces. Request and sample events carry the namespace they
   * read as `thread_id`, the same thread a traced staging app files its own
   * events under, so both sides of a request can be found together.
   */
  namespaces?: { test: string; control: string };
}

/** Most resource refs one event may carry (the index's bound). */
const MAX_REFS = 64;

/** Event id of the root event of a run. */
export function runRootEventId(runId: string): string {
  return `${runId}:run`;
}

/** Event id of the event of sample `index` of a run. */
export function sampleEventId(runId: string, index: number): string {
  return `${runId}:sample:${index}`;
}

interface Converted {
  input: EventInput;
  /** False while the event can still change (an open phase, a run without verdict). */
  final: boolean;
}

/**
 * Converts a run's timed events into observability events. Every event has
 * `root_trace_id` and `run_id` equal to `runId`; the root event (`kind: run`)
 * comes first.
 */
export function runTraceEvents(
  runId: string,
  events: readonly TimedRunEvent[],
  identity: RunTraceIdentity = {},
): EventInput[] {
  return convert(runId, events, identity).map((c) => c.input);
}

function convert(
  runId: string,
  events: readonly TimedRunEvent[],
  identity: RunTraceIdentity,
): Converted[] {
  const base = {
    application_id: identity.applicationId ?? "trace",
    agent_id: identity.agentId ?? "trace-runner",
    root_trace_id: runId,
    run_id: runId,
    store: "trace" as const,
  };
  const rootId = runRootEventId(runId);
  const out: Converted[] = [];
  const phases: { name: RunPhase; id: string; index: number; at: number }[] =
    [];
  let requests = 0;
  let findings = 0;
  let verdict: { verdict: Verdict; at: number } | null = null;
  const currentPhase = () => phases.at(-1)?.id ?? rootId;
  const answers = answerFates(events);
  for (const [index, { event, at }] of events.entries()) {
    switch (event.type) {
      case "phase": {
        const open = phases.at(-1);
        if (open) closePhase(out[open.index]!, at);
        if (event.phase === "done") break;
        const id = `${runId}:phase:${event.phase}`;
        phases.push({ name: event.phase, id, index: out.length, at });
        out.push({
          input: {
            ...base,
            event_id: id,
            parent_event_id: rootId,
            kind: "phase",
            status: "ok",
            started_at: iso(at),
            attributes: { "app.phase": event.phase },
          },
          final: false,
        });
        break;
      }
      case "request": {
        const fate = answers.get(index);
        const converted = requestEvent(
          base,
          runId,
          ++requests,
          currentPhase(),
          fate?.unread ? { ...event, outcome: fate.unread } : event,
          at,
        );
        converted.final = fate?.settled ?? true;
        if (fate?.unread) {
          converted.input.attributes!["app.answer_unread"] = true;
        }
        if (identity.namespaces) {
          converted.input.thread_id = identity.namespaces[event.namespace];
        }
        out.push(converted);
        break;
      }
      case "sample": {
        const converted = sampleEvent(base, runId, currentPhase(), event, at);
        if (identity.namespaces) {
          converted.input.thread_id = identity.namespaces.test;
        }
        out.push(converted);
        break;
      }
      case "finding":
        out.push(
          findingEvent(base, runId, ++findings, rootId, event.finding, at),
        );
        break;
      case "cleanup":
        out.push(cleanupEvent(base, runId, currentPhase(), event.cleanup, at));
        break;
      case "verdict":
        verdict = { verdict: event.verdict, at };
        break;
    }
  }
  const first = events[0]?.at ?? Date.now();
  const root = rootEvent(base, rootId, first, verdict, identity, {
    requests,
    failed: out.filter((c) =>
      c.input.kind === "request" && c.input.status === "error"
    ).length,
    samples: out.filter((c) =>
      c.input.kind === "sample"
    ).length,
    findings,
  });
  return [root, ...out];
}

type Base = Omit<EventInput, "event_id" | "kind">;

/** What became of a `/query` or `/inventory` answer after its request's event. */
interface AnswerFate {
  /** The failure its answer was found unread with (`answer_unread`), if it was. */
  unread: Extract<RunEvent, { type: "answer_unread" }>["failure"] | null;
  /** Whether it can no longer be found unread: an event after its searches came. */
  settled: boolean;
}

/**
 * Events that come only after the answers before them were searched; a
 * request, an unread answer or an interrupt can come between a request and
 * the search of its answer.
 */
const AFTER_SEARCHES: ReadonlySet<RunEvent["type"]> = new Set([
  "phase",
  "sample",
  "cleanup_started",
  "cleanup_poll",
  "finding",
  "cleanup",
  "verdict",
]);

/**
 * The fate of each `/query` and `/inventory` request's answer, by the
 * request's index in `events`: an `answer_unread` belongs to the latest
 * request of its operation and namespace, since each is searched before
 * the next is sent.
 */
function answerFates(
  events: readonly TimedRunEvent[],
): Map<number, AnswerFate> {
  const fates = new Map<number, AnswerFate>();
  const latest = new Map<string, AnswerFate>();
  let open: AnswerFate[] = [];
  events.forEach(({ event }, index) => {
    if (event.type === "request") {
      if (event.op !== "query" && event.op !== "inventory") return;
      const fate: AnswerFate = { unread: null, settled: false };
      latest.set(`${event.op}:${event.namespace}`, fate);
      fates.set(index, fate);
      open.push(fate);
    } else if (event.type === "answer_unread") {
      const fate = latest.get(`${event.op}:${event.namespace}`);
      if (fate) fate.unread = event.failure;
    } else if (AFTER_SEARCHES.has(event.type)) {
      for (const fate of open) fate.settled = true;
      open = [];
    }
  });
  return fates;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function closePhase(phase: Converted, at: number): void {
  phase.input.ended_at = iso(Math.max(at, Date.parse(phase.input.started_at!)));
  phase.final = true;
}

function rootEvent(
  base: Base,
  rootId: string,
  first: number,
  verdict: { verdict: Verdict; at: number } | null,
  identity: RunTraceIdentity,
  counts: {
    requests: number;
    failed: number;
    samples: number;
    findings: number;
  },
): Converted {
  const attributes: Attributes = {
    "app.verdict": verdict?.verdict ?? null,
    "app.requests": counts.requests,
    "app.requests_failed": counts.failed,
    "app.samples": counts.samples,
    "app.findings": counts.findings,
  };
  if (identity.runKind) attributes["app.run_kind"] = identity.runKind;
  if (identity.targetId) attributes["app.target_id"] = identity.targetId;
  return {
    input: {
      ...base,
      event_id: rootId,
      parent_event_id: null,
      kind: "run",
      // A run that did not PASS is an error in the index, so error filters find it.
      status: verdict ? (verdict.verdict === "PASS" ? "ok" : "error") : "unset",
      success: verdict === null || verdict.verdict === "INCONCLUSIVE"
        ? null
        : verdict.verdict === "PASS",
      started_at: iso(first),
      ended_at: verdict ? iso(Math.max(verdict.at, first)) : null,
      attributes,
    },
    final: verdict !== null,
  };
}

function requestEvent(
  base: Base,
  runId: string,
  n: number,
  parent: string,
  event: Extract<RunEvent, { type: "request" }>,
  at: number,
): Converted {
  const ok = event.outcome === "ok";
  return {
    input: {
      ...base,
      event_id: `${runId}:request:${n}`,
      parent_event_id: parent,
      kind: "request",
      tool: event.op,
      status: ok ? "ok" : "error",
      success: ok,
      started_at: iso(at - event.duration_ms),
      ended_at: iso(at),
      attributes: {
        "app.op": event.op,
        "app.namespace_role": event.namespace,
        "app.outcome": event.outcome,
        "app.outcome_class": ok ? "ok" : "error",
        "app.duration_ms": Math.round(event.duration_ms * 1000) / 1000,
      },
    },
    final: true,
  };
}

function sampleEvent(
  base: Base,
  runId: string,
  parent: string,
  event: Extract<RunEvent, { type: "sample" }>,
  at: number,
): Converted {
  const s: Sample = event.sample;
  const took = (s.ended_at_seconds - s.started_at_seconds) * 1000;
  return {
    input: {
      ...base,
      event_id: sampleEventId(runId, s.index),
      parent_event_id: parent,
      kind: "sample",
      status: s.errors.length === 0 ? "ok" : "error",
      success: s.errors.length === 0,
      started_at: iso(at - Math.max(0, took)),
      ended_at: iso(at),
      attributes: {
        "app.sample_index": s.index,
        "app.started_at_seconds": s.started_at_seconds,
        "app.window_seconds": event.window_seconds,
        "app.inventory_complete": s.inventory?.complete ?? null,
        "app.source_records": s.inventory?.source_records ?? null,
        "app.vector_records": s.inventory?.vector_records ?? null,
        "app.cache_records": s.inventory?.cache_records ?? null,
        "app.marker_seen": s.marker_seen,
        "app.control_present": s.control_present,
        "app.control_seen": s.control_seen,
        "app.control": event.control,
        "app.errors": s.errors.length,
      },
    },
    final: true,
  };
}

function findingEvent(
  base: Base,
  runId: string,
  n: number,
  parent: string,
  finding: Finding,
  at: number,
): Converted {
  const resources: ResourceRef[] = finding.sample_indexes
    .slice(0, MAX_REFS)
    .map((index) => ({
      type: "trace_sample",
      id: sampleEventId(runId, index),
      role: "referenced",
    }));
  return {
    input: {
      ...base,
      event_id: `${runId}:finding:${n}`,
      parent_event_id: parent,
      kind: "finding",
      status: findingFailed(finding) ? "error" : "ok",
      success: findingFailed(finding)
        ? false
        : finding.severity === "inconclusive"
        ? null
        : true,
      started_at: iso(at),
      resources,
      attributes: {
        "app.severity": finding.severity,
        "app.code": finding.code,
        "app.subject": finding.subject,
        "app.samples": finding.sample_indexes.length,
      },
    },
    final: true,
  };
}

function cleanupEvent(
  base: Base,
  runId: string,
  parent: string,
  cleanup: Cleanup,
  at: number,
): Converted {
  const attributes: Attributes = {
    "app.cleanup_complete": cleanup.cleanup_complete,
    "app.deletes": cleanup.deletes.length,
    "app.deletes_acknowledged": cleanup.deletes.filter((d) => d.acknowledged)
      .length,
    "app.polls": cleanup.polls,
    "app.elapsed_seconds": cleanup.elapsed_seconds,
    "app.problems": cleanup.problems.length,
  };
  for (const role of ["test", "control"] as const) {
    const counts = cleanup.remaining[role];
    for (
      const store of [
        "source_records",
        "vector_records",
        "cache_records",
      ] as const
    ) {
      attributes[`app.remaining.${role}.${store}`] = counts
        ? counts[store]
        : null;
    }
  }
  return {
    input: {
      ...base,
      event_id: `${runId}:cleanup`,
      parent_event_id: parent,
      kind: "cleanup",
      status: cleanup.cleanup_complete ? "ok" : "error",
      success: cleanup.cleanup_complete,
      started_at: iso(at - cleanup.elapsed_seconds * 1000),
      ended_at: iso(at),
      attributes,
    },
    final: true,
  };
}

/**
 * Findings that decide the verdict: failures and inconclusive evidence.
 * A `note` or `transient` finding is recorded only (the run page shows it
 * as such), so its event is not an error either; leftovers of an
 * incomplete cleanup stay findable as errors through the run's cleanup
 * event. Events written before this rule keep the status they were stored
 * with.
 */
function findingFailed(finding: Finding): boolean {
  return finding.severity === "fail" || finding.severity === "inconclusive";
}

/** Options for {@link createRunTraceSink}. */
export interface RunTraceSinkOptions extends RunTraceIdentity {
  /** Run id; when absent it is taken from the run's verdict event. */
  runId?: string;
  /** Timestamps arriving events (default: the real wall clock). */
  clock?: { wallNow(): Date };
}

/** Collects one run's events and writes them into the observability index. */
export interface RunTraceSink {
  /** Pass as the run's `onEvent`. */
  listener: RunEventListener;
  /**
   * Writes every event that can no longer change and was not written yet
   * (call it periodically, and once after the run); provisions the index.
   */
  flush(): Promise<IngestResult | null>;
  /** The run id the events are filed under, once known. */
  readonly runId: string | null;
}

/** A trace sink for one run (external or reference). */
export function createRunTraceSink(
  db: TraceDb,
  options: RunTraceSinkOptions = {},
): RunTraceSink {
  const timed: TimedRunEvent[] = [];
  const written = new Set<string>();
  const clock = options.clock ?? { wallNow: () => new Date() };
  let runId = options.runId ?? null;
  let chain: Promise<IngestResult | null> = Promise.resolve(null);
  return {
    listener(event) {
      timed.push({ event, at: clock.wallNow().getTime() });
      if (event.type === "verdict") runId ??= event.run_id;
    },
    flush() {
      // A failed batch is reported to its caller; the next flush tries again.
      chain = chain.catch(() => null).then(async () => {
        if (runId === null) return null;
        const fresh = convert(runId, timed, options).filter((c) =>
          c.final && !written.has(c.input.event_id)
        ).map((c) => c.input);
        if (fresh.length === 0) return null;
        await requireObs(db);
        const result = await ingestEvents(db, fresh, { source: "recorder" });
        for (const input of fresh) written.add(input.event_id);
        return result;
      });
      return chain;
    },
    get runId() {
      return runId;
    },
  };
}
