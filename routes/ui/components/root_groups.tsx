/**
 * The finder's results: one card per task scope (application + root), with
 * its status, counts, time, most frequent kinds and latest matching events.
 * The selected event is highlighted wherever it appears; every link keeps
 * the finder's selection.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { RootGroup } from "../../../lib/obs/query/mod.ts";
import {
  fieldsKey,
  type MappedFields,
  sharedValue,
  userText,
} from "../event_fields.ts";
import { formatCount } from "../format.ts";
import { runOfRoot } from "../links.ts";
import {
  inspectEventHref,
  inspectHref,
  type SelectedRef,
} from "../trace_params.ts";
import { plural } from "../trace_words.ts";
import { StatusBadge } from "./badge.tsx";
import { CopyId } from "./copy_id.tsx";
import { Shown, ShownCode } from "./shown_text.tsx";
import { Time } from "./time.tsx";
import { EventFields } from "./event_fields.tsx";
import { ActorLabel, KindTag } from "./trace_bits.tsx";

/** Whether `event` is the selected one. */
export function isSelected(
  event: { event_id: string; application_id: string },
  selected: SelectedRef | undefined,
): boolean {
  return selected !== undefined && event.event_id === selected.event_id &&
    (selected.application_id === undefined ||
      selected.application_id === event.application_id);
}

/** Props of {@link RootGroups}. */
export interface RootGroupsProps {
  groups: readonly RootGroup[];
  /** The finder's query string (links keep it). */
  params: URLSearchParams;
  selected: SelectedRef | undefined;
  now: number;
  /** Mapped producer fields of the listed events, by {@link fieldsKey}. */
  fields: ReadonlyMap<string, MappedFields>;
  /** Whether a deletion run's root links to its run page (the operator may read runs). */
  runPages: boolean;
}

/** The result cards, newest group first. */
export const RootGroups: FC<RootGroupsProps> = (props) => (
  <ol class="groups" id="results-list">
    {props.groups.map((group) => (
      <GroupCard
        key={`${group.application_id}\u0000${group.root_trace_id}`}
        group={group}
        {...props}
      />
    ))}
  </ol>
);

const GroupCard: FC<RootGroupsProps & { group: RootGroup }> = (
  { group, params, selected, now, fields, runPages },
) => {
  const listed = group.latest.flatMap((event) => {
    const found = fields.get(fieldsKey(group.application_id, event.event_id));
    return found ? [found] : [];
  });
  // A user or thread every listed event shares is named once, on the card.
  const user = sharedValue(listed.map((f) => f.user_id));
  const thread = sharedValue(listed.map((f) => f.thread_id));
  const run = runPages
    ? runOfRoot(group.application_id, group.root_trace_id, group.root_event)
    : null;
  const holdsSelected = group.latest.some((e) => isSelected(e, selected));
  // A root of one event is that event: its card needs no event list.
  const single = group.events === 1 && group.latest.length === 1 &&
    group.latest[0]!.event_id === group.root_trace_id;
  const actor = group.actors.length === 1 ? group.actors[0] : undefined;
  const href = inspectHref({
    application_id: group.application_id,
    root_trace_id: group.root_trace_id,
    agent_id: actor?.agent_id ?? null,
    memory_id: actor?.memory_id ?? null,
    ...(holdsSelected && selected
      ? { selected: selected.event_id }
      : single
      ? { selected: group.root_trace_id }
      : {}),
  }, params);
  return (
    <li
      class={`group${holdsSelected ? " group--selected" : ""}`}
      data-nav-item=""
      tabindex={-1}
    >
      <div class="group__head">
        <StatusBadge status={group.status} />
        <a class="group__title" href={href}>
          {group.root_event ? <Shown text={group.root_event.kind} /> : "root"}
          {" "}
          <ShownCode text={group.root_trace_id} />
        </a>
        {holdsSelected ? <StatusBadge status="selected" /> : null}
      </div>
      <p class="group__facts">
        <span>
          {group.events_capped ? "more than " : ""}
          {plural(group.events, "event")}
          {group.errors > 0 ? `, ${formatCount(group.errors)} with errors` : ""}
        </span>
        <span>
          application <ShownCode text={group.application_id} />
        </span>
        {user !== undefined
          ? (
            <span>
              user {user === null ? userText(null) : <ShownCode text={user} />}
            </span>
          )
          : null}
        {group.actors.map((a) => (
          <ActorLabel key={`${a.agent_id}:${a.memory_id}`} {...a} />
        ))}
        {group.thread_count > 0
          ? (
            <span>
              {group.thread_count === 1
                ? "thread "
                : `${group.thread_count} threads: `}
              <ShownCode text={group.threads.join(", ")} />
              {group.thread_count > group.threads.length ? ", …" : ""}
            </span>
          )
          : null}
        <span>
          latest <Time iso={group.last_ts} now={now} />
        </span>
      </p>
      {single && listed[0]
        ? <EventFields fields={listed[0]} hideUser hideThread />
        : null}
      {single ? null : (
        <>
          <p class="group__kinds meta">
            {group.kinds.map((k) => (
              <span>
                <KindTag kind={k.kind} /> {formatCount(k.events)}
              </span>
            ))}
          </p>
          <ol class="group__events" aria-label="Latest matching events">
            {group.latest.map((event) => {
              const chosen = isSelected(event, selected);
              return (
                <li
                  class={chosen ? "event-line is-selected" : "event-line"}
                  aria-current={chosen ? "true" : undefined}
                >
                  <StatusBadge status={event.status} />
                  <KindTag kind={event.kind} />
                  <a
                    href={inspectEventHref(event, params)}
                  >
                    <Shown text={event.event_id} />
                  </a>
                  {chosen ? <StatusBadge status="selected" /> : null}
                  <Time iso={event.ts} now={now} />
                  <EventLineFields
                    fields={fields.get(
                      fieldsKey(event.application_id, event.event_id),
                    )}
                    hideUser={user !== undefined}
                    hideThread={thread !== undefined}
                  />
                </li>
              );
            })}
          </ol>
        </>
      )}
      <p class="group__id meta">
        Root id <CopyId value={group.root_trace_id} label="root id" />
        {run
          ? (
            <>
              {" "}
              <a href={run}>
                Open run <Shown text={group.root_trace_id} />
              </a>
            </>
          )
          : null}
      </p>
    </li>
  );
};

const EventLineFields: FC<{
  fields: MappedFields | undefined;
  hideUser: boolean;
  hideThread: boolean;
}> = ({ fields, hideUser, hideThread }) =>
  fields
    ? (
      <EventFields
        fields={fields}
        hideUser={hideUser}
        hideThread={hideThread}
      />
    )
    : null;
