/**
 * What `external-run` and `external-replay` share: output files reserved
 * before the run, the run's options wired to the terminal, the ledger line,
 * the output files, the rendered report and the exit code of a verdict.
 *
 * @module
 */

import { dbLocation } from "../lib/db.ts";
import { resolve } from "node:path";
import { redactDbUrl, type TraceDb } from "../lib/db.ts";
import { UsageError } from "../lib/errors.ts";
import {
  regressionIdFor,
  type RegressionView,
} from "../lib/ledger/regressions.ts";
import { renderJunit } from "../lib/render/junit.ts";
import { renderSummaryMarkdown } from "../lib/render/summary_md.ts";
import type {
  ExternalRunOptions,
  ExternalRunOutcome,
} from "../lib/runs/mod.ts";
import type { RunReport, Verdict } from "../lib/runner/report.ts";
import {} from "./_args.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { printJson, withDataContext } from "./_context.ts";
import type { CliIo } from "./_io.ts";
import { progressRenderer } from "./_progress.ts";
import { renderReport } from "./_report_text.ts";
import { runDocument } from "../routes/ui/run_html.tsx";

/** Output flags of commands that run the contract (`external-run`, `external-replay`). */
export const OUTPUT_FLAGS = {
  output: { type: "string" },
  junit: { type: "string" },
  "summary-md": { type: "string" },
  html: { type: "string" },
} as const;

/** The `--data-dir` / `--db` flag values. */
export type DataValues = {
  "data-dir"?: string | undefined;
  db?: string | undefined;
};

/** Flag values of a command that runs the contract. */
export type RunValues = DataValues & {
  output?: string | undefined;
  junit?: string | undefined;
  "summary-md"?: string | undefined;
  html?: string | undefined;
  json?: boolean | undefined;
};

/** Exit code of a verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (the one mapping). */
export function exitCodeOf(verdict: Verdict): number {
  return verdict === "PASS" ? 0 : verdict === "FAIL" ? 1 : 2;
}

/** Output paths of a run, each reserved (created empty, exclusively) before the run starts. */
export interface ReservedOutputs {
  output?: string;
  junit?: string;
  summaryMd?: string;
  html?: string;
  /** Removes reserved files that were never written (the run failed early). */
  release(): Promise<void>;
}

type OutputKey = keyof Omit<ReservedOutputs, "release">;

/**
 * Creates every requested output file exclusively before the run, so a
 * clash with an existing file or with a concurrent run is refused up front
 * and a finished run is never lost to it.
 */
export async function reserveOutputs(
  values: RunValues,
): Promise<ReservedOutputs> {
  const wanted = wantedOutputs(values);
  const created: string[] = [];
  const reserved: ReservedOutputs = {
    release: async () => {
      for (const path of created) await Deno.remove(path).catch(() => {});
    },
  };
  for (const [key, flag, path] of wanted) {
    try {
      const file = await Deno.open(path, {
        createNew: true,
        write: true,
        mode: 0o600,
      });
      file.close();
    } catch (error) {
      await reserved.release();
      const why = error instanceof Deno.errors.AlreadyExists
        ? "the file already exists (or another run reserved it); choose a new path"
        : fileProblem(error, "write");
      throw new UsageError(`Cannot write ${flag} ${path}: ${why}`);
    }
    created.push(path);
    reserved[key] = path;
  }
  return reserved;
}

function wantedOutputs(values: RunValues): [OutputKey, string, string][] {
  const wanted: [OutputKey, string, string][] = [];
  if (values.output) wanted.push(["output", "--output", values.output]);
  if (values.junit) wanted.push(["junit", "--junit", values.junit]);
  if (values["summary-md"]) {
    wanted.push(["summaryMd", "--summary-md", values["summary-md"]]);
  }
  if (values.html) wanted.push(["html", "--html", values.html]);
  const seen = new Map<string, string>();
  for (const [, flag, path] of wanted) {
    const other = seen.get(resolve(path));
    if (other) {
      throw new UsageError(
        `Cannot write ${flag} ${path}: ${other} names the same file; choose distinct paths`,
      );
    }
    seen.set(resolve(path), flag);
  }
  return wanted;
}

/** Writes a report file without ever replacing an existing one. */
export async function writeReportFile(
  path: string,
  report: unknown,
): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n", {
    createNew: true,
    mode: 0o600,
  });
}

/** Quotes one shell word when it needs quoting. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(word)
    ? word
    : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `--data-dir` / `--db` flags to repeat in a printed command (the URL redacted). */
export function dataFlagsOf(values: DataValues): string {
  const parts: string[] = [];
  if (values["data-dir"]) parts.push("--data-dir", values["data-dir"]);
  if (values.db) parts.push("--db", redactDbUrl(values.db));
  return parts.map(shellWord).map((w) => ` ${w}`).join("");
}

/** The exact command that replays (or saves and replays) what `report` found. */
export function replayCommandOf(
  report: RunReport,
  regressionId: string | null,
  values: DataValues,
): string {
  const data = dataFlagsOf(values);
  if (regressionId) return `trace external-replay ${regressionId}${data}`;
  if (report.verdict === "FAIL") {
    return `trace external-save ${report.run_id}${data} && trace external-replay ${
      regressionIdFor(report.run_id)
    }${data}`;
  }
  return `trace external-run --target ${shellWord(report.target.id)}${data}`;
}

async function writeRunOutputs(
  report: RunReport,
  outputs: ReservedOutputs,
  summary: { replayCommand: string; regressionId: string | null },
  io: CliIo,
): Promise<void> {
  if (outputs.output) {
    await Deno.writeTextFile(
      outputs.output,
      JSON.stringify(report, null, 2) + "\n",
    );
    io.err(`report: ${outputs.output}\n`);
  }
  if (outputs.junit) {
    await Deno.writeTextFile(outputs.junit, renderJunit(report));
    io.err(`junit: ${outputs.junit}\n`);
  }
  if (outputs.summaryMd) {
    await Deno.writeTextFile(
      outputs.summaryMd,
      renderSummaryMarkdown(report, summary),
    );
    io.err(`summary: ${outputs.summaryMd}\n`);
  }
}

/** Writes a run's detail as one self-contained HTML file (`--html FILE`). */
export async function writeRunHtml(
  path: string,
  source: { db: TraceDb; dataDir: string },
  runId: string,
  io: CliIo,
): Promise<void> {
  const html = await runDocument({ ...source, jobs: null }, runId);
  await Deno.writeTextFile(path, html);
  io.err(`html: ${path}\n`);
}

/** The run options every contract command wires to the terminal. */
export type RunHooks = Pick<
  ExternalRunOptions,
  "dataDir" | "env" | "onStart" | "onEvent" | "signal"
>;

/** A finished run: its outcome and, for a replay, the regression after it. */
export interface ContractRun extends ExternalRunOutcome {
  regression: RegressionView | null;
}

/** Options for {@link runContractCommand}. */
export interface ContractCommandOptions {
  /** The command's parsed flags. */
  values: RunValues;
  /** Starts the run against the open database; throws before any request on a bad target. */
  start: (db: TraceDb, hooks: RunHooks) => Promise<ContractRun>;
}

/**
 * The body of `external-run` and `external-replay`: reserves the outputs,
 * runs `start`, reports where the ledger row went, writes the outputs,
 * renders the result and returns the verdict's exit code. Reserved files
 * are removed when the run fails before writing them.
 */
export async function runContractCommand(
  io: CliIo,
  options: ContractCommandOptions,
): Promise<number> {
  const { values } = options;
  const outputs = await reserveOutputs(values);
  let written = false;
  try {
    return await withDataContext(
      values,
      io,
      { write: true },
      async ({ db, dataDir }) => {
        const outcome = await options.start(db, runHooks(dataDir, io));
        const { report, regression } = outcome;
        const regressionId = regression?.regression_id ?? null;
        if (outcome.recording.kept_in === "ledger") {
          io.err(
            `ledger: ${
              regressionId
                ? `replay ${report.run_id} of ${regressionId}`
                : `run ${report.run_id}`
            } recorded in ${dbLocation(db)}\n`,
          );
        }
        warnAboutOutcome(io, outcome);
        const replayCommand = replayCommandOf(report, regressionId, values);
        written = true;
        await writeRunOutputs(report, outputs, {
          replayCommand,
          regressionId,
        }, io);
        if (outputs.html) {
          await writeRunHtml(outputs.html, { db, dataDir }, report.run_id, io);
        }
        if (values.json) {
          printJson(io, regression ? { regression, report } : report);
        } else {
          io.out(
            renderReport(report) +
              (regression ? lifecycleLine(regression, report) : ""),
          );
        }
        if (!regression && report.verdict === "FAIL") {
          io.err(`replay: ${replayCommand}\n`);
        }
        return exitCodeOf(report.verdict);
      },
    );
  } finally {
    if (!written) await outputs.release();
  }
}

/** Says on stderr where a report the ledger could not take was kept, and whether its trace was lost. */
export function warnAboutOutcome(io: CliIo, outcome: ExternalRunOutcome): void {
  const { recording, trace, report } = outcome;
  if (recording.kept_in === "file") {
    io.err(
      `warning: Cannot record run ${report.run_id} in the ledger (${recording.reason}); its completed report is kept at ${recording.path}\n`,
    );
  }
  if (trace.status === "failed") {
    io.err(`warning: Cannot write the run's trace events: ${trace.reason}\n`);
  }
}

function runHooks(dataDir: string, io: CliIo): RunHooks {
  return {
    dataDir,
    env: io.env,
    onStart: ({ checkpointPath }) => io.err(`checkpoint: ${checkpointPath}\n`),
    onEvent: progressRenderer(io),
    ...(io.interrupted ? { signal: io.interrupted } : {}),
  };
}

function lifecycleLine(regression: RegressionView, report: RunReport): string {
  const id = regression.regression_id;
  if (regression.status === "pending") {
    return `\nRegression ${id}: pending (the bug is still open; a PASS replay will enforce it)\n`;
  }
  if (report.verdict === "PASS") {
    return `\nRegression ${id}: enforced (from now on a failing replay is a real regression)\n`;
  }
  return `\nRegression ${id}: enforced and this replay did not pass: the bug is back (${report.verdict})\n`;
}
