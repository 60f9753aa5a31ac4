/**
 * `/compare?a=RUN&b=RUN` and its twin: two completed external runs of one
 * target under one contract, typically a failing run and its replay:
 * findings fixed, still present and new, both cleanups side by side (each
 * with what a later `external-cleanup` of it found), and the reminder that
 * a passing replay ran on fresh data. Without both runs the page offers the
 * comparisons the saved regressions suggest.
 *
 * @module
 */

import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { STORES } from "../../lib/contract/protocol.ts";
import type {
  ComparedCleanup,
  FindingKey,
  RunComparison,
} from "../../lib/ledger/compare.ts";
import { UsageError } from "../../lib/errors.ts";
import {
  listRuns,
  readStoredRun,
  validateRunId,
} from "../../lib/ledger/runs.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import type { TraceDb } from "../../lib/db.ts";
import type { Verdict } from "../../lib/runner/report.ts";
import { compareStoredRuns, regressionsOf } from "../../lib/runs/mod.ts";
import { StatusBadge } from "../ui/components/badge.tsx";
import {
  LaterCleanupNote,
  ProblemList,
} from "../ui/components/cleanup_panel.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { STACK_TABLE, stackLabel } from "../ui/components/data_table.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { Time } from "../ui/components/time.tsx";
import type { UiEnv } from "../ui/context.ts";
import { compareHref, runHref, runsHref, targetHref } from "../ui/links.ts";
import {
  type FormRefusal,
  formRefusal,
  invalidField,
  RefusalNotice,
  refusalStatus,
  refusedInputs,
} from "../ui/form_refusal.tsx";
import { type PageSpec, type PageView, refuseOtherQuery } from "../ui/page.ts";
import type { RunSource } from "../ui/run_view.ts";
import { storeShort } from "../ui/run_words.ts";
import { formatUtc } from "../ui/format.ts";
import { withDataFlags } from "../ui/printed_command.ts";

/** A comparison the saved regressions suggest: a source run and its latest replay. */
export interface SuggestedComparison {
  regression_id: string;
  a: string;
  b: string;
}

/** A completed external run the form offers to compare. */
export interface ComparableRun {
  run_id: string;
  target_id: string;
  verdict: Verdict;
  started_at: string;
}

/** The data of `/compare`. */
export interface ComparePageData {
  schema: "trace.ui.compare/1";
  /** `null` until both runs are given. */
  comparison: RunComparison | null;
  suggestions: SuggestedComparison[];
  /** Until both runs are compared: the newest completed external runs, to pick from (at most {@link PICKABLE_RUNS}). */
  runs: ComparableRun[];
  query: { a: string | null; b: string | null };
  /**
   * Why the runs asked for were not compared: on the page only (its JSON
   * twin answers with the error), which offers the form again as sent.
   */
  refused?: FormRefusal;
  /** With a refusal: the targets of the runs asked for that are stored, whose run lists the page links. */
  refused_targets?: string[];
}

/** The compare page over `source`. */
export function comparePage(source: RunSource): PageSpec<ComparePageData> {
  return {
    path: "/compare",
    title: (data) =>
      data.comparison
        ? `Compare ${data.comparison.a.run_id} with ${data.comparison.b.run_id}`
        : "Compare runs",
    // The loader checks its query itself, to show a refusal on the page.
    load: (c) => loadCompare(source, c),
    render: (data, view) => <CompareBody data={data} view={view} />,
    status: (data) => refusalStatus(data.refused),
  };
}

/** The query parameters the page reads: run A and run B. */
const RUN_PARAMS = ["a", "b"] as const;

async function loadCompare(
  source: RunSource,
  c: Context<UiEnv>,
): Promise<ComparePageData> {
  const a = c.req.query("a") || null;
  const b = c.req.query("b") || null;
  const { comparison, refused } = await comparisonOf(source.db, c, a, b);
  const targets = refused ? await targetsOf(source.db, [a, b]) : [];
  const choosing = !comparison && await hasLedger(source.db);
  return {
    schema: "trace.ui.compare/1",
    comparison,
    suggestions: choosing ? await suggestedComparisons(source.db) : [],
    runs: choosing ? await comparableRuns(source.db) : [],
    query: { a, b },
    ...(refused ? { refused } : {}),
    ...(targets.length > 0 ? { refused_targets: targets } : {}),
  };
}

/**
 * The targets of the stored external runs among `ids` (distinct, in
 * order): after a refusal, the page links each one's run list to pick a
 * run of one target. An id that names no stored run adds nothing.
 */
async function targetsOf(
  db: TraceDb,
  ids: readonly (string | null)[],
): Promise<string[]> {
  const targets: string[] = [];
  for (const id of ids) {
    if (id === null) continue;
    try {
      const stored = await readStoredRun(db, "external", validateRunId(id));
      const target = stored?.report.target.id;
      if (target && !targets.includes(target)) targets.push(target);
    } catch {
      // An unreadable run is named by the refusal itself.
    }
  }
  return targets;
}

/**
 * The comparison the query asks for (`null` without runs), or, for a
 * browser, why it was refused; the JSON twin gets the error thrown.
 */
async function comparisonOf(
  db: TraceDb,
  c: Context<UiEnv>,
  a: string | null,
  b: string | null,
): Promise<{ comparison: RunComparison | null; refused?: FormRefusal }> {
  try {
    refuseOtherQuery(c, "/compare", RUN_PARAMS);
  } catch (error) {
    // An unknown parameter names no field; a run given twice names its own.
    const params = new URL(c.req.url).searchParams;
    const twice = () => RUN_PARAMS.filter((k) => params.getAll(k).length > 1);
    return { comparison: null, refused: formRefusal(c, error, twice) };
  }
  try {
    if ((a === null) !== (b === null)) {
      // One run alone would be dropped without a word: say what is missing.
      throw new UsageError(
        `Cannot compare: give both runs, a=RUN_A and b=RUN_B (the one that started first is before); only ${
          a ? "a" : "b"
        } was given`,
      );
    }
    return { comparison: a && b ? await compareStoredRuns(db, a, b) : null };
  } catch (error) {
    const refused = formRefusal(c, error, (m) => refusedRuns(m, a, b));
    return { comparison: null, refused };
  }
}

/** Each replayed regression's source run and latest replay. */
async function suggestedComparisons(
  db: TraceDb,
): Promise<SuggestedComparison[]> {
  return (await regressionsOf(db)).flatMap((r) =>
    r.last_run_id
      ? [{
        regression_id: r.regression_id,
        a: r.source_run_id,
        b: r.last_run_id,
      }]
      : []
  );
}

/** How many of the newest external runs the form offers. */
const PICKABLE_RUNS = 50;

/** The newest completed external runs, newest first, for the form to offer. */
async function comparableRuns(db: TraceDb): Promise<ComparableRun[]> {
  const stored = await listRuns(db, "external", { limit: PICKABLE_RUNS });
  return stored.map(({ report }) => ({
    run_id: report.run_id,
    target_id: report.target.id,
    verdict: report.verdict,
    started_at: report.started_at,
  }));
}

/** The runs a refusal is about: the one missing, else those its message names (both when neither). */
function refusedRuns(
  message: string,
  a: string | null,
  b: string | null,
): string[] {
  if (a === null || b === null) return [a === null ? "a" : "b"];
  const named = ([["a", a], ["b", b]] as const).filter(([, id]) =>
    message.includes(id)
  ).map(([field]) => field);
  return named.length > 0 ? named : ["a", "b"];
}

/** What changed between the two runs, in one sentence. */
export function compareSentence(c: RunComparison): string {
  const f = c.findings;
  const parts = [
    `${f.fixed.length} finding${f.fixed.length === 1 ? "" : "s"} fixed`,
    `${f.still_present.length} still present`,
    `${f.new.length} new`,
  ];
  const verdicts = `${c.a.verdict} before, ${c.b.verdict} after`;
  return `${verdicts}: ${parts.join(", ")}.`;
}

function compareStatus(c: RunComparison): string {
  if (c.findings.new.length > 0 || c.findings.still_present.length > 0) {
    return c.b.verdict;
  }
  return c.b.verdict === "PASS" ? "pass" : c.b.verdict;
}

const CompareBody: FC<{ data: ComparePageData; view: PageView }> = (
  { data, view },
) => {
  const c = data.comparison;
  if (!c) return <ChooseRuns data={data} view={view} />;
  return (
    <>
      <PageHead
        eyebrow={`Compare on target ${c.target_id}`}
        title="Before and after"
        status={compareStatus(c)}
        reason={compareSentence(c)}
        meta={`Same target and contract: ${c.contract.protocol_revision}, ${c.contract.document_count} document(s), window ${c.contract.deletion_window_seconds} s.`}
      />
      <div class="stack">
        {data.query.a !== null && data.query.a !== c.a.run_id
          ? (
            <p class="notice" role="note" id="compare-order">
              Before and after follow the runs' start times: run{" "}
              <code>{c.a.run_id}</code>{" "}
              started first, so it is A (before), although it was given as run
              B. The command line (
              <code>trace external-compare</code>) orders them the same way.
            </p>
          )
          : null}
        <p class="notice" role="note">{c.caveat}</p>
        <div class="grid compare-sides">
          {([["A", "before", c.a], ["B", "after", c.b]] as const).map((
            [label, word, side],
          ) => (
            <div class="panel">
              <h3>
                {`${label} (${word}) `}
                <StatusBadge status={side.verdict} />
              </h3>
              <p>
                <a class="mono" href={runHref(side.run_id)}>{side.run_id}</a>
              </p>
              <p class="meta">
                started <Time iso={side.started_at} now={view.now} /> on{" "}
                <a href={targetHref(c.target_id)}>
                  <code>{c.target_id}</code>
                </a>
              </p>
            </div>
          ))}
        </div>
      </div>
      <Section id="findings" title="Findings">
        <div class="grid">
          <FindingGroup
            title="Fixed"
            hint="in A, not in B"
            findings={c.findings.fixed}
            status="pass"
          />
          <FindingGroup
            title="Still present"
            hint="in both"
            findings={c.findings.still_present}
            status="fail"
          />
          <FindingGroup
            title="New"
            hint="in B only"
            findings={c.findings.new}
            status="fail"
          />
        </div>
      </Section>
      <Section
        id="cleanup"
        title="Cleanup"
        intro="Each run cleans up its own synthetic records; what one left behind, the other cannot remove."
      >
        <div class="grid">
          <CleanupSide
            label="A (before)"
            side={c.cleanup.a}
            runId={c.a.run_id}
            now={view.now}
          />
          <CleanupSide
            label="B (after)"
            side={c.cleanup.b}
            runId={c.b.run_id}
            now={view.now}
          />
        </div>
      </Section>
      <RawJson value={data} href={view.jsonHref} />
    </>
  );
};

const FindingGroup: FC<{
  title: string;
  hint: string;
  findings: readonly FindingKey[];
  status: string;
}> = ({ title, hint, findings, status }) => (
  <div class="panel">
    <h3>
      {`${title} `}
      <span class="meta">({hint})</span>{" "}
      <span class="count">{findings.length}</span>
    </h3>
    {findings.length === 0
      ? <p class="meta">none</p>
      : (
        <ul class="compare-findings">
          {findings.map((f) => (
            <li>
              <StatusBadge status={status === "pass" ? "fixed" : f.severity} />
              {" "}
              <code>{f.code}</code> <span class="meta">{f.subject}</span>
              <p>{f.message}</p>
            </li>
          ))}
        </ul>
      )}
  </div>
);

/** A run's own cleanup, and below its heading what a later `external-cleanup` of it found. */
const CleanupSide: FC<
  { label: string; side: ComparedCleanup; runId: string; now: number }
> = (
  { label, side, runId, now },
) => (
  <div class="panel stack">
    <h3>
      {`${label} `}
      <StatusBadge
        status={side.cleanup_complete ? "complete" : "incomplete"}
      />
    </h3>
    {side.later_cleanup
      ? (
        <LaterCleanupNote
          later={side.later_cleanup}
          when={<Time iso={side.later_cleanup.finished_at} now={now} />}
        />
      )
      : null}
    <div class="table-wrap">
      <table class={STACK_TABLE}>
        <caption class="sr-only">
          {`Records left after the cleanup of ${runId}`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Namespace</th>
            {STORES.map((store) => (
              <th scope="col" class="num">{storeShort(store)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(["test", "control"] as const).map((role) => (
            <tr>
              <th scope="row">{role}</th>
              {STORES.map((s) => {
                const n = side.remaining[role]?.[s];
                return (
                  <td
                    class={n ? "num is-left" : "num"}
                    {...stackLabel(storeShort(s))}
                  >
                    {n === undefined || n === null ? "?" : String(n)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
    <ProblemList problems={side.problems} />
  </div>
);

const SAVE_AND_REPLAY =
  "trace external-save RUN_ID\ntrace external-replay REGRESSION_ID";

/** The id of the notice above a refused comparison. */
const COMPARE_NOTICE = "compare-error";

/** The form's fields: query parameter, input id, label. */
const RUN_FIELDS = [
  ["a", "compare-a", "Run A"],
  ["b", "compare-b", "Run B"],
] as const;

/** The id of the list of runs the form's fields offer. */
const RUN_LIST = "compare-runs";

const ChooseRuns: FC<{ data: ComparePageData; view: PageView }> = (
  { data, view },
) => (
  <>
    <div class="page-head">
      <div class="title-row">
        <h1>Compare runs</h1>
      </div>
      <p class="meta">
        Two completed external runs of one target under one contract: typically
        a failing run and its replay. Pick two runs in either order (the one
        that started first is shown as A, before), or start from one of your
        regressions below.
      </p>
    </div>
    {data.refused
      ? (
        <RefusalNotice
          id={COMPARE_NOTICE}
          refusal={data.refused}
          outcome="Nothing was compared"
          retry="compare again"
          fields={refusedInputs(data.refused, RUN_FIELDS)}
        />
      )
      : null}
    {data.refused_targets
      ? (
        <p class="runs-of" id="compare-runs-of">
          Pick two runs of one target:{" "}
          {data.refused_targets.map((target, i) => (
            <>
              {i === 0 ? "" : " · "}
              <a class="nowrap" href={runsHref({ target })}>
                runs of <code>{target}</code>
              </a>
            </>
          ))}
        </p>
      )
      : null}
    <form class="filters filters--text" method="get" action="/compare">
      {RUN_FIELDS.map(([name, id, label]) => (
        <div class="filters__field">
          <label for={id}>{label}</label>
          <input
            type="text"
            id={id}
            name={name}
            value={data.query[name] ?? ""}
            placeholder="run-…"
            class="run-id-input"
            autocomplete="off"
            spellcheck={false}
            required
            list={data.runs.length > 0 ? RUN_LIST : undefined}
            {...invalidField(data.refused, name, COMPARE_NOTICE)}
          />
        </div>
      ))}
      <div class="filters__actions">
        <button type="submit" class="button--primary">Compare</button>
      </div>
      {data.runs.length > 0
        ? (
          <datalist id={RUN_LIST}>
            {data.runs.map((run) => (
              <option value={run.run_id}>
                {`${run.target_id} · ${run.verdict} · ${
                  formatUtc(run.started_at)
                }`}
              </option>
            ))}
          </datalist>
        )
        : null}
    </form>
    <Section id="suggested" title="From your regressions">
      {data.suggestions.length === 0
        ? (
          <EmptyState
            title="No replayed regression to compare yet"
            command={withDataFlags(SAVE_AND_REPLAY, view.dataFlags)}
          >
            Save a failing run as a regression and replay it after a fix; the
            failing run and its replay then show up here to compare.
          </EmptyState>
        )
        : (
          <ul class="suggestions">
            {data.suggestions.map((s) => (
              <li>
                <a href={compareHref(s.a, s.b)}>
                  <code>{s.regression_id}</code>: its source run and latest
                  replay
                </a>
              </li>
            ))}
          </ul>
        )}
    </Section>
    <RecentRuns runs={data.runs} view={view} />
  </>
);

/** How many of the offered runs are listed on the page (the form offers them all). */
const LISTED_RUNS = 10;

/**
 * The runs the form offers, newest first, each target's runs with a link
 * comparing a run with the one of its target before it: what a person
 * usually wants, one click away.
 */
const RecentRuns: FC<{ runs: readonly ComparableRun[]; view: PageView }> = (
  { runs, view },
) => (
  <Section
    id="recent"
    title="Recent external runs"
    intro="Completed runs of registered or configured targets, newest first; a run compares with the run of its target before it."
  >
    {runs.length === 0
      ? (
        <EmptyState
          title="No completed external run to compare yet"
          command={withDataFlags(
            "trace external-run --target my-staging",
            view.dataFlags,
          )}
        >
          A comparison needs two completed runs of one target under one contract
          (reference runs are not compared): run the deletion contract against a
          staging target twice, or replay a saved regression.
        </EmptyState>
      )
      : (
        <ul class="suggestions">
          {runs.slice(0, LISTED_RUNS).map((run, i) => {
            const before = runs.slice(i + 1).find((r) =>
              r.target_id === run.target_id
            );
            return (
              <li>
                <StatusBadge status={run.verdict} />{" "}
                <a class="mono" href={runHref(run.run_id)}>{run.run_id}</a>
                {" on "}
                <code>{run.target_id}</code>
                {", "}
                <Time iso={run.started_at} now={view.now} />
                {before
                  ? (
                    <>
                      {" · "}
                      <a href={compareHref(before.run_id, run.run_id)}>
                        compare with the run before
                      </a>
                    </>
                  )
                  : null}
              </li>
            );
          })}
        </ul>
      )}
  </Section>
);
