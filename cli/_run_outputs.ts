/**
 * What `external-run` and `external-replay` share: outputs reserved before
 * the run, the run's options wired to the terminal, the ledger line, the
 * report on stdout, the result files, the next steps and the exit code of a
 * verdict, and the JUnit and Markdown results of a run that could not
 * start or did not finish. `quickstart` shares the run's options and how a
 * Ctrl-C stops it ({@link runInterruptibly}).
 *
 * @module
 */

import { terminalSafe, terminalSafeJson } from "../lib/display.ts";
import { resolve } from "node:path";
import { dbLocation, redactDbUrl, type TraceDb } from "../lib/db.ts";
import { formatHead } from "../lib/ledger/head.ts";
import {
  regressionIdFor,
  type RegressionView,
} from "../lib/ledger/regressions.ts";
import {
  type NotStarted,
  renderJunit,
  renderJunitNotStarted,
  renderJunitUnfinished,
  type Unfinished,
} from "../lib/render/junit.ts";
import {
  renderSummaryMarkdown,
  renderSummaryNotStarted,
  renderSummaryUnfinished,
} from "../lib/render/summary_md.ts";
import { explainSqlite } from "../lib/sqlite_errors.ts";
import type {
  ExternalRunOptions,
  ExternalRunOutcome,
  RunRecording,
} from "../lib/runs/mod.ts";
import { RunNotStartedError, writeFileWhole } from "../lib/runs/mod.ts";
import type { RunReport, Verdict } from "../lib/runner/report.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { errorMessage } from "../lib/errors.ts";
import { ownState, withDataContext } from "./_context.ts";
import type { CliIo } from "./_io.ts";
import { jsonError, jsonText } from "./_json.ts";
import {
  replayOutcomeWords,
  type ReplayRecurrence,
  replayRecurrence,
} from "../lib/ledger/recurrence.ts";
import { shellWord } from "../lib/shell_word.ts";
import {
  type Output,
  OUTPUT_FLAGS,
  type OutputValues,
  type ReservedOutputs,
  reserveOutputs,
} from "./_outputs.ts";
import { progressNote, progressRenderer } from "./_progress.ts";
import { renderReport } from "./_report_text.ts";
import { reportDocument } from "../routes/ui/run_html.tsx";

export { OUTPUT_FLAGS };

/** The `--data-dir` / `--db` flag values. */
export type DataValues = {
  "data-dir"?: string | undefined;
  db?: string | undefined;
};

/** Flag values of a command that runs the contract. */
export type RunValues = DataValues & OutputValues;

/** Exit code of a verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (and a run still running): the one mapping. */
export function exitCodeOf(verdict: Verdict | "RUNNING"): number {
  return verdict === "PASS" ? 0 : verdict === "FAIL" ? 1 : 2;
}

/** Writes a report file whole, never replacing an existing one (no partial file on a full disk). */
export async function writeReportFile(
  path: string,
  report: unknown,
): Promise<void> {
  await writeFileWhole(path, JSON.stringify(report, null, 2) + "\n");
}

/**
 * The `--data-dir` / `--db` flags to repeat in a printed command (the URL
 * redacted, the directory absolute: the command may be run from elsewhere,
 * and `deno task` runs in the project's directory, not the reader's).
 */
export function dataFlagsOf(values: DataValues): string {
  const parts: string[] = [];
  if (values["data-dir"]) parts.push("--data-dir", resolve(values["data-dir"]));
  if (values.db) parts.push("--db", redactDbUrl(values.db));
  return parts.map(shellWord).map((w) => ` ${w}`).join("");
}

/**
 * `text` with `dataFlags` after the first `command` it quotes: advice worded
 * in lib names the command bare, and a reader with another data directory
 * must be able to run it as printed.
 */
export function withFlagsAfter(
  text: string,
  command: string,
  dataFlags: string,
): string {
  // A function, not a string: the flags may hold `$'`, a replacement pattern.
  return text.replace(command, () => command + dataFlags);
}

/** What to run next: save a new FAIL first, then, once the application is fixed, replay. */
export interface NextSteps {
  /** Saves this FAIL as a regression; `null` when it is a replay already, or not a FAIL. */
  save: string | null;
  /** Replays the regression: this FAIL's, or the one this run replayed; `null` when there is none. */
  replay: string | null;
  /** Runs the target again, when there is no regression to replay; else `null`. */
  rerun: string | null;
}

/** The exact commands that save and replay what `report` found. */
export function nextSteps(
  report: RunReport,
  regressionId: string | null,
  values: DataValues,
): NextSteps {
  const data = dataFlagsOf(values);
  if (regressionId) {
    return {
      save: null,
      replay: `trace external-replay ${regressionId}${data}`,
      rerun: null,
    };
  }
  if (report.verdict === "FAIL") {
    return {
      save: `trace external-save ${report.run_id}${data}`,
      replay: `trace external-replay ${regressionIdFor(report.run_id)}${data}`,
      rerun: null,
    };
  }
  return {
    save: null,
    replay: null,
    rerun: `trace external-run --target ${shellWord(report.target.id)}${data}`,
  };
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
export interface ContractCommandOptions<P> {
  /** The command's parsed flags. */
  values: RunValues;
  /**
   * Reads and checks what the run needs before its outputs are reserved and
   * the database is opened for writing (a config, its adapter, a target).
   */
  prepare: () => Promise<P>;
  /** Starts the run against the open database; throws before any request on a bad target. */
  start: (db: TraceDb, hooks: RunHooks, prepared: P) => Promise<ContractRun>;
  /** The run acts on a ledger that must already exist (a replay): nothing is created. */
  existingLedger?: boolean;
}

/**
 * The body of `external-run` and `external-replay` (it prints nothing on
 * stdout before it can still fail, so `main()` answers a failure with one
 * JSON error under `--json`): runs `prepare`, reserves the outputs, runs
 * `start`, says where the report is kept, prints it on stdout (always,
 * even when nothing else could keep it), writes the result files, prints the
 * next steps and returns the verdict's exit code (2 instead of 0 when a
 * result asked for could not be kept). Reserved files that were not written
 * are removed. A run that stops before it starts (nothing sent to the
 * adapter's operations, nothing recorded), or that started and then threw
 * before its report, still gets its JUnit and Markdown results, saying
 * why (and for the latter, how to remove what it may have left), before
 * the error is thrown on.
 */
export async function runContractCommand<P>(
  io: CliIo,
  options: ContractCommandOptions<P>,
): Promise<number> {
  const { values } = options;
  let prepared: P;
  try {
    prepared = await options.prepare();
  } catch (error) {
    await reportNotStarted(io, values, error, null);
    throw error;
  }
  // The handlers first: a Ctrl-C from here on is one the command hears, so
  // it removes what it reserved instead of dying with placeholders left.
  const interrupted = io.interrupted;
  const outputs = await reserveOutputs(values, ownState(values, io));
  // Set once the run's checkpoint exists, which is before its first request.
  let started: RunStarted | null = null;
  // Set once the run returned its report.
  let reported = false;
  try {
    refuseInterruptedStart(interrupted);
    return await withDataContext(
      values,
      io,
      { write: true, existingLedger: options.existingLedger === true },
      async ({ db, dataDir }) => {
        refuseInterruptedStart(interrupted);
        const run = await runInterruptibly(
          io,
          dataDir,
          (runId) => unfinishedRunNote(runId, values),
          (hooks) =>
            options.start(db, {
              ...hooks,
              onStart: (info) => {
                started = info;
                hooks.onStart?.(info);
              },
            }, prepared),
        );
        reported = true;
        return await finishRun(io, values, { db, dataDir }, run, outputs);
      },
    );
  } catch (error) {
    if (started && !reported) {
      await reportUnfinished(io, values, error, outputs, started);
    } else if (!reported) await reportNotStarted(io, values, error, outputs);
    throw error;
  } finally {
    await outputs.release();
  }
}

/** What a run's start announced: its id and checkpoint file. */
type RunStarted = { runId: string; checkpointPath: string };

/** A Ctrl-C that came before the run started stops it there, with nothing sent. */
function refuseInterruptedStart(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RunNotStartedError();
}

/**
 * Writes the `--junit` and `--summary-md` results of a run that did not
 * start, so CI shows why instead of "no test results": into `reserved`, or,
 * when it stopped before the outputs were reserved, into outputs reserved
 * now under the same rules (a refused one is a warning: the reason itself
 * is the error that follows). `--output` and `--html` hold a run's report;
 * there is none, so they are not written.
 */
async function reportNotStarted(
  io: CliIo,
  values: RunValues,
  error: unknown,
  reserved: ReservedOutputs | null,
): Promise<void> {
  const outputs = reserved ?? await reserveForReason(io, values);
  if (!outputs) return;
  const why: NotStarted = jsonError(explainSqlite(error));
  try {
    await writeReasons(io, outputs, {
      junit: renderJunitNotStarted(why),
      summaryMd: renderSummaryNotStarted(why),
    }, "the run did not start");
  } finally {
    if (!reserved) await outputs.release();
  }
}

/** Writes the results that say why there is no report; the others stay unwritten. */
async function writeReasons(
  io: CliIo,
  outputs: ReservedOutputs,
  texts: Partial<Record<Output["kind"], string>>,
  what: string,
): Promise<void> {
  for (const output of outputs.outputs) {
    const text = texts[output.kind];
    if (text === undefined) continue;
    if (output === outputs.stdout) io.out(text);
    else await writeOutput(io, outputs, output, text, what);
  }
}

/**
 * Writes the `--junit` and `--summary-md` results of a run that started and
 * then stopped on an error before it returned its report: CI learns what
 * happened, where the run's issued ids are listed and which command removes
 * what it may have left, instead of finding no test results.
 */
async function reportUnfinished(
  io: CliIo,
  values: RunValues,
  error: unknown,
  outputs: ReservedOutputs,
  started: RunStarted,
): Promise<void> {
  const why: Unfinished = {
    ...jsonError(explainSqlite(error)),
    run_id: started.runId,
    checkpoint: started.checkpointPath,
    cleanup_command: `trace external-cleanup ${started.runId}${
      dataFlagsOf(values)
    }`,
  };
  io.err(
    `run ${started.runId} stopped on an error before its report, so synthetic records may remain in the staging app (its checkpoint ${
      terminalSafe(started.checkpointPath)
    } lists them); remove them with: ${why.cleanup_command}\n`,
  );
  await writeReasons(io, outputs, {
    junit: renderJunitUnfinished(why),
    summaryMd: renderSummaryUnfinished(why),
  }, "the run did not finish");
}

async function reserveForReason(
  io: CliIo,
  values: RunValues,
): Promise<ReservedOutputs | null> {
  if (values.junit === undefined && values["summary-md"] === undefined) {
    return null;
  }
  // As before a run: a Ctrl-C while the files are reserved must not kill
  // the command with placeholders left.
  void io.interrupted;
  try {
    return await reserveOutputs(values, ownState(values, io));
  } catch (refusal) {
    // Reserved together or not at all: none of them will say why.
    io.err(
      `warning: ${
        errorMessage(refusal)
      }; no result file says why the run did not start\n`,
    );
    return null;
  }
}

async function finishRun(
  io: CliIo,
  values: RunValues,
  { db, dataDir }: { db: TraceDb; dataDir: string },
  run: ContractRun,
  outputs: ReservedOutputs,
): Promise<number> {
  const { report, regression, recording } = run;
  if (recording.kept_in === "ledger") io.err(ledgerLine(run, dbLocation(db)));
  warnAboutOutcome(io, run);
  const steps = nextSteps(report, regression?.regression_id ?? null, values);
  const rendered = renderOutputs(run, steps, dataFlagsOf(values));
  if (outputs.outputs.some((output) => output.kind === "html")) {
    rendered.html = await reportDocument(
      { db, dataDir, jobs: null },
      report,
      regression?.regression_id ?? null,
      { dataFlags: dataFlagsOf(values) },
    );
  }
  io.out(stdoutText(run, values, outputs, rendered));
  // A result file on stdout (`--summary-md -`) leaves out the text report's
  // regression line; `--json` carries the regression itself.
  if (run.regression && !values.json && outputs.stdout) {
    io.err(lifecycleLine(run.regression, run.report).trimStart());
  }
  let lost = recording.kept_in === "nowhere";
  for (const output of outputs.outputs) {
    if (output === outputs.stdout) continue;
    const text = rendered[output.kind];
    lost = !await writeOutput(io, outputs, output, text) || lost;
  }
  if (steps.save) {
    io.err(
      `next: ${steps.save}\nthen, after you fix the application: ${steps.replay}\n`,
    );
  }
  const code = exitCodeOf(report.verdict);
  return lost && code === 0 ? 2 : code;
}

function ledgerLine(run: ContractRun, location: string): string {
  const { report, regression, recording } = run;
  const what = regression
    ? `replay ${report.run_id} of ${regression.regression_id}`
    : `run ${report.run_id}`;
  const head = recording.kept_in === "ledger" && recording.head
    ? `; head ${formatHead(recording.head)}`
    : "";
  return `ledger: ${what} recorded in ${terminalSafe(location)}${head}\n`;
}

/** What stdout gets: the JSON answer, the result named `-`, or the text report. */
function stdoutText(
  run: ContractRun,
  values: RunValues,
  outputs: ReservedOutputs,
  rendered: Record<Output["kind"], string>,
): string {
  const { report, regression } = run;
  if (values.json) {
    return jsonText(regression ? { regression, report } : report) + "\n";
  }
  if (outputs.stdout?.kind === "output") {
    return terminalSafeJson(rendered.output);
  }
  if (outputs.stdout) return rendered[outputs.stdout.kind];
  return renderReport(report, { dataFlags: dataFlagsOf(values) }) +
    (regression ? lifecycleLine(regression, report) : "");
}

/** The text of each result file. */
function renderOutputs(
  run: ContractRun,
  steps: NextSteps,
  dataFlags: string,
): Record<Output["kind"], string> {
  const { report, regression } = run;
  const ledgerHead = headOf(run.recording);
  return {
    output: JSON.stringify(report, null, 2) + "\n",
    junit: renderJunit(report, { ledgerHead }),
    summaryMd: renderSummaryMarkdown(report, {
      saveCommand: steps.save,
      replayCommand: steps.replay,
      rerunCommand: steps.rerun,
      regressionId: regression?.regression_id ?? null,
      regressionOutcome: regression
        ? regressionOutcome(regression, report)
        : null,
      ledgerHead,
      dataFlags,
    }),
    // Rendered only when asked for (it reads the run's trace events).
    html: "",
  };
}

function headOf(recording: RunRecording): string | null {
  return recording.kept_in === "ledger" && recording.head
    ? formatHead(recording.head)
    : null;
}

/**
 * Writes one result file; on failure warns, leaves nothing behind and
 * returns false. `reason` says why a result stands in for a report there is
 * none of (then no report is on stdout to point to).
 */
async function writeOutput(
  io: CliIo,
  outputs: ReservedOutputs,
  output: Output,
  text: string,
  reason: string | null = null,
): Promise<boolean> {
  try {
    await outputs.write(output, text);
    io.err(
      `${LABELS[output.kind]}: ${terminalSafe(output.path)}${
        reason ? ` (${reason})` : ""
      }\n`,
    );
    return true;
  } catch (error) {
    io.err(
      `warning: Cannot write ${output.flag} ${terminalSafe(output.path)}: ${
        fileProblem(error, "write")
      }${reason ? "" : "; the report is on stdout above"}\n`,
    );
    return false;
  }
}

const LABELS: Record<Output["kind"], string> = {
  output: "report",
  junit: "junit",
  summaryMd: "summary",
  html: "html",
};

/** Says on stderr where a report the ledger could not take was kept (if anywhere), and whether its trace was lost. */
export function warnAboutOutcome(io: CliIo, outcome: ExternalRunOutcome): void {
  const { recording, trace, report } = outcome;
  if (recording.kept_in === "file") {
    io.err(
      `warning: Cannot record run ${report.run_id} in the ledger (${recording.reason}); its completed report is kept at ${
        terminalSafe(recording.path)
      }\n`,
    );
  }
  if (recording.kept_in === "nowhere") {
    io.err(
      `warning: Cannot keep run ${report.run_id} anywhere (${recording.reason}); its report is only on stdout: save it from there\n`,
    );
  }
  if (trace.status === "failed") {
    io.err(`warning: Cannot write the run's trace events: ${trace.reason}\n`);
  }
}

/**
 * Runs one contract run the way every command that starts one does, and
 * stops it cleanly on the first Ctrl-C or SIGTERM: `start` gets the run's
 * options wired to the terminal (the checkpoint line, progress on stderr,
 * `io.interrupted` as the run's signal, which installs the signal
 * handlers). From the moment the checkpoint exists until the run has
 * cleaned up, `exitNote(runId)` is what a second Ctrl-C prints as it exits
 * at once: what may be left and how to finish it.
 */
export async function runInterruptibly<T>(
  io: CliIo,
  dataDir: string,
  exitNote: (runId: string) => string,
  start: (hooks: RunHooks) => Promise<T>,
): Promise<T> {
  try {
    return await start({
      dataDir,
      env: io.env,
      onStart: ({ runId, checkpointPath }) => {
        progressNote(io, `checkpoint: ${terminalSafe(checkpointPath)}`);
        io.setExitNote?.(exitNote(runId));
      },
      onEvent: progressRenderer(io),
      ...(io.interrupted ? { signal: io.interrupted } : {}),
    });
  } finally {
    // Past this point the run has cleaned up: nothing is left unfinished.
    io.setExitNote?.(null);
  }
}

/** What a second Ctrl-C leaves behind: the run, its records, the command that removes them. */
export function unfinishedRunNote(runId: string, values: DataValues): string {
  return `run ${runId} stopped before its cleanup finished, so synthetic records may remain in the staging app; remove them with: trace external-cleanup ${runId}${
    dataFlagsOf(values)
  }`;
}

function lifecycleLine(regression: RegressionView, report: RunReport): string {
  return `\nRegression ${regression.regression_id}: ${
    regressionOutcome(regression, report)
  }\n`;
}

/** What became of a replayed regression, one sentence without its id: `enforced (…)`. */
function regressionOutcome(
  regression: RegressionView,
  report: RunReport,
): string {
  const recurrence = replayRecurrence(regression.definition, report);
  const words = (r: ReplayRecurrence) =>
    replayOutcomeWords(
      r,
      regression.definition,
      ": read its findings above and replay again",
    );
  if (regression.status === "pending") {
    return recurrence === null || recurrence.kind === "recurred"
      ? "pending (the bug is still open; a PASS replay will enforce it)"
      : `pending (a PASS replay will enforce it), and this replay did not pass (${report.verdict}): ${
        words(recurrence)
      }`;
  }
  if (recurrence === null) {
    return "enforced (from now on a failing replay is a real regression)";
  }
  // The gate fails on any replay that did not pass; the words say what came back.
  return `enforced, and this replay did not pass (${report.verdict}): ${
    words(recurrence)
  }${
    recurrence.kind === "recurred"
      ? ""
      : "; the gate fails until a replay passes"
  }`;
}
