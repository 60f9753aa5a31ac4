/**
 * The in-process recorder hosts use to write events: a fixed scope (tenant,
 * agent or memory, thread, root) plus methods for intents, selection
 * decisions, coverage profiles and worker hand-offs. Every write goes through
 * {@link ingestEvents}, so recorder events obey the same rules as HTTP ones.
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../../db.ts";
import { ConfigError, RefusedError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import { incrementCounter } from "../counters.ts";
import {
  type CoverageProfileSpec,
  registerCoverageProfile,
  type RegistrationStatus,
} from "../coverage.ts";
import { ingestEvents } from "./ingest.ts";
import {
  type EventInput,
  type EventScope,
  LIMITS,
  OpaqueIdSchema,
  type SelectionCandidate,
  type StoreName,
  STORES,
  TokenSchema,
} from "../model.ts";

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
/** The scope every event of a recorder carries ({@link TraceContextSchema}). */
export interface TraceContext extends EventScope {
  /** The store events go to (default `trace`). */
  store?: StoreName | undefined;
}

// The interface above states the schema's input type in words; this fails to
// compile when the two part.
const _sameShape: [TraceContext, v.InferInput<typeof TraceContextSchema>] = [
  {} as v.InferInput<typeof TraceContextSchema>,
  {} as TraceContext,
];

/** Scope keys that name the tenant: only the recorder's context sets them. */
export const TENANT_SCOPE_KEYS = ["application_id", "user_id"] as const;
/** One of {@link TENANT_SCOPE_KEYS}. */
export type TenantScopeKey = typeof TENANT_SCOPE_KEYS[number];

/** Event fields a recorder call may set: everything but the tenant scope and the kind. */
export type RecordOptions = Omit<Partial<EventInput>, TenantScopeKey | "kind">;

/** An event for {@link Recorder.record}: the tenant comes from the recorder, ids are generated. */
export type RecordEvent = RecordOptions & { kind: string };

/** What a record call stored. */
export interface RecordedEvent {
  /** The event's id (generated unless given). */
  event_id: string;
  /** Its key in the index. */
  seq: number;
  /** True when an identical event with this id already existed. */
  duplicate: boolean;
}

/** Options of {@link Recorder.recordIntent}. */
export interface IntentOptions extends RecordOptions {
  /** Artifact types the task is expected to produce (`intent.expected_artifact_types`). */
  expected_artifact_types?: string[];
}

/** A selection decision; more than 64 candidates are cut to the first 64 by rank. */
export interface SelectionDecision {
  /** How candidates were chosen (a lower-case token). */
  strategy?: string;
  /** The candidates considered, kept or dropped, each with its reason. */
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
    options?: RecordOptions,
  ): Promise<RecordedEvent>;
  /** Registers a coverage profile of this recorder's application (pass `replace: true` to change one). */
  registerCoverageProfile(
    name: string,
    spec: Omit<CoverageProfileSpec, "application_id">,
  ): Promise<RegistrationStatus>;
  /** A recorder in this tenant scope with other defaults (e.g. a new turn). */
  child(overrides: Omit<Partial<TraceContext>, TenantScopeKey>): Recorder;
  /** The carrier to hand to a worker (scope only; it grants no access). */
  carrier(): TraceContext;
  /**
   * A recorder for a worker from its carrier, in this recorder's tenant only:
   * a carrier of another tenant counts as invalid (see {@link recorderForWorker}),
   * and a fallback of another tenant is refused.
   */
  forWorker(carrier: unknown, fallback?: TraceContext): Promise<Recorder>;
}

/** Creates a recorder writing to `db` in the scope `defaults`. */
export function createRecorder(db: TraceDb, defaults: TraceContext): Recorder {
  const parsed = v.safeParse(TraceContextSchema, defaults);
  if (!parsed.success) {
    throw new ConfigError(
      `Cannot create a recorder: ${describeIssues(parsed.issues)}`,
    );
  }
  return new ScopedRecorder(db, parsed.output);
}

/** Why a worker's carrier was not used. */
type CarrierProblem = "missing" | "invalid" | "foreign_tenant";

const CARRIER_PROBLEMS: Record<CarrierProblem, string> = {
  missing: "missing",
  invalid: "invalid",
  foreign_tenant: "of another tenant",
};

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
  return await workerRecorder(db, carrier, fallback, null);
}

/** {@link recorderForWorker}, treating a carrier outside `tenant` (when given) as invalid. */
async function workerRecorder(
  db: TraceDb,
  carrier: unknown,
  fallback: TraceContext | undefined,
  tenant: TraceContext | null,
): Promise<Recorder> {
  const parsed = carrier === undefined || carrier === null
    ? null
    : v.safeParse(TraceContextSchema, carrier);
  let problem: CarrierProblem = parsed === null ? "missing" : "invalid";
  if (parsed?.success) {
    if (tenant === null || sameTenant(parsed.output, tenant)) {
      return new ScopedRecorder(db, parsed.output);
    }
    problem = "foreign_tenant";
  }
  if (!fallback) {
    throw new RefusedError(
      `Cannot trace the worker: its trace carrier is ${
        CARRIER_PROBLEMS[problem]
      }; pass an authorized fallback context`,
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
    refuseTenantKeys(event, "record an event");
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

  async recordIntent(
    intent: string,
    options: IntentOptions = {},
  ): Promise<RecordedEvent> {
    const { expected_artifact_types: types, attributes, ...rest } = options;
    const parsed = v.safeParse(TokenSchema, intent);
    if (!parsed.success) {
      throw new ConfigError(
        `Cannot record the intent: intent: ${
          parsed.issues[0]?.message ?? "invalid value"
        }`,
      );
    }
    const name = parsed.output;
    return await this.record({
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
    options: RecordOptions = {},
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
    spec: Omit<CoverageProfileSpec, "application_id">,
  ): Promise<RegistrationStatus> {
    const { application_id: given } = spec as CoverageProfileSpec;
    if (given !== undefined && given !== this.context.application_id) {
      return Promise.reject(
        new RefusedError(
          `Cannot register coverage profile "${name}": application_id comes from the recorder's scope; remove it`,
        ),
      );
    }
    return registerCoverageProfile(this.#db, name, {
      ...spec,
      application_id: this.context.application_id,
    });
  }

  child(overrides: Omit<Partial<TraceContext>, TenantScopeKey>): Recorder {
    refuseTenantKeys(overrides, "derive a recorder");
    return createRecorder(this.#db, {
      ...this.context,
      ...withoutUndefined(overrides),
    });
  }

  carrier(): TraceContext {
    return { ...this.context };
  }

  forWorker(carrier: unknown, fallback?: TraceContext): Promise<Recorder> {
    if (fallback && !sameTenant(fallback, this.context)) {
      return Promise.reject(
        new RefusedError(
          "Cannot trace the worker: the fallback context belongs to another tenant (application_id or user_id differs); pass a fallback in this recorder's tenant",
        ),
      );
    }
    return workerRecorder(this.#db, carrier, fallback, this.context);
  }
}

/** True when both scopes name the same application and user (absent user = anonymous). */
function sameTenant(a: TraceContext, b: TraceContext): boolean {
  return a.application_id === b.application_id &&
    (a.user_id ?? null) === (b.user_id ?? null);
}

/** Refuses tenant keys a caller tried to set itself (TypeScript stops typed callers; this stops the rest). */
function refuseTenantKeys(value: object, action: string): void {
  const given = TENANT_SCOPE_KEYS.filter((key) =>
    (value as Record<string, unknown>)[key] !== undefined
  );
  if (given.length > 0) {
    throw new RefusedError(
      `Cannot ${action}: ${
        given.join(" and ")
      } come from the recorder's scope; remove ${
        given.length > 1 ? "them" : "it"
      } or create a recorder for that scope`,
    );
  }
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(([, member]) => member !== undefined),
  ) as T;
}
