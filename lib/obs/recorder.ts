/**
 * The in-process recorder hosts use to write events: a fixed scope (tenant,
 * agent or memory, thread, root) plus methods for intents, selection
 * decisions, coverage profiles and worker hand-offs. Every write goes through
 * {@link ingestEvents}, so recorder events obey the same rules as HTTP ones.
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../db.ts";
import { RefusedError } from "../errors.ts";
import { incrementCounter } from "./counters.ts";
import {
  type CoverageProfileSpec,
  registerCoverageProfile,
  type RegistrationStatus,
} from "./coverage.ts";
import { ingestEvents } from "./ingest.ts";
import {
  type EventInput,
  LIMITS,
  OpaqueIdSchema,
  type SelectionCandidate,
  STORES,
  TokenSchema,
} from "./model.ts";

/** Schema of the scope a recorder writes in; also what a worker carrier holds. */
export const TraceContextSchema = v.strictObject({
  application_id: OpaqueIdSchema,
  user_id: v.optional(v.nullable(OpaqueIdSchema)),
  agent_id: v.optional(v.nullable(OpaqueIdSchema)),
  memory_id: v.optional(v.nullable(OpaqueIdSchema)),
  thread_id: v.optional(v.nullable(OpaqueIdSchema)),
  root_trace_id: v.optional(v.nullable(OpaqueIdSchema)),
  turn_id: v.optional(v.nullable(OpaqueIdSchema)),
  run_id: v.optional(v.nullable(OpaqueIdSchema)),
  parent_event_id: v.optional(v.nullable(OpaqueIdSchema)),
  store: v.optional(v.picklist(STORES)),
});
/** The scope every event of a recorder carries. */
export type TraceContext = v.InferInput<typeof TraceContextSchema>;

/** An event for {@link Recorder.record}: scope comes from the recorder, ids are generated. */
export type RecordEvent = Partial<EventInput> & { kind: string };

/** What a record call stored. */
export interface RecordedEvent {
  event_id: string;
  seq: number;
  /** True when an identical event with this id already existed. */
  duplicate: boolean;
}

/** Options of {@link Recorder.recordIntent}. */
export interface IntentOptions extends Partial<EventInput> {
  expected_artifact_types?: string[];
}

/** A selection decision; more than 64 candidates are cut to the first 64 by rank. */
export interface SelectionDecision {
  strategy?: string;
  candidates: SelectionCandidate[];
}

/** Writes events in one fixed scope. */
export interface Recorder {
  /** The scope this recorder writes in. */
  readonly context: TraceContext;
  /** Records one event in this scope. */
  record(event: RecordEvent): Promise<RecordedEvent>;
  /** Records the task's intent, optionally declaring its coverage profile. */
  recordIntent(intent: string, options?: IntentOptions): Promise<RecordedEvent>;
  /** Records which candidates were considered and why each was kept or dropped. */
  recordSelection(
    decision: SelectionDecision,
    options?: Partial<EventInput>,
  ): Promise<RecordedEvent>;
  /** Registers a coverage profile (pass `replace: true` to change one). */
  registerCoverageProfile(
    name: string,
    spec: CoverageProfileSpec,
  ): Promise<RegistrationStatus>;
  /** A recorder in this scope with other defaults (e.g. a new turn). */
  child(overrides: Partial<TraceContext>): Recorder;
  /** The carrier to hand to a worker (scope only; it grants no access). */
  carrier(): TraceContext;
  /** A recorder for a worker from its carrier; see {@link recorderForWorker}. */
  forWorker(carrier: unknown, fallback?: TraceContext): Promise<Recorder>;
}

/** Creates a recorder writing to `db` in the scope `defaults`. */
export function createRecorder(db: TraceDb, defaults: TraceContext): Recorder {
  const parsed = v.safeParse(TraceContextSchema, defaults);
  if (!parsed.success) {
    throw new RefusedError(
      `Cannot create a recorder: ${
        parsed.issues[0]?.message ?? "invalid scope"
      }`,
    );
  }
  return new ScopedRecorder(db, parsed.output);
}

/**
 * A recorder for a worker. A valid carrier yields its scope; a missing or
 * invalid one records `trace_context_missing` in the fallback scope (which the
 * host must already have authorized) and continues there, or throws when no
 * fallback is given. Carriers never authorize access to resources.
 */
export async function recorderForWorker(
  db: TraceDb,
  carrier: unknown,
  fallback?: TraceContext,
): Promise<Recorder> {
  const parsed = carrier === undefined || carrier === null
    ? null
    : v.safeParse(TraceContextSchema, carrier);
  if (parsed?.success) return new ScopedRecorder(db, parsed.output);
  const problem = parsed === null ? "missing" : "invalid";
  if (!fallback) {
    throw new RefusedError(
      `Cannot trace the worker: its trace carrier is ${problem}; pass an authorized fallback context`,
    );
  }
  const recorder = createRecorder(db, fallback);
  incrementCounter("context_missing");
  await recorder.record({
    kind: "trace_context_missing",
    status: "error",
    attributes: { "carrier.problem": problem },
  });
  return recorder;
}

class ScopedRecorder implements Recorder {
  #db: TraceDb;
  readonly context: TraceContext;

  constructor(db: TraceDb, context: TraceContext) {
    this.#db = db;
    this.context = context;
  }

  async record(event: RecordEvent): Promise<RecordedEvent> {
    const input = {
      ...withoutUndefined(this.context),
      event_id: crypto.randomUUID(),
      started_at: new Date().toISOString(),
      ...withoutUndefined(event),
    };
    const result = await ingestEvents(this.#db, [input], {
      source: "recorder",
    });
    const item = result.items[0]!;
    return {
      event_id: item.event_id,
      seq: item.seq,
      duplicate: item.duplicate,
    };
  }

  recordIntent(
    intent: string,
    options: IntentOptions = {},
  ): Promise<RecordedEvent> {
    const { expected_artifact_types: types, attributes, ...rest } = options;
    const name = v.parse(TokenSchema, intent);
    return this.record({
      kind: "intent",
      ...rest,
      attributes: {
        "intent.name": name,
        ...(types?.length
          ? { "intent.expected_artifact_types": types.join(",") }
          : {}),
        ...attributes,
      },
    });
  }

  recordSelection(
    decision: SelectionDecision,
    options: Partial<EventInput> = {},
  ): Promise<RecordedEvent> {
    const ranked = [...decision.candidates].sort((a, b) =>
      (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER)
    );
    const kept = ranked.slice(0, LIMITS.candidates);
    const omitted = ranked.length - kept.length;
    return this.record({
      kind: "selection",
      ...options,
      selection: {
        ...(decision.strategy ? { strategy: decision.strategy } : {}),
        candidates: kept,
        ...(omitted > 0 ? { omitted_candidates: omitted } : {}),
      },
    });
  }

  registerCoverageProfile(
    name: string,
    spec: CoverageProfileSpec,
  ): Promise<RegistrationStatus> {
    return registerCoverageProfile(this.#db, name, spec);
  }

  child(overrides: Partial<TraceContext>): Recorder {
    return createRecorder(this.#db, {
      ...this.context,
      ...withoutUndefined(overrides),
    });
  }

  carrier(): TraceContext {
    return { ...this.context };
  }

  forWorker(carrier: unknown, fallback?: TraceContext): Promise<Recorder> {
    return recorderForWorker(this.#db, carrier, fallback);
  }
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(([, member]) => member !== undefined),
  ) as T;
}
