/** `trace external-plan` and `trace external-run`. */

import {
  parseStagingConfigText,
  type StagingConfig,
} from "../lib/contract/config.ts";
import { UsageError } from "../lib/errors.ts";
import { planRun } from "../lib/runner/plan.ts";
import { configTargetId, runExternal } from "../lib/runner/external_run.ts";
import type { RunReport, TargetRef } from "../lib/runner/report.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { printJson, withDataContext } from "./_context.ts";
import { type CliIo, type Command, readInput } from "./_io.ts";
import { progressRenderer } from "./_progress.ts";
import { renderPlan, renderReport } from "./_report_text.ts";

const PLAN_FLAGS = { ...DATA_FLAGS, config: { type: "string" } } as const;
const RUN_FLAGS = { ...PLAN_FLAGS, output: { type: "string" } } as const;

const PLAN_HELP = `Usage: trace external-plan --config FILE|- [--json]

Shows what a run would do: namespaces-to-be, operations, timing and request
budget. Sends no request at all.
`;

const RUN_HELP =
  `Usage: trace external-run --config FILE|- [--output FILE] [--json] [--data-dir DIR] [--db URL]

Ingests synthetic canaries into the staging adapter, warms its caches,
deletes, samples every store through the deletion window, cleans up, and
prints PASS / FAIL / INCONCLUSIVE with evidence. The report is appended to the
ledger; --output also writes it as a JSON file (never overwritten).

Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or a usage/config error.
`;

/** Exit code of a verdict. */
export function exitCodeOf(report: RunReport): number {
  return report.verdict === "PASS" ? 0 : report.verdict === "FAIL" ? 1 : 2;
}

async function loadConfig(
  path: string | undefined,
  command: string,
  io: CliIo,
): Promise<StagingConfig> {
  if (!path) {
    throw new UsageError(
      `${command}: --config FILE (or - for stdin) is required`,
    );
  }
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
  const config = await loadConfig(values.config, "external-plan", io);
  const plan = planRun(config, await configTarget(config));
  if (values.json) printJson(io, plan);
  else io.out(renderPlan(plan));
  return 0;
};

/** Refuses an existing output path up front, so a finished run is never lost to a clash. */
async function checkOutputPath(path: string | undefined): Promise<void> {
  if (!path) return;
  try {
    await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  throw new UsageError(
    `Cannot write --output ${path}: the file already exists; choose a new path`,
  );
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

/** `trace external-run`: one deletion contract run. */
export const externalRun: Command = async (args, io) => {
  const { values } = parseFlags("external-run", args, RUN_FLAGS);
  if (values.help) return showHelp(io, RUN_HELP);
  const config = await loadConfig(values.config, "external-run", io);
  await checkOutputPath(values.output);
  const target = await configTarget(config);
  return await withDataContext(
    values,
    io,
    { write: true },
    async ({ db, dataDir }) => {
      const report = await runExternal(config, {
        db,
        dataDir,
        target,
        env: io.env,
        onStart: ({ checkpointPath }) =>
          io.err(`checkpoint: ${checkpointPath}\n`),
        onEvent: progressRenderer(io),
      });
      io.err(`ledger: run ${report.run_id} recorded in ${db.path ?? db.url}\n`);
      if (values.output) {
        await writeReportFile(values.output, report);
        io.err(`report: ${values.output}\n`);
      }
      if (values.json) printJson(io, report);
      else io.out(renderReport(report));
      return exitCodeOf(report);
    },
  );
};
