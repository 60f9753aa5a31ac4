/** What a run will do, computed from config alone: no network, no randomness. */

import type { StagingConfig } from "../contract/config.ts";
import {
  type Operation,
  OPERATIONS,
  PROTOCOL_REVISION,
} from "../contract/protocol.ts";
import type { TargetRef } from "./report.ts";

/** One phase of a run and the requests it may send. */
export interface PlanPhase {
  /** The phase, in run order. */
  phase: "ingest" | "baseline" | "delete" | "window" | "cleanup";
  /** What the phase does, in words. */
  description: string;
  /** Most requests the phase may send. */
  requests: number;
  /** The operations it calls. */
  operations: Operation[];
}

/** The dry-run answer of `external-plan`. */
export interface RunPlan {
  /** The system the run would be about. */
  target: TargetRef;
  /** The adapter contract revision and its operations. */
  protocol: { revision: string; operations: Operation[] };
  /** The namespace patterns (`trace-test-…`, `trace-control-…`); each run draws fresh random ones. */
  namespaces: { test: string; control: string };
  /** The document id and marker patterns. */
  identifiers: { documents: string; markers: string };
  /** The configured timing and the number of samples it gives. */
  timing: {
    document_count: number;
    deletion_window_seconds: number;
    sample_interval_seconds: number;
    timeout_seconds: StagingConfig["timeout_seconds"];
    samples: number;
  };
  /** What each phase sends. */
  phases: PlanPhase[];
  /** Most requests the run may send, and how long they could take if each used its whole timeout. */
  request_budget: { max_requests: number; worst_case_seconds: number };
}

/** Samples in a window: one at once, then every interval until one starts at or after the window. */
export function sampleCount(
  windowSeconds: number,
  intervalSeconds: number,
): number {
  return Math.ceil(windowSeconds / intervalSeconds - 1e-9) + 1;
}

/** Computes the plan of a run against `config` without contacting the target. */
export function planRun(config: StagingConfig, target: TargetRef): RunPlan {
  const samples = sampleCount(
    config.deletion_window_seconds,
    config.sample_interval_seconds,
  );
  const t = config.timeout_seconds;
  const n = config.document_count;
  const phases: PlanPhase[] = [
    phase("ingest", `ingest ${n} canary document(s) and 1 control`, n + 1, [
      "ingest",
    ]),
    phase("baseline", "inventory and query both namespaces (warms caches)", 4, [
      "inventory",
      "query",
    ]),
    phase("delete", `delete the ${n} canary id(s) in the test namespace`, 1, [
      "delete",
    ]),
    phase(
      "window",
      `${samples} sample(s): at once, then every ${config.sample_interval_seconds} s until one starts at or after ${config.deletion_window_seconds} s`,
      samples * 4,
      ["inventory", "query"],
    ),
    phase(
      "cleanup",
      "delete every issued id in both namespaces, then poll both inventories and marker queries through the window",
      2 + samples * 4,
      ["delete", "inventory", "query"],
    ),
  ];
  const worstCase = (n + 1) * t.ingest + 2 * (t.inventory + t.query) +
    t.delete +
    samples * 2 * (t.inventory + t.query) + 2 * t.delete +
    samples * 2 * (t.inventory + t.query) +
    2 * config.deletion_window_seconds;
  return {
    target,
    protocol: { revision: PROTOCOL_REVISION, operations: [...OPERATIONS] },
    namespaces: {
      test: "trace-test-<random>",
      control: "trace-control-<random>",
    },
    identifiers: {
      documents: "trace-doc-<random>",
      markers: "trace_canary_<random>",
    },
    timing: {
      document_count: n,
      deletion_window_seconds: config.deletion_window_seconds,
      sample_interval_seconds: config.sample_interval_seconds,
      timeout_seconds: config.timeout_seconds,
      samples,
    },
    phases,
    request_budget: {
      max_requests: phases.reduce((sum, p) => sum + p.requests, 0),
      worst_case_seconds: Math.round(worstCase * 100) / 100,
    },
  };
}

function phase(
  name: PlanPhase["phase"],
  description: string,
  requests: number,
  operations: Operation[],
): PlanPhase {
  return { phase: name, description, requests, operations };
}
