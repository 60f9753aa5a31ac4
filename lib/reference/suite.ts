/**
 * Runs reference systems through the same engine as external runs. Each run
 * gets a fresh system on its own {@link VirtualTime}, an in-process transport
 * by default (or the system's own, for a system that is not the memory
 * pipeline), the scenario's event hook (barriers), and an in-memory
 * checkpoint; the report is a `reference` report. Recording it (apart from
 * external history) and tracing it is the caller's business: see
 * `lib/runs/reference_runs.ts`.
 *
 * @module
 */

import { parseStagingConfig, type StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import { memoryCheckpointSink } from "../runner/checkpoint.ts";
import { runDeletionContract } from "../runner/engine.ts";
import type { RunEvent, RunEventListener } from "../runner/events.ts";
import type { RunReport, TargetRef } from "../runner/report.ts";
import { evaluateRun, type Evaluation } from "./evaluate.ts";
import type { ReferencePipeline, StoredCounts } from "../memory/pipeline.ts";
import {
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
  referenceTargetId,
} from "./systems.ts";
import { inProcessTransport } from "./transport.ts";
import { VirtualTime } from "./virtual_time.ts";

/** Options for {@link runReferenceSystem}. */
export interface ReferenceRunOptions {
  /**
   * Builds the transport to a memory-pipeline system (default: in-process on
   * virtual time); closed after the run. Systems with a transport of their
   * own are always reached through it.
   */
  transport?: (
    system: ReferencePipeline,
    time: VirtualTime,
  ) => Promise<StagingTransport>;
  /** Receives every run event after the scenario hook has seen it. */
  onEvent?: RunEventListener;
  /** Called before each run starts; a returned listener receives that run's events (trace sinks). */
  onStart?: (
    spec: ReferenceSystemSpec,
    time: VirtualTime,
  ) => RunEventListener | undefined;
  /** Aborting interrupts the run, as Ctrl-C would. */
  signal?: AbortSignal;
}

/** One finished reference run. */
export interface ReferenceResult {
  /** The system's name. */
  system: string;
  /** The run's report (its times are virtual). */
  report: RunReport;
  /** How the report compares with the system's expectation. */
  evaluation: Evaluation;
  /** Records the system still physically held for the test namespace after the run. */
  hidden: StoredCounts;
}

/** The staging config a reference system is run with. */
export function referenceConfig(spec: ReferenceSystemSpec): StagingConfig {
  return parseStagingConfig({
    base_url: referenceBaseUrl(spec.name),
    environment: "staging",
    allow_synthetic_writes: true,
    ...spec.timing,
  }, `reference system ${spec.name}`);
}

/** The (never contacted) URL reference reports name as their target. */
export function referenceBaseUrl(name: string): string {
  return `http://127.0.0.1/reference/${name}`;
}

/** The report target of a reference system. */
export function referenceTarget(spec: ReferenceSystemSpec): TargetRef {
  return {
    id: referenceTargetId(spec.name),
    base_url: referenceBaseUrl(spec.name),
    source: "reference",
  };
}

/** Runs one reference system end to end and compares the outcome with its expectation. */
export async function runReferenceSystem(
  spec: ReferenceSystemSpec,
  options: ReferenceRunOptions = {},
): Promise<ReferenceResult> {
  const time = new VirtualTime();
  const running = await start(spec, options, time);
  try {
    const extra = options.onStart?.(spec, time);
    const listeners = [running.onEvent, extra, options.onEvent].filter((
      l,
    ): l is RunEventListener => l !== undefined);
    const signals = [options.signal, running.signal].filter((
      s,
    ): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const report = await runDeletionContract(referenceConfig(spec), {
      transport: running.transport,
      target: referenceTarget(spec),
      checkpoint: memoryCheckpointSink(),
      kind: "reference",
      clock: time,
      onEvent: (event: RunEvent) => {
        for (const listener of listeners) listener(event);
      },
      ...(signal ? { signal } : {}),
    });
    const hidden = await running.storedCounts(report.namespaces.test);
    return {
      system: spec.name,
      report,
      evaluation: evaluateRun(spec, report, hidden),
      hidden,
    };
  } finally {
    await running.close();
  }
}

/** A started system, whatever kind: how to reach it, what it still holds, how to stop it. */
interface Running {
  transport: StagingTransport;
  onEvent: RunEventListener | undefined;
  signal: AbortSignal | undefined;
  storedCounts(namespace: string): Promise<StoredCounts>;
  close(): Promise<void>;
}

/**
 * Builds the system on `time`. A pipeline system is reached in process (or
 * through `options.transport`); a system with a transport of its own is
 * always reached through that one.
 */
async function start(
  spec: ReferenceSystemSpec,
  options: ReferenceRunOptions,
  time: VirtualTime,
): Promise<Running> {
  if (spec.kind === "own_transport") {
    const instance = await spec.build(time);
    return {
      transport: instance.transport,
      onEvent: instance.onEvent,
      signal: instance.signal,
      storedCounts: (namespace) => instance.storedCounts(namespace),
      close: async () => {
        try {
          await instance.transport.close?.();
        } finally {
          await instance.close();
        }
      },
    };
  }
  const instance = await spec.build(time);
  const { system } = instance;
  let transport: StagingTransport;
  try {
    transport = options.transport
      ? await options.transport(system, time)
      : inProcessTransport(system, { time });
  } catch (error) {
    system.close();
    throw error;
  }
  return {
    transport,
    onEvent: instance.onEvent,
    signal: instance.signal,
    storedCounts: (namespace) =>
      Promise.resolve(system.storedCounts(namespace)),
    close: async () => {
      try {
        await transport.close?.();
      } finally {
        system.close();
      }
    },
  };
}

/** Options for {@link runReferenceSuite}. */
export interface ReferenceSuiteOptions extends ReferenceRunOptions {
  /** Systems to run (default: all of them). */
  systems?: readonly ReferenceSystemSpec[];
  /** Called after each system finished, before the next one starts. */
  onResult?: (result: ReferenceResult) => void | Promise<void>;
  /**
   * Aborting starts no further system. The one running finishes: its run
   * takes a moment of real time, and cutting it short would record an
   * interrupted run that reads as a checker bug.
   */
  stop?: AbortSignal;
}

/** Runs systems one after another, until `stop` aborts. */
export async function runReferenceSuite(
  options: ReferenceSuiteOptions = {},
): Promise<ReferenceResult[]> {
  const results: ReferenceResult[] = [];
  for (const spec of options.systems ?? REFERENCE_SYSTEMS) {
    if (options.stop) {
      // A run on virtual time never waits for the event loop, so a signal
      // that arrived meanwhile is only seen after a turn of it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (options.stop.aborted) break;
    }
    const result = await runReferenceSystem(spec, options);
    await options.onResult?.(result);
    results.push(result);
  }
  return results;
}
