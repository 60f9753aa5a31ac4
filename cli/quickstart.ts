/**
 * `trace quickstart` (`deno task start`): starts the demo staging app in this
 * process on a free loopback port, runs the deletion contract against it
 * healthy and with the `stale-cache` defect, and prints both verdicts.
 *
 * @module
 */

import { terminalSafe } from "../lib/display.ts";
import { dbLocation } from "../lib/db.ts";
import { ledgerHead } from "../lib/ledger/head.ts";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import example from "../fixtures/staging-adapter.json" with { type: "json" };
import { parseStagingConfig } from "../lib/contract/config.ts";
import { ensurePrivateDir } from "../lib/data_dir.ts";
import {
  DEFECT_INFO,
  DEFECTS,
  type DemoDefect,
  HEALTHY,
  parseDefectFlag,
} from "../lib/demo/defects.ts";
import {
  configTargetRef,
  runExternal,
  RunNotStartedError,
} from "../lib/runs/mod.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { type DataContext, printJson, withDataContext } from "./_context.ts";
import { startDemoServer } from "./demo.ts";
import {
  dataFlagsOf,
  exitCodeOf,
  runInterruptibly,
  warnAboutOutcome,
  writeReportFile,
} from "./_run_outputs.ts";
import type { CliIo, Command } from "./_io.ts";
import { shellWord } from "../lib/shell_word.ts";
import { renderReport } from "./_report_text.ts";

const FLAGS = {
  ...DATA_FLAGS,
  defect: { type: "string" },
} as const;

const HELP = `Usage: trace quickstart [--defect NAME] [--data-dir DIR] [--json]

Starts the demo staging app on a free loopback port, runs the deletion
contract against it healthy and then with a defect (default stale-cache), and
prints both verdicts (with --defect none, the healthy run alone). Exit 0 when
the verdicts are the expected ones.

Options:
  --defect NAME      Inject a deletion defect: ${DEFECTS.join(", ")}
                     (default stale-cache; none: a healthy app, run alone)
  --data-dir DIR     Data directory (default $TRACE_DATA_DIR or the platform dir)
  --json             The verdicts and report paths as JSON

The demo runs inside this command and keeps its data in memory: when the
command ends, the demo and whatever the runs left in it are gone. The runs
are recorded in the ledger under config-derived targets that are not
registered (each run used a new port), so they cannot be saved, replayed or
cleaned up; run the demo in one terminal and trace external-run in another
for that (the summary prints both commands).

Ctrl-C (or SIGTERM) stops the current run as trace external-run stops one:
it still cleans up and is recorded INCONCLUSIVE (interrupted), and the next
run is not started; one stopped before it sent anything is not recorded and
counts as not started. A second Ctrl-C exits at once with code 130; the demo's
records end with this command either way.

Exit codes: 0 both verdicts as expected, 2 interrupted, otherwise the code of
the verdict that differs (1 FAIL, 2 INCONCLUSIVE; 1 for an unexpected PASS),
130 after a second Ctrl-C.
`;

/**
 * How the reader runs Trace: the compiled binary, or from source through npx
 * as the README says, naming `cli.ts` so it is found from the directory the
 * reader started in (`deno task` sets `INIT_CWD` to it and runs in the
 * project's own).
 */
function traceCommand(): string {
  if (Deno.build.standalone) return "trace";
  return `npx -y deno@${Deno.version.deno} run -A ${
    shellWord(projectPath("cli.ts"))
  }`;
}

/** A file of this project as the reader can name it: relative from its root, else absolute. */
export function projectPath(relative: string): string {
  const root = dirname(fileURLToPath(new URL("../cli.ts", import.meta.url)));
  const here = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  return resolve(here) === root ? relative : join(root, relative);
}

/** Said in place of the cleanup command: the records lived in the demo, which is gone. */
const GONE_WITH_THE_DEMO =
  "The demo kept these records in memory inside this command and has stopped: nothing is left to remove";

/** What a second Ctrl-C prints in place of external-run's cleanup command: the records end with the demo. */
function demoExitNote(runId: string): string {
  return `run ${runId} stopped before its cleanup finished; its synthetic records lived in the demo app's memory inside this command and end with it, so nothing is left to remove`;
}

/** The defect quickstart injects when no --defect is given. */
const DEFAULT_DEFECT = "stale-cache";

/** `--defect` as the user gave it, to repeat in a printed command (nothing when not given). */
function defectFlagOf(given: string | undefined): string {
  return given === undefined ? "" : ` --defect ${shellWord(given)}`;
}

/** How the summary names a demo run: its defect, or `healthy`. */
function labelOf(defect: DemoDefect | null): string {
  return defect ?? "healthy";
}

interface Outcome {
  label: string;
  expected: string;
  /** Why the demo is known to give `expected`, in one sentence. */
  reason: string;
  report: RunReport;
  reportPath: string;
}

async function runAgainstDemo(
  defect: DemoDefect | null,
  context: DataContext,
  io: CliIo,
): Promise<Outcome> {
  const server = await startDemoServer({ defect });
  try {
    const config = parseStagingConfig(
      { ...example, base_url: server.url },
      "example config",
    );
    // As external-run: the first Ctrl-C ends the window early, cleanup still runs.
    const outcome = await runInterruptibly(
      io,
      context.dataDir,
      demoExitNote,
      (hooks) =>
        runExternal(config, {
          ...hooks,
          db: context.db,
          target: configTargetRef(config),
        }),
    );
    warnAboutOutcome(io, outcome);
    const { report } = outcome;
    const dir = join(context.dataDir, "reports");
    await ensurePrivateDir(dir);
    const reportPath = join(dir, `${report.run_id}.json`);
    await writeReportFile(reportPath, report);
    const info = defect ? DEFECT_INFO[defect] : HEALTHY;
    return {
      label: labelOf(defect),
      expected: info.verdict,
      reason: info.reason,
      report,
      reportPath,
    };
  } finally {
    await server.shutdown();
  }
}

/** `run`'s outcome, or `null` when an interrupt stopped it before it started. */
async function notStartedAsNull(
  run: Promise<Outcome>,
): Promise<Outcome | null> {
  try {
    return await run;
  } catch (error) {
    if (error instanceof RunNotStartedError) return null;
    throw error;
  }
}

/** `trace quickstart`: the two-run demonstration. */
export const quickstart: Command = async (args, io) => {
  const { values } = parseFlags("quickstart", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const defect = parseDefectFlag(values.defect ?? DEFAULT_DEFECT, "quickstart");
  return await withDataContext(values, io, { write: true }, async (context) => {
    // Record into a ledger that verifies, or not at all: a broken one is refused up front.
    await ledgerHead(context.db);
    io.err(`Data directory: ${terminalSafe(context.dataDir)}\n`);
    // Reading it installs the Ctrl-C / SIGTERM handlers: from here on the
    // first one stops the current run cleanly and no further run starts.
    const signal = io.interrupted;
    // --defect none runs the healthy app alone: a second healthy run would show nothing new.
    const choices = defect === null ? [null] : [null, defect];
    const outcomes: Outcome[] = [];
    for (const [i, choice] of choices.entries()) {
      if (signal?.aborted) break;
      io.err(
        `\n${i + 1}/${choices.length}  demo staging app ${
          choice ? `with --defect ${choice}` : "(healthy)"
        }\n`,
      );
      const outcome = await notStartedAsNull(
        runAgainstDemo(choice, context, io),
      );
      // Stopped during the adapter probe: this run did not start either.
      if (outcome === null) break;
      outcomes.push(outcome);
      if (!values.json) {
        io.out(
          `\n${
            renderReport(outcome.report, { cleanupHint: GONE_WITH_THE_DEMO })
          }`,
        );
      }
    }
    const notRun = choices.slice(outcomes.length).map(labelOf);
    const interrupted = notRun.length > 0 ||
      outcomes.some((o) => o.report.state === "interrupted");
    const asExpected = !interrupted &&
      outcomes.every((o) => o.report.verdict === o.expected);
    if (values.json) {
      printJson(io, {
        as_expected: asExpected,
        interrupted,
        not_run: notRun,
        demo_data: DEMO_DATA,
        runs: outcomes.map((o) => ({
          demo: o.label,
          expected: o.expected,
          verdict: o.report.verdict,
          cleanup_complete: o.report.cleanup.cleanup_complete,
          run_id: o.report.run_id,
          report: o.reportPath,
        })),
      });
    } else if (interrupted) {
      io.out(
        interruptedSummary(
          outcomes,
          notRun,
          context,
          `${defectFlagOf(values.defect)}${dataFlagsOf(values)}`,
        ),
      );
    } else {
      io.out(summary(outcomes, asExpected, context, dataFlagsOf(values)));
    }
    // Interrupted: the code external-run exits with for an interrupted run.
    if (interrupted) return exitCodeOf("INCONCLUSIVE");
    // An unexpected PASS (the defect went unnoticed) must not exit 0.
    return asExpected ? 0 : exitCodeOf(
      outcomes.find((o) => o.report.verdict !== o.expected)!.report.verdict,
    ) || 1;
  });
};

/** What became of the demo's data, for `--json`. */
const DEMO_DATA =
  "in memory inside this command, gone when it ended: these runs have nothing left to clean up and, filed under unregistered targets, cannot be saved or replayed";

/** One line per demo run (and per run an interrupt kept from starting), then where they are kept. */
function runLines(
  outcomes: Outcome[],
  notRun: string[],
  context: DataContext,
): string[] {
  const width = Math.max(
    ...outcomes.map((o) => o.label.length),
    ...notRun.map((label) => label.length),
  );
  return [
    "",
    "Summary",
    ...outcomes.map((o) =>
      `  ${o.label.padEnd(width)}  ${o.report.verdict.padEnd(13)} expected ${
        o.expected.padEnd(13)
      } cleanup ${
        (o.report.cleanup.cleanup_complete ? "complete" : "INCOMPLETE").padEnd(
          10,
        )
      }  ${terminalSafe(o.reportPath)}`
    ),
    ...notRun.map((label) => `  ${label.padEnd(width)}  not run`),
    "",
    // A remote database is named by its URL, which is not a path.
    `Ledger: ${
      terminalSafe(
        context.db.path === null
          ? dbLocation(context.db)
          : resolve(context.db.path),
      )
    }   Checkpoints: ${terminalSafe(resolve(context.dataDir, "external"))}`,
  ];
}

/** What an interrupt stopped, that nothing is left in the demo, and how to see both verdicts (`flags`: those the command was given). */
function interruptedSummary(
  outcomes: Outcome[],
  notRun: string[],
  context: DataContext,
  flags: string,
): string {
  const cut = outcomes.find((o) => o.report.state === "interrupted");
  const what = [
    cut
      ? `the ${cut.label} run ${cut.report.run_id} stopped early: ${cut.report.verdict} (interrupted), cleanup ${
        cut.report.cleanup.cleanup_complete ? "complete" : "INCOMPLETE"
      }`
      : null,
    notRun.length > 0
      ? `${
        notRun.map((label) => `the ${label} run`).join(" and ")
      } did not start`
      : null,
  ].filter((part) => part !== null).join("; ");
  const lines = [
    ...runLines(outcomes, notRun, context),
    `Interrupted: ${what}.`,
    DEMO_GONE,
    "now, with whatever the runs left in it: nothing is left to clean up.",
    `For ${
      notRun.length + outcomes.length === 1 ? "its verdict" : "both verdicts"
    }, run it again: ${traceCommand()} quickstart${flags}`,
  ];
  return lines.join("\n") + "\n";
}

/** Both summaries say it so, then what follows from it. */
const DEMO_GONE =
  "The demo ran inside this command and kept its data in memory, so it is gone";

function summary(
  outcomes: Outcome[],
  asExpected: boolean,
  context: DataContext,
  dataFlags: string,
): string {
  const trace = traceCommand();
  if (outcomes.length === 1) {
    return healthySummary(outcomes, asExpected, context, dataFlags);
  }
  const defect = outcomes.at(-1)!;
  const failed = defect.report.verdict === "FAIL";
  const lines = [
    ...runLines(outcomes, [], context),
    asExpected
      ? `Both verdicts are the expected ones: Trace passed the healthy app and ${
        defectOutcome(defect)
      }.`
      : "A verdict differs from what the demo is known to do: please report this as a bug.",
    "",
    DEMO_GONE,
    "now, with whatever the runs left in it. Saving a FAIL, replaying it after a",
    "fix and cleaning up apply to runs against an adapter that keeps running.",
    failed
      ? "Try them with the demo, in two terminals:"
      : "Run the defect against a demo that keeps running, in two terminals:",
    `  ${trace} demo --defect ${defect.label}`,
    `  ${trace} external-run --config ${
      shellWord(projectPath("fixtures/staging-adapter.json"))
    }${dataFlags}`,
    followLine(defect.report.verdict, trace),
  ];
  return lines.join("\n") + "\n";
}

/** The summary of `--defect none`: the healthy run alone, then how to see a defect caught. */
function healthySummary(
  outcomes: Outcome[],
  asExpected: boolean,
  context: DataContext,
  dataFlags: string,
): string {
  const lines = [
    ...runLines(outcomes, [], context),
    asExpected
      ? "The verdict is the expected one: Trace passed the healthy app."
      : "The verdict differs from what the demo is known to do: please report this as a bug.",
    "",
    DEMO_GONE,
    "now, with whatever the run left in it. To see Trace catch a defect as well:",
    `  ${traceCommand()} quickstart${dataFlags}`,
  ];
  return lines.join("\n") + "\n";
}

/** What the defect's run showed, by the verdict it gave (expected, so documented). */
function defectOutcome(defect: Outcome): string {
  const { verdict } = defect.report;
  if (verdict === "FAIL") return "caught the defect";
  const { reason } = defect;
  return `gave the defect its documented ${verdict}: ${
    reason[0]!.toLowerCase()
  }${reason.slice(1)}`;
}

/** What to do with what the two-terminal run prints: only a FAIL prints save and replay commands. */
function followLine(verdict: string, trace: string): string {
  if (verdict === "FAIL") {
    return trace === "trace"
      ? "and follow the commands the FAIL prints."
      : `and follow the commands the FAIL prints, with ${trace} where they say trace.`;
  }
  const where = trace === "trace" ? "" : `, with ${trace} where it says trace`;
  return `and read its ${verdict}: only a FAIL can be saved and replayed; follow any command it prints${where}.`;
}
