/**
 * A short Markdown summary of a run for a CI step summary or a pull-request
 * comment: verdict, per-check table, findings, cleanup and the exact command
 * that replays the failure.
 *
 * @module
 */

import type { RunReport } from "../runner/report.ts";
import { familyResults, type FamilyStatus } from "../runner/families.ts";

/** Options for {@link renderSummaryMarkdown}. */
export interface SummaryOptions {
  /** The exact shell command(s) that save and/or replay this failure; omitted when `null`. */
  replayCommand: string | null;
  /** The regression this run replayed, if any. */
  regressionId?: string | null;
}

const STATUS_LABEL: Record<FamilyStatus, string> = {
  pass: "pass",
  fail: "**FAIL**",
  error: "**INCONCLUSIVE**",
  incomplete: "**INCOMPLETE**",
};

/** Escapes text for a Markdown table cell or list item. */
export function markdownEscape(text: string): string {
  return text.replace(/[\\`*_{}[\]<>|#]/g, (c) => `\\${c}`).replace(
    /\r?\n/g,
    " ",
  );
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
    lines.push("", `Replay of regression \`${options.regressionId}\`.`);
  }
  lines.push("", "| Check | Result |", "| --- | --- |");
  for (const result of familyResults(report)) {
    lines.push(`| ${result.family} | ${STATUS_LABEL[result.status]} |`);
  }
  const problems = report.findings.filter((f) =>
    f.severity === "fail" || f.severity === "inconclusive"
  );
  lines.push("", "#### Findings", "");
  if (problems.length === 0) lines.push("- none");
  for (const f of problems) {
    lines.push(
      `- ${
        f.severity === "fail" ? "FAIL" : "INCONCLUSIVE"
      } \`${f.code}\` (${f.subject}): ${markdownEscape(f.message)}`,
    );
  }
  lines.push("", "#### Cleanup", "", ...cleanupLines(report));
  if (options.replayCommand) {
    lines.push("", "#### Replay", "", "```sh", options.replayCommand, "```");
  }
  return lines.join("\n") + "\n";
}

function cleanupLines(report: RunReport): string[] {
  const c = report.cleanup;
  if (c.cleanup_complete) {
    return ["Complete: every store of both namespaces reads 0."];
  }
  return [
    `**Incomplete**: ${
      markdownEscape(c.problems.join("; ") || "synthetic records remain")
    }. Remove what is left in namespaces \`${report.namespaces.test}\` and \`${report.namespaces.control}\`.`,
  ];
}
