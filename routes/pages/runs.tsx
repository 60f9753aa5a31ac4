/**
 * `/runs` and `/runs.json`: every run this data directory knows (external
 * and reference, completed, running and interrupted), newest first,
 * filtered by target, verdict, kind and state, a page at a time. Filters
 * and the cursor live in the URL, so a filtered page can be shared. A
 * filter the page refuses comes back to a browser as the page, with the
 * form as sent and the filter to correct marked (its twin keeps the error).
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { UsageError } from "../../lib/errors.ts";
import { quoteValue } from "../../lib/echo.ts";
import {
  newestFirst,
  runCatalog,
  type RunSummary,
} from "../../lib/runs/mod.ts";
import { EmptyState } from "../ui/components/empty_state.tsx";
import type { UiEnv } from "../ui/context.ts";
import {
  type FormRefusal,
  formRefusal,
  invalidField,
  RefusalNotice,
  refusalStatus,
  refusedInputs,
} from "../ui/form_refusal.tsx";
import { runsHref } from "../ui/links.ts";
import { type PageSpec, type PageView, refuseOtherQuery } from "../ui/page.ts";
import type { RunSource } from "../ui/run_view.ts";
import { RunTable, withJobStates } from "../ui/run_list.tsx";
import { withDataFlags } from "../ui/printed_command.ts";

/** Runs per page. */
export const RUNS_PAGE_SIZE = 50;

const VERDICTS = ["PASS", "FAIL", "INCONCLUSIVE"] as const;
const KINDS = ["external", "reference"] as const;
const STATES = ["completed", "running", "interrupted"] as const;

/** The filters, in form order: query parameter, select id and label. */
const FILTERS = [
  ["target", "filter-target", "Target"],
  ["verdict", "filter-verdict", "Verdict"],
  ["kind", "filter-kind", "Kind"],
  ["state", "filter-state", "State"],
] as const;

/** The query parameters the page reads: its filters and the cursor. */
const RUNS_QUERY = [...FILTERS.map(([name]) => name), "cursor"];

/** The filters of the runs list (absent: any). */
export interface RunFilters {
  target?: string;
  verdict?: typeof VERDICTS[number];
  kind?: typeof KINDS[number];
  state?: typeof STATES[number];
}

/** The data of `/runs` and `/runs.json`. */
export interface RunsPageData {
  schema: "trace.ui.runs/1";
  filters: RunFilters;
  /** This page of runs, newest first. */
  runs: RunSummary[];
  /** Runs matching the filters, over every page. */
  matching: number;
  /** Runs known in all. */
  total: number;
  /** Pass as `cursor` for the next (older) page; `null` on the last page. */
  next_cursor: string | null;
  /** Whether this page starts after a cursor (it is not the newest page). */
  paged: boolean;
  /** Target ids that have runs, for the target filter. */
  targets: string[];
  /**
   * Why no run was listed: on the page only (its JSON twin answers with the
   * error), which offers the filters again as sent.
   */
  refused?: FormRefusal;
}

/** The runs list over `source`. */
export function runsPage(source: RunSource): PageSpec<RunsPageData> {
  return {
    path: "/runs",
    title: "Runs",
    // The loader checks its query itself, to show a refusal on the page.
    load: (c) => loadRuns(source, c),
    render: (data, view) => <RunsBody data={data} view={view} />,
    status: (data) => refusalStatus(data.refused),
  };
}

async function loadRuns(
  source: RunSource,
  c: Context<UiEnv>,
): Promise<RunsPageData> {
  let filters: RunFilters;
  let after: Pick<RunSummary, "started_at" | "run_id"> | null;
  try {
    refuseOtherQuery(c, "/runs", RUNS_QUERY);
    filters = parseFilters(c);
    const cursor = c.req.query("cursor");
    after = cursor ? decodeCursor(cursor) : null;
  } catch (error) {
    const params = new URL(c.req.url).searchParams;
    const refused = formRefusal(c, error, (m) => refusedFilters(m, params));
    return refusedPage(await listedRuns(source), refused);
  }
  const all = await listedRuns(source);
  const matching = all.filter((run) => matches(run, filters));
  const start = after
    ? matching.findIndex((run) => newestFirst(run, after) > 0)
    : 0;
  const from = start < 0 ? matching.length : start;
  const page = matching.slice(from, from + RUNS_PAGE_SIZE);
  const more = from + RUNS_PAGE_SIZE < matching.length;
  return {
    schema: "trace.ui.runs/1",
    filters,
    runs: page,
    matching: matching.length,
    total: all.length,
    next_cursor: more && page.length > 0 ? encodeCursor(page.at(-1)!) : null,
    paged: after !== null,
    targets: targetsOf(all),
  };
}

/** Every run the page knows, with this server's jobs' states. */
async function listedRuns(source: RunSource): Promise<RunSummary[]> {
  return await withJobStates(
    await runCatalog(source.db, { dataDir: source.dataDir ?? undefined }),
    source.jobs,
  );
}

function targetsOf(runs: readonly RunSummary[]): string[] {
  return [...new Set(runs.map((run) => run.target_id))].sort();
}

/** The page after a refused query: no run listed, the form to correct. */
function refusedPage(
  all: readonly RunSummary[],
  refused: FormRefusal,
): RunsPageData {
  return {
    schema: "trace.ui.runs/1",
    filters: {},
    runs: [],
    matching: 0,
    total: all.length,
    next_cursor: null,
    paged: false,
    targets: targetsOf(all),
    refused,
  };
}

/** The filters a refusal is about: one given twice, or one whose value was refused. */
function refusedFilters(message: string, params: URLSearchParams): string[] {
  return FILTERS.map(([name]) => name).filter((name) =>
    params.getAll(name).length > 1
      ? message.endsWith(`${name} may be given once`)
      : message.startsWith(`Invalid ${name} `)
  );
}

function parseFilters(c: Context<UiEnv>): RunFilters {
  const filters: RunFilters = {};
  const target = c.req.query("target");
  if (target) filters.target = target;
  const verdict = pick(c, "verdict", VERDICTS);
  if (verdict) filters.verdict = verdict;
  const kind = pick(c, "kind", KINDS);
  if (kind) filters.kind = kind;
  const state = pick(c, "state", STATES);
  if (state) filters.state = state;
  return filters;
}

function pick<T extends string>(
  c: Context<UiEnv>,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = c.req.query(name);
  if (value === undefined || value === "") return undefined;
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!found) {
    throw new UsageError(
      `Invalid ${name} ${quoteValue(value)}: expected one of ${
        allowed.join(", ")
      }`,
    );
  }
  return found;
}

function matches(run: RunSummary, filters: RunFilters): boolean {
  return (filters.target === undefined || run.target_id === filters.target) &&
    (filters.verdict === undefined ||
      (run.verdict === filters.verdict && run.state !== "running")) &&
    (filters.kind === undefined || run.kind === filters.kind) &&
    (filters.state === undefined || run.state === filters.state);
}

/** A cursor names the last run of a page: its start time and id. */
function encodeCursor(run: RunSummary): string {
  return btoa(`${run.started_at}|${run.run_id}`).replace(/=+$/, "")
    .replaceAll("+", "-").replaceAll("/", "_");
}

function decodeCursor(
  cursor: string,
): Pick<RunSummary, "started_at" | "run_id"> {
  try {
    const text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const [startedAt, runId] = text.split("|");
    if (startedAt && runId && !Number.isNaN(Date.parse(startedAt))) {
      return { started_at: startedAt, run_id: runId };
    }
  } catch {
    // Falls through to the refusal.
  }
  throw new UsageError(
    "Invalid cursor: pass the next_cursor of the previous page, or drop it to start from the newest run",
  );
}

const FIRST_RUNS =
  "trace external-run --target my-staging\ntrace reference run";

/** The id of the notice above refused filters. */
const RUNS_NOTICE = "runs-error";

const RunsBody: FC<{ data: RunsPageData; view: PageView }> = (
  { data, view },
) => {
  if (data.refused) {
    return <RefusedRuns data={data} refused={data.refused} view={view} />;
  }
  const f = data.filters;
  const filtered = Object.keys(f).length > 0;
  return (
    <>
      <RunsHead
        sentence={filtered
          ? `${data.matching} of ${data.total} runs match these filters, newest first.`
          : `${data.total} run${
            data.total === 1 ? "" : "s"
          }, newest first: external runs against staging targets and reference runs of the in-process systems.`}
      />
      <FilterForm
        values={f}
        targets={data.targets}
        refusal={null}
        clear={filtered}
      />
      {data.total === 0
        ? (
          <EmptyState
            title="No runs yet"
            command={withDataFlags(FIRST_RUNS, view.dataFlags)}
          >
            Runs appear here once the deletion contract has run against a
            registered target (or from a target's page here), or once the
            reference suite has run.
          </EmptyState>
        )
        : (
          <RunTable
            id="runs-table"
            caption="Runs"
            runs={data.runs}
            now={view.now}
            empty={{
              title: "No run matches these filters",
              text: "Widen the filters or clear them to see every run.",
            }}
          />
        )}
      <nav class="pager" aria-label="Pages">
        {data.paged
          ? <a href={runsHref(filterParams(f))}>Newest runs</a>
          : null}
        {data.next_cursor
          ? (
            <a
              rel="next"
              href={runsHref({ ...filterParams(f), cursor: data.next_cursor })}
            >
              Older runs
            </a>
          )
          : data.runs.length > 0
          ? <span class="meta">No older runs.</span>
          : null}
      </nav>
    </>
  );
};

/** The runs page after a refused query: the notice, and the form as it was sent. */
const RefusedRuns: FC<
  { data: RunsPageData; refused: FormRefusal; view: PageView }
> = ({ data, refused, view }) => {
  const params = view.url.searchParams;
  const typed: Partial<Record<FilterName, string>> = {};
  for (const [name] of FILTERS) {
    const values = params.getAll(name);
    if (values.length > 0) typed[name] = values.join(",");
  }
  return (
    <>
      <RunsHead sentence="Correct the filters below to see the runs." />
      <RefusalNotice
        id={RUNS_NOTICE}
        refusal={refused}
        outcome="No run was listed"
        retry="filter again"
        fields={refusedInputs(refused, FILTERS)}
      />
      <FilterForm
        values={typed}
        targets={data.targets}
        refusal={refused}
        clear
      />
    </>
  );
};

const RunsHead: FC<{ sentence: string }> = ({ sentence }) => (
  <div class="page-head">
    <p class="eyebrow">Runs</p>
    <div class="title-row">
      <h1>Runs</h1>
    </div>
    <p class="meta">{sentence}</p>
  </div>
);

function filterParams(f: RunFilters): Record<string, string | undefined> {
  return { target: f.target, verdict: f.verdict, kind: f.kind, state: f.state };
}

type FilterName = typeof FILTERS[number][0];

const FilterForm: FC<{
  /** Each filter's value: as applied, or as sent when refused. */
  values: Partial<Record<FilterName, string>>;
  targets: readonly string[];
  refusal: FormRefusal | null;
  /** Offer the link that clears every filter. */
  clear: boolean;
}> = ({ values, targets, refusal, clear }) => (
  <form
    class="filters"
    method="get"
    action="/runs"
    role="search"
    aria-label="Filter runs"
  >
    {FILTERS.map(([name, id, label]) => (
      <Select
        name={name}
        id={id}
        label={label}
        value={values[name]}
        options={name === "target"
          ? targets
          : name === "verdict"
          ? VERDICTS
          : name === "kind"
          ? KINDS
          : STATES}
        refusal={refusal}
      />
    ))}
    <div class="filters__actions">
      <button type="submit" class="button--primary">Filter</button>
      {clear ? <a href="/runs">Clear</a> : null}
    </div>
  </form>
);

/**
 * A filter's select. A value none of its options names (a target without
 * runs, or a refused value) is offered as its own selected option, so the
 * form shows and sends again what was typed, never "any".
 */
const Select: FC<{
  name: FilterName;
  id: string;
  label: string;
  value: string | undefined;
  options: readonly string[];
  refusal: FormRefusal | null;
}> = ({ name, id, label, value, options, refusal }) => {
  const offered = value && !options.includes(value)
    ? [...options, value]
    : options;
  return (
    <div class="filters__field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        {...invalidField(refusal, name, RUNS_NOTICE)}
      >
        <option value="" selected={!value}>any</option>
        {offered.map((option) => (
          <option value={option} selected={option === value}>{option}</option>
        ))}
      </select>
    </div>
  );
};
