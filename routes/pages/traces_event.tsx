/**
 * `/traces/events/:id` and its twin: the page of one event id, the address
 * to share for one event and where a reveal returns to. It lists the events
 * the id names inside the principal's scope (usually one; the same id may
 * recur in another application), metadata only, each with the way to its
 * root's inspection and to the finder, and with the operator controls:
 * artifact lookups on its refs, a replay draft of its turn, and the reveal
 * of a stored preview. Inspection offers the same controls beside the
 * evidence; this page is their single-event form. Query parameters
 * (`agent_id`, `root_trace_id`, `application_id`, `user_id` or
 * `anonymous=true`, `turn_id`, `run_id`) narrow the selection and, like
 * every reader's, can only narrow the account's scope. An id no event in
 * scope holds answers 404, as an unknown root's inspection does.
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import * as v from "valibot";
import {
  type ActionCapability,
  incompleteSelection,
  OpaqueId as Id,
  parseOperatorInput,
} from "../../lib/auth/mod.ts";
import type { TraceDb } from "../../lib/db.ts";
import { quoteValue } from "../../lib/echo.ts";
import { ConfigError } from "../../lib/errors.ts";
import type { TraceEvent } from "../../lib/obs/mod.ts";
import {
  type ReadCompleteness,
  readEventsById,
} from "../../lib/obs/query/mod.ts";
import { singleParams } from "../_operator_io.ts";
import { capabilityOf, scopeFilter } from "../access.ts";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { EventDetail } from "../ui/components/event_detail.tsx";
import {
  noReplayDraft,
  ReplayDraftForm,
  RevealForm,
} from "../ui/components/operator_controls.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { Section } from "../ui/components/section.tsx";
import { Shown, ShownCode } from "../ui/components/shown_text.tsx";
import type { UiEnv } from "../ui/context.ts";
import { runOfEvent } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import { FIND_PATH, hrefOf, inspectEventHref } from "../ui/trace_params.ts";

/** Most events one id page lists. */
const MAX_EVENTS = 100;

const PathSchema = v.object({ event_id: Id });

const ParamsSchema = v.strictObject({
  agent_id: v.optional(Id),
  root_trace_id: v.optional(Id),
  application_id: v.optional(Id),
  turn_id: v.optional(Id),
  run_id: v.optional(Id),
  user_id: v.optional(Id),
  anonymous: v.optional(v.literal("true", "only takes true")),
});

/** What the page's controls may do for this principal. */
export interface EventControls {
  reveal: ActionCapability;
  replay_draft: ActionCapability;
  replay_plan: ActionCapability;
  artifact_lookup: ActionCapability;
}

/** The data of the page and its twin. */
export interface EventPageData {
  event_id: string;
  events: TraceEvent[];
  /** The id names more than one event: a reveal must give a turn or run. */
  ambiguous: boolean;
  read_completeness: ReadCompleteness;
  controls: EventControls;
  /** Whether run pages open for this operator (an event of a deletion run links to its run). */
  runs_read: boolean;
}

/** The event page over `db`. */
export function eventPage(db: TraceDb): PageSpec<EventPageData> {
  return {
    path: "/traces/events/:id",
    title: (data) => `Event ${data.event_id}`,
    async load(c, params) {
      // Wrapped so a refusal names the id in the path, not a body.
      const { event_id: id } = parseOperatorInput(
        PathSchema,
        { event_id: params.id },
        "event",
      );
      const query = parseOperatorInput(ParamsSchema, singleParams(c), "event");
      const { agent_id, anonymous, user_id, ...rest } = query;
      if (anonymous && user_id !== undefined) {
        throw new ConfigError(
          "Invalid event request: give user_id or anonymous, not both",
        );
      }
      const filter = scopeFilter(c, {
        ...rest,
        ...(anonymous ? { user_id: null } : user_id ? { user_id } : {}),
      });
      const { events, read_completeness } = await readEventsById(db, id, {
        scope: filter,
        place: {
          agent_id,
          root_trace_id: filter.root_trace_id,
          turn_id: filter.turn_id,
          run_id: filter.run_id,
        },
        limit: MAX_EVENTS,
      });
      return {
        event_id: id,
        events,
        ambiguous: events.length > 1,
        read_completeness,
        controls: controlsOf(c),
        runs_read: capabilityOf(c, "runs.read").allowed,
      };
    },
    render: (data, view) => <EventBody data={data} view={view} />,
    notFound: (data) =>
      data.events.length === 0 ? nothingInScope(data.event_id) : null,
  };
}

/**
 * What the twin says of an id no event in scope holds: the same words
 * whether the id is unknown or another tenant's, so an answer never tells
 * a tenant-bound account which ids other tenants use.
 */
function nothingInScope(id: string): string {
  return `No event ${
    quoteValue(id)
  } is in your scope under this selection; check the id and the agent, root, application, user, turn and run in the address (the finder searches every id)`;
}

function controlsOf(c: Context<UiEnv>): EventControls {
  return {
    reveal: capabilityOf(c, "content.reveal"),
    replay_draft: capabilityOf(c, "replay.draft"),
    replay_plan: capabilityOf(c, "replay.plan"),
    artifact_lookup: capabilityOf(c, "artifact.lookup"),
  };
}

const EventBody: FC<{ data: EventPageData; view: PageView }> = (
  { data, view },
) => (
  <>
    <div class="page-head">
      <p class="eyebrow">Trace event</p>
      <h1>
        Event <ShownCode text={data.event_id} />
      </h1>
      <p class="meta">
        Metadata only. Content stays hidden unless an administrator reveals it
        with a reason, which is recorded in the audit trail.
      </p>
    </div>
    {data.events.length === 0
      ? (
        <EmptyState title="No event with this id is in your scope">
          Check the id, or the agent, root and application in the address;
          events of other tenants are never shown here.{" "}
          <a href={FIND_PATH}>Search the finder</a> for the id instead.
        </EmptyState>
      )
      : null}
    {data.ambiguous
      ? (
        <p class="notice" role="status">
          This id names {data.events.length}{" "}
          events (in different applications or turns). A reveal must give the
          turn or run of the one you mean.
        </p>
      )
      : null}
    {data.events.map((event, i) => (
      <EventSection
        event={event}
        index={i}
        controls={data.controls}
        view={view}
        runsRead={data.runs_read}
      />
    ))}
    <RevealSection data={data} view={view} />
    <RawJson value={data} href={view.jsonHref} />
  </>
);

const EventSection: FC<{
  event: TraceEvent;
  index: number;
  controls: EventControls;
  view: PageView;
  runsRead: boolean;
}> = ({ event, index, controls, view, runsRead }) => (
  <Section
    id={`event-${index}`}
    title={`${event.kind} in ${event.application_id}${
      event.turn_id ? `, turn ${event.turn_id}` : ""
    }`}
  >
    <div class="stack">
      <p class="actions">
        <a
          class="button"
          href={inspectEventHref(event, new URLSearchParams())}
        >
          Inspect its root
        </a>
        <a href={finderHref(event)}>Find it in the finder</a>
        {runsRead && runOfEvent(event)
          ? (
            <a href={runOfEvent(event)!}>
              Open run <Shown text={event.root_trace_id} />
            </a>
          )
          : null}
      </p>
      <EventDetail
        event={event}
        now={view.now}
        lookup={controls.artifact_lookup}
      />
      {event.agent_id
        ? (
          <div class="panel">
            <h3>Replay draft</h3>
            <ReplayDraftForm
              id={`replay-${index}`}
              target={{
                agent_id: event.agent_id,
                root_trace_id: event.root_trace_id,
                turn_id: event.turn_id,
                application_id: event.application_id,
              }}
              label={replayLabel(event)}
              unavailable={replayUnavailable(event)}
              draft={controls.replay_draft}
              plan={controls.replay_plan}
              csrf={view.csrf ?? null}
            />
          </div>
        )
        : null}
    </div>
  </Section>
);

/** What the replay draft of `event` covers, in words. */
function replayLabel(event: TraceEvent): string {
  return event.turn_id ? `turn ${event.turn_id}` : "the whole root";
}

/** Why the replay draft of `event`'s turn would be refused, when the event alone shows it. */
function replayUnavailable(event: TraceEvent): string | null {
  const why = incompleteSelection([event]);
  return why === null ? null : noReplayDraft(replayLabel(event), why);
}

/** The finder with `event` selected (and found by its id). */
function finderHref(event: TraceEvent): string {
  return hrefOf(
    FIND_PATH,
    new URLSearchParams({
      q: event.event_id,
      selected: event.event_id,
      selected_application_id: event.application_id,
    }),
  );
}

/**
 * One reveal form per agent and root whose events hold a preview. When the
 * page shows one such event, the form names its application and turn; when
 * the id names several, the operator gives the turn or run.
 */
const RevealSection: FC<{ data: EventPageData; view: PageView }> = (
  { data, view },
) => {
  const groups = new Map<string, TraceEvent[]>();
  for (const event of data.events) {
    if (!event.preview || !event.agent_id) continue;
    const key = JSON.stringify([event.agent_id, event.root_trace_id]);
    groups.set(key, [...groups.get(key) ?? [], event]);
  }
  if (groups.size === 0) return null;
  return (
    <Section id="reveal" title="Reveal content">
      {[...groups.values()].map((events, i) => {
        const first = events[0]!;
        const only = events.length === 1 && !data.ambiguous;
        return (
          <div class="panel">
            <RevealForm
              id={`reveal-${i}`}
              target={{
                agent_id: first.agent_id!,
                root_trace_id: first.root_trace_id,
                event_id: data.event_id,
                ...(only
                  ? {
                    application_id: first.application_id,
                    turn_id: first.turn_id,
                  }
                  : {}),
              }}
              capability={data.controls.reveal}
              csrf={view.csrf ?? null}
            />
          </div>
        );
      })}
    </Section>
  );
};
