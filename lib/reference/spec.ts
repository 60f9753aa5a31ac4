/**
 * What a reference system is: its expected outcome, its timing and how an
 * instance is built. Kept apart from the list of systems so that systems
 * defined elsewhere (Trace's own index) can use the shapes without the list.
 *
 * @module
 */

import type { StagingTransport } from "../contract/protocol.ts";
import type { RunEventListener } from "../runner/events.ts";
import type { RunState, Verdict } from "../runner/report.ts";
import type {
  MemoryBehaviour,
  MemoryPipeline,
  StoredCounts,
} from "../memory/mod.ts";
import type { VirtualTime } from "./virtual_time.ts";

/** How a PASS is qualified: at once, after a transient residual, or only because of a blind spot. */
export const QUALIFIERS = ["immediate", "transient", "blind_spot"] as const;

/** One of {@link QUALIFIERS}. */
export type Qualifier = typeof QUALIFIERS[number];

/** The outcome a correct checker reaches on a system. */
export interface Expectation {
  /** The verdict. */
  verdict: Verdict;
  /** Only for PASS. */
  qualifier: Qualifier | null;
  /** Findings that must be present, as `code:subject` (e.g. `residual_store:cache_records`). */
  findings: string[];
  /** Whether cleanup must confirm that every synthetic record is gone (unchecked when absent). */
  cleanup_complete?: boolean;
  /** The report's state (default `completed`). */
  state?: RunState;
}

/** Timing a reference run uses. */
export interface ReferenceTiming {
  /** Canary documents per run. */
  document_count: number;
  /** The deletion window, in (virtual) seconds. */
  deletion_window_seconds: number;
  /** Seconds between samples. */
  sample_interval_seconds: number;
}

/** What a scenario adds to a run: a hook on its events, and an operator's interrupt. */
export interface ScenarioHooks {
  /** Receives the run's events; barriers are released from here, never by sleeping. */
  onEvent?: RunEventListener;
  /** Aborted by the scenario to interrupt the run (as Ctrl-C would). */
  signal?: AbortSignal;
}

/** A running memory-pipeline system plus the scenario hooks that drive it. */
export interface ReferenceInstance extends ScenarioHooks {
  /** The pipeline under the system's behaviour. */
  system: MemoryPipeline;
}

/**
 * A running system that is not the memory pipeline (Trace's own index): it
 * brings its own in-process transport, which charges its latency to the
 * run's virtual time as the pipeline's transport does.
 */
export interface OwnTransportInstance extends ScenarioHooks {
  /** How the runner reaches the system. */
  transport: StagingTransport;
  /** Records the system still physically holds for a namespace. */
  storedCounts(namespace: string): Promise<StoredCounts>;
  /** Releases what the system holds (its database). */
  close(): void | Promise<void>;
}

/** What every reference system states, whatever runs it. */
export interface ReferenceSystemFields {
  /** Its id, a lower-case token (`correct`, `stale-cache`, …). */
  name: string;
  /** Its name for people. */
  title: string;
  /** What the system does on deletion. */
  behaviour: string;
  /** The outcome a correct checker reaches. */
  expected: Expectation;
  /** Why a correct checker reaches the expected outcome. */
  reason: string;
  /** What the contract cannot observe on this system, when it matters. */
  blind_spot: string | null;
  /** The timing its runs use. */
  timing: ReferenceTiming;
}

/** A reference system built from the one memory pipeline under a behaviour. */
export interface PipelineSystemSpec extends ReferenceSystemFields {
  /** Built from the memory pipeline. */
  kind: "pipeline";
  /** The pipeline behaviour the system is built with. */
  memory_behaviour: MemoryBehaviour;
  /** Builds a fresh instance on `time`'s scheduler. */
  build(time: VirtualTime): Promise<ReferenceInstance>;
}

/** A reference system with an in-process transport of its own. */
export interface OwnTransportSystemSpec extends ReferenceSystemFields {
  /** Reached through a transport of its own. */
  kind: "own_transport";
  /** Builds a fresh instance whose transport charges `time`. */
  build(time: VirtualTime): Promise<OwnTransportInstance>;
}

/** One reference system. */
export type ReferenceSystemSpec = PipelineSystemSpec | OwnTransportSystemSpec;
