/**
 * Recording a run's trace events: one place wires the trace sink of a run
 * (external or reference) and turns the write into an outcome, so a run's
 * verdict never depends on whether its trace could be written.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { errorMessage } from "../errors.ts";
import type { RunEventListener } from "../runner/events.ts";
import {
  createRunTraceSink,
  type RunTraceSinkOptions,
} from "./trace_events.ts";

/** What became of a run's trace events. */
export type TraceWrite =
  | { status: "written"; events: number }
  | { status: "off" }
  | { status: "failed"; reason: string };

/** Collects one run's events; {@link RunTracer.finish} writes them. */
export interface RunTracer {
  /** Pass as (one of) the run's event listeners; absent when tracing is off. */
  listener: RunEventListener | undefined;
  /** Writes what was collected; never throws. */
  finish(): Promise<TraceWrite>;
}

/** Options for {@link traceRun}. */
export interface TraceRunOptions extends RunTraceSinkOptions {
  /** False turns tracing off (default true). */
  enabled?: boolean;
}

/** A tracer writing one run's lifecycle into the observability index. */
export function traceRun(db: TraceDb, options: TraceRunOptions): RunTracer {
  if (options.enabled === false) {
    return {
      listener: undefined,
      finish: () => Promise.resolve({ status: "off" }),
    };
  }
  const { enabled: _, ...identity } = options;
  const sink = createRunTraceSink(db, identity);
  return {
    listener: sink.listener,
    finish: async () => {
      try {
        const result = await sink.flush();
        return { status: "written", events: result?.inserted ?? 0 };
      } catch (error) {
        return { status: "failed", reason: errorMessage(error) };
      }
    },
  };
}
