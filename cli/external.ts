/** `trace external-plan` and `trace external-run`, and the run output shared with replays. */

import { resolve } from "node:path";
import {
  parseStagingConfigText,
  type StagingConfig,
} from "../lib/contract/config.ts";
import type { TraceDb } from "../lib/db.ts";
import { NotFoundError, UsageError } from "../lib/errors.ts";
import { regressionIdFor } from "../lib/ledger/regressions.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import {
  readTarget,
  registerTarget,
  targetRef,
  validateTargetId,
} from "../lib/ledger/targets.ts";
import { renderJunit } from "../lib/report/junit.ts";
import { renderSummaryMarkdown } from "../lib/report/summary_md.ts";
import { planRun } from "../lib/runner/plan.ts";
import { configTargetId, runExternal } from "../lib/runner/external_run.ts";
import type { RunReport, TargetRef } from "../lib/runner/report.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import { type CliIo, type Command, readInput } from "./_io.ts";
import { progressRenderer } from "./_progress.ts";
import { renderPlan, renderReport } from "./_report_text.ts";

const PLAN_FLAGS = {
  ...DATA_FLAGS,
  config: { type: "string" },
  target: { type: "string" },
} as const;

/** Output flags of commands that run the contract (`external-run`, `external-replay`). */
export const OUTPUT_FLAGS = {
  output: { type: "string" },
  junit: { type: "string" },
  "summary-md": { type: "string" },
} as const;

const RUN_FLAGS = { ...PLAN_FLAGS, ...OUTPUT_FLAGS } as const;

const PLAN_HELP =
  `Usage: trace external-plan (--target ID | --config FILE|-) [--json] [--data-dir DIR] [--db URL]

Shows what a run would do: namespaces-to-be, operations, timing and request
budget. Sends no request at all and writes nothing.
`;

const RUN_HELP =
  `Usage: trace external-run (--target ID | --config FILE|-) [--output FILE] [--junit FILE]
                          [--summary-md FILE] [--json] [--data-dir DIR] [--db URL]

Ingests synthetic canaries into the staging adapter, warms its caches,
deletes, samples every store through the deletion window, cleans up, and
prints PASS / FAIL / INCONCLUSIVE with evidence. The report is appended to the
ledger. --target names a registered target (trace external-register); --config
registers the config under a deterministic id (cfg-…) and runs it.

Outputs (each refused if the file already exists, reserved before the run):
  --output FILE      the report as JSON
  --junit FILE       JUnit XML, one test case per assertion family
  --summary-md FILE  a short Markdown summary with the exact replay command

Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage/config error.
`;

/** Exit code of a verdict. */
export function exitCodeOf(report: RunReport): number {
  return report.verdict === "PASS" ? 0 : report.verdict === "FAIL" ? 1 : 2;
}

async function loadConfig(
  path: string,
  io: CliIo,
): Promise<StagingConfig> {
  let text: string;
  try {
    text = await readInput(path, io);
  } catch (error) {
    throw new UsageError(
      `Cannot read config ${path}: ${(error as Error).message}`,
    );
  }
  return parseStagingConfigText(
    text,
    `config ${path === "-" ? "(stdin)" : path}`,
  );
}

/** Reads `--config FILE|-` for a command; throws a usage error when absent. */
export async function requireConfig(
  path: string | undefined,
  command: string,
  io: CliIo,
): Promise<StagingConfig> {
  if (!path) {
    throw new UsageError(
      `${command}: --config FILE (or - for stdin) is required`,
    );
  }
  return await loadConfig(path, io);
}

function targetOrConfig(
  values: { target?: string | undefined; config?: string | undefined },
  command: string,
): { target: string } | { config: string } {
  if (values.target !== undefined && values.config !== undefined) {
    throw new UsageError(
      `${command}: give either --target ID or --config FILE, not both`,
    );
  }
  if (values.target !== undefined) {
    return { target: validateTargetId(values.target) };
  }
  if (values.config !== undefined) return { config: values.config };
  throw new UsageError(
    `${command}: --target ID or --config FILE (or - for stdin) is required`,
  );
}

/** Loads a registered target's config; a clear error when it is not registered. */
export async function loadRegisteredTarget(
  db: TraceDb,
  targetId: string,
): Promise<{ config: StagingConfig; target: TargetRef }> {
  await requireLedger(db);
  const record = await readTarget(db, targetId);
  if (!record) {
    throw new NotFoundError(
      `Cannot find target "${targetId}"; register it with trace external-register --target ${targetId} --config FILE`,
    );
  }
  return { config: record.config, target: targetRef(record) };
}

async function configTarget(config: StagingConfig): Promise<TargetRef> {
  return {
    id: await configTargetId(config),
    base_url: config.base_url,
    source: "config",
  };
}

/** `trace external-plan`: the dry run. */
export const externalPlan: Command = async (args, io) => {
  const { values } = parseFlags("external-plan", args, PLAN_FLAGS);
  if (values.help) return showHelp(io, PLAN_HELP);
  const choice = targetOrConfig(values, "external-plan");
  const { config, target } = "target" in choice
    ? await withDataContext(
      values,
      io,
      { write: false },
      ({ db }) => loadRegisteredTarget(db, choice.target),
    )
    : await (async () => {
      const config = await loadConfig(choice.config, io);
      return { config, target: await configTarget(config) };
    })();
  const plan = planRun(config, target);
  if (values.json) printJson(io, plan);
  else io.out(renderPlan(plan));
  return 0;
};

/** Output paths of a run, each reserved (created empty, exclusively) before the run starts. */
export interface ReservedOutputs {
  output?: string;
  junit?: string;
  summaryMd?: string;
  /** Removes reserved files that were never written (the run failed early). */
  release(): Promise<void>;
}

/**
 * Creates every requested output file exclusively before the run, so a
 * clash with an existing file or with a concurrent run is refused up front
 * and a finished run is never lost to it.
 */
export async function reserveOutputs(values: {
  output?: string | undefined;
  junit?: string | undefined;
  "summary-md"?: string | undefined;
}): Promise<ReservedOutputs> {
  const wanted: [keyof Omit<ReservedOutputs, "release">, string, string][] = [];
  if (values.output) wanted.push(["output", "--output", values.output]);
  if (values.junit) wanted.push(["junit", "--junit", values.junit]);
  if (values["summary-md"]) {
    wanted.push(["summaryMd", "--summary-md", values["summary-md"]]);
  }
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
        : (error as Error).message;
      throw new UsageError(`Cannot write ${flag} ${path}: ${why}`);
    }
    created.push(path);
    reserved[key] = path;
  }
  return reserved;
}

/** Writes the report file without ever replacing an existing one. */
export async function writeReportFile(
  path: string,
  report: unknown,
): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n", {
    createNew: true,
  });
}

/** Quotes one shell word when it needs quoting. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(word)
    ? word
    : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `--data-dir` / `--db` flags to repeat in a printed command. */
export function dataFlagsOf(
  values: { "data-dir"?: string | undefined; db?: string | undefined },
): string {
  const parts: string[] = [];
  if (values["data-dir"]) parts.push("--data-dir", values["data-dir"]);
  if (values.db) parts.push("--db", values.db);
  return parts.map(shellWord).map((w) => ` ${w}`).join("");
}

/** The exact command that replays (or saves and replays) what `report` found. */
export function replayCommandOf(
  report: RunReport,
  regressionId: string | null,
  values: { "data-dir"?: string | undefined; db?: string | undefined },
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

/** Writes the reserved output files of a finished run. */
export async function writeRunOutputs(
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

/** `trace external-run`: one deletion contract run. */
export const externalRun: Command = async (args, io) => {
  const { values } = parseFlags("external-run", args, RUN_FLAGS);
  if (values.help) return showHelp(io, RUN_HELP);
  const choice = targetOrConfig(values, "external-run");
  const fromConfig = "config" in choice
    ? await loadConfig(choice.config, io)
    : null;
  const outputs = await reserveOutputs(values);
  let written = false;
  try {
    return await withDataContext(
      values,
      io,
      { write: true },
      async ({ db, dataDir }) => {
        const { config, target } = fromConfig
          ? await registerConfigTarget(db, fromConfig, io)
          : await loadRegisteredTarget(
            db,
            (choice as { target: string }).target,
          );
        const report = await runExternal(config, {
          db,
          dataDir,
          target,
          env: io.env,
          onStart: ({ checkpointPath }) =>
            io.err(`checkpoint: ${checkpointPath}\n`),
          onEvent: progressRenderer(io),
          onWarning: (message: string) => io.err(`warning: ${message}\n`),
          ...(io.interrupted ? { signal: io.interrupted } : {}),
        });
        io.err(
          `ledger: run ${report.run_id} recorded in ${db.path ?? db.url}\n`,
        );
        const replayCommand = replayCommandOf(report, null, values);
        written = true;
        await writeRunOutputs(report, outputs, {
          replayCommand,
          regressionId: null,
        }, io);
        if (values.json) printJson(io, report);
        else io.out(renderReport(report));
        if (report.verdict === "FAIL") io.err(`replay: ${replayCommand}\n`);
        return exitCodeOf(report);
      },
    );
  } finally {
    if (!written) await outputs.release();
  }
};

async function registerConfigTarget(
  db: TraceDb,
  config: StagingConfig,
  io: CliIo,
): Promise<{ config: StagingConfig; target: TargetRef }> {
  const id = await configTargetId(config);
  const { target, created } = await registerTarget(db, id, config, "config");
  if (created) io.err(`target: registered ${id} from the config\n`);
  return { config, target: targetRef(target) };
}
