/**
 * `/runs` and `/runs.json`: every run this data directory knows (external
 * and reference, completed, running and interrupted), newest first,
 * filtered by target, verdict, kind and state, a page at a time. Filters
 * and the cursor live in the URL, so a filtered page can be shared.
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { UsageError } from "../../lib/errors.ts";
import {
  newestFirst,
  runCatalog,
  type RunSummary,
} from "../../lib/runs/mod.ts";
import { EmptyState } from "../ui/components/empty_state.tsx";
import type { UiEnv } from "../ui/context.ts";
import { runsHref } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import type { RunSource } from "../ui/run_view.ts";
import { RunTable, withJobStates } from "../ui/run_list.tsx";

/** Runs per page. */
export const RUNS_PAGE_SIZE = 50;

const VERDICTS = ["PASS", "FAIL", "INCONCLUSIVE"] as const;
const KINDS = ["external", "reference"] as const;
const STATES = ["completed", "running", "interrupted"] as const;

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
}

/** The runs list over `source`. */
export function runsPage(source: RunSource): PageSpec<RunsPageData> {
  return {
    path: "/runs",
    title: "Runs",
    query: ["target", "verdict", "kind", "state", "cursor"],
    load: (c) => loadRuns(source, c),
    render: (data, view) => <RunsBody data={data} view={view} />,
  };
}

async function loadRuns(
  source: RunSource,
  c: Context<UiEnv>,
): Promise<RunsPageData> {
  const filters = parseFilters(c);
  const cursor = c.req.query("cursor");
  const after = cursor ? decodeCursor(cursor) : null;
  const all = await withJobStates(
    await runCatalog(source.db, { dataDir: source.dataDir ?? undefined }),
    source.jobs,
  );
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
    targets: [...new Set(all.map((run) => run.target_id))].sort(),
  };
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
      `Invalid ${name} ${JSON.stringify(value)}: expected one of ${
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

const RunsBody: FC<{ data: RunsPageData; view: PageView }> = (
  { data, view },
) => {
  const f = data.filters;
  const filtered = Object.keys(f).length > 0;
  return (
    <>
      <div class="page-head">
        <p class="eyebrow">Runs</p>
        <div class="title-row">
          <h1>Runs</h1>
        </div>
        <p class="meta">
          {filtered
            ? `${data.matching} of ${data.total} runs match these filters, newest first.`
            : `${data.total} run${
              data.total === 1 ? "" : "s"
            }, newest first: external runs against staging targets and reference runs of the in-process systems.`}
        </p>
      </div>
      <FilterForm data={data} />
      {data.total === 0
        ? (
          <EmptyState
            title="No runs yet"
            command={FIRST_RUNS}
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

function filterParams(f: RunFilters): Record<string, string | undefined> {
  return { target: f.target, verdict: f.verdict, kind: f.kind, state: f.state };
}

const FilterForm: FC<{ data: RunsPageData }> = ({ data }) => {
  const f = data.filters;
  return (
    <form
      class="filters"
      method="get"
      action="/runs"
      role="search"
      aria-label="Filter runs"
    >
      <Select
        name="target"
        label="Target"
        value={f.target}
        options={data.targets.includes(f.target ?? "") || !f.target
          ? data.targets
          : [...data.targets, f.target]}
      />
      <Select
        name="verdict"
        label="Verdict"
        value={f.verdict}
        options={VERDICTS}
      />
      <Select name="kind" label="Kind" value={f.kind} options={KINDS} />
      <Select name="state" label="State" value={f.state} options={STATES} />
      <div class="filters__actions">
        <button type="submit" class="button--primary">Filter</button>
        {Object.keys(f).length > 0 ? <a href="/runs">Clear</a> : null}
      </div>
    </form>
  );
};

const Select: FC<{
  name: string;
  label: string;
  value: string | undefined;
  options: readonly string[];
}> = ({ name, label, value, options }) => (
  <div class="filters__field">
    <label for={`filter-${name}`}>{label}</label>
    <select id={`filter-${name}`} name={name}>
      <option value="" selected={value === undefined}>any</option>
      {options.map((option) => (
        <option value={option} selected={option === value}>{option}</option>
      ))}
    </select>
  </div>
);
