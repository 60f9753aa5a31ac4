/**
 * `trace.query_traces`: metadata-only pages of the observability index,
 * bound to the principal's tenant scope. The scope comes from the transport
 * (the authenticated operator, or the stdio server's explicit local scope),
 * never from the arguments: an argument may narrow an open dimension or
 * repeat a bound one, and anything else is refused. `explain` adds the
 * lineage of the selected root and a deterministic analysis. There is no
 * content reveal and no replay execution here.
 *
 * @module
 */

import {
  narrowScope,
  SCOPE_KEYS,
  ScopeError,
  type ScopeKey,
} from "../auth/mod.ts";
import { TraceError, UsageError } from "../errors.ts";
import {
  analyzeTrace,
  kindsNotInScope,
  queryTraceEvents,
  summarizeTraceEvents,
  type TraceEventPage,
  type TraceFilter,
  traceLineage,
} from "../obs/query/mod.ts";
import { outputBound, type PageRules, shrinkPageToFit } from "./_bound.ts";
import { clientPresenter } from "./_remote_text.ts";
import {
  customKinds,
  DEFAULT_TRACE_PAGE,
  kindRefusal,
  QueryArgs,
} from "./_trace_args.ts";
import { defineTool, READS, type TraceTool } from "./_tool.ts";
import { type McpToolContext, type TraceScope } from "./context.ts";

/** Most events of one root read for `explain`. */
export const MAX_EXPLAIN_EVENTS = 1_000;

function scopeWord(key: ScopeKey, value: unknown): string {
  if (key === "user_id" && value === null) return "anonymous users";
  return `${key === "user_id" ? "user" : "application"} ${
    JSON.stringify(value)
  }`;
}

/**
 * The filter the arguments ask for, inside `scope` (the one narrowing rule of
 * `lib/auth`); throws when they reach outside it.
 */
export function scopedFilter(
  args: TraceFilter,
  scope: TraceScope,
): TraceFilter {
  try {
    return narrowScope(scope, args);
  } catch (error) {
    if (!(error instanceof ScopeError)) throw error;
    // The principal may hear its own scope and its own arguments back.
    const key = error.key;
    throw new TraceError(
      "forbidden",
      `${key} ${
        JSON.stringify(args[key])
      } is outside this principal's trace scope (${
        scopeWord(key, scope[key])
      }); omit ${key} or repeat the bound value`,
    );
  }
}

/** The scope a query ran in, in words. */
export function describeScope(filter: TraceFilter): string {
  const parts = SCOPE_KEYS.map((key) =>
    filter[key] === undefined
      ? `any ${key === "user_id" ? "user" : "application"}`
      : scopeWord(key, filter[key])
  );
  return parts.join(", ");
}

async function explainRoot(
  context: McpToolContext,
  filter: TraceFilter,
  root: string | undefined,
): Promise<object> {
  if (root === undefined) {
    return {
      root_trace_id: null,
      note:
        "no event matched, so there is no root to explain; pass root_trace_id or widen the filters",
    };
  }
  const page = await queryTraceEvents(context.db, {
    ...(filter.application_id === undefined
      ? {}
      : { application_id: filter.application_id }),
    ...(filter.user_id === undefined ? {} : { user_id: filter.user_id }),
    root_trace_id: root,
    limit: MAX_EXPLAIN_EVENTS,
  });
  return {
    root_trace_id: root,
    events_read: page.events.length,
    read_completeness: page.read_completeness,
    instrumentation_coverage: page.instrumentation_coverage,
    outcome_verification: page.outcome_verification,
    lineage: traceLineage(page.events),
    analysis: analyzeTrace(page.events),
    note: page.has_more
      ? `the root has more than ${MAX_EXPLAIN_EVENTS} events in scope; lineage and analysis cover the newest ${MAX_EXPLAIN_EVENTS}`
      : null,
  };
}

function pageAnswer(
  filter: TraceFilter,
  page: TraceEventPage,
  extras: { summary: object | null; explain: object | null },
  requested: number,
  size: number,
): object {
  return {
    scope: describeScope(filter),
    events: page.events,
    next_cursor: page.next_cursor,
    has_more: page.has_more,
    limit: size,
    limit_note: size < requested
      ? `the page was shrunk from ${requested} to ${size} event(s) to fit the output bound; next_cursor continues right after the last event shown`
      : null,
    read_completeness: page.read_completeness,
    instrumentation_coverage: page.instrumentation_coverage,
    outcome_verification: page.outcome_verification,
    coverage: page.coverage,
    ...extras,
  };
}

/** An event's attributes, the one object whose entries may be cut. */
const EVENT_ATTRIBUTES = /^events\[\d+\]\.attributes$/;

/**
 * How a page that still exceeds the bound at one event is cut: lists inside
 * the events and the extras, and an event's attributes; never the events
 * list itself ({@link shrinkPageToFit} keeps it whole, since its cursor
 * continues after the last event shown).
 */
const PAGE_RULES: PageRules = {
  cutsEntries: (path) => EVENT_ATTRIBUTES.test(path),
  note:
    "the answer was longer than the output bound, so the lists named in cuts keep only their first items (total says how many there are): lists inside an event (resources, selection candidates, attributes) or of the extras, never events themselves, so next_cursor continues right after the last event shown; a cut event is whole in trace events query --q ID or GET /api/events?q=ID",
};

const TOOL_NAME = "trace.query_traces";

/** Refuses kinds that are neither standard nor carried by any event in scope. */
async function refuseUnknownKinds(
  context: McpToolContext,
  filter: TraceFilter,
): Promise<void> {
  const custom = customKinds(filter.kinds);
  if (custom.length === 0) return;
  const absent = await kindsNotInScope(context.db, filter, custom);
  const refusal = kindRefusal(filter.kinds ?? [], absent);
  if (refusal !== null) {
    throw new UsageError(`Invalid arguments for ${TOOL_NAME}: ${refusal}`);
  }
}

const queryTraces = defineTool({
  name: TOOL_NAME,
  title: "Query agent-memory traces",
  description:
    "Metadata-only events of the observability index (what an agent retrieved, selected, stored, delivered), newest first, with a cursor. Tenant scope comes from the caller's principal, never from arguments: application_id and user_id can only narrow it. explain=true adds the lineage of the selected root (root_trace_id, else the root of the newest event) and a deterministic analysis. No content reveal, no replay execution.",
  input: QueryArgs,
  annotations: READS,
  run: async (args, context) => {
    const { limit, cursor, explain, summary, ...filterArgs } = args;
    const filter = scopedFilter(filterArgs, context.principal.scope);
    await refuseUnknownKinds(context, filter);
    const requested = limit ?? DEFAULT_TRACE_PAGE;
    const read = (size: number) =>
      queryTraceEvents(context.db, {
        ...filter,
        limit: size,
        ...(cursor === undefined ? {} : { cursor }),
      });
    const page = await read(requested);
    const extras = {
      summary: summary ? await summarizeTraceEvents(context.db, filter) : null,
      explain: explain
        ? await explainRoot(
          context,
          filter,
          filter.root_trace_id ?? page.events[0]?.root_trace_id,
        )
        : null,
    };
    // A smaller page, read again, keeps the cursor exact; one event still
    // over the bound alone is cut inside, never dropped.
    return await shrinkPageToFit(
      {
        list: "events",
        size: requested,
        answer: pageAnswer(filter, page, extras, requested, requested),
        answerOf: async (size) =>
          pageAnswer(filter, await read(size), extras, requested, size),
      },
      outputBound(context.maxOutputChars),
      { ...PAGE_RULES, present: clientPresenter(context) },
    );
  },
});

/** The trace tools (offered only when trace queries are enabled). */
export const TRACE_TOOLS: readonly TraceTool[] = [queryTraces];
