/**
 * The body of `/traces/inspect`: the answer first (status and what the read
 * proves), then the evidence, top to bottom.
 *
 * @module
 */

import type { FC } from "hono/jsx";
import type { InspectRequest } from "../ui/trace_params.ts";
import type { TraceEvent } from "../../lib/obs/mod.ts";
import {
  LINEAGE_LANES,
  type LineageLane,
  type RootRead,
} from "../../lib/obs/query/mod.ts";
import { DeletionEvidence } from "../ui/components/deletion_evidence.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import {
  EventDetail,
  SelectedEventSection,
} from "../ui/components/event_detail.tsx";
import {
  ReplayDraftForm,
  RevealForm,
} from "../ui/components/operator_controls.tsx";
import { LANE_TITLES, LineagePanel } from "../ui/components/lineage_panel.tsx";
import {
  ArtifactPanel,
  ContractPanel,
  Findings,
} from "../ui/components/record_panels.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { SelectionPanel } from "../ui/components/selection_panel.tsx";
import { Shown } from "../ui/components/shown_text.tsx";
import {
  type Chip,
  ChipRow,
  EvidenceFacts,
} from "../ui/components/trace_bits.tsx";
import { Waterfall } from "../ui/components/waterfall.tsx";
import { sharedValue, userText } from "../ui/event_fields.ts";
import { formatCount, formatDuration } from "../ui/format.ts";
import type { PageView } from "../ui/page.ts";
import {
  backToFinder,
  cleanParams,
  COMPARE_PATH,
  eventPageHref,
  hrefOf,
  INSPECT_PATH,
  withParams,
} from "../ui/trace_params.ts";
import { plural } from "../ui/trace_words.ts";
import type { InspectData } from "./traces_inspect_data.ts";
import { withDataFlags } from "../ui/printed_command.ts";

/** The inspection page's body. */
export const InspectBody: FC<{ data: InspectData; view: PageView }> = (
  { data, view },
) => {
  const params = cleanParams(view.url.searchParams);
  const request = data.request;
  const back = backToFinder(
    request.from,
    data.selected
      ? {
        event_id: data.selected.event_id,
        application_id: data.selected.application_id,
      }
      : undefined,
  );
  const root = data.root;
  if (!data.provisioned || !root || root.events.length === 0) {
    return <NothingRead data={data} back={back} dataFlags={view.dataFlags} />;
  }
  const select = (eventId: string) =>
    `${
      hrefOf(INSPECT_PATH, withParams(params, { selected: eventId }))
    }#selected`;
  const reveal = (eventId: string) =>
    `${hrefOf(INSPECT_PATH, withParams(params, { selected: eventId }))}#reveal`;
  const events = root.events;
  const shown = narrowed(request) ? shownEvents(events, request) : events;
  const shared = sharedScope(events);
  const lookup = {
    capability: data.controls.artifact_lookup,
    application_id: root.application_id ?? undefined,
  };
  return (
    <>
      <PageHead
        eyebrow="Traces · inspect"
        title={`Root ${root.root_trace_id}`}
        status={rootStatus(events)}
        reason={data.statement}
        meta={
          <>
            <Shown text={headFacts(root, request.scope, shared)} />{" "}
            {data.run_page
              ? (
                <>
                  <a class="nowrap" href={data.run_page}>
                    Open run <Shown text={root.root_trace_id} />
                  </a>
                  {" "}
                </>
              )
              : null}
            {narrowedRead(request.scope)
              ? (
                <>
                  <a class="nowrap" href={wholeRoot(params)}>
                    Read the whole root
                  </a>
                  {" "}
                </>
              )
              : null}
            <a class="nowrap" href={back}>Back to the finder</a>
          </>
        }
      />
      <div class="panel">
        <EvidenceFacts facts={root} bound="the first 1,000 events" />
      </div>
      {data.selected
        ? (
          <SelectedEventSection>
            <EventDetail
              event={data.selected}
              now={view.now}
              lookup={data.controls.artifact_lookup}
            />
            <p class="actions">
              <a href={eventPageHref(data.selected)}>Event page</a>
            </p>
            {data.selected.preview
              ? (
                <SelectedReveal
                  event={data.selected}
                  data={data}
                  csrf={view.csrf ?? null}
                />
              )
              : null}
          </SelectedEventSection>
        )
        : request.selected
        ? (
          <Section id="selected" title="Selected event">
            <EmptyState title={`Event ${request.selected} is not in this read`}>
              The selected event does not belong to this root, or falls outside
              the selection it was read under.
            </EmptyState>
          </Section>
        )
        : null}
      {data.deletion_evidence &&
          data.deletion_evidence.served_after_deletion.length > 0
        ? (
          <Section id="deletion-evidence" title="Served after deletion">
            <DeletionEvidence
              evidence={data.deletion_evidence}
              params={new URLSearchParams(request.from ?? "")}
              now={view.now}
              selected={request.selected
                ? {
                  root_trace_id: request.scope.root_trace_id,
                  event_id: request.selected,
                }
                : null}
            />
          </Section>
        )
        : null}
      <Section
        id="analysis"
        title="What stands out"
        intro="Deterministic checks of the recorded refs, statuses and outcomes; the same events always give the same findings."
      >
        <Findings findings={data.analysis} selectHref={select} />
      </Section>
      <Section
        id="timeline"
        title="Timeline"
        intro={narrowed(request)
          ? `Showing ${formatCount(shown.length)} of ${
            plural(events.length, "event")
          } read, in time order (the parent tree is drawn when nothing is filtered).`
          : `Every event read, under its parent; select an event for its detail. Rows with children fold.`}
      >
        <ChipRow
          label="Kinds"
          chips={kindChips(params, events, request.kinds)}
        />
        <ChipRow
          label="Status"
          chips={statusChips(params, events, request.statuses)}
        />
        {shown.length === 0
          ? (
            <EmptyState title="No event matches the view filters">
              Clear the kind, status or lane filter to see the events read.
            </EmptyState>
          )
          : (
            <Waterfall
              events={shown}
              tree={!narrowed(request)}
              selected={request.selected}
              selectHref={select}
              shared={{
                user: shared.user !== undefined,
                thread: shared.thread !== undefined,
              }}
              revealHref={reveal}
            />
          )}
      </Section>
      <Section
        id="lineage"
        title="Memory lineage"
        intro="Refs by how they took part: expected by the task, retrieved, supplied to the model, bound to the output. Only explicit refs count; prose and model claims are not evidence."
      >
        <ChipRow label="Lanes" chips={laneChips(params, data, request.lane)} />
        <LineagePanel
          lineage={data.lineage!}
          lane={request.lane}
          selectHref={select}
          lookup={lookup}
        />
      </Section>
      <Section id="selection" title="Selection">
        <SelectionPanel
          shown={data.selected?.selection
            ? data.selected
            : events.find((e) => e.selection) ?? null}
          all={events.filter((e) => e.selection)}
          selectHref={select}
        />
      </Section>
      <Section
        id="records"
        title="Artifacts and contract"
        intro="What the host recorded about the result and the task's declared contract."
      >
        <div class="grid">
          <ArtifactPanel
            evidence={data.artifact!}
            selectHref={select}
            lookup={lookup}
          />
          <ContractPanel evidence={data.contract!} selectHref={select} />
        </div>
      </Section>
      <ReplaySection
        data={data}
        params={params}
        events={events}
        csrf={view.csrf ?? null}
      />
      <CompareForm root={root} params={params} />
      <p class="raw meta">
        The data of this page as JSON:{" "}
        <a href={view.jsonHref}>{view.jsonHref}</a>
      </p>
    </>
  );
};

/** The selection parts that read only part of a root. */
const PART_OF_ROOT = [
  "thread_id",
  "turn_id",
  "run_id",
  "start_time",
  "end_time",
] as const;

function narrowedRead(scope: InspectData["request"]["scope"]): boolean {
  return PART_OF_ROOT.some((key) => scope[key] !== undefined);
}

/** This inspection without the thread, turn, run and time selection. */
function wholeRoot(params: URLSearchParams): string {
  return hrefOf(
    INSPECT_PATH,
    withParams(
      params,
      Object.fromEntries(PART_OF_ROOT.map((key) => [key, null])),
    ),
  );
}

function rootStatus(events: readonly TraceEvent[]): string {
  if (events.some((e) => e.status === "error")) return "error";
  return events.some((e) => e.status === "ok") ? "ok" : "unset";
}

/** The user and thread every event of the read shares (`undefined` when they differ). */
function sharedScope(events: readonly TraceEvent[]): {
  user: string | null | undefined;
  thread: string | null | undefined;
} {
  return {
    user: sharedValue(events.map((e) => e.user_id)),
    thread: sharedValue(events.map((e) => e.thread_id)),
  };
}

function headFacts(
  root: RootRead,
  scope: InspectData["request"]["scope"],
  shared: ReturnType<typeof sharedScope>,
): string {
  const events = root.events;
  const starts = events.map((e) => Date.parse(e.started_at ?? e.ts));
  const ends = events.map((e) =>
    Date.parse(e.ended_at ?? e.started_at ?? e.ts)
  );
  const span = Math.max(...ends) - Math.min(...starts);
  const errors = events.filter((e) => e.status === "error").length;
  const who = scope.agent_ids?.length
    ? `agent ${scope.agent_ids.join(", ")}`
    : scope.memory_ids?.length
    ? `memory ${scope.memory_ids.join(", ")}`
    : "every agent";
  const within = [
    scope.thread_id ? `thread ${scope.thread_id}` : null,
    scope.turn_id ? `turn ${scope.turn_id}` : null,
    scope.run_id ? `run ${scope.run_id}` : null,
  ].filter(Boolean);
  const whose = [
    shared.user === undefined ? null : `user ${userText(shared.user)}`,
    shared.thread === undefined || shared.thread === null || scope.thread_id
      ? null
      : `thread ${shared.thread}`,
  ].filter(Boolean);
  return `${
    plural(events.length, "event")
  } of ${who} in application ${root.application_id}${
    whose.length ? ` (${whose.join(", ")})` : ""
  }${within.length ? ` within ${within.join(", ")}` : ""}, over ${
    formatDuration(span)
  }; ${plural(errors, "error")}.`;
}

function laneChips(
  params: URLSearchParams,
  data: InspectData,
  current: LineageLane | undefined,
): Chip[] {
  const lineage = data.lineage!;
  return [
    {
      label: "All lanes",
      href: hrefOf(INSPECT_PATH, withParams(params, { lane: null })),
      current: current === undefined,
    },
    ...LINEAGE_LANES.map((lane) => ({
      label: LANE_TITLES[lane],
      count: lineage.lanes[lane].length,
      href: `${hrefOf(INSPECT_PATH, withParams(params, { lane }))}#lineage`,
      current: current === lane,
    })),
  ];
}

function kindChips(
  params: URLSearchParams,
  events: readonly TraceEvent[],
  current: readonly string[],
): Chip[] {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  return [
    {
      label: "All kinds",
      count: events.length,
      href: `${
        hrefOf(INSPECT_PATH, withParams(params, { kind: null }))
      }#timeline`,
      current: current.length === 0,
    },
    ...[...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((
      [kind, n],
    ) => ({
      label: kind,
      count: n,
      href: `${hrefOf(INSPECT_PATH, withParams(params, { kind }))}#timeline`,
      current: current.length === 1 && current[0] === kind,
    })),
  ];
}

function statusChips(
  params: URLSearchParams,
  events: readonly TraceEvent[],
  current: readonly string[],
): Chip[] {
  const errors = events.filter((e) => e.status === "error").length;
  return [
    {
      label: "Any status",
      href: `${
        hrefOf(INSPECT_PATH, withParams(params, { status: null }))
      }#timeline`,
      current: current.length === 0,
    },
    {
      label: "Errors",
      count: errors,
      href: `${
        hrefOf(INSPECT_PATH, withParams(params, { status: "error" }))
      }#timeline`,
      current: current.length === 1 && current[0] === "error",
    },
  ];
}

const CompareForm: FC<{ root: RootRead; params: URLSearchParams }> = (
  { root, params },
) => (
  <Section
    id="compare"
    title="Compare"
    intro="Set this root as the baseline and name a candidate root to see their structural differences (nothing is run)."
  >
    <form class="finder-form" method="get" action={COMPARE_PATH}>
      <input type="hidden" name="baseline" value={root.root_trace_id} />
      <input
        type="hidden"
        name="baseline_application_id"
        value={root.application_id ?? ""}
      />
      {params.has("from")
        ? <input type="hidden" name="from" value={params.get("from")!} />
        : null}
      <label for="compare-candidate">Candidate root id</label>
      <div class="finder-form__row">
        <input
          type="text"
          id="compare-candidate"
          name="candidate"
          autocomplete="off"
          spellcheck={false}
          required
        />
        <button type="submit">Compare</button>
      </div>
    </form>
  </Section>
);

const NothingRead: FC<
  { data: InspectData; back: string; dataFlags: string }
> = (
  { data, back, dataFlags },
) => (
  <>
    <PageHead
      eyebrow="Traces · inspect"
      title={`Root ${data.request.scope.root_trace_id}`}
      status="unknown"
      reason={data.provisioned
        ? "No stored event of this root is in your scope under this selection."
        : "There is no observability index yet."}
      meta={<a href={back}>Back to the finder</a>}
    />
    {data.provisioned
      ? (
        <EmptyState title="Nothing to inspect">
          Check the root id and the application, agent, thread, turn, run and
          time filters of this URL; the finder lists the roots that exist.
        </EmptyState>
      )
      : (
        <EmptyState
          title="The observability index does not exist yet"
          command={withDataFlags("trace obs init", dataFlags)}
        >
          This database has no observability tables.
        </EmptyState>
      )}
  </>
);

/** Whether the view shows fewer events than were read. */
export function narrowed(request: InspectRequest): boolean {
  return request.kinds.length > 0 || request.statuses.length > 0 ||
    request.lane !== undefined;
}

/** The lanes an event places refs in. */
export function lanesOf(event: TraceEvent): Set<LineageLane> {
  const lanes = new Set<LineageLane>();
  for (const ref of event.resources) {
    if (
      ref.role === "expected" || ref.role === "retrieved" ||
      ref.role === "supplied" || ref.role === "output_bound"
    ) lanes.add(ref.role);
  }
  for (const candidate of event.selection?.candidates ?? []) {
    lanes.add("retrieved");
    if (candidate.selected) lanes.add("supplied");
  }
  return lanes;
}

/** The events the view shows. */
export function shownEvents(
  events: readonly TraceEvent[],
  request: InspectRequest,
): TraceEvent[] {
  return events.filter((event) =>
    (request.kinds.length === 0 || request.kinds.includes(event.kind)) &&
    (request.statuses.length === 0 ||
      request.statuses.includes(event.status)) &&
    (request.lane === undefined || lanesOf(event).has(request.lane))
  );
}

/**
 * The reveal of the selected event's stored preview: the form for an
 * administrator, disabled with the reason for everyone else. A reveal names
 * the event's agent; an event of a memory alone cannot be revealed here.
 */
const SelectedReveal: FC<
  { event: TraceEvent; data: InspectData; csrf: string | null }
> = ({ event, data, csrf }) => {
  const capability = event.agent_id === null
    ? {
      ...data.controls.reveal,
      allowed: false,
      reason: null,
      message:
        "A reveal names the event's agent, and this event has none (it belongs to a memory)",
    }
    : data.controls.reveal;
  return (
    <div class="reveal" id="reveal">
      <h3>Reveal its content preview</h3>
      <RevealForm
        id="reveal-selected"
        target={{
          agent_id: event.agent_id ?? "",
          root_trace_id: event.root_trace_id,
          event_id: event.event_id,
          application_id: event.application_id,
          turn_id: event.turn_id,
        }}
        capability={capability}
        csrf={csrf}
      />
    </div>
  );
};

/** Turns offered as narrower replay selections. */
const TURNS_OFFERED = 12;

/**
 * The replay draft of what this page reads (the root, or the turn or run it
 * is narrowed to), and links that narrow the read to one turn when the root
 * has several: a draft freezes exactly the window inspected.
 */
const ReplaySection: FC<{
  data: InspectData;
  params: URLSearchParams;
  events: readonly TraceEvent[];
  csrf: string | null;
}> = ({ data, params, events, csrf }) => {
  const replay = data.replay!;
  const turns = data.request.scope.turn_id === undefined
    ? [...new Set(events.flatMap((e) => e.turn_id === null ? [] : [e.turn_id]))]
    : [];
  return (
    <Section
      id="replay"
      title="Replay draft"
      intro="Freezes the refs and an evidence fingerprint of this selection as an inert, reviewable draft: execution disabled, no network, no side effects. Creating one runs nothing."
    >
      <div class="panel">
        <ReplayDraftForm
          id="replay-root"
          target={replay.target}
          label={replay.label}
          unavailable={replay.unavailable}
          draft={data.controls.replay_draft}
          plan={data.controls.replay_plan}
          csrf={csrf}
        />
        {turns.length > 1
          ? (
            <p class="meta">
              This root has {turns.length}{" "}
              turns; a draft of one turn leaves the others' refs out. Inspect
              one turn to draft it:{" "}
              {turns.slice(0, TURNS_OFFERED).map((turn, i) => (
                <>
                  {i > 0 ? ", " : ""}
                  <a
                    href={`${
                      hrefOf(
                        INSPECT_PATH,
                        withParams(params, { turn_id: turn, selected: null }),
                      )
                    }#replay`}
                  >
                    turn <Shown text={turn} />
                  </a>
                </>
              ))}
              {turns.length > TURNS_OFFERED ? ", …" : ""}
            </p>
          )
          : null}
      </div>
    </Section>
  );
};
