/**
 * A run's requests as the waterfall shows them, read from the run's own
 * trace events in the observability index (application `trace`, root trace
 * id = the run id): each request's operation, namespace, start, duration
 * and outcome, grouped by the phase it belongs to. Bounded: at most
 * {@link MAX_RUN_EVENTS} events are read, newest pages first.
 *
 * @module
 */

import type { TraceDb } from "../../lib/db.ts";
import { errorMessage } from "../../lib/errors.ts";
import { queryTraceEvents } from "../../lib/obs/query/mod.ts";
import { ObsNotInitializedError, type TraceEvent } from "../../lib/obs/mod.ts";

/** Most trace events of one run read for the waterfall. */
export const MAX_RUN_EVENTS = 3_000;

/** One request of a run. */
export interface RunRequest {
  /** 1 for the run's first request. */
  n: number;
  op: string;
  namespace: "test" | "control" | null;
  phase: string;
  /** Milliseconds after the run's first event. */
  start_ms: number;
  duration_ms: number;
  /** `ok`, or the failure class (`timeout`, `http_status`, …). */
  outcome: string;
}

/** One phase of a run, with its requests. */
export interface RunPhaseSpan {
  name: string;
  start_ms: number;
  /** `null` while the phase is open. */
  end_ms: number | null;
  requests: RunRequest[];
  failed: number;
}

/** What the index holds of a run's requests. */
export interface RunRequests {
  /**
   * `recorded`: events found; `none`: the index holds no events of this run
   * (tracing was off or failed); `no_index`: this database has no
   * observability index; `unreadable`: reading failed (see `problem`).
   */
  status: "recorded" | "none" | "no_index" | "unreadable";
  /** When the run's first event started (ISO 8601), the zero of `start_ms`. */
  origin: string | null;
  /** Milliseconds from the first event to the last end. */
  span_ms: number;
  phases: RunPhaseSpan[];
  /** Requests in the events read. */
  total: number;
  failed: number;
  /** True when the run had more events than were read. */
  truncated: boolean;
  problem: string | null;
}

/** Reads the run's trace events and arranges its requests by phase. */
export async function loadRunRequests(
  db: TraceDb,
  runId: string,
): Promise<RunRequests> {
  let events: TraceEvent[];
  let truncated: boolean;
  try {
    ({ events, truncated } = await readRunEvents(db, runId));
  } catch (error) {
    if (error instanceof ObsNotInitializedError) return empty("no_index");
    return { ...empty("unreadable"), problem: errorMessage(error) };
  }
  if (events.length === 0) return empty("none");
  return { ...arrange(events), truncated };
}

async function readRunEvents(
  db: TraceDb,
  runId: string,
): Promise<{ events: TraceEvent[]; truncated: boolean }> {
  const events: TraceEvent[] = [];
  let cursor: string | undefined;
  while (events.length < MAX_RUN_EVENTS) {
    const page = await queryTraceEvents(db, {
      application_id: "trace",
      root_trace_id: runId,
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    events.push(...page.events);
    if (!page.next_cursor) {
      return { events: events.reverse(), truncated: false };
    }
    cursor = page.next_cursor;
  }
  return { events: events.reverse(), truncated: true };
}

function empty(status: RunRequests["status"]): RunRequests {
  return {
    status,
    origin: null,
    span_ms: 0,
    phases: [],
    total: 0,
    failed: 0,
    truncated: false,
    problem: null,
  };
}

/** Events in time order → phases with their requests. */
export function arrange(events: readonly TraceEvent[]): RunRequests {
  const times = events.map((e) => Date.parse(e.started_at ?? e.ts));
  const origin = Math.min(...times);
  const end = Math.max(
    ...events.map((e, i) => e.ended_at ? Date.parse(e.ended_at) : times[i]!),
  );
  const phases = new Map<string, RunPhaseSpan>();
  for (const e of events) {
    if (e.kind !== "phase") continue;
    const name = String(e.attributes["app.phase"] ?? e.event_id);
    phases.set(e.event_id, {
      name,
      start_ms: Date.parse(e.started_at ?? e.ts) - origin,
      end_ms: e.ended_at ? Date.parse(e.ended_at) - origin : null,
      requests: [],
      failed: 0,
    });
  }
  const requests = events.filter((e) => e.kind === "request")
    .sort((a, b) => requestNumber(a) - requestNumber(b));
  for (const e of requests) {
    const phase = phases.get(e.parent_event_id ?? "") ?? orphanPhase(phases);
    const request = toRequest(e, phase.name, origin);
    phase.requests.push(request);
    if (request.outcome !== "ok") phase.failed++;
  }
  const list = [...phases.values()].filter((p) =>
    p.requests.length > 0 || p.name !== "other"
  ).sort((a, b) => a.start_ms - b.start_ms);
  return {
    status: "recorded",
    origin: new Date(origin).toISOString(),
    span_ms: Math.max(0, end - origin),
    phases: list,
    total: requests.length,
    failed: list.reduce((n, p) => n + p.failed, 0),
    truncated: false,
    problem: null,
  };
}

/** Requests whose phase event is missing are grouped under `other`. */
function orphanPhase(phases: Map<string, RunPhaseSpan>): RunPhaseSpan {
  let phase = phases.get("");
  if (!phase) {
    phase = {
      name: "other",
      start_ms: 0,
      end_ms: null,
      requests: [],
      failed: 0,
    };
    phases.set("", phase);
  }
  return phase;
}

function requestNumber(event: TraceEvent): number {
  return Number(/:request:(\d+)$/.exec(event.event_id)?.[1] ?? 0);
}

function toRequest(e: TraceEvent, phase: string, origin: number): RunRequest {
  const start = Date.parse(e.started_at ?? e.ts);
  const end = e.ended_at ? Date.parse(e.ended_at) : start;
  const duration = e.attributes["app.duration_ms"];
  const role = e.attributes["app.namespace_role"];
  return {
    n: requestNumber(e),
    op: String(e.attributes["app.op"] ?? e.tool ?? "request"),
    namespace: role === "test" || role === "control" ? role : null,
    phase,
    start_ms: start - origin,
    duration_ms: typeof duration === "number" ? duration : end - start,
    outcome: String(e.attributes["app.outcome"] ?? e.status),
  };
}
