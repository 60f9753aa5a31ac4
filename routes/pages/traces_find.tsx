/**
 * `/traces/find` and `/traces/find.json`: the incident finder. One box takes
 * an opaque id of any kind (event, root, turn, run, thread, memory or
 * resource); filters narrow by tenant, agent or memory, thread, kind,
 * status and time. Results are task scopes (application + root), newest
 * first, a bounded page at a time. The selected event leads the page and is
 * highlighted and kept in every link; a thread's refs served after their
 * deletion are called out; the agent/thread overview sits closed below.
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import {
  type ActionCapability,
  ScopeError,
  tenantOf,
} from "../../lib/auth/mod.ts";
import type { TraceDb } from "../../lib/db.ts";
import type { TraceEvent } from "../../lib/obs/mod.ts";
import {
  type FindPage,
  findTraceRoots,
  lookupEvent,
  readThreadEvidence,
  type ThreadEvidence,
  type TraceFilter,
  traceFilterFromParams,
  type TraceOverview,
  traceOverview,
} from "../../lib/obs/query/mod.ts";
import { capabilityOf } from "../access.ts";
import { obsProvisioned } from "./_obs_ready.ts";
import { DeletionEvidence } from "../ui/components/deletion_evidence.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import {
  EventDetail,
  SelectedEventSection,
} from "../ui/components/event_detail.tsx";
import {
  FINDER_FIELDS,
  FINDER_HIDDEN,
  FINDER_NOTICE,
  FinderForm,
  finderInputId,
  finderLabel,
  hasFilters,
} from "../ui/components/finder_form.tsx";
import { AccountResolveForm } from "../ui/components/operator_controls.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { RootGroups } from "../ui/components/root_groups.tsx";
import { Section } from "../ui/components/section.tsx";
import { Shown } from "../ui/components/shown_text.tsx";
import { EvidenceFacts } from "../ui/components/trace_bits.tsx";
import { TraceOverviewPanel } from "../ui/components/trace_overview.tsx";
import type { UiEnv } from "../ui/context.ts";
import {
  type EventFieldsRow,
  fieldsKey,
  type MappedFields,
  mappedFields,
} from "../ui/event_fields.ts";
import { runOfEvent } from "../ui/links.ts";
import { formatCount } from "../ui/format.ts";
import {
  type FormRefusal,
  formRefusal,
  namedFields,
  RefusalNotice,
  refusalStatus,
} from "../ui/form_refusal.tsx";
import type { PageSpec, PageView } from "../ui/page.ts";
import { nextTurn } from "../ui/turn.ts";
import {
  cleanParams,
  eventPageHref,
  FIND_PATH,
  type FinderRequest,
  hrefOf,
  inspectEventHref,
  outsideScope,
  parseFinderParams,
  type SelectedRef,
  withParams,
} from "../ui/trace_params.ts";
import { ID_FIELD_WORDS, plural } from "../ui/trace_words.ts";
import { withDataFlags } from "../ui/printed_command.ts";
import { shellWord } from "../../lib/shell_word.ts";

/** The selected event as the finder found it. */
export interface SelectedEvent {
  ref: SelectedRef;
  /** Events with that id in scope (several when applications reuse it). */
  matches: TraceEvent[];
}

/** The data of the finder and its JSON twin. */
export interface FinderData {
  request: {
    q: string | null;
    filter: TraceFilter;
    selected: SelectedRef | null;
    cursor: string | null;
  };
  /** False when the database has no observability index yet. */
  provisioned: boolean;
  selected: SelectedEvent | null;
  page: FindPage | null;
  /** Refs served after their deletion, when the search names one thread. */
  thread_evidence: ThreadEvidence | null;
  overview: TraceOverview | null;
  /** Tool, model, tokens, user and thread of each event the page lists (its groups' latest and the selected). */
  event_fields: EventFieldsRow[];
  /** The controls the page offers this operator: account resolution, and links to run pages. */
  controls: FinderControls;
}

/**
 * A search the finder refused, as its page shows it (never its JSON twin,
 * which answers with the error): the form again, filled with what was typed.
 */
export interface RefusedFinder {
  refused: FormRefusal;
  /**
   * The hidden parameters the refusal is about, which the form leaves out:
   * nobody can see or correct them there, so sending it again as it was
   * would only be refused again.
   */
  dropped: string[];
  controls: FinderControls;
}

/** What the finder's controls may do for this principal. */
export interface FinderControls {
  account_resolve: ActionCapability;
  /** Whether run pages open for this operator (a deletion run's root links to its page). */
  runs_read: ActionCapability;
}

/** The finder over `db`. */
export function findPage(db: TraceDb): PageSpec<FinderData | RefusedFinder> {
  return {
    path: FIND_PATH,
    title: "Find incidents",
    load: (c) => loadFinder(db, c),
    render: (data, view) =>
      "refused" in data
        ? <RefusedBody data={data} view={view} />
        : <FinderBody data={data} view={view} />,
    status: (data) => refusalStatus("refused" in data ? data.refused : null),
  };
}

/** A time as people type it: `2026-11-29 10:00` (or with a `T`, seconds optional), no zone. */
const ZONELESS_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?$/;

/**
 * The finder's query with each time typed without a zone (`2026-11-29
 * 10:00`) spelt as the UTC timestamp the filters read
 * (`2026-11-29T10:00:00Z`), or `null` when there is none to rewrite. A
 * value the filter parser would refuse even so (a February 30) is left as
 * typed, for the page to refuse.
 */
export function finderTimesInUtc(
  params: URLSearchParams,
): URLSearchParams | null {
  const next = new URLSearchParams(params);
  let changed = false;
  for (const key of ["start_time", "end_time"]) {
    const values = params.getAll(key);
    if (values.length !== 1) continue;
    const typed = ZONELESS_TIME.exec(values[0]!.trim());
    if (!typed) continue;
    const utc = `${typed[1]}T${typed[2]}${typed[3] ?? ":00"}Z`;
    try {
      traceFilterFromParams(new URLSearchParams({ [key]: utc }));
    } catch {
      continue;
    }
    next.set(key, utc);
    changed = true;
  }
  return changed ? next : null;
}

/** The names of the fields the form shows. */
const FIELD_NAMES = FINDER_FIELDS.map(([name]) => name);

async function loadFinder(
  db: TraceDb,
  c: Context<UiEnv>,
): Promise<FinderData | RefusedFinder> {
  const params = cleanParams(new URL(c.req.url).searchParams);
  const controls = {
    account_resolve: capabilityOf(c, "account.resolve"),
    runs_read: capabilityOf(c, "runs.read"),
  };
  const scope = c.get("principal").scope;
  // A selection whose application is outside the scope is refused as such,
  // though the refusal names application_id: that field is at fault only
  // when it is outside too. Otherwise a field the query does not hold
  // cannot be the one to correct.
  const selection = params.get("selected_application_id");
  const selectionOutside = selection !== null &&
    outsideScope(scope, selection);
  const fieldsAtFault = (message: string) =>
    namedFields(message, FIELD_NAMES).filter((name) =>
      params.has(name) &&
      !(selectionOutside && name === "application_id" &&
        !outsideScope(scope, params.get(name)!))
    );
  let request: FinderRequest;
  try {
    request = parseFinderParams(params, scope);
  } catch (error) {
    const refused = formRefusal(c, error, fieldsAtFault);
    const dropped = namedFields(refused.message, FINDER_HIDDEN).filter((
      name,
    ) => params.has(name));
    if (selectionOutside && error instanceof ScopeError) {
      dropped.push("selected_application_id");
    }
    return { refused, dropped: [...new Set(dropped)], controls };
  }
  const echo = {
    q: request.q ?? null,
    filter: request.filter,
    selected: request.selected ?? null,
    cursor: request.cursor ?? null,
  };
  const empty = {
    request: echo,
    selected: null,
    page: null,
    thread_evidence: null,
    overview: null,
    event_fields: [],
    controls,
  };
  if (!(await obsProvisioned(db))) return { ...empty, provisioned: false };
  let page: FindPage;
  try {
    page = await findTraceRoots(db, {
      filter: request.filter,
      ...(request.q === undefined ? {} : { q: request.q }),
      ...(request.cursor === undefined ? {} : { cursor: request.cursor }),
    });
  } catch (error) {
    // The read itself refuses a cursor of other filters or of another index.
    return {
      refused: formRefusal(c, error, fieldsAtFault),
      dropped: [],
      controls,
    };
  }
  const fields = page.q_matches?.map((m) => m.field) ?? [];
  const tenant = tenantOf(request.filter);
  const thread = threadOf(request, page);
  await nextTurn();
  const selected = request.selected
    ? await selectedEvent(db, request.selected, tenant)
    : null;
  const evidence = thread === null
    ? null
    : await readThreadEvidence(db, thread, tenant);
  await nextTurn();
  const listed = await listedFields(db, page, tenant);
  await nextTurn();
  const overview = await traceOverview(
    db,
    request.filter,
    request.q === undefined ? {} : { q: request.q, fields },
  );
  return {
    ...empty,
    provisioned: true,
    selected,
    page,
    thread_evidence: evidence,
    overview,
    event_fields: [
      ...listed,
      ...(selected?.matches ?? []).map((event) => fieldsRow(event)),
    ],
  };
}

/** Groups read between turns of the event loop while their events' fields are looked up. */
const GROUPS_PER_TURN = 5;

/**
 * The mapped fields of each group's latest events. The finder's own read
 * carries no payload, so each listed event (at most 5 per group, 20 groups
 * a page) is looked up by its id through the event-id index.
 */
async function listedFields(
  db: TraceDb,
  page: FindPage,
  tenant: Pick<TraceFilter, "application_id" | "user_id">,
): Promise<EventFieldsRow[]> {
  const rows: EventFieldsRow[] = [];
  for (const [i, group] of page.groups.entries()) {
    for (const listed of group.latest) {
      const [event] = await lookupEvent(db, listed.event_id, {
        ...tenant,
        application_id: group.application_id,
      });
      if (event) rows.push(fieldsRow(event));
    }
    if ((i + 1) % GROUPS_PER_TURN === 0) await nextTurn();
  }
  return rows;
}

function fieldsRow(event: TraceEvent): EventFieldsRow {
  return {
    application_id: event.application_id,
    event_id: event.event_id,
    ...mappedFields(event),
  };
}

/** The fields of `rows` by application and event id. */
function fieldsIndex(
  rows: readonly EventFieldsRow[],
): Map<string, MappedFields> {
  return new Map(
    rows.map((row) => [fieldsKey(row.application_id, row.event_id), row]),
  );
}

/** The one thread the search names: a thread filter, or a `q` that matched only a thread. */
function threadOf(request: FinderRequest, page: FindPage): string | null {
  if (request.filter.thread_id !== undefined) return request.filter.thread_id;
  const matches = page.q_matches ?? [];
  if (matches.length === 1 && matches[0]!.field === "thread_id") {
    return request.q ?? null;
  }
  return null;
}

async function selectedEvent(
  db: TraceDb,
  ref: SelectedRef,
  tenant: Pick<TraceFilter, "application_id" | "user_id">,
): Promise<SelectedEvent> {
  const found = await lookupEvent(db, ref.event_id, tenant);
  return {
    ref,
    matches: ref.application_id === undefined
      ? found
      : found.filter((e) => e.application_id === ref.application_id),
  };
}

const FinderBody: FC<{ data: FinderData; view: PageView }> = (
  { data, view },
) => {
  const params = cleanParams(view.url.searchParams);
  if (!data.provisioned) {
    return (
      <>
        <FinderHead sentence="There is no observability index to search yet." />
        <EmptyState
          title="The observability index does not exist yet"
          command={withDataFlags("trace obs init", view.dataFlags)}
        >
          This database has no observability tables. Create them, then send
          events (trace serve creates them when it starts with write access).
        </EmptyState>
      </>
    );
  }
  const page = data.page!;
  return (
    <>
      <FinderHead sentence={headline(data)} />
      {data.selected
        ? (
          <SelectedPanel
            selected={data.selected}
            params={params}
            view={view}
            runsRead={data.controls.runs_read.allowed}
          />
        )
        : null}
      {data.thread_evidence
        ? (
          <Section
            id="deletion-evidence"
            title={`Thread ${data.thread_evidence.thread_id}: refs served after deletion`}
          >
            <DeletionEvidence
              evidence={data.thread_evidence}
              params={params}
              now={view.now}
            />
          </Section>
        )
        : null}
      <AccountResolveForm
        capability={data.controls.account_resolve}
        csrf={view.csrf ?? null}
      />
      <FinderForm params={params} />
      <ResultsSection page={page} params={params} data={data} view={view} />
      {data.overview
        ? (
          <TraceOverviewPanel
            overview={data.overview}
            params={params}
            open={!data.selected && !params.has("cursor")}
            now={view.now}
          />
        )
        : null}
      <RawJson value={data} href={view.jsonHref} />
    </>
  );
};

/**
 * A refusal's reason as the form words it: a time field also takes the
 * zoneless UTC form its note shows (`finderTimesInUtc`), which the
 * filter's own message, shared with scripts, does not name.
 */
function finderReason(message: string): string {
  return message
    .replace(/^Invalid trace (?:page )?query: /, "")
    .replace(
      /(start_time|end_time): must be an ISO 8601 timestamp with a zone, e\.g\. \S+/g,
      (_, name: string) =>
        `${name}: must be a date and time in UTC such as 2026-11-29 10:00, or an ISO 8601 timestamp with a zone such as 2026-11-29T10:00:00Z`,
    );
}

/**
 * The finder after a refused search: the notice, and the form as it was
 * sent, less the hidden values the refusal is about.
 */
const RefusedBody: FC<{ data: RefusedFinder; view: PageView }> = (
  { data, view },
) => {
  const params = cleanParams(view.url.searchParams);
  for (const name of data.dropped) params.delete(name);
  return (
    <>
      <FinderHead sentence="Correct the search below to see its tasks." />
      <RefusalNotice
        id={FINDER_NOTICE}
        refusal={data.refused}
        outcome="Nothing was searched"
        retry="search again"
        fields={data.refused.fields.map((name) => ({
          id: finderInputId(name),
          label: finderLabel(name),
        }))}
        reason={finderReason(data.refused.message)}
      />
      {data.dropped.length > 0
        ? (
          <p>
            {`The form below leaves out ${
              data.dropped.join(", ")
            }, which it has no field to correct: search again without ${
              data.dropped.length === 1 ? "it" : "them"
            }.`}
          </p>
        )
        : null}
      {params.has("cursor")
        ? (
          <p>
            The form starts from the first page:{" "}
            <a href={hrefOf(FIND_PATH, withParams(params, { cursor: null }))}>
              search these filters from the first page
            </a>.
          </p>
        )
        : null}
      <AccountResolveForm
        capability={data.controls.account_resolve}
        csrf={view.csrf ?? null}
      />
      <FinderForm params={params} refusal={data.refused} />
    </>
  );
};

const FinderHead: FC<{ sentence: string }> = ({ sentence }) => (
  <div class="page-head">
    <p class="eyebrow">Traces</p>
    <h1>Find incidents</h1>
    <p class="lead" role="status">
      <Shown text={sentence} />
    </p>
  </div>
);

function headline(data: FinderData): string {
  const page = data.page!;
  const q = data.request.q;
  const groups = page.groups.length;
  if (q !== null && page.q_matches?.length === 0) {
    return `No event, root, turn, run, thread, memory or resource id “${q}” in your scope.`;
  }
  const matched = q !== null
    ? `“${q}” is ${
      page.q_matches!.map((m) =>
        `a ${ID_FIELD_WORDS[m.field]} (${m.capped ? "over " : ""}${
          plural(m.events, "event")
        })`
      ).join(" and ")
    }. `
    : "";
  if (groups === 0) {
    return `${matched}No task matches${
      page.has_more ? " on this page; the next page reads further back" : ""
    }.`;
  }
  const first = data.request.cursor === null ? "" : "More: ";
  return `${matched}${first}${plural(groups, "task")} (root${
    groups === 1 ? "" : "s"
  }), newest first${page.has_more ? "; more on the next page" : ""}.`;
}

const SelectedPanel: FC<
  {
    selected: SelectedEvent;
    params: URLSearchParams;
    view: PageView;
    runsRead: boolean;
  }
> = ({ selected, params, view, runsRead }) => {
  const matches = selected.matches;
  const id = selected.ref.event_id;
  if (matches.length === 0) {
    return (
      <Section id="selected" title="Selected event">
        <EmptyState title={`No event "${id}" in your scope`}>
          The selected event is not in the index (or not within your tenant
          scope).{" "}
          <a
            href={hrefOf(
              FIND_PATH,
              withParams(params, {
                selected: null,
                selected_application_id: null,
              }),
            )}
          >
            Clear the selection
          </a>
        </EmptyState>
      </Section>
    );
  }
  if (matches.length > 1) {
    return (
      <Section
        id="selected"
        title="Selected event"
        intro={`Event id "${id}" is used in ${matches.length} applications; choose one.`}
      >
        <ul class="choices">
          {matches.map((event) => (
            <li>
              <a
                href={hrefOf(
                  FIND_PATH,
                  withParams(params, {
                    selected_application_id: event.application_id,
                  }),
                )}
              >
                <Shown text={event.kind} /> in application{" "}
                <Shown text={event.application_id} />
              </a>
            </li>
          ))}
        </ul>
      </Section>
    );
  }
  const event = matches[0]!;
  const run = runsRead ? runOfEvent(event) : null;
  return (
    <SelectedEventSection>
      <EventDetail event={event} now={view.now} />
      <p class="actions">
        <a class="button" href={inspectEventHref(event, params, event)}>
          Inspect its root
        </a>
        <a href={eventPageHref(event)}>Event page</a>
        {run
          ? (
            <a href={run}>
              Open run <Shown text={event.root_trace_id} />
            </a>
          )
          : null}
      </p>
    </SelectedEventSection>
  );
};

const ResultsSection: FC<{
  page: FindPage;
  params: URLSearchParams;
  data: FinderData;
  view: PageView;
}> = ({ page, params, data, view }) => {
  const scan = page.window.scan_limit
    ? ` The filters have no index of their own, so each page examines at most the newest ${
      formatCount(page.window.scan_limit)
    } events of the index; the next page continues further back.`
    : "";
  return (
    <Section
      id="results"
      title="Tasks"
      intro={`Grouped by root, newest matching event first. This page read ${
        plural(page.window.events_read, "matching event")
      } (at most ${formatCount(page.window.limit)}).${scan}`}
    >
      <div class="facts-row">
        <EvidenceFacts
          facts={page}
          bound={page.window.scan_limit
            ? `the newest ${formatCount(page.window.scan_limit)} events`
            : `${formatCount(page.window.limit)} events a page`}
        />
      </div>
      {page.groups.length === 0
        ? <NoResults page={page} params={params} view={view} />
        : (
          <RootGroups
            groups={page.groups}
            params={params}
            selected={data.request.selected ?? undefined}
            now={view.now}
            fields={fieldsIndex(data.event_fields)}
            runPages={data.controls.runs_read.allowed}
          />
        )}
      <Pager page={page} params={params} first={data.request.cursor === null} />
    </Section>
  );
};

const Pager: FC<
  { page: FindPage; params: URLSearchParams; first: boolean }
> = ({ page, params, first }) => {
  if (first && !page.has_more) return null;
  return (
    <nav class="pager" aria-label="Result pages">
      {first
        ? null
        : (
          <a href={hrefOf(FIND_PATH, withParams(params, { cursor: null }))}>
            First page
          </a>
        )}
      {page.next_cursor
        ? (
          <a
            rel="next"
            href={hrefOf(
              FIND_PATH,
              withParams(params, { cursor: page.next_cursor }),
            )}
          >
            Next page
          </a>
        )
        : <span class="meta">Last page</span>}
    </nav>
  );
};

/** Why the page lists no task, and what would fill it. */
const NoResults: FC<
  { page: FindPage; params: URLSearchParams; view: PageView }
> = (
  { page, params, view },
) => {
  if (page.has_more) {
    return (
      <EmptyState title="No task matches on this page">
        None on this page: follow the next page to read further back.
      </EmptyState>
    );
  }
  if (page.q === null && !hasFilters(params)) {
    return (
      <EmptyState
        title="No trace events in your scope yet"
        command={withDataFlags(
          `trace events ingest events.ndjson\ntrace demo --trace-to ${
            shellWord(view.serverOrigin)
          }`,
          view.dataFlags,
        )}
      >
        Events arrive through POST /api/events (JSON or NDJSON), POST /v1/traces
        (OTLP/HTTP from an OpenTelemetry exporter), the recorder in mod.ts, or
        the commands below; every deletion run also records its own events.
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No task matches">
      Nothing in your scope matches the id and filters. Widen the filters, or
      check the id (ids are matched exactly:{" "}
      <a href={FIND_PATH}>clear the search</a>).
    </EmptyState>
  );
};
