/**
 * A short Markdown summary of a run for a CI step summary or a pull-request
 * comment: verdict, per-check table, every finding, cleanup, the exact
 * commands that save and then (once the application is fixed) replay the
 * failure (or that run the target again), and the ledger's head after the
 * run. A run that could not start gets a summary that says so, why, and
 * what to do ({@link renderSummaryNotStarted}); so does one that started and
 * stopped on an error before its report ({@link renderSummaryUnfinished}).
 *
 * @module
 */

import { type LaterCleanup, stillServed } from "../ledger/cleanups.ts";
import type { Finding, RunReport } from "../runner/report.ts";
import type { NotStarted, Unfinished } from "./junit.ts";
import { familyResults, type FamilyStatus } from "../runner/families.ts";
import { whatToCheck } from "../runner/finding_checks.ts";

/** Options for {@link renderSummaryMarkdown}. */
export interface SummaryOptions {
  /** The exact shell command that replays a regression (this failure's, or the one this run replayed); omitted when `null`. */
  replayCommand: string | null;
  /** The command that runs the target again, for a run with no regression to replay; used when there is no `replayCommand`. */
  rerunCommand?: string | null;
  /** The command that saves this FAIL as a regression, to run before fixing and replaying. */
  saveCommand?: string | null;
  /** The regression this run replayed, if any. */
  regressionId?: string | null;
  /**
   * What became of that regression after this replay, one sentence
   * (`enforced, and this replay did not pass (FAIL): …`), as the text report
   * says it.
   */
  regressionOutcome?: string | null;
  /** The ledger's head after this run (`SEQ:sha256:…`); `null` when the run is not in the ledger. */
  ledgerHead?: string | null;
  /** The `--data-dir`/`--db` flags (with a leading space) every command it prints carries. */
  dataFlags?: string;
  /** The latest `trace external-cleanup` of the run, for a summary written after it. */
  laterCleanup?: LaterCleanup | null;
}

const STATUS_LABEL: Record<FamilyStatus, string> = {
  pass: "pass",
  fail: "**FAIL**",
  error: "**INCONCLUSIVE**",
  incomplete: "**INCOMPLETE**",
};

/**
 * Every finding is listed, as the text report and the run page list them;
 * those that decide nothing say so, so a PASS with a transient residual
 * does not read as a failure, nor as a run that saw nothing.
 */
const SEVERITY_LABEL: Record<Finding["severity"], string> = {
  fail: "FAIL",
  inconclusive: "INCONCLUSIVE",
  transient: "TRANSIENT (recorded, not failing)",
  note: "note (does not change the verdict)",
};

/** Control characters: a terminal would act on them. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/g;

/**
 * Escapes text for a Markdown table cell or list item. Control characters
 * go too: a summary is also read with `cat` in a terminal, where an escape
 * sequence in a message (a path typed with one) would act.
 */
export function markdownEscape(text: string): string {
  return text.replace(/[\\`*_{}[\]<>|#]/g, (c) => `\\${c}`)
    .replace(/\r?\n|\t/g, " ")
    .replace(CONTROL, "");
}

/** Renders the summary. */
export function renderSummaryMarkdown(
  report: RunReport,
  options: SummaryOptions,
): string {
  const t = report.timing;
  const lines = [
    `### Trace deletion contract: ${report.verdict}`,
    "",
    `Run \`${report.run_id}\` against target \`${report.target.id}\` (${
      markdownEscape(report.target.base_url)
    }): ${t.document_count} document(s), ${t.deletion_window_seconds} s window, protocol ${report.protocol.revision}.`,
  ];
  if (options.regressionId) {
    const outcome = options.regressionOutcome;
    lines.push(
      "",
      `Replay of regression \`${options.regressionId}\`${
        outcome ? `: ${markdownEscape(outcome)}` : ""
      }.`,
    );
  }
  lines.push("", "| Check | Result |", "| --- | --- |");
  for (const result of familyResults(report)) {
    lines.push(`| ${result.family} | ${STATUS_LABEL[result.status]} |`);
  }
  lines.push("", "#### Findings", "");
  if (report.findings.length === 0) lines.push("- none");
  for (const f of report.findings) {
    lines.push(
      `- ${SEVERITY_LABEL[f.severity]} \`${f.code}\` (${f.subject}): ${
        markdownEscape(f.message)
      }`,
    );
  }
  const checks = whatToCheck(report);
  if (checks.length > 0) {
    lines.push(
      "",
      "#### What to check",
      "",
      ...checks.map((c) => `- ${markdownEscape(c)}`),
    );
  }
  lines.push(
    "",
    "#### Cleanup",
    "",
    ...cleanupLines(report, options),
  );
  lines.push(...nextLines(options));
  if (options.ledgerHead !== undefined) {
    lines.push(
      "",
      options.ledgerHead
        ? `Ledger head after this run: \`${options.ledgerHead}\` (check later with \`trace ledger verify --expect-head ${options.ledgerHead}${
          options.dataFlags ?? ""
        }\`).`
        : "This run is not in the ledger.",
    );
  }
  return lines.join("\n") + "\n";
}

function nextLines(options: SummaryOptions): string[] {
  if (options.saveCommand && options.replayCommand) {
    return [
      "",
      "#### Next steps",
      "",
      "1. Save the failure as a regression:",
      "",
      "   ```sh",
      `   ${options.saveCommand}`,
      "   ```",
      "",
      "2. After you fix the application, replay it:",
      "",
      "   ```sh",
      `   ${options.replayCommand}`,
      "   ```",
    ];
  }
  if (options.replayCommand) {
    return ["", "#### Replay", "", "```sh", options.replayCommand, "```"];
  }
  // Not "Replay": that replays a saved regression; this only runs the target again.
  if (!options.rerunCommand) return [];
  return ["", "#### Run again", "", "```sh", options.rerunCommand, "```"];
}

function cleanupLines(report: RunReport, options: SummaryOptions): string[] {
  const c = report.cleanup;
  if (c.cleanup_complete) {
    return [
      "Complete: every store of both namespaces reads 0 and neither marker is retrievable.",
    ];
  }
  const what = markdownEscape(
    c.problems.join("; ") || "synthetic records remain",
  );
  if (report.kind === "reference") {
    return [
      `**Incomplete**: ${what}. A reference system lives in memory: nothing is left behind once the run ends.`,
    ];
  }
  const later = options.laterCleanup;
  if (later?.cleanup_complete && later.markers_queried) {
    return [
      `Incomplete when the run ended: ${what}. **Complete later**: cleanup \`${later.cleanup_id}\` (${later.finished_at}) deleted every id this run issued; every store of both namespaces read 0 and neither marker was retrievable.`,
    ];
  }
  if (later?.cleanup_complete) {
    return [
      `Incomplete when the run ended: ${what}. **Inventories clear later**: cleanup \`${later.cleanup_id}\` (${later.finished_at}) deleted every id this run issued and every store of both namespaces read 0. It could not query the markers (this run's were not kept), so whether the records can still be retrieved was not checked.`,
    ];
  }
  const retried = later
    ? ` A later cleanup (\`${later.cleanup_id}\`, ${later.finished_at}) was still incomplete: ${
      markdownEscape(later.problems.join("; ") || "synthetic records remain")
    }.`
    : "";
  if (later && stillServed(later)) {
    return [
      `**Incomplete**: ${what}.${retried} The application still serves this run's text after deleting it, so another cleanup cannot help yet: fix its delete path (or remove the records with the application's own tools), then run \`trace external-cleanup ${report.run_id}${
        options.dataFlags ?? ""
      }\` again to confirm.`,
    ];
  }
  return [
    `**Incomplete**: ${what}.${retried} Remove what is left in namespaces \`${report.namespaces.test}\` and \`${report.namespaces.control}\` with \`trace external-cleanup ${report.run_id}${
      options.dataFlags ?? ""
    }\`.`,
  ];
}

/** Renders a run that did not start: no verdict, the reason, and what to do. */
export function renderSummaryNotStarted(why: NotStarted): string {
  return [
    "### Trace deletion contract: did not start",
    "",
    "The run did not start, so there is no verdict: no synthetic record was written to the staging application and no run was recorded in the ledger.",
    "",
    whyLine(why),
    "",
    "**What to do**: fix what the reason names, then run the same command again (`trace external-plan` checks a config or target without sending anything).",
    "",
  ].join("\n");
}

/**
 * Renders a run that started and then stopped on an error before its
 * report: no verdict, the reason, and the command that removes what it may
 * have left.
 */
export function renderSummaryUnfinished(why: Unfinished): string {
  return [
    "### Trace deletion contract: did not finish",
    "",
    `Run \`${
      why.run_id.replace(/[^A-Za-z0-9_-]/g, "")
    }\` started, then stopped on an error before this command got its verdict, so there is none here; synthetic records it wrote may remain in the staging application.`,
    "",
    whyLine(why),
    "",
    `**What to do**: remove what may remain with the command below (the checkpoint ${
      markdownEscape(why.checkpoint)
    } lists every id the run issued); then fix what the reason names and run the same command again.`,
    "",
    "```sh",
    why.cleanup_command.replace(CONTROL, ""),
    "```",
    "",
  ].join("\n");
}

/** Why a run has no report, its error's code first. */
function whyLine(why: NotStarted): string {
  // The code is one of a fixed set of snake_case words: shown as code, unescaped.
  return `**Why** (\`${why.code.replace(/[^a-z_]/g, "")}\`): ${
    markdownEscape(why.message)
  }`;
}
