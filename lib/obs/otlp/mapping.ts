/**
 * Maps decoded OTLP spans onto trace events, following the OpenTelemetry
 * GenAI semantic conventions and OpenInference:
 *
 * - scope: resource `tenant.id` / `application.id` → `application_id`;
 *   `gen_ai.agent.id` (else `gen_ai.agent.name`, else the resource's
 *   `service.name`, reported back as a warning) → `agent_id`;
 *   `gen_ai.memory.store.id` → `memory_id`;
 *   `gen_ai.conversation.id` / `session.id` → `thread_id`;
 *   `user.id` / `enduser.id` → `user_id` (absent: anonymous).
 * - identity: `otlp:<trace id>:<span id>` → `event_id` (and the parent span
 *   likewise → `parent_event_id`), the trace id → `root_trace_id`.
 * - kind: `gen_ai.operation.name`, else `openinference.span.kind`; the store
 *   follows the kind (`tool_log` for tool calls, `conversation` for model
 *   calls, `trace` otherwise).
 * - content attributes go only into `preview`; other attributes are kept
 *   only when the model allowlists them.
 *
 * A span without a tenant or an agent/memory scope cannot be mapped, and a
 * mapped event that fails validation refuses the whole request, naming the
 * span and the field.
 *
 * @module
 */

import * as v from "valibot";
import { issuePath } from "../../issues.ts";
import {
  type Attributes,
  type EventInput,
  EventInputSchema,
  type EventStatus,
  isAllowedAttributeKey,
  LIMITS,
  sliceWellFormed,
  type StoreName,
} from "../model.ts";
import { spanPreview } from "./_content.ts";
import type { OtlpAttributes, OtlpSpan, OtlpValue } from "./decode.ts";
import { OtlpRequestError } from "./error.ts";
import { spanResources } from "./_resources.ts";

/** Options for {@link mapOtlpSpans}. */
export interface OtlpMappingOptions {
  /** Tenant for spans whose resource names none (without it such spans are refused). */
  defaultApplicationId?: string;
}

/** Events mapped from one request, plus notes worth returning to the sender. */
export interface OtlpMapping {
  events: EventInput[];
  /** Non-fatal notes (fallbacks taken, references dropped); content-free. */
  warnings: string[];
}

/** `gen_ai.operation.name` values and the event kinds they map to. */
export const OPERATION_KINDS: Readonly<Record<string, string>> = {
  search_memory: "memory_search",
  create_memory: "memory_write",
  update_memory: "memory_update",
  delete_memory: "memory_delete",
  chat: "llm_call",
  text_completion: "llm_call",
  generate_content: "llm_call",
  execute_tool: "tool_call",
  invoke_agent: "agent_invocation",
  create_agent: "agent_creation",
  invoke_workflow: "workflow_invocation",
  embeddings: "embedding",
  retrieval: "retrieval",
};

/** `openinference.span.kind` values and the event kinds they map to. */
export const OPENINFERENCE_KINDS: Readonly<Record<string, string>> = {
  LLM: "llm_call",
  TOOL: "tool_call",
  RETRIEVER: "retrieval",
  RERANKER: "selection",
  EMBEDDING: "embedding",
  AGENT: "agent_invocation",
  CHAIN: "chain",
  GUARDRAIL: "guardrail",
  EVALUATOR: "evaluation",
  PROMPT: "prompt",
};

const STORE_OF_KIND: Readonly<Record<string, StoreName>> = {
  tool_call: "tool_log",
  llm_call: "conversation",
};

const STATUS_OF_CODE: readonly EventStatus[] = ["unset", "ok", "error"];

/** Kind for spans that say nothing about what they did. */
const DEFAULT_KIND = "span";

/** Maps every span to an event; throws {@link OtlpRequestError} naming the first span that cannot be mapped. */
export function mapOtlpSpans(
  spans: readonly OtlpSpan[],
  options: OtlpMappingOptions = {},
): OtlpMapping {
  const notes = { serviceAsAgent: 0, droppedRefs: 0 };
  const events = spans.map((span) => {
    const { event, usedServiceAsAgent, droppedRefs } = mapSpan(span, options);
    if (usedServiceAsAgent) notes.serviceAsAgent += 1;
    notes.droppedRefs += droppedRefs;
    checkEvent(span, event);
    return event;
  });
  const warnings: string[] = [];
  if (notes.serviceAsAgent > 0) {
    warnings.push(
      `${
        count(notes.serviceAsAgent, "span")
      } had no gen_ai.agent.id; service.name was used as agent_id`,
    );
  }
  if (notes.droppedRefs > 0) {
    warnings.push(
      `${
        count(notes.droppedRefs, "resource reference")
      } invalid or beyond ${LIMITS.resources} per span left out`,
    );
  }
  return { events, warnings };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

interface MappedSpan {
  event: EventInput;
  usedServiceAsAgent: boolean;
  droppedRefs: number;
}

function mapSpan(span: OtlpSpan, options: OtlpMappingOptions): MappedSpan {
  const read = reader(span);
  const kind = spanKind(span.attributes);
  const agent = read.span("gen_ai.agent.id", "gen_ai.agent.name", "agent.name");
  const memory = read.span("gen_ai.memory.store.id");
  const service = read.resource("service.name");
  const usedServiceAsAgent = !agent && !memory && service !== null;
  const { resources, selection, dropped } = spanResources(
    span.attributes,
    kind,
  );
  const status = STATUS_OF_CODE[span.statusCode] ?? "unset";
  const event: EventInput = {
    event_id: eventId(span.traceId, span.spanId),
    application_id: read.resource("tenant.id", "application.id") ??
      read.span("tenant.id", "application.id") ??
      options.defaultApplicationId ??
      missing(
        span,
        "application_id",
        "tenant.id or application.id resource attribute",
      ),
    user_id: read.span("user.id", "enduser.id") ??
      read.resource("user.id", "enduser.id"),
    agent_id: agent ?? (usedServiceAsAgent ? service : null) ??
      (memory ? null : missing(
        span,
        "agent_id",
        "gen_ai.agent.id, gen_ai.memory.store.id or service.name attribute",
      )),
    memory_id: memory,
    thread_id: read.span("gen_ai.conversation.id", "session.id") ??
      read.resource("gen_ai.conversation.id", "session.id"),
    root_trace_id: span.traceId,
    parent_event_id: span.parentSpanId
      ? eventId(span.traceId, span.parentSpanId)
      : null,
    kind,
    status,
    tool: read.span("gen_ai.tool.name", "tool.name"),
    success: status === "ok" ? true : status === "error" ? false : null,
    started_at: isoFromNanos(span.startTimeUnixNano),
    ended_at: isoFromNanos(span.endTimeUnixNano),
    store: STORE_OF_KIND[kind] ?? "trace",
    resources,
    attributes: spanAttributes(span),
    selection,
    preview: spanPreview(span),
  };
  return { event, usedServiceAsAgent, droppedRefs: dropped };
}

/** Event ids are namespaced so a span can never take an id an API writer chose. */
function eventId(traceId: string, spanId: string): string {
  return `otlp:${traceId}:${spanId}`;
}

function spanKind(attributes: OtlpAttributes): string {
  const operation = attributes.get("gen_ai.operation.name");
  if (typeof operation === "string" && operation !== "") {
    return OPERATION_KINDS[operation] ?? asToken(operation) ?? DEFAULT_KIND;
  }
  const openInference = attributes.get("openinference.span.kind");
  if (typeof openInference === "string" && openInference !== "") {
    return OPENINFERENCE_KINDS[openInference.toUpperCase()] ??
      asToken(openInference) ?? DEFAULT_KIND;
  }
  return DEFAULT_KIND;
}

/** An unknown operation name kept as a kind when it already is a valid token. */
function asToken(name: string): string | null {
  const token = name.toLowerCase();
  return /^[a-z][a-z0-9_.:-]{0,63}$/.test(token) ? token : null;
}

function reader(span: OtlpSpan) {
  const first = (attributes: OtlpAttributes, keys: string[]) => {
    for (const key of keys) {
      const value = attributes.get(key);
      if (typeof value === "string" && value !== "") return value;
      if (typeof value === "number" && Number.isFinite(value)) {
        return String(value);
      }
    }
    return null;
  };
  return {
    span: (...keys: string[]) => first(span.attributes, keys),
    resource: (...keys: string[]) => first(span.resource, keys),
  };
}

function missing(span: OtlpSpan, field: string, need: string): never {
  throw new OtlpRequestError(
    `Cannot map OTLP span ${span.index} (${span.path}): ${field}: the span has no ${need}; set it and resend the batch`,
  );
}

function isoFromNanos(nanos: bigint): string | null {
  if (nanos <= 0n) return null;
  const date = new Date(Number(nanos / 1_000_000n));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Allowlisted attributes: span identity first, then resource, then span attributes. */
function spanAttributes(span: OtlpSpan): Attributes {
  const out: Attributes = {};
  const put = (key: string, value: OtlpValue | undefined) => {
    if (Object.keys(out).length >= LIMITS.attributes || key in out) return;
    const scalar = asScalar(value);
    if (scalar !== undefined && isAllowedAttributeKey(key)) out[key] = scalar;
  };
  put("otel.trace_id", span.traceId);
  put("otel.span_id", span.spanId);
  if (span.parentSpanId) put("otel.parent_span_id", span.parentSpanId);
  if (span.name) put("otel.span_name", span.name);
  if (span.scope.name) put("otel.scope.name", span.scope.name);
  if (span.scope.version) put("otel.scope.version", span.scope.version);
  for (const [key, value] of span.resource) put(key, value);
  for (const [key, value] of span.attributes) put(key, value);
  return out;
}

/** Scalars as they are (strings cut to the model's bound), string arrays joined. */
function asScalar(
  value: OtlpValue | undefined,
): string | number | boolean | undefined {
  if (typeof value === "string") {
    return sliceWellFormed(value, LIMITS.attributeValueChars);
  }
  if (typeof value === "number") {
    return Number.isFinite(value) ? value : undefined;
  }
  if (typeof value === "boolean") return value;
  if (
    Array.isArray(value) &&
    value.every((item) => typeof item === "string" || typeof item === "number")
  ) {
    return sliceWellFormed(value.join(","), LIMITS.attributeValueChars);
  }
  return undefined;
}

function checkEvent(span: OtlpSpan, event: EventInput): void {
  const parsed = v.safeParse(EventInputSchema, event);
  if (parsed.success) return;
  const issue = parsed.issues[0];
  throw new OtlpRequestError(
    `Cannot map OTLP span ${span.index} (${span.path}): ${
      issue ? issuePath(issue) : "(root)"
    }: ${issue?.message ?? "invalid event"}; fix the span and resend the batch`,
  );
}
