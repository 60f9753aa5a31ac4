/** The human-readable rendering of a run report and a run plan. */

import { tableLines } from "./_table.ts";
import { STORES } from "../lib/contract/protocol.ts";
import type { RunPlan } from "../lib/runner/plan.ts";
import type {
  Finding,
  InventoryCounts,
  RunReport,
  Sample,
} from "../lib/runner/report.ts";
import { describeRendering } from "../lib/runner/marker/mod.ts";
import { controlState, controlWord } from "../lib/runner/control_state.ts";
import { whatToCheck } from "../lib/runs/mod.ts";
import { markerLabel } from "./_progress.ts";
import { deletionCounts } from "../lib/ledger/cleanups.ts";

const SEVERITY_LABEL: Record<Finding["severity"], string> = {
  fail: "FAIL",
  inconclusive: "INCONCLUSIVE",
  transient: "TRANSIENT",
  note: "note",
};

const SEVERITY_WIDTH = Math.max(
  ...Object.values(SEVERITY_LABEL).map((label) => label.length),
);

/** Options for {@link renderReport}. */
export interface RenderReportOptions {
  /**
   * What to say about records an incomplete cleanup left, instead of the
   * `trace external-cleanup` command (a run whose adapter lived and died
   * inside the command has nothing left to remove).
   */
  cleanupHint?: string;
  /** `--data-dir` / `--db` flags to repeat in the cleanup command (`dataFlagsOf`). */
  dataFlags?: string;
}

/** Renders a report as plain text for a terminal or a log. */
export function renderReport(
  report: RunReport,
  options: RenderReportOptions = {},
): string {
  const t = report.timing;
  const lines = [
    `${report.verdict}  ${report.run_id}  (${report.state})`,
    targetLine(report),
    `  contract ${report.protocol.revision}, ${t.document_count} document(s), window ${t.deletion_window_seconds} s, sample every ${t.sample_interval_seconds} s`,
    `  started  ${report.started_at}, took ${t.elapsed_seconds.toFixed(2)} s${
      report.kind === "reference" ? " of virtual time" : ""
    }, ${report.requests.total} request(s), ${report.requests.failed} failed`,
    "",
    "Findings",
    ...report.findings.map((f) =>
      `  ${SEVERITY_LABEL[f.severity].padEnd(SEVERITY_WIDTH)}  ${f.message}`
    ),
  ];
  const advice = whatToCheck(report);
  if (advice.length > 0) {
    lines.push("", "What to check", ...advice.map((a) => `  ${a}`));
  }
  if (report.samples.length > 0) {
    lines.push(
      "",
      "Samples (seconds after the deletion was acknowledged)",
      ...sampleTable(report.samples, report.baseline.control_inventory),
      ...renderedLegend(report.samples),
    );
  } else if (report.state === "interrupted") {
    lines.push(
      "",
      "No samples: the run was interrupted before its deletion window began.",
    );
  } else if (!report.baseline.ok) {
    lines.push(
      "",
      "No samples: the baseline was not established, so nothing was deleted.",
    );
  } else if (report.deletion && !report.deletion.acknowledged) {
    lines.push(
      "",
      "No samples: the deletion was not acknowledged, so there was no window to observe.",
    );
  }
  lines.push("", ...cleanupLines(report, options));
  return lines.join("\n") + "\n";
}

/** A reference system runs in process on virtual time: no URL, and its times are not wall-clock times. */
function targetLine(report: RunReport): string {
  if (report.kind === "reference") {
    return `  target   ${report.target.id}, a reference system run in process on virtual time (every time below is virtual)`;
  }
  return `  target   ${report.target.id}  ${report.target.base_url}`;
}

function sampleTable(
  samples: Sample[],
  baselineControl: InventoryCounts | null,
): string[] {
  const header = [
    "  #",
    "start",
    ...STORES.map((s) => s.replace("_records", "")),
    "marker",
    "control",
  ];
  const rows = samples.map((s) => [
    `  ${s.index}`,
    s.started_at_seconds.toFixed(2),
    ...STORES.map((store) => (s.inventory ? String(s.inventory[store]) : "?")),
    markerLabel(s.marker_seen, s.marker_form ?? null),
    controlWord(controlState(s, baselineControl)),
  ]);
  return tableLines([header, ...rows]);
}

/** Says what RENDERED means, with what the rendering changed, when a sample shows it. */
function renderedLegend(samples: Sample[]): string[] {
  const rendered = samples.filter((s) => s.marker_form === "rendered");
  if (rendered.length === 0) return [];
  const traits = [...new Set(rendered.flatMap((s) => s.marker_rendering))];
  return [
    `  RENDERED: the answer carried the marker in another spelling (${
      describeRendering(traits)
    }), which counts as retrievable`,
  ];
}

function cleanupLines(
  report: RunReport,
  { cleanupHint: hint, dataFlags = "" }: RenderReportOptions,
): string[] {
  const c = report.cleanup;
  const counts = deletionCounts(c);
  const repeated = c.deletes.length -
    new Set(c.deletes.map((d) => d.namespace)).size;
  const lines = [
    `Cleanup  ${
      c.cleanup_complete ? "complete" : "INCOMPLETE"
    } (cleanup_complete: ${c.cleanup_complete}); ${counts.delete_requests_acknowledged}/${counts.delete_requests} delete request(s) acknowledged${
      repeated > 0
        ? ` (${repeated} repeated: records came back after a clean poll)`
        : ""
    }, ${counts.deleted_ids}/${counts.ids_to_delete} id(s) deleted, ${c.polls} poll(s) over ${
      c.elapsed_seconds.toFixed(2)
    } s`,
  ];
  for (const problem of c.problems) lines.push(`  - ${problem}`);
  if (!c.cleanup_complete) {
    lines.push(
      hint === undefined ? cleanupHint(report, dataFlags) : `  ${hint}`,
    );
  }
  return lines;
}

/** What to do about an incomplete cleanup: the command that removes what is left. */
function cleanupHint(report: RunReport, dataFlags: string): string {
  if (report.kind === "reference") {
    return "  The reference system was discarded after its run: nothing is left to remove";
  }
  const known = report.cleanup.problems.some((p) =>
    p.includes(" left in the ") || p.includes("still retrievable")
  );
  return known
    ? `  Remove the remaining synthetic records (namespaces ${report.namespaces.test} and ${report.namespaces.control}) with: trace external-cleanup ${report.run_id}${dataFlags}`
    : `  Trace could not confirm their removal (namespaces ${report.namespaces.test} and ${report.namespaces.control}); retry with: trace external-cleanup ${report.run_id}${dataFlags}`;
}

/** Renders a plan as plain text. */
export function renderPlan(plan: RunPlan): string {
  const t = plan.timing;
  const lines = [
    `Plan for ${plan.target.id}  ${plan.target.base_url}  (no request is sent)`,
    `  contract ${plan.protocol.revision}: POST /${
      plan.protocol.operations.join(", /")
    }`,
    `  namespaces ${plan.namespaces.test} and ${plan.namespaces.control}; ids ${plan.identifiers.documents}; markers ${plan.identifiers.markers}`,
    `  ${t.document_count} document(s); window ${t.deletion_window_seconds} s; ${t.samples} sample(s) every ${t.sample_interval_seconds} s`,
    `  timeouts: ingest ${t.timeout_seconds.ingest} s, query ${t.timeout_seconds.query} s, inventory ${t.timeout_seconds.inventory} s, delete ${t.timeout_seconds.delete} s`,
    "",
    "Phases",
    ...plan.phases.map((p) =>
      `  ${p.phase.padEnd(9)} ${
        String(p.requests).padStart(4)
      } request(s)  ${p.description}`
    ),
    "",
    `Request budget: at most ${plan.request_budget.max_requests} requests, at most ${plan.request_budget.worst_case_seconds} s if every request used its full timeout`,
  ];
  return lines.join("\n") + "\n";
}
