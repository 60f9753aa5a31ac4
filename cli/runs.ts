/** `trace external-show` and `trace external-compare`: reading runs back. */

import type { RunComparison } from "../lib/ledger/compare.ts";
import { validateRunId } from "../lib/ledger/runs.ts";
import { compareStoredRuns, type RunView, viewRun } from "../lib/runs/mod.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";
import { renderReport } from "./_report_text.ts";
import { exitCodeOf, reserveOutputs, writeRunHtml } from "./_run_outputs.ts";

const COMPARE_HELP =
  `Usage: trace external-compare RUN_A RUN_B [--json] [--data-dir DIR] [--db URL]

Compares two completed runs of the same target under the same contract
(typically the failing run and its replay): both verdicts, findings fixed /
still present / new, and both cleanup outcomes. Refuses runs of different
targets, configs or contracts.
`;

/** `trace external-compare`: before and after. */
export const externalCompare: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-compare",
    args,
    DATA_FLAGS,
    { min: 2, max: 2 },
  );
  if (values.help) return showHelp(io, COMPARE_HELP);
  const [runA, runB] = positionals.map(validateRunId);
  return await withDataContext(values, io, { write: false }, async ({ db }) => {
    const comparison = await compareStoredRuns(db, runA!, runB!);
    if (values.json) printJson(io, comparison);
    else io.out(renderComparison(comparison));
    return 0;
  });
};

function renderComparison(c: RunComparison): string {
  const keys = (list: RunComparison["findings"]["fixed"]) =>
    list.length === 0
      ? ["    (none)"]
      : list.map((f) => `    ${f.code} on ${f.subject}: ${f.message}`);
  const cleanup = (side: RunComparison["cleanup"]["a"]) =>
    side.cleanup_complete
      ? "complete"
      : `INCOMPLETE: ${side.problems.join("; ") || "synthetic records remain"}`;
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
    "",
  ].join("\n");
}

const SHOW_HELP =
  `Usage: trace external-show RUN_ID [--json] [--html FILE] [--data-dir DIR] [--db URL]

Shows a run: the completed report from the ledger, or, for a run without one,
its checkpoint: running while its process is alive on this host, otherwise
interrupted (INCONCLUSIVE, never PASS) with the ids it issued.

--html FILE writes the run's page as one self-contained HTML file (inline
CSS and SVG, no script, nothing fetched), refused if the file exists.

Exit codes follow the verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (also running
and interrupted runs).
`;

/** `trace external-show`: one run, completed, running or interrupted. */
export const externalShow: Command = async (args, io) => {
  const { values, positionals } = parseFlags(
    "external-show",
    args,
    { ...DATA_FLAGS, html: { type: "string" } },
    { min: 1, max: 1 },
  );
  if (values.help) return showHelp(io, SHOW_HELP);
  return await withDataContext(
    values,
    io,
    { write: false },
    async ({ db, dataDir }) => {
      const view = await viewRun(db, positionals[0]!, { dataDir });
      if (values.html) {
        await reserveOutputs({ html: values.html });
        await writeRunHtml(values.html, { db, dataDir }, view.run_id, io);
      }
      if (values.json) printJson(io, view);
      else io.out(renderView(view));
      return exitCodeOf(view.verdict);
    },
  );
};

function renderView(view: RunView): string {
  const replay = view.regression_id
    ? `Replay of regression ${view.regression_id}\n`
    : "";
  if (view.report) return replay + renderReport(view.report);
  const c = view.checkpoint!;
  return [
    `${view.verdict}  ${view.run_id}  (${view.state})`,
    `  target   ${view.target.id}  ${view.target.base_url}`,
    `  started  ${view.started_at}, last checkpoint ${c.updated_at}, pid ${c.pid}`,
    `  namespaces ${c.namespaces.test} and ${c.namespaces.control}`,
    `  issued test ids: ${c.issued.test.join(", ") || "(none)"}`,
    `  issued control ids: ${c.issued.control.join(", ") || "(none)"}`,
    "",
    view.note ?? "",
    "",
  ].join("\n");
}
