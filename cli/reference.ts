/** `trace reference list|plan|run|show|dashboard|ranking`: the reference suite. */

import { dbLocation } from "../lib/db.ts";
import { tableLines } from "./_table.ts";
import { NotFoundError, UsageError } from "../lib/errors.ts";
import { NoDataError, type TraceDb } from "../lib/db.ts";
import { planRun } from "../lib/runner/plan.ts";
import {
  referenceDashboard,
  referenceRanking,
  runReference,
} from "../lib/runs/mod.ts";
import { type DashboardRow, dashboardRow } from "../lib/reference/dashboard.ts";
import { evaluateRun } from "../lib/reference/evaluate.ts";
import {
  isExternalRun,
  latestReferenceRuns,
  readReferenceRun,
} from "../lib/reference/history.ts";
import { referenceConfig, referenceTarget } from "../lib/reference/suite.ts";
import {
  expectationLabel,
  findSystem,
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
} from "../lib/reference/systems.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { CliIo, Command } from "./_io.ts";
import { MATRIX_WIDTH, renderMatrix, wrap } from "./_matrix.ts";
import { renderReport } from "./_report_text.ts";
import { quoteValue } from "../lib/echo.ts";
import { terminalSafe } from "../lib/display.ts";
import { closestName } from "../lib/suggest.ts";
import { dataFlagsOf } from "./_run_outputs.ts";

/** `run`'s flags; the other subcommands take the data flags only. */
const RUN_FLAGS = {
  ...DATA_FLAGS,
  "no-trace": { type: "boolean", default: false },
} as const;

const DATA_OPTIONS =
  `  --data-dir DIR     Data directory (default $TRACE_DATA_DIR or the platform dir)
  --db URL           Database URL instead of <data-dir>/trace.db`;

/** Help of each subcommand. */
const HELPS: Record<Subcommand, string> = {
  list: `Usage: trace reference list [--json]

Lists the reference systems: what each does, its expected outcome and any
blind spot. Nothing is run or read from the data directory.
`,
  plan: `Usage: trace reference plan [NAME...] [--json]

Shows what a run of every system (or the named ones) would do: documents,
deletion window, samples and request budget. Nothing is run or recorded.
`,
  run:
    `Usage: trace reference run [NAME...] [--no-trace] [--json] [--data-dir DIR] [--db URL]

Runs every system (or the named ones) in process with virtual time, records
each run in the reference history and prints the matrix (each run id on
stderr as it finishes). Exits 1 if any system lands off its expected outcome.
Ctrl-C starts no further system: the one running finishes and is recorded,
the others are named, and the command exits 2 (a second Ctrl-C exits at once).

Options:
  --no-trace         Do not write the runs into the observability index
  --json             The matrix rows, mismatches and trace failures as JSON
${DATA_OPTIONS}
`,
  show:
    `Usage: trace reference show (SYSTEM|RUN_ID) [--json] [--data-dir DIR] [--db URL]

Shows one stored reference run with its expected and observed outcome: the
latest run of SYSTEM, or the run RUN_ID (trace reference run --json and
trace reference dashboard --json give each row's run_id).

Options:
  --json             The evaluation and the full report as JSON
${DATA_OPTIONS}
`,
  dashboard:
    `Usage: trace reference dashboard [--json] [--data-dir DIR] [--db URL]

Matrix of the latest run of each system; trace reference show SYSTEM gives
the details of one.

Options:
  --json             Rows (each with its run_id), missing systems and mismatches
${DATA_OPTIONS}
`,
  ranking: `Usage: trace reference ranking [--json] [--data-dir DIR] [--db URL]

Systems ordered by the strength of their deletion guarantee, from the latest
run of each.

Options:
  --json             The rule and the ranked rows as JSON
${DATA_OPTIONS}
`,
};

/**
 * There is no reference run to read in the ledger at `where` (a path, or a
 * redacted URL); the command that records some names the same `dataFlags`.
 */
function noRuns(where: string, dataFlags: string): string {
  return `No reference runs in the ledger at ${where} yet; run trace reference run${dataFlags} first (check --data-dir / --db if runs were recorded elsewhere)`;
}

/** {@link noRuns} as a line of output: a path may hold any character, escaped as in an error line. */
function noRunsLine(db: TraceDb, dataFlags: string): string {
  return `${terminalSafe(noRuns(dbLocation(db), dataFlags))}\n`;
}

const SUBCOMMANDS = [
  "list",
  "plan",
  "run",
  "show",
  "dashboard",
  "ranking",
] as const;
/** The subcommands of `trace reference`. */
export type Subcommand = typeof SUBCOMMANDS[number];

type Values = {
  json: boolean;
  "data-dir"?: string | undefined;
  db?: string | undefined;
  "no-trace": boolean;
};

/**
 * One `trace reference <sub>` command over a set of systems (the built-in
 * ones by default; tests pass their own).
 */
export function referenceSubcommand(
  sub: Subcommand,
  systems: readonly ReferenceSystemSpec[] = REFERENCE_SYSTEMS,
): Command {
  return async (args, io) => {
    // --no-trace elsewhere than on run would be silently ignored: refuse it.
    const { values: parsed, positionals } = parseFlags(
      `reference ${sub}`,
      args,
      sub === "run" ? RUN_FLAGS : DATA_FLAGS,
      { max: 64 },
    );
    const values: Values = { "no-trace": false, ...parsed };
    // A system named twice runs (and is listed) once.
    const names = [...new Set(positionals)];
    if (parsed.help) return showHelp(io, HELPS[sub]);
    const context = { systems, values, io };
    switch (sub) {
      case "list":
        return list(context, names);
      case "plan":
        return plan(context, names);
      case "run":
        return await run(context, names);
      case "show":
        return await show(context, names);
      case "dashboard":
        return await dashboard(context, names);
      case "ranking":
        return await ranking(context, names);
    }
  };
}

interface Context {
  systems: readonly ReferenceSystemSpec[];
  values: Values;
  io: CliIo;
}

function selectSystems(
  systems: readonly ReferenceSystemSpec[],
  names: string[],
): ReferenceSystemSpec[] {
  if (names.length === 0) return [...systems];
  return names.map((name) => {
    const spec = findSystem(name, systems);
    if (!spec) {
      const near = nearSystem(name, systems);
      throw new UsageError(
        `Unknown system ${quoteValue(name)}; ${
          near ? `did you mean "${near}"? Valid` : "valid"
        } systems: ${systems.map((s) => s.name).join(", ")}`,
      );
    }
    return spec;
  });
}

/** The system name `word` is one typo away from, if any. */
function nearSystem(
  word: string,
  systems: readonly ReferenceSystemSpec[],
): string | undefined {
  return closestName(word, systems.map((s) => s.name));
}

function noArguments(sub: string, names: string[]): void {
  if (names.length > 0) {
    throw new UsageError(
      `Unexpected argument ${
        quoteValue(names[0]!)
      } for reference ${sub}; see trace reference ${sub} --help`,
    );
  }
}

function list({ systems, values, io }: Context, names: string[]): number {
  noArguments("list", names);
  const rows = systems.map((spec) => ({
    name: spec.name,
    title: spec.title,
    behaviour: spec.behaviour,
    expected: expectationLabel(spec.expected.verdict, spec.expected.qualifier),
    expected_findings: spec.expected.findings,
    reason: spec.reason,
    blind_spot: spec.blind_spot,
    timing: spec.timing,
  }));
  if (values.json) {
    printJson(io, rows);
    return 0;
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  const lines = rows.flatMap((r) => [
    `${r.name.padEnd(width)}  ${r.expected.padEnd(17)}  ${r.title}`,
    `${"".padEnd(width)}  ${r.behaviour}`,
    ...(r.blind_spot
      ? [`${"".padEnd(width)}  blind spot: ${r.blind_spot}`]
      : []),
  ]);
  io.out(lines.join("\n") + "\n");
  return 0;
}

function plan({ systems, values, io }: Context, names: string[]): number {
  const plans = selectSystems(systems, names).map((spec) => ({
    system: spec.name,
    expected: expectationLabel(spec.expected.verdict, spec.expected.qualifier),
    plan: planRun(referenceConfig(spec), referenceTarget(spec)),
  }));
  if (values.json) {
    printJson(io, plans);
    return 0;
  }
  const lines = plans.map(({ system, expected, plan }) =>
    `${system}: ${plan.timing.document_count} document(s), window ${plan.timing.deletion_window_seconds} s, ${plan.timing.samples} sample(s), at most ${plan.request_budget.max_requests} request(s); expected ${expected}`
  );
  io.out(
    [
      "Reference runs use an in-process transport and virtual time (no network, no real waiting).",
      ...lines,
    ].join("\n") + "\n",
  );
  return 0;
}

async function run(
  { systems, values, io }: Context,
  names: string[],
): Promise<number> {
  const selected = selectSystems(systems, names);
  return await withDataContext(values, io, { write: true }, async ({ db }) => {
    const rows: DashboardRow[] = [];
    let traceFailures = 0;
    // Reading it installs the Ctrl-C handling: the first stops the suite between systems.
    const stop = io.interrupted;
    io.setExitNote?.(
      `the reference runs finished so far are recorded; trace reference dashboard${
        dataFlagsOf(values)
      } shows them`,
    );
    await runReference(db, {
      systems: selected,
      trace: !values["no-trace"],
      ...(stop ? { stop } : {}),
      onResult: (run) => {
        if (run.trace.status === "failed") {
          // The verdict stands without its trace; say so instead of failing the suite.
          traceFailures++;
          io.err(`warning: run trace not written: ${run.trace.reason}\n`);
        }
        const spec = findSystem(run.system, selected)!;
        const row = dashboardRow(spec, run.report, run.evaluation);
        rows.push(row);
        io.err(
          `reference: ${row.system} ${row.observed}${
            row.matches ? "" : ` MISMATCH (expected ${row.expected})`
          }  ${row.run_id}\n`,
        );
      },
    });
    io.err(
      `ledger: ${rows.length} reference run(s) recorded in ${
        terminalSafe(dbLocation(db))
      }\n`,
    );
    const mismatched = rows.filter((r) => !r.matches);
    const notRun = selected.map((s) => s.name).filter((name) =>
      !rows.some((row) => row.system === name)
    );
    if (values.json) {
      printJson(io, {
        rows,
        mismatches: mismatched.length,
        trace_failures: traceFailures,
        interrupted: notRun.length > 0,
        not_run: notRun,
      });
    } else if (rows.length > 0) {
      io.out(renderMatrix(rows, dataFlagsOf(values)));
      io.out(suiteOutcome(rows.length, mismatched.length) + "\n");
    }
    if (notRun.length > 0) {
      io.err(interruptedNote(rows.length, notRun, dataFlagsOf(values)));
    }
    if (mismatched.length > 0) {
      io.err(
        `reference: ${mismatched.length} system(s) landed off their expected outcome; the checker has a bug: ${
          mismatched.map((r) => `${r.system} (${r.mismatches.join("; ")})`)
            .join(", ")
        }\n`,
      );
      return 1;
    }
    return notRun.length > 0 ? 2 : 0;
  });
}

/** The suite's outcome in one line: the matrix shows what each system did, not whether that was expected. */
function suiteOutcome(ran: number, mismatched: number): string {
  const systems = `${ran} system${ran === 1 ? "" : "s"}`;
  return mismatched === 0
    ? `As expected: each of the ${systems} landed on its expected outcome.`
    : `NOT as expected: ${mismatched} of the ${systems} landed off ${
      mismatched === 1 ? "its" : "their"
    } expected outcome (marked *).`;
}

/** What a Ctrl-C left out of the suite, and the command that runs it. */
function interruptedNote(
  ran: number,
  notRun: string[],
  dataFlags: string,
): string {
  return `reference: interrupted after ${ran} of ${
    ran + notRun.length
  } system(s); not run: ${
    notRun.join(", ")
  }; run them with trace reference run ${notRun.join(" ")}${dataFlags}\n`;
}

async function show(
  { systems, values, io }: Context,
  names: string[],
): Promise<number> {
  const [wanted, ...extra] = names;
  if (wanted === undefined) {
    throw new UsageError(
      "SYSTEM or RUN_ID is required; trace reference dashboard lists the systems",
    );
  }
  noArguments("show", extra);
  return await readHistory(values, io, async (db) => {
    const entry = await findReferenceRun(db, wanted, systems);
    if (!entry && await isExternalRun(db, wanted)) {
      throw new NotFoundError(
        `Cannot show reference run ${
          quoteValue(wanted)
        }: it is an external run, not a reference run; see trace external show ${wanted}${
          dataFlagsOf(values)
        }`,
      );
    }
    if (!entry) {
      // A known system without a run needs no guess at what was meant.
      const near = findSystem(wanted, systems)
        ? undefined
        : nearSystem(wanted, systems);
      throw new NotFoundError(
        `Cannot show reference run ${
          quoteValue(wanted)
        }: it is neither a system with a stored run nor a run id in the reference history of the ledger at ${
          dbLocation(db)
        }; ${
          near ? `did you mean "${near}"? Or ` : ""
        }see trace reference dashboard${dataFlagsOf(values)}`,
      );
    }
    const spec = entry.system ? findSystem(entry.system, systems) : undefined;
    const evaluation = spec ? evaluateRun(spec, entry.report) : null;
    if (values.json) {
      // The fields of trace.reference_get, in its order.
      printJson(io, {
        run_id: entry.run_id,
        system: entry.system,
        created_at: entry.created_at,
        evaluation,
        report: entry.report,
      });
      return 0;
    }
    const head = evaluation
      ? `Reference system ${entry.system}: observed ${evaluation.observed}, expected ${evaluation.expected} (${
        evaluation.matches ? "as expected" : evaluation.mismatches.join("; ")
      })\n`
      : `Reference system ${entry.system ?? "unknown"}: no expectation known\n`;
    io.out(head + renderReport(entry.report));
    return 0;
  });
}

/** The latest run of a system named `wanted`, else the run with that id. */
async function findReferenceRun(
  db: TraceDb,
  wanted: string,
  systems: readonly ReferenceSystemSpec[],
) {
  if (findSystem(wanted, systems)) {
    return (await latestReferenceRuns(db)).get(wanted) ?? null;
  }
  return await readReferenceRun(db, wanted);
}

/**
 * Opens the data for reading; a data directory nothing was recorded in yet
 * means no reference run either, which is what the user needs to hear.
 */
async function readHistory(
  values: Values,
  io: CliIo,
  fn: (db: TraceDb) => Promise<number>,
): Promise<number> {
  try {
    return await withDataContext(
      values,
      io,
      { write: false },
      ({ db }) => fn(db),
    );
  } catch (error) {
    if (error instanceof NoDataError) {
      throw new NotFoundError(noRuns(error.path, dataFlagsOf(values)), {
        cause: error,
      });
    }
    throw error;
  }
}

async function dashboard(
  { systems, values, io }: Context,
  names: string[],
): Promise<number> {
  noArguments("dashboard", names);
  return await readHistory(values, io, async (db) => {
    const board = await referenceDashboard(db, { systems });
    const { rows, missing } = board;
    if (values.json) {
      printJson(io, board);
      return 0;
    }
    io.out(
      rows.length === 0
        ? noRunsLine(db, dataFlagsOf(values))
        : renderMatrix(rows, dataFlagsOf(values)) +
          missingNote(missing, dataFlagsOf(values)),
    );
    return 0;
  });
}

async function ranking(
  { systems, values, io }: Context,
  names: string[],
): Promise<number> {
  noArguments("ranking", names);
  return await readHistory(values, io, async (db) => {
    const ranks = await referenceRanking(db, { systems });
    const { ranking: ranked, missing } = ranks;
    if (values.json) {
      printJson(io, ranks);
      return 0;
    }
    if (ranked.length === 0) {
      io.out(noRunsLine(db, dataFlagsOf(values)));
      return 0;
    }
    const lines = [
      ...wrap(ranks.rule, MATRIX_WIDTH),
      "",
      ...tableLines([
        ["#", "system", "tier", "observed", "slowest erasure"],
        ...ranked.map((r) => [
          String(r.rank),
          r.system,
          r.tier.replaceAll("_", " "),
          r.observed,
          seconds(r.slowest_erasure_seconds),
        ]),
      ], { align: ["right"] }),
    ];
    io.out(
      lines.join("\n") + "\n" + missingNote(missing, dataFlagsOf(values)),
    );
    return 0;
  });
}

function missingNote(missing: string[], dataFlags: string): string {
  if (missing.length === 0) return "";
  return `\nNo reference run yet for: ${
    missing.join(", ")
  }; run trace reference run${dataFlags}\n`;
}

function seconds(value: number | null): string {
  return value === null ? "never" : `${value.toFixed(2)} s`;
}
