/** Lifecycle events a run emits: progress lines, trace events and tests all listen here. */

import { cleanupPastBoundMs, RUN_POLL_REQUESTS } from "./_interrupt_bounds.ts";
import type { Operation } from "../contract/protocol.ts";
import type { ControlState } from "./control_state.ts";
import type {
  Cleanup,
  Finding,
  RequestErrorRecord,
  Sample,
  Verdict,
} from "./report.ts";

/** Phases of a run, in order. */
export type RunPhase =
  | "ingest"
  | "baseline"
  | "delete"
  | "window"
  | "cleanup"
  | "done";

/**
 * The longest an interrupted run may still take, in seconds: its
 * `bound_seconds`, then cleanup's deletions and last poll, each request
 * given a second past that bound.
 */
export function interruptedRunMaxSeconds(boundSeconds: number): number {
  return boundSeconds + cleanupPastBoundMs(RUN_POLL_REQUESTS) / 1000;
}

/** One thing that happened during a run. */
export type RunEvent =
  | { type: "phase"; phase: RunPhase; at_ms: number }
  | {
    type: "request";
    op: Operation;
    namespace: "test" | "control";
    started_ms: number;
    duration_ms: number;
    outcome: "ok" | RequestErrorRecord["failure"];
  }
  | {
    /**
     * The answer of the latest `request` of this operation and namespace
     * was not read after all: its search was cut short or failed, or it
     * echoed the bearer token and showed no marker. That request counts as
     * failed, with this failure class.
     */
    type: "answer_unread";
    op: "query" | "inventory";
    namespace: "test" | "control";
    failure: RequestErrorRecord["failure"];
  }
  | {
    type: "sample";
    sample: Sample;
    window_seconds: number;
    /** What the sample showed of the control namespace, against the baseline's. */
    control: ControlState;
  }
  | {
    type: "interrupted";
    /** The phase the interrupt stopped. */
    phase: RunPhase;
    at_ms: number;
    /**
     * How long the run may still take: the request in flight is called off
     * and cleanup ends by then (the smaller of the window and 30 s), but for
     * cleanup's deletions and last poll, still sent with 1 s each when it
     * has passed ({@link interruptedRunMaxSeconds} adds those).
     */
    bound_seconds: number;
  }
  | {
    /** Cleanup starts: every issued id is deleted, then both namespaces are polled. */
    type: "cleanup_started";
    /**
     * Polling stops when both namespaces are clean, as long after the last
     * deletion as the window saw the application still changing, or when a
     * poll starts at or after this. After an interrupt, what is left of its
     * bound (0 when the request in flight used all of it: cleanup then
     * deletes and polls once).
     */
    limit_seconds: number;
    /**
     * How long after the last deletion a clean poll is trusted: as long as
     * the window saw the counts still changing (0 after an interrupt).
     */
    settle_seconds: number;
    /** Whether an interrupt shortened the limit. */
    interrupted: boolean;
  }
  | {
    type: "cleanup_poll";
    /** 1 for the first poll. */
    poll: number;
    /** When the poll started, in seconds since cleanup began. */
    at_seconds: number;
    /** The limit at that poll (an interrupt during cleanup lowers it). */
    limit_seconds: number;
    /** Both namespaces read zero everywhere and neither marker was retrievable. */
    clean: boolean;
    /**
     * Namespaces whose records came back after a clean poll (the
     * application wrote them again), deleted again after this poll.
     */
    deleted_again: ("test" | "control")[];
  }
  | { type: "finding"; finding: Finding }
  | { type: "cleanup"; cleanup: Cleanup }
  | { type: "verdict"; verdict: Verdict; run_id: string };

/** Receives run events; must not throw (errors are swallowed by the engine). */
export type RunEventListener = (event: RunEvent) => void;
