/** Lifecycle events a run emits: progress lines, trace events and tests all listen here. */

import type { Operation } from "../contract/protocol.ts";
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
  | { type: "sample"; sample: Sample; window_seconds: number }
  | { type: "finding"; finding: Finding }
  | { type: "cleanup"; cleanup: Cleanup }
  | { type: "verdict"; verdict: Verdict; run_id: string };

/** Receives run events; must not throw (errors are swallowed by the engine). */
export type RunEventListener = (event: RunEvent) => void;
