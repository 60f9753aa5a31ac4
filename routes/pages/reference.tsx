/**
 * `/reference` and `/reference.json`: the reference suite's dashboard (the
 * latest run of each in-process system, family by family, with its
 * expected and observed verdict) and the ranking built from it; then,
 * clearly apart, real systems assessed with the same runner: their
 * recorded verdicts (from a committed assessment, with its date and
 * document) and the latest verdict this ledger observed for their targets.
 * `/reference/assessments/mem0` shows the assessment document itself
 * (assessment.tsx).
 *
 * @module
 */

import type { FC } from "hono/jsx";
import { listRuns } from "../../lib/ledger/runs.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import {
  FAMILIES,
  type FamilyCell,
  type Tier,
} from "../../lib/reference/dashboard.ts";
import type { Verdict } from "../../lib/runner/report.ts";
import {
  type ReferenceDashboard,
  referenceDashboard,
  type ReferenceRanking,
  referenceRanking,
} from "../../lib/runs/mod.ts";
import MEM0 from "../../fixtures/adapters/mem0/assessment.json" with {
  type: "json",
};
import { StatusBadge } from "../ui/components/badge.tsx";
import { CopyId } from "../ui/components/copy_id.tsx";
import { EmptyState } from "../ui/components/empty_state.tsx";
import { RawJson } from "../ui/components/raw_json.tsx";
import { PageHead, Section } from "../ui/components/section.tsx";
import { Time } from "../ui/components/time.tsx";
import { runHref } from "../ui/links.ts";
import type { PageSpec, PageView } from "../ui/page.ts";
import type { RunSource } from "../ui/run_view.ts";
import { withDataFlags } from "../ui/printed_command.ts";

/** Where the page links the Mem0 assessment document. */
export const MEM0_DOCUMENT_PATH = "/reference/assessments/mem0";

/** A recorded assessment of a real system (`fixtures/adapters/*\/assessment.json`). */
export interface Assessment {
  schema: "trace.assessment/1";
  system: string;
  /** The day the assessment was run (YYYY-MM-DD). */
  assessed_on: string;
  /** The document in the repository that records it. */
  document: string;
  setup: string;
  timing: {
    document_count: number;
    deletion_window_seconds: number;
    sample_interval_seconds: number;
  };
  configurations: {
    name: string;
    target_id: string;
    verdict: Verdict;
    cleanup_complete: boolean;
    run_id: string;
    requests: number;
    findings: {
      severity: string;
      code: string;
      subject: string;
      message: string;
    }[];
    why: string;
  }[];
}

/** The recorded Mem0 assessment. */
export const MEM0_ASSESSMENT = MEM0 as Assessment;

/** One assessed configuration with what this ledger observed for its target. */
export interface AssessedRow {
  system: string;
  configuration: string;
  target_id: string;
  recorded: {
    verdict: Verdict;
    cleanup_complete: boolean;
    run_id: string;
    why: string;
  };
  /** The newest run of `target_id` in this ledger, if any. */
  observed: { verdict: Verdict; run_id: string; started_at: string } | null;
}

/** The data of `/reference`. */
export interface ReferencePageData {
  schema: "trace.ui.reference/1";
  dashboard: ReferenceDashboard;
  ranking: ReferenceRanking;
  assessed: {
    system: string;
    assessed_on: string;
    document: string;
    document_href: string;
    setup: string;
    rows: AssessedRow[];
  };
}

/** The reference page over `source`. */
export function referencePage(source: RunSource): PageSpec<ReferencePageData> {
  return {
    path: "/reference",
    query: [],
    title: "Reference suite",
    load: async () => {
      const dashboard = await referenceDashboard(source.db);
      const ranking = await referenceRanking(source.db);
      return {
        schema: "trace.ui.reference/1",
        dashboard,
        ranking,
        assessed: {
          system: MEM0_ASSESSMENT.system,
          assessed_on: MEM0_ASSESSMENT.assessed_on,
          document: MEM0_ASSESSMENT.document,
          document_href: MEM0_DOCUMENT_PATH,
          setup: MEM0_ASSESSMENT.setup,
          rows: await assessedRows(source, MEM0_ASSESSMENT),
        },
      };
    },
    render: (data, view) => <ReferenceBody data={data} view={view} />,
  };
}

async function assessedRows(
  source: RunSource,
  assessment: Assessment,
): Promise<AssessedRow[]> {
  const ledger = await hasLedger(source.db);
  return await Promise.all(assessment.configurations.map(async (c) => {
    const [latest] = ledger
      ? await listRuns(source.db, "external", {
        targetId: c.target_id,
        limit: 1,
      })
      : [];
    return {
      system: assessment.system,
      configuration: c.name,
      target_id: c.target_id,
      recorded: {
        verdict: c.verdict,
        cleanup_complete: c.cleanup_complete,
        run_id: c.run_id,
        why: c.why,
      },
      observed: latest
        ? {
          verdict: latest.report.verdict,
          run_id: latest.run_id,
          started_at: latest.report.started_at,
        }
        : null,
    };
  }));
}

const ReferenceBody: FC<{ data: ReferencePageData; view: PageView }> = (
  { data, view },
) => {
  const d = data.dashboard;
  const recorded = d.rows.length;
  return (
    <>
      <PageHead
        eyebrow="Reference suite"
        title="Reference systems"
        status={recorded === 0
          ? "unknown"
          : d.mismatches === 0
          ? "match"
          : "mismatch"}
        reason={recorded === 0
          ? "No reference run is recorded yet: run the suite to fill the matrix."
          : d.mismatches === 0
          ? `Every one of the ${recorded} systems with a recorded run landed on its expected verdict: the checker catches each known defect and passes each correct design.`
          : `${d.mismatches} of ${recorded} systems landed off their expected verdict: the checker missed a known defect or failed a correct design, which is a bug in Trace.`}
        meta={
          <>
            In-process systems with known deletion behaviour, run through the
            same engine on virtual time. <code>trace reference run</code>{" "}
            records a new run of each.
          </>
        }
      />
      <Section id="matrix" title="Dashboard" intro={MATRIX_INTRO}>
        {recorded === 0
          ? (
            <EmptyState
              title="No reference runs yet"
              command={withDataFlags("trace reference run", view.dataFlags)}
            >
              <NoRunsWhere location={view.dataLocation} />
            </EmptyState>
          )
          : (
            <>
              <Matrix data={data} view={view} />
              <CellLegend />
            </>
          )}
        {d.missing.length > 0 && recorded > 0
          ? (
            <p class="meta">
              {`Not run yet: ${d.missing.join(", ")}.`}
            </p>
          )
          : null}
      </Section>
      <Section id="ranking" title="Ranking" intro={data.ranking.rule}>
        {data.ranking.ranking.length === 0
          ? <p class="meta">The ranking needs recorded runs.</p>
          : <Ranking data={data} />}
      </Section>
      <AssessedSection data={data} view={view} />
      <RawJson value={data} href={view.jsonHref} />
    </>
  );
};

/**
 * What the empty matrix says of where it looked: the footer's data location
 * for a reader shown it, so a server started on another data directory shows;
 * for any other reader, only that runs are recorded here.
 */
const NoRunsWhere: FC<{ location: string | null }> = ({ location }) =>
  location === null
    ? (
      <>
        The suite runs every system in process in a few seconds and records each
        run here.
      </>
    )
    : (
      <>
        Looked in the ledger in{" "}
        <CopyId value={location} label="data location" />. The suite runs every
        system in process in a few seconds and records each run in the ledger it
        is given; if runs were recorded elsewhere, check the --data-dir / --db
        this server was started with.
      </>
    );

const MATRIX_INTRO =
  "The latest run of each system. Store and marker cells give the time after the deletion was acknowledged from which the family stayed clear (0.00 s: at once; later: a transient residual); the legend under the table says what every other cell means.";

const CELL_WORD: Record<FamilyCell["status"], string> = {
  erased: "erased",
  transient: "transient",
  residual: "LEFT",
  intact: "intact",
  lost: "LOST",
  grew: "GREW",
  complete: "done",
  incomplete: "NOT DONE",
  interrupted: "cut",
  unknown: "?",
};

const FAMILY_LABEL: Record<typeof FAMILIES[number], string> = {
  source_records: "source",
  vector_records: "vector",
  cache_records: "cache",
  retrieval: "marker",
  control: "control",
  cleanup: "cleanup",
};

/** What each kind of cell means, for the legend under the matrix (every status has one). */
const CELL_MEANING: Record<FamilyCell["status"], string> = {
  erased:
    "the store held none of the deleted documents (the marker was gone) from this many seconds after the acknowledgement to the final sample; 0.00 s: at once",
  transient:
    "a transient residual: still there in an early sample, clear from this time through the final sample, so it does not fail the run",
  residual:
    "still there at the final sample: the deletion did not hold within the window",
  intact:
    "the control documents, which were not deleted, stayed present and retrievable in every sample",
  lost:
    "a control document went missing: the deletion reached records it should have left alone",
  grew:
    "the control namespace counted more source or vector records after the deletion than before it: the deletion may have moved the deleted records there instead of erasing them",
  complete: "cleanup left no synthetic record in either namespace",
  incomplete: "cleanup left synthetic records behind",
  interrupted:
    "cut short: the run was interrupted before its final sample, so nothing was decided for this column",
  unknown:
    "no reading: the sample that would decide it got no answer (a request failed or the adapter did not report it)",
};

/** A sample cell of each status, as the legend shows it. */
const LEGEND_CELLS: readonly FamilyCell[] = [
  { status: "erased", time_to_erasure_seconds: 0 },
  { status: "transient", time_to_erasure_seconds: 1.5 },
  { status: "residual", time_to_erasure_seconds: null },
  { status: "intact", time_to_erasure_seconds: null },
  { status: "lost", time_to_erasure_seconds: null },
  { status: "grew", time_to_erasure_seconds: null },
  { status: "complete", time_to_erasure_seconds: null },
  { status: "incomplete", time_to_erasure_seconds: null },
  { status: "interrupted", time_to_erasure_seconds: null },
  { status: "unknown", time_to_erasure_seconds: null },
];

/** What the matrix's cells say: every word and time it can show, with its meaning. */
const CellLegend: FC = () => (
  <div class="cell-legend" id="reference-matrix-legend">
    <h3>What the cells say</h3>
    <dl>
      {LEGEND_CELLS.map((cell) => (
        <div>
          <dt class={cellClass(cell)}>{cellText(cell)}</dt>
          <dd>{CELL_MEANING[cell.status]}</dd>
        </div>
      ))}
    </dl>
  </div>
);

function cellText(cell: FamilyCell): string {
  const time = cell.time_to_erasure_seconds;
  if (
    (cell.status === "erased" || cell.status === "transient") && time !== null
  ) {
    return `${time.toFixed(2)} s`;
  }
  return CELL_WORD[cell.status];
}

function cellClass(cell: FamilyCell): string {
  if (["residual", "lost", "grew", "incomplete"].includes(cell.status)) {
    return "cell cell--bad";
  }
  if (cell.status === "transient") return "cell cell--warn";
  if (["interrupted", "unknown"].includes(cell.status)) {
    return "cell cell--unknown";
  }
  return "cell";
}

const Matrix: FC<{ data: ReferencePageData; view: PageView }> = (
  { data, view },
) => (
  <div class="table-wrap">
    <table
      id="reference-matrix"
      class="matrix"
      aria-describedby="reference-matrix-legend"
    >
      <caption class="sr-only">
        Latest run of each reference system, by assertion family
      </caption>
      <thead>
        <tr>
          <th scope="col">System</th>
          <th scope="col">Expected</th>
          <th scope="col">Observed</th>
          {FAMILIES.map((f) => (
            <th scope="col" class="num">{FAMILY_LABEL[f]}</th>
          ))}
          <th scope="col">Run</th>
        </tr>
      </thead>
      <tbody>
        {data.dashboard.rows.map((row) => (
          <tr data-nav-item="" class={row.matches ? undefined : "is-mismatch"}>
            <th scope="row">
              <span class="system-name">{row.title}</span>
              <code class="meta">{row.system}</code>
              {row.blind_spot
                ? <span class="cell-note">Blind spot: {row.blind_spot}</span>
                : null}
            </th>
            <td>{row.expected}</td>
            <td>
              <StatusBadge status={row.verdict} /> {row.observed !== row.verdict
                ? <span class="meta">{row.observed}</span>
                : null}
              {row.matches
                ? <span class="cell-note">as expected</span>
                : (
                  <span class="cell-note">
                    <strong>MISMATCH:</strong> {row.mismatches.join("; ")}
                  </span>
                )}
            </td>
            {FAMILIES.map((f) => (
              <td class={`num ${cellClass(row.families[f])}`}>
                {cellText(row.families[f])}
              </td>
            ))}
            <td>
              <a href={runHref(row.run_id)}>run</a>
              <span class="cell-note">
                <Time iso={row.started_at} now={view.now} />
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

const TIER_WORD: Record<Tier, string> = {
  immediate_erasure: "immediate erasure",
  erasure_inside_window: "erasure inside the window",
  blind_spot: "PASS with a blind spot",
  inconclusive: "inconclusive",
  fail: "fail",
};

const Ranking: FC<{ data: ReferencePageData }> = ({ data }) => (
  <div class="table-wrap table-wrap--narrow">
    <table id="reference-ranking">
      <caption class="sr-only">
        Reference systems ranked by deletion guarantee
      </caption>
      <thead>
        <tr>
          <th scope="col" class="num">Rank</th>
          <th scope="col">System</th>
          <th scope="col">Guarantee</th>
          <th scope="col">Verdict</th>
          <th scope="col" class="num">Slowest erasure</th>
        </tr>
      </thead>
      <tbody>
        {data.ranking.ranking.map((r) => (
          <tr>
            <td class="num">{r.rank}</td>
            <th scope="row">
              <a href={runHref(r.run_id)}>
                <code>{r.system}</code>
              </a>
            </th>
            <td>{TIER_WORD[r.tier]}</td>
            <td>
              <StatusBadge status={r.verdict} />
            </td>
            <td class="num">
              {r.slowest_erasure_seconds === null
                ? "never"
                : `${r.slowest_erasure_seconds.toFixed(2)} s`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

const AssessedSection: FC<{ data: ReferencePageData; view: PageView }> = (
  { data, view },
) => {
  const a = data.assessed;
  return (
    <Section
      id="assessed"
      title="Assessed real systems"
      intro={
        <>
          Not reference systems: real software assessed once with the same
          runner through a staging adapter. The verdicts below are a{" "}
          <strong>recorded assessment</strong> of {a.system} from{" "}
          <time datetime={a.assessed_on}>{a.assessed_on}</time>, written up in
          {" "}
          <a href={a.document_href}>
            <code>{a.document}</code>
          </a>; a run of the same target in this ledger shows up as observed.
        </>
      }
    >
      <div class="table-wrap">
        <table id="assessed-table">
          <caption class="sr-only">
            Assessed real systems: recorded and observed verdicts
          </caption>
          <thead>
            <tr>
              <th scope="col">System</th>
              <th scope="col">Configuration</th>
              <th scope="col">Recorded ({a.assessed_on})</th>
              <th scope="col">Observed here</th>
              <th scope="col">What stays behind</th>
            </tr>
          </thead>
          <tbody>
            {a.rows.map((row) => (
              <tr>
                <th scope="row">{row.system}</th>
                <td>
                  {row.configuration}
                  <span class="cell-note">
                    target <code>{row.target_id}</code>
                  </span>
                </td>
                <td>
                  <StatusBadge status={row.recorded.verdict} />
                  <span class="cell-note">
                    {`cleanup ${
                      row.recorded.cleanup_complete ? "complete" : "incomplete"
                    }; run `}
                    <code>{row.recorded.run_id}</code>
                  </span>
                </td>
                <td>
                  {row.observed
                    ? (
                      <>
                        <StatusBadge status={row.observed.verdict} />{" "}
                        <a href={runHref(row.observed.run_id)}>latest run</a>
                        <span class="cell-note">
                          <Time iso={row.observed.started_at} now={view.now} />
                        </span>
                      </>
                    )
                    : (
                      <span class="meta">
                        no run of <code>{row.target_id}</code> in this ledger
                      </span>
                    )}
                </td>
                <td>{row.recorded.why}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
};
