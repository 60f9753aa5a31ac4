/**
 * Everything the index holds about one event, metadata only: identity,
 * place in its trace, times, refs with their roles, attributes, the
 * selection it recorded, its outcome, and whether a preview exists (its
 * content is never shown here).
 *
 * @module
 */

import type { FC, PropsWithChildren } from "hono/jsx";
import type { ActionCapability } from "../../../lib/auth/mod.ts";
import type { TraceEvent } from "../../../lib/obs/mod.ts";
import { mappedFields, tokensText } from "../event_fields.ts";
import { formatDuration } from "../format.ts";
import { plural } from "../trace_words.ts";
import { StatusBadge } from "./badge.tsx";
import { CopyId } from "./copy_id.tsx";
import { KeyValue, type KeyValueItem } from "./key_value.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { ArtifactLookup } from "./operator_controls.tsx";
import { Time } from "./time.tsx";
import { ActorLabel, KindTag, RefLabel } from "./trace_bits.tsx";

/** The selected event's section (`#selected`): its detail, then what to do with it. */
export const SelectedEventSection: FC<PropsWithChildren> = ({ children }) => (
  <section
    class="section selected-event"
    id="selected"
    aria-labelledby="selected-title"
  >
    <h2 id="selected-title">Selected event</h2>
    <div class="panel panel--selected">{children}</div>
  </section>
);

/** Props of {@link EventDetail}. */
export interface EventDetailProps {
  event: TraceEvent;
  now: number;
  /** Offer the current state of each ref through the artifact resolver (or say why not). */
  lookup?: ActionCapability | undefined;
}

/** The facts of one event. */
export const EventDetail: FC<EventDetailProps> = ({ event, now, lookup }) => (
  <KeyValue items={eventFacts(event, now, lookup)} />
);

function optional(
  term: string,
  value: string | null,
  label = term.toLowerCase(),
): KeyValueItem[] {
  return value === null
    ? []
    : [{ term, value: <CopyId value={value} label={label} /> }];
}

function eventFacts(
  event: TraceEvent,
  now: number,
  lookup: ActionCapability | undefined,
): KeyValueItem[] {
  const duration = event.started_at && event.ended_at
    ? Date.parse(event.ended_at) - Date.parse(event.started_at)
    : null;
  return [
    {
      term: "Event",
      value: (
        <>
          <KindTag kind={event.kind} /> <StatusBadge status={event.status} />
          {event.success === null ? null : ` success: ${String(event.success)}`}
        </>
      ),
      hint: <CopyId value={event.event_id} label="event id" />,
    },
    {
      term: "Who",
      value: <ActorLabel {...event} />,
      hint: (
        <>
          application <ShownCode text={event.application_id} />, user{" "}
          {event.user_id === null
            ? "anonymous"
            : <ShownCode text={event.user_id} />}, store{" "}
          <ShownCode text={event.store} />
        </>
      ),
    },
    {
      term: "Root",
      value: <CopyId value={event.root_trace_id} label="root id" />,
    },
    ...optional("Parent", event.parent_event_id, "parent event id"),
    ...optional("Thread", event.thread_id, "thread id"),
    ...optional("Turn", event.turn_id, "turn id"),
    ...optional("Run", event.run_id, "run id"),
    ...optional("Tool", event.tool, "tool"),
    ...modelFact(event),
    {
      term: "When",
      value: <Time iso={event.ts} now={now} />,
      hint: duration === null
        ? (event.started_at ? "no end time recorded" : "time of receipt")
        : `took ${formatDuration(duration)}`,
    },
    {
      term: "Stage",
      value: <ShownCode text={event.stage} />,
      hint: event.coverage_profile
        ? (
          <>
            declares coverage profile{" "}
            <ShownCode text={event.coverage_profile} />
          </>
        )
        : undefined,
    },
    ...refsFact(event, lookup),
    ...selectionFact(event),
    ...outcomeFact(event),
    ...attributesFact(event),
    ...(event.preview
      ? [{
        term: "Preview",
        value: `${event.preview.chars.toLocaleString("en-US")} characters${
          event.preview.truncated ? " (cut at 16,000)" : ""
        }`,
        hint: "Content is stored apart and never shown on metadata pages.",
      }]
      : []),
  ];
}

/** The model the event called and the tokens it counted, when it says. */
function modelFact(event: TraceEvent): KeyValueItem[] {
  const fields = mappedFields(event);
  const tokens = tokensText(fields);
  if (fields.model === null && tokens === null) return [];
  return [{
    term: "Model",
    value: fields.model === null
      ? <span class="meta">not recorded</span>
      : <ShownCode text={fields.model} />,
    hint: tokens === null ? "no token counts recorded" : `tokens ${tokens}`,
  }];
}

function refsFact(
  event: TraceEvent,
  lookup: ActionCapability | undefined,
): KeyValueItem[] {
  if (event.resources.length === 0) return [];
  return [{
    term: "Refs",
    value: (
      <ul class="ref-list">
        {event.resources.map((ref) => (
          <li>
            <RefLabel {...ref} />{" "}
            <span class="meta">
              <Shown text={ref.role ?? "no role"} />
            </span>
            {lookup
              ? (
                <>
                  {" "}
                  <ArtifactLookup
                    ref={ref}
                    capability={lookup}
                    application_id={event.application_id}
                  />
                </>
              )
              : null}
          </li>
        ))}
      </ul>
    ),
    hint: lookup && !lookup.allowed
      ? `Current state is not looked up here: ${lookup.message}`
      : undefined,
  }];
}

function selectionFact(event: TraceEvent): KeyValueItem[] {
  const selection = event.selection;
  if (!selection) return [];
  const kept = selection.candidates.filter((c) => c.selected).length;
  return [{
    term: "Selection",
    value: `${plural(selection.candidates.length, "candidate")}, ${kept} kept`,
    hint: (
      <>
        {selection.strategy
          ? (
            <>
              strategy <ShownCode text={selection.strategy} />
            </>
          )
          : "no strategy recorded"}
        {selection.omitted_candidates
          ? `; ${selection.omitted_candidates} more were not recorded`
          : ""}
      </>
    ),
  }];
}

function outcomeFact(event: TraceEvent): KeyValueItem[] {
  const outcome = event.outcome;
  if (!outcome) return [];
  return [{
    term: "Outcome",
    value: (
      <>
        <StatusBadge status={outcome.status} />{" "}
        {outcome.verified ? "verified by the host" : "not verified"}
      </>
    ),
    hint: outcome.artifact
      ? (
        <>
          artifact <RefLabel {...outcome.artifact} />
        </>
      )
      : outcome.code
      ? <ShownCode text={outcome.code} />
      : undefined,
  }];
}

function attributesFact(event: TraceEvent): KeyValueItem[] {
  const entries = Object.entries(event.attributes);
  if (entries.length === 0) return [];
  return [{
    term: "Attributes",
    value: (
      <dl class="attrs">
        {entries.map(([key, value]) => (
          <>
            <dt>
              <ShownCode text={key} />
            </dt>
            <dd>
              <ShownCode text={attributeText(value)} />
            </dd>
          </>
        ))}
      </dl>
    ),
  }];
}

/**
 * An attribute value as JSON writes it, but a string's control characters
 * left for {@link Shown} to mark, like its bidi and zero-width ones.
 */
function attributeText(value: string | number | boolean | null): string {
  return typeof value === "string"
    ? `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
    : JSON.stringify(value);
}
