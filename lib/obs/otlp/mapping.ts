/**
 * Maps decoded OTLP spans onto trace events. What each producer convention
 * means is in its table (`conventions/`: OpenTelemetry GenAI, the Vercel AI
 * SDK, OpenInference, with one precedence rule when a span carries
 * several); the tenant rule is in `tenant.ts`. Here:
 *
 * - identity: `otlp:<trace id>:<span id>` → `event_id` (and the parent span
 *   likewise → `parent_event_id`), the trace id → `root_trace_id`.
 * - scope: the tenant → `application_id`; the conventions' agent (else the
 *   resource's `service.name`, reported back as a warning) → `agent_id`,
 *   memory store → `memory_id`, thread → `thread_id`, user → `user_id`
 *   (absent: anonymous).
 * - what it did: the conventions' kind, tool and status; the store follows
 *   the kind (`tool_log` for tool calls, `conversation` for model calls,
 *   `trace` otherwise).
 * - model and usage: written under the GenAI attribute names whatever
 *   convention sent them (`gen_ai.request.model`, `gen_ai.response.model`,
 *   `gen_ai.provider.name`, `gen_ai.usage.input_tokens`,
 *   `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`,
 *   `gen_ai.tool.call.id`), so one query reads them all.
 * - content attributes go only into `preview`; other attributes are kept
 *   only when the model allowlists them (a count key only with a count).
 *
 * A span without a tenant or an agent/memory scope cannot be mapped, and a
 * mapped event that fails validation refuses the whole request, naming the
 * span and the field (the first few such spans, and a count of the rest).
 *
 * @module
 */

import * as v from "valibot";
import { issueParts } from "../../issues.ts";
import {
  type Attributes,
  attributeValueFits,
  type EventInput,
  EventInputSchema,
  type EventStatus,
  isAllowedAttributeKey,
  LIMITS,
  sliceWellFormed,
  type StoreName,
} from "../model.ts";
import { spanPreview } from "./_content.ts";
import {
  conventionCount,
  conventionKind,
  conventionText,
  type MappedField,
} from "./conventions/mod.ts";
import type { OtlpSpan, OtlpValue } from "./decode.ts";
import { NAMED_PROBLEMS, SpanRefusal, spanRefusalError } from "./_refusals.ts";
import { spanResources } from "./_resources.ts";
import {
  type SpanTenant,
  spanTenant,
  tenantForRequest,
  tenantNotes,
  type TenantRule,
} from "./tenant.ts";

/** Options for {@link mapOtlpSpans}. */
export interface OtlpMappingOptions {
  /** How spans that name no tenant get one (see `tenantForRequest`); default: service.name. */
  tenant?: TenantRule;
  /** Shorthand for `tenant: tenantForRequest({ defaultApplicationId })`. */
  defaultApplicationId?: string;
}

/** Events mapped from one request, plus notes worth returning to the sender. */
export interface OtlpMapping {
  events: EventInput[];
  /** Non-fatal notes (fallbacks taken, references dropped); content-free. */
  warnings: string[];
  /** Allowlisted attributes left out past the per-event bound, over all spans. */
  droppedAttributes: number;
}

/** Normalised attributes: the GenAI name each mapped field is written under. */
export const NORMALIZED_ATTRIBUTES = {
  request_model: "gen_ai.request.model",
  response_model: "gen_ai.response.model",
  provider: "gen_ai.provider.name",
  input_tokens: "gen_ai.usage.input_tokens",
  output_tokens: "gen_ai.usage.output_tokens",
  finish_reasons: "gen_ai.response.finish_reasons",
  tool_call_id: "gen_ai.tool.call.id",
} as const satisfies Partial<Record<MappedField, string>>;

const COUNT_FIELDS: ReadonlySet<MappedField> = new Set([
  "input_tokens",
  "output_tokens",
]);

const STORE_OF_KIND: Readonly<Record<string, StoreName>> = {
  tool_call: "tool_log",
  llm_call: "conversation",
};

const STATUS_OF_CODE: readonly EventStatus[] = ["unset", "ok", "error"];

/**
 * Maps every span to an event; throws `OtlpRequestError` naming the first
 * few spans that cannot be mapped (and counting the rest), or
 * `OtlpTenantError` when the first names a tenant the credential may not
 * write.
 */
export function mapOtlpSpans(
  spans: readonly OtlpSpan[],
  options: OtlpMappingOptions = {},
): OtlpMapping {
  const rule = options.tenant ??
    tenantForRequest({ defaultApplicationId: options.defaultApplicationId });
  const notes = { serviceAsAgent: 0, droppedRefs: 0, droppedAttributes: 0 };
  const tenants: SpanTenant[] = [];
  const events: EventInput[] = [];
  const refused: SpanRefusal[] = [];
  let refusedCount = 0;
  for (const span of spans) {
    try {
      const tenant = spanTenant(rule, span);
      const mapped = mapSpan(span, tenant);
      checkEvent(span, mapped.event);
      tenants.push(tenant);
      if (mapped.usedServiceAsAgent) notes.serviceAsAgent += 1;
      notes.droppedRefs += mapped.droppedRefs;
      notes.droppedAttributes += mapped.droppedAttributes;
      events.push(mapped.event);
    } catch (error) {
      // Every span is tried, so the answer says how many need fixing.
      if (!(error instanceof SpanRefusal)) throw error;
      refusedCount += 1;
      if (refused.length < NAMED_PROBLEMS) refused.push(error);
    }
  }
  if (refusedCount > 0) {
    throw spanRefusalError(refused, {
      refused: refusedCount,
      total: spans.length,
    });
  }
  const warnings = tenantNotes(tenants);
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
  if (notes.droppedAttributes > 0) {
    warnings.push(
      `${
        count(notes.droppedAttributes, "attribute")
      } beyond ${LIMITS.attributes} per span left out`,
    );
  }
  return { events, warnings, droppedAttributes: notes.droppedAttributes };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

interface MappedSpan {
  event: EventInput;
  usedServiceAsAgent: boolean;
  droppedRefs: number;
  droppedAttributes: number;
}

function mapSpan(span: OtlpSpan, tenant: SpanTenant): MappedSpan {
  const kind = conventionKind(span.attributes);
  const text = (field: MappedField) => conventionText(span, field);
  const agent = text("agent");
  const memory = text("memory");
  const service = serviceName(span);
  const usedServiceAsAgent = !agent && !memory && service !== null;
  const { resources, selection, dropped } = spanResources(
    span.attributes,
    kind,
  );
  const status = STATUS_OF_CODE[span.statusCode] ?? "unset";
  const attributes = spanAttributes(span);
  const event: EventInput = {
    event_id: eventId(span.traceId, span.spanId),
    application_id: tenant.applicationId,
    user_id: text("user"),
    agent_id: agent ?? (usedServiceAsAgent ? service : null) ??
      (memory ? null : missing(
        span,
        "agent_id",
        "gen_ai.agent.id, gen_ai.memory.store.id or service.name attribute",
      )),
    memory_id: memory,
    thread_id: text("thread"),
    root_trace_id: span.traceId,
    parent_event_id: span.parentSpanId
      ? eventId(span.traceId, span.parentSpanId)
      : null,
    kind,
    status,
    tool: text("tool"),
    success: status === "ok" ? true : status === "error" ? false : null,
    started_at: isoFromNanos(span.startTimeUnixNano),
    ended_at: isoFromNanos(span.endTimeUnixNano),
    store: STORE_OF_KIND[kind] ?? "trace",
    resources,
    attributes: attributes.kept,
    selection,
    preview: spanPreview(span),
  };
  return {
    event,
    usedServiceAsAgent,
    droppedRefs: dropped,
    droppedAttributes: attributes.dropped,
  };
}

function serviceName(span: OtlpSpan): string | null {
  const value = span.resource.get("service.name");
  return typeof value === "string" && value !== "" ? value : null;
}

/** Event ids are namespaced so a span can never take an id an API writer chose. */
function eventId(traceId: string, spanId: string): string {
  return `otlp:${traceId}:${spanId}`;
}

function missing(span: OtlpSpan, field: string, need: string): never {
  throw new SpanRefusal(
    span,
    `${field}: the span has no ${need}`,
    "set it and resend the batch",
  );
}

function isoFromNanos(nanos: bigint): string | null {
  if (nanos <= 0n) return null;
  const date = new Date(Number(nanos / 1_000_000n));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * Allowlisted attributes: span identity first, then the normalised model and
 * usage, then resource, then span attributes (the first writer of a key
 * wins), and how many allowlisted ones the per-event bound left out.
 */
function spanAttributes(
  span: OtlpSpan,
): { kept: Attributes; dropped: number } {
  const out: Attributes = {};
  let dropped = 0;
  const put = (key: string, value: OtlpValue | undefined) => {
    if (key in out) return;
    const scalar = asScalar(value);
    // A count key holding no count ("ten", -5) is left out like a key off
    // the allowlist: a producer's span is not refused for it.
    if (
      scalar === undefined || !isAllowedAttributeKey(key) ||
      !attributeValueFits(key, scalar)
    ) return;
    if (Object.keys(out).length >= LIMITS.attributes) dropped++;
    else out[key] = scalar;
  };
  put("otel.trace_id", span.traceId);
  put("otel.span_id", span.spanId);
  if (span.parentSpanId) put("otel.parent_span_id", span.parentSpanId);
  if (span.name) put("otel.span_name", span.name);
  if (span.scope.name) put("otel.scope.name", span.scope.name);
  if (span.scope.version) put("otel.scope.version", span.scope.version);
  for (const [field, key] of Object.entries(NORMALIZED_ATTRIBUTES)) {
    const name = field as MappedField;
    const value = COUNT_FIELDS.has(name)
      ? conventionCount(span, name)
      : conventionText(span, name);
    if (value !== null) put(key, value);
  }
  for (const [key, value] of span.resource) put(key, value);
  for (const [key, value] of span.attributes) put(key, value);
  return { kept: out, dropped };
}

/**
 * Scalars as they are (strings cut to the model's bound), string arrays
 * joined. A NaN or infinite double is stored by its name (`"NaN"`,
 * `"Infinity"`, `"-Infinity"`; joined lists name them alike): the event is
 * JSON, which has no such numbers. Only here does it become text; ids and
 * tenants never take it (see `OtlpValue`).
 */
function asScalar(
  value: OtlpValue | undefined,
): string | number | boolean | undefined {
  if (typeof value === "string") {
    return sliceWellFormed(value, LIMITS.attributeValueChars);
  }
  if (typeof value === "number") {
    return Number.isFinite(value) ? value : String(value);
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
  const { field, message } = issue
    ? issueParts(issue)
    : { field: "(root)", message: "invalid event" };
  throw new SpanRefusal(
    span,
    `${field}: ${message}`,
    "fix the span and resend the batch",
  );
}
