/** `trace external-show`, `trace external-runs` and `trace external-compare`: reading runs back. */

import { terminalSafe } from "../lib/display.ts";
import { UsageError } from "../lib/errors.ts";
import { stillServed } from "../lib/ledger/cleanups.ts";
import type { RunComparison } from "../lib/ledger/compare.ts";
import { validateRunId } from "../lib/ledger/runs.ts";
import { hasLedger } from "../lib/ledger/schema.ts";
import { validateTargetId } from "../lib/ledger/targets.ts";
import type { RunState, Verdict } from "../lib/runner/report.ts";
import {
  compareStoredRuns,
  DEFAULT_RUN_LIMIT,
  listAllRuns,
  MAX_RUN_OFFSET,
  notCleanable,
  RUN_LIST_FILTERS,
  type RunList,
  type RunListItem,
  type RunView,
  stillServedAdvice,
  viewRun,
} from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, parseIntegerFlag, showHelp } from "./_args.ts";
import { ownState, printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";
import { renderReport } from "./_report_text.ts";
import {
  dataFlagsOf,
  type DataValues,
  exitCodeOf,
  withFlagsAfter,
} from "./_run_outputs.ts";
import { OUTPUT_FLAGS, reserveOutputs } from "./_outputs.ts";
import { runDocument } from "../routes/ui/run_html.tsx";
import type { TraceDb } from "../lib/db.ts";
import { renderTable } from "./_table.ts";
import { quoteValue } from "../lib/echo.ts";

/** Readers open the database read-only. */
const READ = { write: false, readOnly: true } as const;

const COMPARE_HELP =
  `Usage: trace external-compare RUN_A RUN_B [--json] [--data-dir DIR] [--db URL]

Compares two completed runs of the same target under the same contract
(typically the failing run and its replay): both verdicts, findings fixed /
still present / new, and both cleanup outcomes. Before (A) and after (B)
follow the runs' start times, whichever order they are given in. Refuses runs
of different targets, configs or contracts.
`;

/** `trace external-compare`: before and after. */
export const externalCompare: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-compare",
    args,
    DATA_FLAGS,
    { min: 2, max: 2, names: ["RUN_A", "RUN_B"] },
  );
  if (values.help) return showHelp(io, COMPARE_HELP);
  const [runA, runB] = positionals.map(validateRunId);
  return await withDataContext(values, io, READ, async ({ db }) => {
    const comparison = await compareStoredRuns(db, runA!, runB!);
    if (values.json) printJson(io, comparison);
    else io.out(renderComparison(comparison, dataFlagsOf(values)));
    return 0;
  });
};

/** What a later `external-cleanup` of a compared run found, after its own cleanup. */
function laterCleanup(
  later: RunComparison["cleanup"]["a"]["later_cleanup"],
): string {
  if (later === null) return "";
  if (later.cleanup_complete) {
    return `; a later trace external-cleanup (${later.cleanup_id}) ${
      later.markers_queried
        ? "completed it: every store at 0, neither marker retrievable"
        : "found both inventories at 0 (retrieval not checked)"
    }`;
  }
  return `; a later trace external-cleanup (${later.cleanup_id}) still left: ${
    later.problems.join("; ") || "synthetic records remain"
  }${
    stillServed(later)
      ? " (the application still serves the run's text: fix its delete path before another cleanup)"
      : ""
  }`;
}

/**
 * The command that removes what each run's cleanup left, with `dataFlags`,
 * for the caveat's "remove old residuals": none for a run whose own
 * cleanup, or a later one, completed; after a later cleanup that found the
 * text still served, fix the application first.
 */
function residualLines(c: RunComparison, dataFlags: string): string[] {
  return (["a", "b"] as const).flatMap((key) => {
    const side = c.cleanup[key];
    if (side.cleanup_complete || side.later_cleanup?.cleanup_complete) {
      return [];
    }
    const runId = c[key].run_id;
    const label = key.toUpperCase();
    if (c.target_registered === false) {
      return [
        `  Run ${label}'s cleanup was incomplete, and ${
          notCleanable(c.target_id, c[key].namespaces)
        }`,
      ];
    }
    const command = `trace external-cleanup ${runId}`;
    const served = stillServedAdvice(runId, side.later_cleanup);
    const text = served === null
      ? `Run ${label}'s cleanup was incomplete: remove what it left with ${command}`
      : `Run ${label}'s later ${served}`;
    return [`  ${withFlagsAfter(text, command, dataFlags)}`];
  });
}

/** `c` as text; `dataFlags` repeat `--data-dir` / `--db` in the commands it names. */
function renderComparison(c: RunComparison, dataFlags: string): string {
  const keys = (list: RunComparison["findings"]["fixed"]) =>
    list.length === 0
      ? ["    (none)"]
      : list.map((f) => `    ${f.code} on ${f.subject}: ${f.message}`);
  const cleanup = (side: RunComparison["cleanup"]["a"]) =>
    (side.cleanup_complete
      ? "complete"
      : `INCOMPLETE: ${
        side.problems.join("; ") || "synthetic records remain"
      }`) +
    laterCleanup(side.later_cleanup);
  return [
    `Compare on target ${c.target_id} (${c.contract.protocol_revision}, ${c.contract.document_count} document(s), window ${c.contract.deletion_window_seconds} s)`,
    `  A  ${c.a.verdict.padEnd(12)} ${c.a.run_id}  ${c.a.started_at}`,
    `  B  ${c.b.verdict.padEnd(12)} ${c.b.run_id}  ${c.b.started_at}`,
    "",
    "Findings",
    "  fixed (in A, not in B)",
    ...keys(c.findings.fixed),
    "  still present (in both)",
    ...keys(c.findings.still_present),
    "  new (in B only)",
    ...keys(c.findings.new),
    "",
    "Cleanup",
    `  A  ${cleanup(c.cleanup.a)}`,
    `  B  ${cleanup(c.cleanup.b)}`,
    "",
    `Note: ${c.caveat}`,
    ...residualLines(c, dataFlags),
    "",
  ].join("\n");
}

const SHOW_HELP =
  `Usage: trace external-show RUN_ID [--json] [--html FILE [--force]] [--data-dir DIR] [--db URL]

Shows a run: the completed report from the ledger, or, for a run without one,
its checkpoint: RUNNING while its process is alive on this host, otherwise
interrupted (INCONCLUSIVE, never PASS) with the ids it issued. A saved FAIL
names the regression it became; a run a later trace external-cleanup
completed says so (every store at 0 and neither marker retrievable), and a run
recorded before runs kept their markers, whose later cleanup could read only
the inventories, says they read 0 and that retrieval was not checked.

--html FILE writes the run's page as one self-contained HTML file (inline CSS
and SVG, no script, nothing fetched); an existing file is refused without
--force.

Exit codes follow the verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (also running
and interrupted runs). A run the ledger does not hold (its report kept on disk,
or lost with only its checkpoint left) never exits 0: its PASS exits 2.
`;

/** `trace external-show`: one run, completed, running or interrupted. */
export const externalShow: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-show",
    args,
    { ...DATA_FLAGS, html: OUTPUT_FLAGS.html, force: OUTPUT_FLAGS.force },
    { min: 1, max: 1, names: ["RUN_ID"] },
  );
  if (values.help) return showHelp(io, SHOW_HELP);
  return await withDataContext(values, io, READ, async ({ db, dataDir }) => {
    const view = await viewRun(db, positionals[0]!, { dataDir });
    if (values.html !== undefined) {
      await writeRunHtml(io, values, { db, dataDir }, view.run_id);
      // `--html -` took stdout.
      if (values.html === "-") return showExit(view);
    }
    if (values.json) printJson(io, view);
    else io.out(renderView(view, dataFlagsOf(values)));
    return showExit(view);
  });
};

/** The verdict's exit code; a PASS only the ledger can vouch for. */
function showExit(view: RunView): number {
  const code = exitCodeOf(view.verdict);
  return code === 0 && view.kept_in !== "ledger" ? 2 : code;
}

/** `--html FILE`: the run's page as one file, reserved like every run output. */
async function writeRunHtml(
  io: Parameters<Command>[1],
  values: DataValues & {
    html?: string | undefined;
    force?: boolean | undefined;
    json?: boolean | undefined;
  },
  source: { db: TraceDb; dataDir: string },
  runId: string,
): Promise<void> {
  const reserved = await reserveOutputs({
    html: values.html,
    force: values.force,
    json: values.json,
  }, ownState(values, io));
  try {
    const html = await runDocument({ ...source, jobs: null }, runId, {
      dataFlags: dataFlagsOf(values),
    });
    for (const output of reserved.outputs) {
      if (output.path === "-") io.out(html);
      else await reserved.write(output, html);
      if (output.path !== "-") io.err(`html: ${terminalSafe(output.path)}\n`);
    }
  } finally {
    await reserved.release();
  }
}

/** Said in place of the cleanup command for a run whose target was never registered. */
const UNREGISTERED_HINT =
  "Its target was never registered, so trace external-cleanup cannot remove what is left: see below";

/**
 * What to say instead of the cleanup command for what the run's own cleanup
 * left, as the run page decides: another cleanup would only read the same
 * once a later one completed, nor change what the application still serves
 * after one found it serving the run's text, and external-cleanup can do
 * nothing for an unregistered target (the note says what became of the
 * records); `null` keeps the command.
 */
function leftoverHint(view: RunView): string | null {
  if (view.cleanup?.cleanup_complete) {
    return view.cleanup.markers_queried
      ? `A later trace external-cleanup (${view.cleanup.cleanup_id}) deleted every id this run issued: every store of both namespaces read 0 and neither marker was retrievable`
      : `A later trace external-cleanup (${view.cleanup.cleanup_id}) deleted every id this run issued and both inventories read 0; retrieval was not checked (this run's markers were not kept), so query the application if it may still serve deleted text`;
  }
  const served = stillServedAdvice(view.run_id, view.cleanup);
  if (served !== null) return `A later ${served}`;
  return view.target_registered === false ? UNREGISTERED_HINT : null;
}

/**
 * Whether the report's Cleanup section already says what the view's note
 * does: a ledger run's note is about what its incomplete cleanup left, and
 * the section's own advice (the command, or what a later cleanup found)
 * says it in place, except for an unregistered target, where it points at
 * the note.
 */
function saysLeftovers(view: RunView, hint: string | null): boolean {
  const report = view.report;
  return report !== null && report.kind === "external" &&
    view.kept_in === "ledger" && !report.cleanup.cleanup_complete &&
    hint !== UNREGISTERED_HINT;
}

/** What a later cleanup found, after its id and time. */
function laterCleanupWords(later: NonNullable<RunView["cleanup"]>): string {
  if (!later.cleanup_complete) {
    return `INCOMPLETE: ${later.problems.join("; ")}`;
  }
  return later.markers_queried
    ? "complete (every store of both namespaces read 0 and neither marker was retrievable)"
    : "inventories clear (every store of both namespaces read 0; retrieval not checked)";
}

/** `view` as text; `dataFlags` repeat `--data-dir` / `--db` in the commands it names. */
function renderView(view: RunView, dataFlags: string): string {
  const command = `trace external-cleanup ${view.run_id}`;
  const head = [
    view.regression_id ? `Replay of regression ${view.regression_id}\n` : "",
    view.saved_as ? `Saved as regression ${view.saved_as}\n` : "",
  ].join("");
  const later = view.cleanup
    ? `\nLater cleanup ${view.cleanup.cleanup_id} (${view.cleanup.finished_at}): ${
      laterCleanupWords(view.cleanup)
    }\n`
    : "";
  const hint = view.report ? leftoverHint(view) : null;
  const note = view.note && !saysLeftovers(view, hint)
    ? `\n${withFlagsAfter(view.note, command, dataFlags)}\n`
    : "";
  if (view.report) {
    return head +
      renderReport(view.report, {
        dataFlags,
        ...(hint === null
          ? {}
          : { cleanupHint: withFlagsAfter(hint, command, dataFlags) }),
      }) + later + note;
  }
  const c = view.checkpoint!;
  return head + [
    `${view.verdict}  ${view.run_id}  (${view.state})`,
    `  target   ${view.target.id}  ${view.target.base_url}`,
    `  started  ${view.started_at}, last checkpoint ${c.updated_at}, pid ${c.pid}`,
    `  namespaces ${c.namespaces.test} and ${c.namespaces.control}`,
    `  issued test ids: ${c.issued.test.join(", ") || "(none)"}`,
    `  issued control ids: ${c.issued.control.join(", ") || "(none)"}`,
    "",
  ].join("\n") + later + note;
}

const RUNS_FLAGS = {
  ...DATA_FLAGS,
  target: { type: "string" },
  verdict: { type: "string" },
  kind: { type: "string" },
  state: { type: "string" },
  limit: { type: "string" },
  offset: { type: "string" },
} as const;

const RUNS_HELP =
  `Usage: trace external-runs [--target ID] [--verdict V] [--kind K] [--state S] [--limit N]
                           [--offset N] [--json] [--data-dir DIR] [--db URL]

Lists runs, newest first: completed external and reference runs from the
ledger, and runs that only a checkpoint knows (RUNNING, or interrupted:
INCONCLUSIVE). Each row says where the run is kept, which regression it
replayed or was saved as, and what became of its synthetic records (CLEANUP):
  complete            every store read 0 and no marker was retrievable, at the
                      run's own cleanup or a later trace external-cleanup
  incomplete          some may remain or still be served: trace external-cleanup
                      RUN_ID; when a later one found the application still
                      serving the run's text (trace external-show RUN_ID says
                      so), fix its delete path first, then clean up again
  inventories clear   a later trace external-cleanup of a run recorded before
                      runs kept their markers found every store at 0; it could
                      not query the markers, so retrieval was not checked
  gone with demo      a trace quickstart run: its in-process demo kept the
                      records in memory, and they ended with that command
  unknown             running, or interrupted with no cleanup since
  none                a reference run: nothing outside memory
A target marked (unregistered) was run from a config that was never
registered, as trace quickstart runs its in-process demo: such runs cannot be
saved, replayed or cleaned up (trace external-targets --all lists these
targets). When the limit leaves runs out, a last line says how many match
and the --offset of the next page; --json has total and truncated (older
matching runs follow this page).

  --target ID   runs of one target (external) or reference system target
  --verdict V   PASS, FAIL, INCONCLUSIVE or RUNNING
  --kind K      external or reference
  --state S     completed, running or interrupted
  --limit N     at most N runs (default ${DEFAULT_RUN_LIMIT})
  --offset N    skip the N newest matching runs first (default 0): the next page
`;

function choice<const T extends readonly string[]>(
  flag: string,
  value: string | undefined,
  choices: T,
  normalise: (text: string) => string = (text) => text,
): T[number] | undefined {
  if (value === undefined) return undefined;
  const normalised = normalise(value);
  if ((choices as readonly string[]).includes(normalised)) return normalised;
  throw new UsageError(
    `--${flag} must be one of ${choices.join(", ")}, got ${quoteValue(value)}`,
  );
}

/** `trace external-runs`: every run, newest first, filtered. */
export const externalRuns: Command = async (args, io) => {
  const { values } = parseFlags("external-runs", args, RUNS_FLAGS);
  if (values.help) return showHelp(io, RUNS_HELP);
  const verdict: Verdict | "RUNNING" | undefined = choice(
    "verdict",
    values.verdict,
    RUN_LIST_FILTERS.verdict,
    (text) => text.toUpperCase(),
  );
  const kind = choice("kind", values.kind, RUN_LIST_FILTERS.kind);
  const state: RunState | undefined = choice(
    "state",
    values.state,
    RUN_LIST_FILTERS.state,
  );
  const limit = parseIntegerFlag("limit", values.limit, { min: 1 });
  const offset = parseIntegerFlag("offset", values.offset, {
    min: 0,
    max: MAX_RUN_OFFSET,
  });
  const targetId = values.target === undefined
    ? undefined
    : validateTargetId(values.target);
  return await withDataContext(values, io, READ, async ({ db, dataDir }) => {
    const list = await listAllRuns(db, {
      dataDir,
      ledger: await hasLedger(db),
      ...(targetId === undefined ? {} : { targetId }),
      ...(verdict === undefined ? {} : { verdict }),
      ...(kind === undefined ? {} : { kind }),
      ...(state === undefined ? {} : { state }),
      ...(limit === undefined ? {} : { limit }),
      ...(offset === undefined ? {} : { offset }),
    });
    for (const path of list.unreadable) {
      io.err(
        `warning: ${
          terminalSafe(path)
        } cannot be read or trusted; trace external-show on its run names the problem\n`,
      );
    }
    if (values.json) printJson(io, list);
    else io.out(renderRuns(list, offset ?? 0));
    return 0;
  });
};

/** Words of the CLEANUP column; `RunListItem["cleanup"]` is the JSON value. */
const CLEANUP_WORDS: Record<RunListItem["cleanup"], string> = {
  complete: "complete",
  incomplete: "incomplete",
  inventories_clear: "inventories clear",
  gone_with_demo: "gone with demo",
  unknown: "unknown",
  none: "none",
};

function renderRuns(list: RunList, offset: number): string {
  if (list.runs.length === 0) {
    return offset > 0 && list.total > 0
      ? `--offset ${offset} is past the last of the ${list.total} matching runs; pass a smaller offset, or none for the newest\n`
      : "No runs match; start one with trace external-run --target ID (or --config FILE)\n";
  }
  return renderTable(
    ["RUN", "VERDICT", "STATE", "KIND", "TARGET", "STARTED", "CLEANUP", "LINK"],
    list.runs.map((run) => [
      run.run_id,
      run.verdict,
      run.state,
      run.kind,
      run.target_registered === false
        ? `${run.target_id} (unregistered)`
        : run.target_id,
      run.started_at,
      CLEANUP_WORDS[run.cleanup],
      linkWords(run),
    ]),
  ) + pageLine(list, offset);
}

/** Says which runs of how many a page shows and how to list the rest, so a script or a reader does not miss older ones. */
function pageLine(list: RunList, offset: number): string {
  if (!list.truncated && offset === 0) return "";
  const shown = offset === 0
    ? `the ${list.runs.length} newest`
    : `runs ${offset + 1} to ${offset + list.runs.length}`;
  const nextOffset = offset + list.runs.length;
  const next = !list.truncated
    ? ""
    : offset === 0
    ? `; pass --limit ${list.total} to list them all, or --offset ${nextOffset} for the next page`
    : `; pass --offset ${nextOffset} for older ones`;
  return `Showing ${shown} of ${list.total} matching runs${next}\n`;
}

/** A run's LINK column: what it replayed or was saved as, and where its report is when not in the ledger. */
function linkWords(run: RunListItem): string {
  const links = [
    run.regression_id
      ? `replay of ${run.regression_id}`
      : run.saved_as
      ? `saved as ${run.saved_as}`
      : null,
    run.kept_in === "file" ? "not in the ledger: report kept on disk" : null,
    run.kept_in === "checkpoint" && run.state === "completed"
      ? "not in the ledger: report lost"
      : null,
  ].filter((link) => link !== null);
  return links.length > 0 ? links.join("; ") : "-";
}
