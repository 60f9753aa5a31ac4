/**
 * The observability event model: what one trace event may say, validated once
 * at every boundary (HTTP, OTLP mapping, NDJSON, recorder), and the shape a
 * stored event has when it is read back.
 *
 * Times: inputs carry `started_at` / `ended_at` as ISO 8601 strings with an
 * explicit zone (`Z` or `+hh:mm`) naming a real date and time from 1970
 * through 2100; they are stored as epoch milliseconds and read back as
 * `toISOString()` values. An event without `started_at` is placed at the
 * moment it was received.
 *
 * Ids are well-formed Unicode without control, separator or bidi
 * characters, so what is stored is what was sent and what a terminal shows
 * is what is stored.
 *
 * Content never enters the index: `preview` is the only field that may hold
 * user or model text, and it is stored apart from every metadata table.
 *
 * @module
 */

import * as v from "valibot";
import { objectIssueMessage } from "../issues.ts";

/** Stores an event may belong to. */
export const STORES = ["trace", "conversation", "tool_log"] as const;
/** One of {@link STORES}. */
export type StoreName = typeof STORES[number];

/** Span-style statuses (the OpenTelemetry status codes, lower-cased). */
export const EVENT_STATUSES = ["unset", "ok", "error"] as const;
/** One of {@link EVENT_STATUSES}. */
export type EventStatus = typeof EVENT_STATUSES[number];

/** Kinds the recorder emits; `kind` accepts any lower-case token beyond these. */
export const KNOWN_EVENT_KINDS = [
  "intent",
  "retrieval",
  "selection",
  "memory_search",
  "memory_write",
  "memory_update",
  "memory_delete",
  "llm_call",
  "tool_call",
  "delivery",
  "artifact_persisted",
  "trace_context_missing",
] as const;

/** How a resource took part in an event (lineage lanes). */
export const RESOURCE_ROLES = [
  "expected",
  "retrieved",
  "supplied",
  "output_bound",
  "written",
  "deleted",
  "referenced",
] as const;
/** One of {@link RESOURCE_ROLES}. */
export type ResourceRole = typeof RESOURCE_ROLES[number];

/** Why a selection candidate was kept or dropped. */
export const SELECTION_REASONS = [
  "mmr_rank",
  "provider_rank",
  "conversation_history",
  "exact_duplicate",
  "near_duplicate",
  "parent_duplicate",
  "budget_exhausted",
  "below_threshold",
  "canonical_source",
  "wrong_thread",
  "wrong_tenant",
  "stale_version",
  "application_policy",
] as const;
/** One of {@link SELECTION_REASONS}. */
export type SelectionReason = typeof SELECTION_REASONS[number];

/** Outcome statuses; a recorded failure is still recorded evidence. */
export const OUTCOME_STATUSES = [
  "success",
  "failure",
  "partial",
  "unknown",
] as const;
/** One of {@link OUTCOME_STATUSES}. */
export type OutcomeStatus = typeof OUTCOME_STATUSES[number];

/** Bounds every writer shares. */
export const LIMITS = {
  idChars: 256,
  previewChars: 16_000,
  previewInputChars: 1_000_000,
  candidates: 64,
  resources: 64,
  attributes: 32,
  attributeValueChars: 256,
} as const;

/** Attribute keys accepted verbatim: operational metadata, never content. */
export const ALLOWED_ATTRIBUTE_KEYS = [
  "gen_ai.operation.name",
  "gen_ai.provider.name",
  "gen_ai.system",
  "gen_ai.request.model",
  "gen_ai.response.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.reasoning.output_tokens",
  "gen_ai.agent.name",
  "gen_ai.tool.call.id",
  "gen_ai.tool.type",
  "gen_ai.data_source.id",
  "gen_ai.memory.store.id",
  "gen_ai.memory.record.id",
  "gen_ai.memory.record.count",
  "openinference.span.kind",
  "ai.operationId",
  "ai.telemetry.functionId",
  "otel.trace_id",
  "otel.span_id",
  "otel.parent_span_id",
  "otel.span_name",
  "otel.scope.name",
  "otel.scope.version",
  "service.name",
  "service.version",
  "deployment.environment",
  "instrumentation.name",
  "instrumentation.version",
  "error.type",
  "http.response.status_code",
  "retrieval.top_k",
  "retrieval.documents.count",
  "budget.tokens",
  "carrier.problem",
  "intent.name",
  "intent.expected_artifact_types",
  "selection.strategy",
] as const;

/**
 * The attributes a model call's model and token usage are stored under,
 * whichever convention sent them (the OTLP mapping writes them under these
 * GenAI names).
 */
export const MODEL_USAGE_ATTRIBUTES = {
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
} as const;

/** The model an event used and the tokens it counted; null where it says nothing. */
export interface ModelUsage {
  /** The model that answered, else the one asked for. */
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
}

/** Reads {@link ModelUsage} from an event's attributes. */
export function modelUsage(attributes: Attributes): ModelUsage {
  const text = (key: string) => {
    const value = attributes[key];
    return typeof value === "string" && value !== "" ? value : null;
  };
  const count = (key: string) => {
    const value = attributes[key];
    return typeof value === "number" && Number.isSafeInteger(value) &&
        value >= 0
      ? value
      : null;
  };
  const keys = MODEL_USAGE_ATTRIBUTES;
  return {
    model: text(keys.responseModel) ?? text(keys.requestModel),
    input_tokens: count(keys.inputTokens),
    output_tokens: count(keys.outputTokens),
  };
}

/**
 * Allowlisted attributes that hold a count (tokens, records, documents, an
 * HTTP status code): a whole number of 0 or more, or `null`. Views and usage
 * totals read them as numbers and leave out anything else, so a `"ten"` or
 * `-5` is refused where it is written rather than shown as nothing later.
 */
export const COUNT_ATTRIBUTE_KEYS = [
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.reasoning.output_tokens",
  "gen_ai.memory.record.count",
  "http.response.status_code",
  "retrieval.top_k",
  "retrieval.documents.count",
  "budget.tokens",
] as const satisfies readonly typeof ALLOWED_ATTRIBUTE_KEYS[number][];

const COUNT_KEYS: ReadonlySet<string> = new Set(COUNT_ATTRIBUTE_KEYS);

/** What a value under a {@link COUNT_ATTRIBUTE_KEYS} key must be, as refusals word it. */
export const COUNT_ATTRIBUTE_RULE =
  "must be a whole number of 0 or more, or null";

/** True when `value` may be stored under `key`: a count key takes a whole number of 0 or more, or `null`; other keys take any scalar. */
export function attributeValueFits(key: string, value: unknown): boolean {
  if (!COUNT_KEYS.has(key) || value === null) return true;
  return typeof value === "number" && Number.isSafeInteger(value) &&
    value >= 0;
}

/** Hosts may add their own non-content attributes under these prefixes. */
export const ALLOWED_ATTRIBUTE_PREFIXES = ["app."] as const;

const ALLOWED_KEYS: ReadonlySet<string> = new Set(ALLOWED_ATTRIBUTE_KEYS);

/** True when `key` may be stored as an attribute (mappers drop the rest). */
export function isAllowedAttributeKey(key: string): boolean {
  if (ALLOWED_KEYS.has(key)) return true;
  return ALLOWED_ATTRIBUTE_PREFIXES.some((prefix) =>
    key.length > prefix.length && key.startsWith(prefix) &&
    /^[a-z0-9_.-]+$/.test(key)
  );
}

/**
 * Characters an id may not hold: C0 and C1 controls (and DEL), the line and
 * paragraph separators, and the bidirectional marks, embeddings, overrides
 * and isolates. Each can forge a log line or make an id display as a
 * different name.
 */
export const UNSAFE_ID_CHAR =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** A lower-case token: a letter, then up to 63 of a-z, 0-9, `_ . : -`. */
export const TOKEN = /^[a-z][a-z0-9_.:-]{0,63}$/;
const ISO_WITH_ZONE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** True when `text` holds no lone surrogate (storage would turn one into U+FFFD). */
export function isWellFormed(text: string): boolean {
  return text.isWellFormed();
}

/** The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function sliceWellFormed(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** An opaque identifier: 1 to 256 characters of well-formed Unicode, none of them a control, separator or bidi character. */
export const OpaqueIdSchema: v.GenericSchema<string> = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.check(
    isWellFormed,
    "must be well-formed Unicode (it holds a lone surrogate)",
  ),
  v.maxLength(LIMITS.idChars, `must be at most ${LIMITS.idChars} characters`),
  v.check(
    (value) => !UNSAFE_ID_CHAR.test(value),
    "must not contain control, line separator or bidirectional formatting characters",
  ),
);

/** A lower-case token such as a kind, stage, resource type or profile name. */
export const TokenSchema: v.GenericSchema<string> = v.pipe(
  v.string("must be a string"),
  v.regex(
    TOKEN,
    "must be a lower-case token (a-z, 0-9, _ . : -), at most 64 characters",
  ),
);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Largest zone offset a timestamp may name, in minutes (UTC+14:00, the easternmost zone in use). */
const MAX_ZONE_OFFSET_MINUTES = 14 * 60;

/** The zone offset of an ISO 8601 timestamp with a zone, as written (`+05:30`); `Z` and a text without one give `null`. */
function zoneOffsetOf(text: string): string | null {
  const match = ISO_WITH_ZONE.exec(text);
  return match && match[7] !== undefined ? text.slice(-6) : null;
}

/** True for no offset (`Z`), or one from -14:00 to +14:00 whose minutes are 00 to 59. */
function offsetInRange(hours?: string, minutes?: string): boolean {
  if (hours === undefined || minutes === undefined) return true;
  const m = Number(minutes);
  return m <= 59 && Number(hours) * 60 + m <= MAX_ZONE_OFFSET_MINUTES;
}

/** True when every field of an ISO 8601 timestamp names a real calendar date and time, its zone offset included. */
export function isRealDateTime(text: string): boolean {
  const match = ISO_WITH_ZONE.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match
    .slice(1).map((part) => part === undefined ? 0 : Number(part));
  const leap = year! % 4 === 0 && (year! % 100 !== 0 || year! % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month! - 1] ?? 0;
  return day! >= 1 && day! <= days && hour! <= 23 && minute! <= 59 &&
    second! <= 59 && offsetInRange(match[7], match[8]);
}

/** An ISO 8601 timestamp with an explicit zone that names a real date and time. */
export const TimestampSchema: v.GenericSchema<string> = v.pipe(
  v.string("must be an ISO 8601 timestamp string"),
  v.regex(
    ISO_WITH_ZONE,
    "must be an ISO 8601 timestamp with a zone, e.g. 2026-09-01T12:00:00Z",
  ),
  v.check(isRealDateTime, (issue) => {
    // Date.parse takes +15:00 and +05:75 and shifts the time by them.
    const offset = zoneOffsetOf(String(issue.input));
    return offset !== null &&
        !offsetInRange(offset.slice(1, 3), offset.slice(4))
      ? `has the zone offset ${offset}, outside -14:00 to +14:00 (minutes 00 to 59); use an offset in that range or Z`
      : "must be a real date and time (no February 30, hour 24 or minute 60)";
  }),
);

/** Earliest event time accepted (inclusive): 1970-01-01T00:00:00Z. */
export const EARLIEST_EVENT_TIME = Date.UTC(1970, 0, 1);
/** Latest event time accepted (exclusive): 2101-01-01T00:00:00Z. */
export const LATEST_EVENT_TIME = Date.UTC(2101, 0, 1);

/**
 * The time of an event: a {@link TimestampSchema} from 1970 through 2100
 * (UTC). Nothing observed can lie outside, and a year-9999 event would sit
 * at the top of every newest-first page.
 */
export const EventTimeSchema: v.GenericSchema<string> = v.pipe(
  TimestampSchema,
  v.check((value) => {
    const ms = Date.parse(value);
    return ms >= EARLIEST_EVENT_TIME && ms < LATEST_EVENT_TIME;
  }, "must lie between 1970-01-01T00:00:00Z and 2100-12-31T23:59:59Z"),
);

/** A typed opaque reference to something the host owns (document, memory record, artifact). */
export const ResourceRefSchema = v.strictObject({
  type: TokenSchema,
  id: OpaqueIdSchema,
  version: v.optional(
    v.pipe(OpaqueIdSchema, v.maxLength(128, "must be at most 128 characters")),
  ),
  role: v.optional(
    v.picklist(RESOURCE_ROLES, `must be one of ${RESOURCE_ROLES.join(", ")}`),
  ),
}, objectIssueMessage());
/** A typed opaque reference to something the host owns. */
export interface ResourceRef {
  /** What it is, as a token: `document`, `memory`, `artifact`, … */
  type: string;
  /** The host's id for it; Trace never resolves it. */
  id: string;
  /** Which version of it, when the host versions it (at most 128 characters). */
  version?: string | undefined;
  /** How it took part in the event: retrieved, supplied, written, deleted, … */
  role?: ResourceRole | undefined;
}

const AttributeValue = v.union([
  v.pipe(
    v.string(),
    v.maxLength(
      LIMITS.attributeValueChars,
      `must be at most ${LIMITS.attributeValueChars} characters`,
    ),
  ),
  v.pipe(v.number(), v.finite("must be finite")),
  v.boolean(),
  v.null(),
], "must be a string, finite number, boolean or null");

/** What `attributes` must be, as refusals word it. */
const ATTRIBUTES_SHAPE = "must be an object of attribute key → value";

const AttributesSchema = v.pipe(
  // valibot's record takes an array as an object and would name its first
  // index as a key that is not allowlisted.
  v.custom<Attributes>(
    (value) =>
      value !== null && typeof value === "object" && !Array.isArray(value),
    ATTRIBUTES_SHAPE,
  ),
  v.record(
    v.pipe(
      v.string(),
      v.check(
        isAllowedAttributeKey,
        "attribute key is not allowlisted; use an app.* key",
      ),
    ),
    AttributeValue,
  ),
  v.check(
    (record) => Object.keys(record).length <= LIMITS.attributes,
    `must have at most ${LIMITS.attributes} keys`,
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const [key, value] of Object.entries(dataset.value)) {
      if (attributeValueFits(key, value)) continue;
      addIssue({
        message: COUNT_ATTRIBUTE_RULE,
        path: [{
          type: "object",
          origin: "value",
          input: dataset.value,
          key,
          value,
        }],
      });
      return;
    }
  }),
);
/** Allowlisted scalar attributes. */
export type Attributes = Record<string, string | number | boolean | null>;

/** A count or rank: a whole number from 0 below 2^53. */
const CountSchema = v.pipe(
  v.number("must be a whole number of 0 or more"),
  v.integer("must be a whole number of 0 or more"),
  v.safeInteger("must be a whole number below 2^53"),
  v.minValue(0, "must be a whole number of 0 or more"),
);

/** One candidate of a selection decision. */
export const SelectionCandidateSchema = v.strictObject({
  ref: ResourceRefSchema,
  rank: v.optional(v.nullable(CountSchema)),
  score: v.optional(
    v.nullable(
      v.pipe(v.number("must be a number or null"), v.finite("must be finite")),
    ),
  ),
  selected: v.boolean("must be true or false"),
  reason: v.picklist(
    SELECTION_REASONS,
    `must be one of ${SELECTION_REASONS.join(", ")}`,
  ),
}, objectIssueMessage());
/** One candidate of a selection decision. */
export interface SelectionCandidate {
  /** The resource considered. */
  ref: ResourceRef;
  /** Its rank among the candidates, from 0; absent or `null` when unranked. */
  rank?: number | null | undefined;
  /** The score it was ranked by, when there was one. */
  score?: number | null | undefined;
  /** Whether it was kept. */
  selected: boolean;
  /** Why it was kept or dropped. */
  reason: SelectionReason;
}

/** Which candidates a runtime or host considered, and why each was kept or dropped. */
export const SelectionSchema = v.strictObject({
  strategy: v.optional(TokenSchema),
  candidates: v.pipe(
    v.array(SelectionCandidateSchema, "must be an array"),
    v.minLength(1, "must list at least one candidate"),
    v.maxLength(
      LIMITS.candidates,
      `must list at most ${LIMITS.candidates} candidates`,
    ),
  ),
  /** Candidates that existed but were not recorded (beyond the bound). */
  omitted_candidates: v.optional(CountSchema),
}, objectIssueMessage());
/** A selection decision: which candidates were considered, and why each was kept or dropped. */
export interface Selection {
  /** How the candidates were chosen, as a token (`mmr`, `top_k`, …). */
  strategy?: string | undefined;
  /** The candidates, 1 to 64. */
  candidates: SelectionCandidate[];
  /** Candidates that existed but were not recorded (beyond the bound). */
  omitted_candidates?: number | undefined;
}

/** Host-verified outcome evidence; `verified: false` records an unverified claim. */
export const OutcomeSchema = v.strictObject({
  verified: v.boolean("must be true or false"),
  status: v.picklist(
    OUTCOME_STATUSES,
    `must be one of ${OUTCOME_STATUSES.join(", ")}`,
  ),
  code: v.optional(TokenSchema),
  artifact: v.optional(ResourceRefSchema),
}, objectIssueMessage());
/** Outcome evidence: what came of an event, and whether the host verified it. */
export interface Outcome {
  /** True when the host checked the outcome; `false` records an unverified claim. */
  verified: boolean;
  /** What came of it. */
  status: OutcomeStatus;
  /** A token naming the outcome more precisely (`refund_issued`, …). */
  code?: string | undefined;
  /** The artifact the outcome produced, when there is one. */
  artifact?: ResourceRef | undefined;
}

const OptionalId = v.optional(v.nullable(OpaqueIdSchema));

/** An event id: an opaque id that can also be the last segment of its page's path. */
const EventIdSchema = v.pipe(
  OpaqueIdSchema,
  v.check(
    (value) => value !== "." && value !== "..",
    'must not be "." or ".." (a browser reads them as the path, not the id)',
  ),
);

/** The event a writer submits. Unknown keys are refused. */
export const EventInputSchema = v.pipe(
  v.strictObject(
    {
      event_id: EventIdSchema,
      application_id: OpaqueIdSchema,
      /** `null` or absent: anonymous. */
      user_id: OptionalId,
      agent_id: OptionalId,
      memory_id: OptionalId,
      thread_id: OptionalId,
      /** Absent: the parent's root when the write finds the parent (`ingest/_roots.ts`), else `event_id`. */
      root_trace_id: OptionalId,
      turn_id: OptionalId,
      run_id: OptionalId,
      parent_event_id: OptionalId,
      kind: TokenSchema,
      /** The coverage stage this event proves; defaults to `kind`. */
      stage: v.optional(v.nullable(TokenSchema)),
      /** The coverage profile this task scope declares (usually on its intent). */
      coverage_profile: v.optional(v.nullable(TokenSchema)),
      status: v.optional(
        v.picklist(
          EVENT_STATUSES,
          `must be one of ${EVENT_STATUSES.join(", ")}`,
        ),
      ),
      tool: OptionalId,
      success: v.optional(v.nullable(v.boolean("must be true, false or null"))),
      started_at: v.optional(v.nullable(EventTimeSchema)),
      ended_at: v.optional(v.nullable(EventTimeSchema)),
      store: v.optional(
        v.picklist(STORES, `must be one of ${STORES.join(", ")}`),
      ),
      resources: v.optional(
        v.pipe(
          v.array(ResourceRefSchema, "must be an array"),
          v.maxLength(
            LIMITS.resources,
            `must list at most ${LIMITS.resources} resources`,
          ),
        ),
      ),
      attributes: v.optional(AttributesSchema),
      selection: v.optional(v.nullable(SelectionSchema)),
      outcome: v.optional(v.nullable(OutcomeSchema)),
      /** Content; truncated to 16,000 characters and stored apart from metadata. */
      preview: v.optional(v.nullable(v.pipe(
        v.string("must be a string"),
        v.maxLength(
          LIMITS.previewInputChars,
          `must be at most ${LIMITS.previewInputChars} characters`,
        ),
      ))),
    },
    objectIssueMessage(),
  ),
  v.check(
    (event) => Boolean(event.agent_id) || Boolean(event.memory_id),
    "agent_id or memory_id is required",
  ),
  v.check(
    (event) =>
      !event.started_at || !event.ended_at ||
      Date.parse(event.ended_at) >= Date.parse(event.started_at),
    "ended_at must not be before started_at",
  ),
);
/**
 * Where an event sits: its tenant, who acted, and the thread, task, turn, run
 * and parent it belongs to. Shared by submitted events and a recorder's
 * context. Ids are opaque strings of 1 to 256 characters; absent and `null`
 * mean the same.
 */
export interface EventScope {
  /** The tenant. */
  application_id: string;
  /** The end user; `null` or absent: anonymous. */
  user_id?: string | null | undefined;
  /** The agent that acted (this or `memory_id` is required by the time an event is recorded). */
  agent_id?: string | null | undefined;
  /** The memory store acted on (this or `agent_id` is required by the time an event is recorded). */
  memory_id?: string | null | undefined;
  /** The conversation. */
  thread_id?: string | null | undefined;
  /** The task scope the event belongs to; absent, the parent's when its parent is in the batch or stored, else `event_id`. */
  root_trace_id?: string | null | undefined;
  /** The turn within the thread. */
  turn_id?: string | null | undefined;
  /** The run (e.g. a deletion contract run) the event belongs to. */
  run_id?: string | null | undefined;
  /** The event this one happened inside. */
  parent_event_id?: string | null | undefined;
}

/**
 * An event as a writer submits it. Either `agent_id` or `memory_id` is
 * required.
 */
export interface EventInput extends EventScope {
  /** The writer's id for the event: the first write wins, an identical retry is a no-op, a changed payload under the same id is refused. */
  event_id: string;
  /** What happened, as a lower-case token (`memory_search`, `llm_call`, … or your own). */
  kind: string;
  /** The coverage stage this event proves; defaults to `kind`. */
  stage?: string | null | undefined;
  /** The coverage profile this task scope declares (usually on its intent). */
  coverage_profile?: string | null | undefined;
  /** Span-style status (default `unset`). */
  status?: EventStatus | undefined;
  /** The tool called, for tool calls. */
  tool?: string | null | undefined;
  /** Whether the operation succeeded, when known. */
  success?: boolean | null | undefined;
  /** ISO 8601 with a zone; absent: the time it was received. */
  started_at?: string | null | undefined;
  /** ISO 8601 with a zone, not before `started_at`. */
  ended_at?: string | null | undefined;
  /** The store it is filed in (default `trace`). */
  store?: StoreName | undefined;
  /** The resources it touched, at most 64. */
  resources?: ResourceRef[] | undefined;
  /** Allowlisted operational attributes (or `app.*` keys), at most 32; never content. */
  attributes?: Attributes | undefined;
  /** The selection decision it made. */
  selection?: Selection | null | undefined;
  /** What came of it. */
  outcome?: Outcome | null | undefined;
  /** Content; truncated to 16,000 characters and stored apart from metadata, expirable on its own. */
  preview?: string | null | undefined;
}
/** An event after validation (before defaults are applied). */
export type ValidEventInput = v.InferOutput<typeof EventInputSchema>;

/** Metadata about a stored preview; the content itself is never part of a read. */
export interface PreviewInfo {
  /** Characters stored. */
  chars: number;
  /** Whether the preview was cut to the bound when it was written. */
  truncated: boolean;
}

/** An event as the index returns it: metadata only, with defaults applied. */
export interface TraceEvent {
  /** Index key: ascending in write order, part of every cursor. */
  seq: number;
  /** The writer's id for the event. */
  event_id: string;
  /** The tenant. */
  application_id: string;
  /** The end user; `null`: anonymous. */
  user_id: string | null;
  /** The agent that acted. */
  agent_id: string | null;
  /** The memory store acted on. */
  memory_id: string | null;
  /** The conversation. */
  thread_id: string | null;
  /** The task scope (when it named none, its parent's, else its own id). */
  root_trace_id: string;
  /** The turn within the thread. */
  turn_id: string | null;
  /** The run the event belongs to. */
  run_id: string | null;
  /** The event this one happened inside. */
  parent_event_id: string | null;
  /** What happened. */
  kind: string;
  /** The coverage stage it proves (its kind unless it named one). */
  stage: string;
  /** The coverage profile its task scope declares. */
  coverage_profile: string | null;
  /** Span-style status. */
  status: EventStatus;
  /** The tool called. */
  tool: string | null;
  /** Whether the operation succeeded, when known. */
  success: boolean | null;
  /** The store it is filed in. */
  store: StoreName;
  /** Ordering time: `started_at`, else `received_at`. */
  ts: string;
  /** When it started, as sent (ISO 8601, UTC). */
  started_at: string | null;
  /** When it ended, as sent (ISO 8601, UTC). */
  ended_at: string | null;
  /** When the index received it. */
  received_at: string;
  /** The resources it touched. */
  resources: ResourceRef[];
  /** Its allowlisted attributes. */
  attributes: Attributes;
  /** The selection decision it made. */
  selection: Selection | null;
  /** What came of it. */
  outcome: Outcome | null;
  /** Whether a preview is stored, and its size; never its content. */
  preview: PreviewInfo | null;
}

// The interfaces above restate what the schemas accept and return, for
// readers of the docs; these lines stop compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _EventInputMatches = Holds<
  Same<EventInput, v.InferInput<typeof EventInputSchema>>
>;
type _ResourceRefMatches = Holds<
  Same<ResourceRef, v.InferOutput<typeof ResourceRefSchema>>
>;
type _SelectionMatches = Holds<
  Same<Selection, v.InferOutput<typeof SelectionSchema>>
>;
type _OutcomeMatches = Holds<
  Same<Outcome, v.InferOutput<typeof OutcomeSchema>>
>;
