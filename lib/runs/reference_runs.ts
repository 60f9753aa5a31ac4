/**
 * Running the reference suite (or some of its systems) as recorded runs:
 * each report goes to the ledger's reference history, apart from external
 * runs, and each run's lifecycle into the observability index, stamped with
 * the system's virtual time.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { recordRun } from "../ledger/runs.ts";
import {
  type ReferenceResult,
  type ReferenceSuiteOptions,
  runReferenceSuite,
} from "../reference/suite.ts";
import {
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
  referenceTargetId,
} from "../reference/systems.ts";
import { type RunTracer, traceRun, type TraceWrite } from "./run_traces.ts";

/** One reference run, recorded. */
export interface RecordedReferenceRun extends ReferenceResult {
  /** What became of its trace events. */
  trace: TraceWrite;
}

/** Options for {@link runReference}. */
export interface RunReferenceOptions
  extends
    Pick<ReferenceSuiteOptions, "transport" | "onEvent" | "signal" | "stop"> {
  /** Systems to run (default: all of them). */
  systems?: readonly ReferenceSystemSpec[];
  /** Write each run's lifecycle into the observability index (default true). */
  trace?: boolean;
  /** Called after each system was run and recorded, before the next one starts. */
  onResult?: (run: RecordedReferenceRun) => void | Promise<void>;
}

/** Runs reference systems one after another and records each run with its trace. */
export async function runReference(
  db: TraceDb,
  options: RunReferenceOptions = {},
): Promise<RecordedReferenceRun[]> {
  const recorded: RecordedReferenceRun[] = [];
  let tracer: RunTracer | null = null;
  await runReferenceSuite({
    systems: options.systems ?? REFERENCE_SYSTEMS,
    ...(options.transport ? { transport: options.transport } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.stop ? { stop: options.stop } : {}),
    onStart: (spec, time) => {
      tracer = traceRun(db, {
        enabled: options.trace !== false,
        clock: time,
        runKind: "reference",
        targetId: referenceTargetId(spec.name),
      });
      return tracer.listener;
    },
    onResult: async (result) => {
      await recordRun(db, result.report);
      const trace = await (tracer as RunTracer | null)?.finish() ??
        { status: "off" as const };
      const run = { ...result, trace };
      recorded.push(run);
      await options.onResult?.(run);
    },
  });
  return recorded;
}
