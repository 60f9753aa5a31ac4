/**
 * The eight reference tools over the reference suite: the systems and their
 * expected outcomes, what a run would do, running them (in process, virtual
 * time, recorded in the local ledger), one stored run, the history, the
 * dashboard matrix, the ranking, and what a finding code means.
 *
 * @module
 */

import * as v from "valibot";
import { NotFoundError, UsageError } from "../errors.ts";
import { dashboardRow } from "../reference/dashboard.ts";
import { isExternalRun } from "../reference/history.ts";
import { referenceConfig, referenceTarget } from "../reference/suite.ts";
import {
  expectationLabel,
  findSystem,
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
} from "../reference/systems.ts";
import { findingChecks } from "../runner/finding_checks.ts";
import { planRun } from "../runner/plan.ts";
import type { RunReport } from "../runner/report.ts";
import {
  FINDING_CODES,
  type FindingCode,
  type FindingRule,
} from "../runner/rules.ts";
import {
  referenceDashboard,
  referenceHistory,
  referenceRanking,
  referenceRunView,
  runReference,
  viewRun,
} from "../runs/mod.ts";
import { RunIdArg, strictArgs } from "./_args.ts";
import { defineTool, LEDGER_APPEND, READS, type TraceTool } from "./_tool.ts";
import { type McpToolContext, requireRunningRole } from "./context.ts";
import {
  FINDING_CODE_NAMES,
  FINDING_SUBJECTS,
  findingGuide,
} from "../runner/finding_guide.ts";

const SYSTEM_NAMES = REFERENCE_SYSTEMS.map((s) => s.name) as [
  string,
  ...string[],
];

const SystemArg = v.picklist(
  SYSTEM_NAMES,
  `must be one of ${SYSTEM_NAMES.join(", ")}`,
);

const SystemsArg = v.optional(v.pipe(
  v.array(SystemArg, "must be an array of system names"),
  // An empty list naming every system would run all of them by mistake.
  v.minLength(1, "must name at least one system; omit systems for every one"),
  v.maxLength(
    SYSTEM_NAMES.length,
    `must name at most ${SYSTEM_NAMES.length} systems (there are no more)`,
  ),
  v.description(
    "System names, at least one; omit the argument for every system",
  ),
));

function selected(names: string[] | undefined): ReferenceSystemSpec[] {
  if (names === undefined) return [...REFERENCE_SYSTEMS];
  return [...new Set(names)].map((name) => findSystem(name)!);
}

const list = defineTool({
  name: "trace.reference_list",
  title: "List reference systems",
  description:
    "Lists the in-process reference systems with known deletion behaviour: what each does on deletion, the outcome a correct checker must reach, the findings that prove it, and any blind spot.",
  input: strictArgs({}),
  annotations: READS,
  run: () =>
    Promise.resolve({
      systems: REFERENCE_SYSTEMS.map((spec) => ({
        name: spec.name,
        title: spec.title,
        behaviour: spec.behaviour,
        expected: expectationLabel(
          spec.expected.verdict,
          spec.expected.qualifier,
        ),
        expected_findings: spec.expected.findings,
        reason: spec.reason,
        blind_spot: spec.blind_spot,
        timing: spec.timing,
      })),
    }),
});

const plan = defineTool({
  name: "trace.reference_plan",
  title: "Plan reference runs",
  description:
    "Shows what a run of each reference system (or the named ones) would do: documents, deletion window, samples and request budget. Runs and records nothing.",
  input: strictArgs({ systems: SystemsArg }),
  annotations: READS,
  run: ({ systems }) =>
    Promise.resolve({
      note:
        "reference runs use an in-process transport and virtual time: no network, no real waiting",
      plans: selected(systems).map((spec) => ({
        system: spec.name,
        expected: expectationLabel(
          spec.expected.verdict,
          spec.expected.qualifier,
        ),
        plan: planRun(referenceConfig(spec), referenceTarget(spec)),
      })),
    }),
});

const run = defineTool({
  name: "trace.reference_run",
  title: "Run reference systems",
  description:
    "Runs every reference system (or the named ones) in process under virtual time, records each run in the local ledger's reference history (and, unless trace is false, its lifecycle in the observability index), and returns the matrix rows. No network. A row that lands off its expected outcome means the checker has a bug.",
  input: strictArgs({
    systems: SystemsArg,
    trace: v.optional(v.pipe(
      v.boolean("must be true or false"),
      v.description(
        "Write the runs into the observability index (default true)",
      ),
    )),
  }),
  annotations: LEDGER_APPEND,
  run: async ({ systems, trace }, { db, principal }) => {
    requireRunningRole(principal, "trace.reference_run");
    const specs = selected(systems);
    const runs = await runReference(db, {
      systems: specs,
      trace: trace !== false,
    });
    const rows = runs.map((r) =>
      dashboardRow(findSystem(r.system, specs)!, r.report, r.evaluation)
    );
    return {
      rows,
      mismatches: rows.filter((row) => !row.matches).length,
      trace_failures: runs.filter((r) => r.trace.status === "failed").length,
    };
  },
});

const get = defineTool({
  name: "trace.reference_get",
  title: "Show a reference run",
  description:
    "One stored reference run with its expected and observed outcome and the full report (findings, samples, cleanup). Run ids come from trace.reference_run, _history or _dashboard.",
  input: strictArgs({ run_id: RunIdArg }),
  annotations: READS,
  run: async ({ run_id }, { db }) => {
    const view = await referenceRunView(db, run_id);
    if (!view && await isExternalRun(db, run_id)) {
      throw new NotFoundError(
        `Cannot find reference run ${run_id}: it is an external run; trace.external_get reads it`,
      );
    }
    if (!view) {
      throw new NotFoundError(
        `Cannot find reference run ${run_id}; trace.reference_history lists stored reference runs`,
      );
    }
    return view;
  },
});

const history = defineTool({
  name: "trace.reference_history",
  title: "Reference run history",
  description:
    "The newest stored reference runs (optionally of one system), newest first, each with its verdict and expected versus observed outcome.",
  input: strictArgs({
    system: v.optional(SystemArg),
    limit: v.optional(v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(200, "must be at most 200"),
      v.description("Most runs to return (default 20)"),
    )),
  }),
  annotations: READS,
  run: async ({ system, limit }, { db }) => ({
    runs: await referenceHistory(db, {
      limit: limit ?? 20,
      ...(system === undefined ? {} : { system }),
    }),
  }),
});

const dashboard = defineTool({
  name: "trace.reference_dashboard",
  title: "Reference dashboard",
  description:
    "The matrix of the latest stored run of each reference system: verdict, expected versus observed, and per family (each store, retrieval, control, cleanup) its state and time to erasure.",
  input: strictArgs({}),
  annotations: READS,
  run: async (_args, { db }) => await referenceDashboard(db),
});

const ranking = defineTool({
  name: "trace.reference_ranking",
  title: "Reference ranking",
  description:
    "The reference systems ranked by the strength of their deletion guarantee, from the latest stored run of each, with the rule used.",
  input: strictArgs({}),
  annotations: READS,
  run: async (_args, { db }) => await referenceRanking(db),
});

/** A run's report and where it was read from. */
interface ExplainedReport {
  report: RunReport;
  /** The ledger, or a file kept when the ledger could not take the report. */
  kept_in: "ledger" | "file";
  /** Said of a kept file, as external-show says it: not verified like a ledger entry. */
  note: string | null;
}

/** A run's report by id: the reference history first, then external runs. */
async function reportOf(
  context: McpToolContext,
  runId: string,
): Promise<ExplainedReport> {
  const reference = await referenceRunView(context.db, runId);
  if (reference) {
    return { report: reference.report, kept_in: "ledger", note: null };
  }
  const view = await viewRun(context.db, runId, { dataDir: context.dataDir });
  if (!view.report) {
    throw new NotFoundError(
      `Run ${runId} has no completed report (it is ${view.state}); only completed runs have findings to explain`,
    );
  }
  return view.kept_in === "file"
    ? { report: view.report, kept_in: "file", note: view.note }
    : { report: view.report, kept_in: "ledger", note: null };
}

function occurrences(report: RunReport, code: FindingCode, subject?: string) {
  return report.findings
    .filter((f) =>
      f.code === code && (subject === undefined || f.subject === subject)
    )
    .map((f) => ({
      ...f,
      samples: f.sample_indexes.flatMap((i) => report.samples[i] ?? []),
      // The guide's checks, the one this run's evidence points at first (as the run page orders them).
      checks: findingChecks(f, report),
    }));
}

const explain = defineTool({
  name: "trace.reference_explain",
  title: "Explain a finding",
  description:
    "Explains a finding code: what it means, where its proof is, and what to check in the application. With run_id (a reference or external run), also lists that run's findings with this code and the samples that prove each, and says when the report was read from a file kept outside the ledger, which is not verified like a ledger entry.",
  input: strictArgs({
    code: v.picklist(
      FINDING_CODE_NAMES,
      `must be one of ${FINDING_CODE_NAMES.join(", ")}`,
    ),
    subject: v.optional(v.pipe(
      v.picklist(
        FINDING_SUBJECTS,
        `must be one of ${FINDING_SUBJECTS.join(", ")}`,
      ),
      v.description(
        "The finding's subject, e.g. cache_records or retrieval, for checks of that store (one the code carries)",
      ),
    )),
    run_id: v.optional(RunIdArg),
  }),
  annotations: READS,
  run: async ({ code, subject, run_id }, context) => {
    const rule: FindingRule = FINDING_CODES[code];
    if (subject !== undefined && !rule.subjects.includes(subject)) {
      throw new UsageError(
        `Invalid arguments for trace.reference_explain: subject: ${code} findings carry ${
          rule.subjects.join(", ")
        }, not ${subject}`,
      );
    }
    const guide = findingGuide(code, subject);
    const base = {
      code,
      severities: rule.severities,
      subjects: rule.subjects,
      ...guide,
    };
    if (run_id === undefined) return { ...base, run: null };
    const { report, kept_in, note } = await reportOf(context, run_id);
    const found = occurrences(report, code, subject);
    const absent = found.length === 0
      ? `run ${report.run_id} has no ${code} finding${
        subject === undefined ? "" : ` on ${subject}`
      }; its findings are: ${
        report.findings.map((f) => `${f.code}:${f.subject}`).join(", ") ||
        "(none)"
      }`
      : null;
    return {
      ...base,
      run: {
        run_id: report.run_id,
        kind: report.kind,
        target_id: report.target.id,
        verdict: report.verdict,
        kept_in,
        findings: found,
        note: [note, absent].filter((n) => n !== null).join("; ") || null,
      },
    };
  },
});

/** The reference tools, in documentation order. */
export const REFERENCE_TOOLS: readonly TraceTool[] = [
  list,
  plan,
  run,
  get,
  history,
  dashboard,
  ranking,
  explain,
];
